package dev.polyfn;

import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.ShapeValues;
import java.util.List;
import java.util.Objects;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TType;

/**
 * The type of one composite value (see {@link CompositeType}): its values dtype, a static shape
 * (a sparse tensor's dense shape; -1 dims and an unknown shape allowed), optional metadata (any
 * Java value, compared by {@code equals}) and the spec of each component tensor (its dims as
 * specific as the type wants them in the signature; -1 for a dim that is not).
 *
 * @param dtype the values' tensor type
 * @param shape the static shape
 * @param metadata a Java value part of the signature, or null
 * @param names the components' names, in feeding order
 * @param components the components' specs, one per name
 */
public record CompositeSpec(Class<? extends TType> dtype, Shape shape, Object metadata, List<String> names,
    List<TensorSpec> components) {

  /** Checks the spec: a concrete dtype, one spec per distinct component name. */
  public CompositeSpec {
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(shape, "shape");
    Objects.requireNonNull(names, "names");
    Objects.requireNonNull(components, "components");
    if (names.stream().anyMatch(Objects::isNull) || components.stream().anyMatch(Objects::isNull)) {
      throw new IllegalArgumentException("a composite's component names and specs must not be null, got " + names
          + " and " + components);
    }
    names = List.copyOf(names);
    components = List.copyOf(components);
    if (!DataTypes.isConcrete(dtype)) {
      throw new IllegalArgumentException("a composite's dtype must be a concrete tensor type, got " + dtype.getSimpleName());
    }
    if (names.size() != components.size() || names.stream().distinct().count() != names.size()) {
      throw new IllegalArgumentException("a composite needs one spec per distinct component name, got " + names
          + " for " + components.size() + " specs");
    }
  }

  /**
   * Equal by component, the shape by its dimensions (as {@link TensorSpec}): TensorFlow Java's
   * {@code Shape.equals} is false for two shapes with an unknown dimension.
   */
  @Override
  public boolean equals(Object o) {
    return this == o || o instanceof CompositeSpec c && dtype == c.dtype && ShapeValues.equal(shape, c.shape)
        && Objects.equals(metadata, c.metadata) && names.equals(c.names) && components.equals(c.components);
  }

  @Override
  public int hashCode() {
    return Objects.hash(dtype, ShapeValues.hash(shape), metadata, names, components);
  }
}
