package dev.polyfn;

import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.ShapeValues;
import java.util.Objects;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TType;

/**
 * The type of a tensor without a value: a dtype and a shape whose dims may be unknown ({@code -1})
 * or whose rank may be unknown ({@link Shape#unknown()}). Pass specs instead of tensors to {@link
 * PolymorphicFunction#getConcreteFunction} to trace a generic concrete function ahead of calls, as
 * {@code tf.function.get_concrete_function(tf.TensorSpec(...))} does:
 *
 * <pre>{@code
 * f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1))));
 * f.call(Map.of("x", vectorOf3));   // reuses the [-1] trace
 * f.call(Map.of("x", vectorOf7));   // and again: one trace in all
 * }</pre>
 *
 * Specs also stand for elements of list and map arguments.
 */
public final class TensorSpec {
  private final Class<? extends TType> type;
  private final Shape shape;

  private TensorSpec(Class<? extends TType> type, Shape shape) {
    this.type = type;
    this.shape = shape;
  }

  /**
   * A spec of concrete dtype {@code type} and {@code shape}.
   *
   * @throws IllegalArgumentException if {@code type} is a family ({@code TFloating}...), not a dtype
   */
  public static TensorSpec of(Class<? extends TType> type, Shape shape) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(shape, "shape");
    if (!DataTypes.isConcrete(type)) {
      throw new IllegalArgumentException(
          "a TensorSpec needs a concrete tensor type such as TFloat32, not the family " + type.getSimpleName());
    }
    return new TensorSpec(type, shape);
  }

  /** The tensor type, a concrete one such as {@code TFloat32}. */
  public Class<? extends TType> type() {
    return type;
  }

  /** The shape; unknown dimensions are -1. */
  public Shape shape() {
    return shape;
  }

  /** {@hidden} */
  public int dtypeCode() {
    return DataTypes.code(type);
  }

  @Override
  public boolean equals(Object o) {
    // By dimensions: Shape.equals is false for two shapes with an unknown dimension.
    return o instanceof TensorSpec && ((TensorSpec) o).type == type && ShapeValues.equal(((TensorSpec) o).shape, shape);
  }

  @Override
  public int hashCode() {
    return type.hashCode() * 31 + ShapeValues.hash(shape);
  }

  @Override
  public String toString() {
    return "TensorSpec(" + type.getSimpleName() + ", " + shape + ")";
  }
}
