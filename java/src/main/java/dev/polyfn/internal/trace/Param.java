package dev.polyfn.internal.trace;

import dev.polyfn.internal.ShapeValues;
import dev.polyfn.internal.Wire;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TType;

/**
 * One parameter as the body declared it: what the Java side needs to describe arguments (kind,
 * tensor or Java class, default). Rust holds the type constraints; this mirrors the declaration.
 *
 * @param name the parameter's name
 * @param kind what kind of argument it takes
 * @param tensorType the tensor (element) type, for tensor, list, map and variable parameters
 * @param javaClass the declared class, for Java parameters
 * @param shape the declared shape of a tensor parameter, or null
 * @param optional whether the argument may be omitted
 * @param defaultValue the value used when it is omitted
 */
public record Param(String name, Kind kind, Class<? extends TType> tensorType, Class<?> javaClass, Shape shape,
    boolean optional, Object defaultValue) {

  /** The kinds of parameter, with their wire codes ({@code polyfn_core::ParamKind}). */
  public enum Kind {
    TENSOR(Wire.KIND_TENSOR, "a tensor"),
    LIST(Wire.KIND_LIST, "a list of tensors"),
    MAP(Wire.KIND_MAP, "a map of tensors"),
    JAVA(Wire.KIND_JAVA, null),
    VARIABLE(Wire.KIND_VARIABLE, "a Variable"),
    NEST(Wire.KIND_NEST, "a list, map or record");

    final int wire;
    private final String expected;

    Kind(int wire, String expected) {
      this.wire = wire;
      this.expected = expected;
    }
  }

  /**
   * Component by component, as a record's equals: written out because the generated one is
   * bootstrapped through method handles at its first use, which cost a fresh JVM's first restore
   * (where a second restored signature's parameters are compared with the first's) tens of ms.
   * Shapes by their dimensions ({@link ShapeValues}): a declared {@code [-1]} read back from a
   * trace cache entry must equal the next entry's.
   */
  @Override
  public boolean equals(Object o) {
    return this == o || o instanceof Param p && java.util.Objects.equals(name, p.name) && kind == p.kind && tensorType == p.tensorType
        && javaClass == p.javaClass && ShapeValues.equal(shape, p.shape) && optional == p.optional
        && java.util.Objects.equals(defaultValue, p.defaultValue);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(name, kind, tensorType, javaClass, ShapeValues.hash(shape), optional, defaultValue);
  }

  /** What an argument of this parameter must be, for messages: "a list of tensors". */
  public String kindName() {
    return kind.expected != null ? kind.expected : "a " + javaClass.getName();
  }
}
