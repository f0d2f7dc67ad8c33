package dev.polyfn.internal.structure;

import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.Interner;
import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import dev.polyfn.TensorSpec;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;

/**
 * The registered {@link CompositeType}s (the state behind {@link dev.polyfn.Composites}), found by
 * the class of a value or of a body's view, and the facts of a composite value: every call into a
 * type's code is checked, a broken type named. {@code SparseTensor} and {@code RaggedTensor} are registered
 * from the start.
 */
public final class CompositeRegistry {
  private CompositeRegistry() {}

  private static final List<CompositeType<?, ?>> TYPES = new CopyOnWriteArrayList<>(List.of(new SparseType(), new RaggedType()));
  /**
   * Lookups by class, cached (a miss too). A registration publishes fresh caches after adding its
   * type, so a lookup racing with it can only fill a cache that is already discarded.
   */
  private static volatile Map<Class<?>, Optional<CompositeType<?, ?>>> byValue = new ConcurrentHashMap<>();
  private static volatile Map<Class<?>, Optional<CompositeType<?, ?>>> byView = new ConcurrentHashMap<>();

  /** Registers {@code type} (see {@link dev.polyfn.Composites#register}). */
  public static synchronized void register(CompositeType<?, ?> type) {
    Objects.requireNonNull(type, "type");
    String name = Objects.requireNonNull(type.name(), "name");
    Objects.requireNonNull(type.valueClass(), "valueClass");
    Objects.requireNonNull(type.viewClass(), "viewClass");
    for (CompositeType<?, ?> t : TYPES) {
      if (t.name().equals(name) || t.valueClass() == type.valueClass() || t.viewClass() == type.viewClass()) {
        throw new IllegalArgumentException("composite type '" + name + "' clashes with registered type '" + t.name()
            + "' (same name, value class or view class)");
      }
    }
    TYPES.add(type);
    byValue = new ConcurrentHashMap<>();
    byView = new ConcurrentHashMap<>();
  }

  /** Checks that argument {@code name} is a value of {@code type} (or absent). */
  public static void checkArgument(String name, Object value, CompositeType<?, ?> type) {
    CompositeType<?, ?> actual = value == null ? null : forValue(value.getClass());
    if (value != null && actual != type) {
      throw new IllegalArgumentException("argument '" + name + "': expected a " + type.name() + " ("
          + type.valueClass().getName() + "), got " + value.getClass().getName()
          + (actual == null && type.valueClass().isInstance(value) ? "; register the type with Composites.register" : ""));
    }
  }

  /** The registered type called {@code name}, or null. */
  public static CompositeType<?, ?> named(String name) {
    for (CompositeType<?, ?> t : TYPES) {
      if (t.name().equals(name)) {
        return t;
      }
    }
    return null;
  }

  /** The type whose values are of class {@code c}, or null. */
  public static CompositeType<?, ?> forValue(Class<?> c) {
    return byValue.computeIfAbsent(c, k -> find(k, true)).orElse(null);
  }

  /** The type whose views are of class {@code c}, or null. */
  public static CompositeType<?, ?> forView(Class<?> c) {
    return byView.computeIfAbsent(c, k -> find(k, false)).orElse(null);
  }

  /**
   * Writes composite value {@code v} of {@code type}: kind, dtype, static shape, metadata, then each
   * component tensor typed by its spec. A component that does not fit its spec (a type's bug) is
   * refused here, before TensorFlow would see a tensor of another shape than its placeholder.
   */
  @SuppressWarnings("unchecked")
  public static void write(CompositeType<?, ?> type, Object v, CallBuffer buf, Interner interner) {
    CompositeType<Object, ?> t = (CompositeType<Object, ?>) type;
    CompositeSpec s = spec(t, v);
    v = CompositeContract.forCall(t, v, buf::keep);
    long metadata = s.metadata() == null ? -1 : interner.literal(s.metadata().getClass(), s.metadata());
    int n = s.components().size();
    buf.composite(interner.string(t.name()), DataTypes.code(s.dtype()), s.shape().isUnknown() ? null : s.shape().asArray(),
        metadata, n);
    for (int i = 0; i < n; i++) {
      TensorSpec c = s.components().get(i);
      buf.key(interner.string(s.names().get(i)));
      Tensor tensor = CompositeContract.component(t, v, i);
      try {
        if (!fits(tensor, c)) {
          throw new Nests.PathError("component '" + s.names().get(i) + "' of a " + t.name() + " is a "
              + tensor.dataType() + " tensor of shape " + tensor.shape() + ", which does not fit its spec " + c, null);
        }
        buf.tensorAs(tensor, c.dtypeCode(), c.shape().isUnknown() ? null : c.shape().asArray());
      } catch (IllegalStateException closed) {
        throw new Nests.PathError("component '" + s.names().get(i) + "' of a " + t.name() + " is closed", closed);
      }
    }
  }

  /** The spec of {@code v}; a failure of the type's code names the type. */
  public static CompositeSpec spec(CompositeType<Object, ?> t, Object v) {
    try {
      return Objects.requireNonNull(t.spec(v), "spec");
    } catch (Nests.PathError e) {
      throw e; // a value the type checked and refused (a RaggedTensor's bad row splits), said by the type
    } catch (RuntimeException e) {
      throw new Nests.PathError("the " + t.name() + " could not be described (" + e + ")", e);
    }
  }

  private static boolean fits(Tensor t, TensorSpec spec) {
    if (t == null || t.dataType().getNumber() != spec.dtypeCode()) {
      return false;
    }
    Shape want = spec.shape();
    if (want.isUnknown()) {
      return true;
    }
    Shape got = t.shape();
    if (got.numDimensions() != want.numDimensions()) {
      return false;
    }
    for (int i = 0; i < want.numDimensions(); i++) {
      if (want.get(i) != Shape.UNKNOWN_SIZE && want.get(i) != got.get(i)) {
        return false;
      }
    }
    return true;
  }

  private static Optional<CompositeType<?, ?>> find(Class<?> c, boolean value) {
    for (CompositeType<?, ?> t : TYPES) {
      if ((value ? t.valueClass() : t.viewClass()).isAssignableFrom(c)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
