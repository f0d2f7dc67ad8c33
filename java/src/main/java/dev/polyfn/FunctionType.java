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

  FunctionType(List<Parameter> parameters, List<Parameter> captures) {
    this.parameters = List.copyOf(parameters);
    this.captures = List.copyOf(captures);
  }

  /** Built by Polyfn's native library. */
  FunctionType(Parameter[] parameters, Parameter[] captures) {
    this(List.of(parameters), List.of(captures));
  }

  /** The empty type of a function that has not traced yet. */
  static FunctionType empty() {
    return new FunctionType(List.of(), List.of());
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
    return o instanceof FunctionType other && other.parameters.equals(parameters) && other.captures.equals(captures);
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

  /**
   * One parameter: its name, kind ({@code tensor}, {@code list}, {@code map}, {@code java}, {@code
   * variable}, or {@code capture} for a capture), whether it may be omitted, and its type
   * constraint as text, e.g. {@code TensorSpec(FLOAT, [-1])}.
   *
   * @param name the parameter's name
   * @param kind {@code tensor}, {@code list}, {@code map}, {@code java}, {@code variable} or {@code capture}
   * @param optional whether the parameter has a default and may be omitted
   * @param type the type constraint as text
   */
  public record Parameter(String name, String kind, boolean optional, String type) {
    @Override
    public String toString() {
      return name + ": " + type + (optional ? " = <default>" : "");
    }
  }
}
