package dev.polyfn;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The type of a function (TensorFlow's FunctionType RFC): its parameters, each with a name, a kind
 * and a type constraint. A polymorphic function's type holds the declared constraints (e.g. {@code
 * TensorSpec({FLOAT, DOUBLE}, [-1])}); a concrete function's type is monomorphic, the exact types
 * it was traced for (e.g. {@code TensorSpec(FLOAT, [-1])}).
 *
 * <p>A read-only view, for debugging and introspection: {@code toString()} reads like a signature,
 * {@code (x: TensorSpec(FLOAT, [2, 3]))}.
 */
public final class FunctionType {
  private final List<Parameter> parameters;
  private final List<Parameter> captures;

  FunctionType(List<Parameter> parameters) {
    this(parameters, List.of());
  }

  FunctionType(List<Parameter> parameters, List<Parameter> captures) {
    this.parameters = List.copyOf(parameters);
    this.captures = List.copyOf(captures);
  }

  /** Decodes {@code (name, kind, optional, type)} quadruples from {@code from} at {@code offset}. */
  static FunctionType decode(String[] flat, int offset, int count) {
    List<Parameter> ps = new ArrayList<>(count);
    List<Parameter> cs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int at = offset + 4 * i;
      Parameter p = new Parameter(flat[at], flat[at + 1], Boolean.parseBoolean(flat[at + 2]), flat[at + 3]);
      (p.kind().equals("capture") ? cs : ps).add(p);
    }
    return new FunctionType(ps, cs);
  }

  /** The parameters, in order. */
  public List<Parameter> parameters() {
    return parameters;
  }

  /**
   * The captures: values the body reads from outside (by-reference captures, variables), fed as
   * hidden inputs at each call. Their types are part of the signature, as TensorFlow's FunctionType
   * RFC has it.
   */
  public List<Parameter> captures() {
    return captures;
  }

  /** The parameter called {@code name}. */
  public Optional<Parameter> parameter(String name) {
    return parameters.stream().filter(p -> p.name().equals(name)).findFirst();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FunctionType && ((FunctionType) o).parameters.equals(parameters)
        && ((FunctionType) o).captures.equals(captures);
  }

  @Override
  public int hashCode() {
    return parameters.hashCode() * 31 + captures.hashCode();
  }

  @Override
  public String toString() {
    String ps = parameters.stream().map(Parameter::toString).collect(Collectors.joining(", "));
    if (captures.isEmpty()) {
      return "(" + ps + ")";
    }
    return "(" + ps + "; captures: " + captures.stream().map(Parameter::toString).collect(Collectors.joining(", ")) + ")";
  }

  /** One parameter: name, kind ({@code tensor}, {@code list}, {@code map}, {@code java}), type. */
  public static final class Parameter {
    private final String name;
    private final String kind;
    private final boolean optional;
    private final String type;

    Parameter(String name, String kind, boolean optional, String type) {
      this.name = name;
      this.kind = kind;
      this.optional = optional;
      this.type = type;
    }

    /** The parameter's name, as declared in the body. */
    public String name() {
      return name;
    }

    /** {@code tensor}, {@code list}, {@code map}, {@code java}, {@code variable} or {@code capture}. */
    public String kind() {
      return kind;
    }

    /** Whether the parameter has a default and may be omitted. */
    public boolean optional() {
      return optional;
    }

    /** The type constraint as text, e.g. {@code TensorSpec(FLOAT, [-1])}. */
    public String type() {
      return type;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Parameter)) {
        return false;
      }
      Parameter p = (Parameter) o;
      return name.equals(p.name) && kind.equals(p.kind) && optional == p.optional && type.equals(p.type);
    }

    @Override
    public int hashCode() {
      return name.hashCode() * 31 + type.hashCode();
    }

    @Override
    public String toString() {
      return name + ": " + type + (optional ? " = <default>" : "");
    }
  }
}
