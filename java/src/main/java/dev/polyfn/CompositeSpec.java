package dev.polyfn;

import dev.polyfn.internal.DataTypes;
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
}
