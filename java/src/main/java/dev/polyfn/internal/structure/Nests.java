package dev.polyfn.internal.structure;

import dev.polyfn.CompositeType;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Wire;
import dev.polyfn.internal.trace.Param;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
import org.tensorflow.SparseTensor;
import org.tensorflow.Tensor;
import org.tensorflow.types.family.TType;

/**
 * Writes the facts of a nested argument (lists, maps and records to any depth, leaves tensors,
 * specs or Java values), in the order Rust flattens it: list elements by index, map entries by
 * key (code point order), record components in declaration order.
 *
 * <p>A successful walk allocates nothing for the structure itself: an element's path (for
 * messages such as {@code batch.labels} or {@code xs[2]['k']}) is built only when something fails,
 * while the error unwinds.
 */
public final class Nests {
  private Nests() {}

  /** Facts nest no deeper than Rust decodes ({@link Wire#NEST_MAX_DEPTH} levels below the argument). */
  public static final int MAX_DEPTH = Wire.NEST_MAX_DEPTH;

  /** A failure inside a nest, whose path is completed while it unwinds. */
  public static final class PathError extends RuntimeException {
    private final StringBuilder path = new StringBuilder();
    private final String what;

    public PathError(String what, Throwable cause) {
      super(what, cause, false, false);
      this.what = what;
    }

    public PathError in(String segment) {
      path.insert(0, segment);
      return this;
    }

    public IllegalArgumentException at(String parameter) {
      return new IllegalArgumentException("argument '" + parameter + path + "': " + what, getCause());
    }
  }

  public static String index(int i) {
    return "[" + i + "]";
  }

  public static String key(String k) {
    return "['" + k + "']";
  }

  public static String component(String name) {
    return "." + name;
  }

  /** Writes argument {@code v} of nested parameter {@code p}. */
  public static void write(Param p, Object v, CallBuffer buf, Interner interner, boolean forCall) {
    if (!(v instanceof List) && !(v instanceof Map) && !(v instanceof Record)
        && (v == null || CompositeRegistry.forValue(v.getClass()) == null)) {
      throw new IllegalArgumentException("argument '" + p.name() + "': expected a list, map, record or composite tensor, got "
          + (v == null ? "null" : v.getClass().getName()));
    }
    try {
      value(v, buf, interner, forCall, 0);
    } catch (PathError e) {
      throw e.at(p.name());
    }
  }

  private static void value(Object v, CallBuffer buf, Interner interner, boolean forCall, int depth) {
    CompositeType<?, ?> composite;
    // A dense tensor first, the common leaf; a SparseTensor may implement a dense type's interface.
    if (v instanceof TType && !(v instanceof SparseTensor)) {
      tensor((Tensor) v, buf);
    } else if (v instanceof TensorSpec) {
      if (forCall) {
        throw new PathError("got a TensorSpec (" + v + "), but call runs the function on values: pass a tensor, "
            + "or pass specs to getConcreteFunction to trace without running", null);
      }
      TensorSpec s = (TensorSpec) v;
      buf.spec(s.dtypeCode(), s.shape().isUnknown() ? null : s.shape().asArray());
    } else if (v != null && (composite = CompositeRegistry.forValue(v.getClass())) != null) {
      // Before records: a composite's value class may well be a record.
      CompositeRegistry.write(composite, v, buf, interner);
    } else if (v instanceof List || v instanceof Map || v instanceof Record) {
      if (depth >= MAX_DEPTH) {
        throw new PathError("nested deeper than " + MAX_DEPTH + " levels", null);
      }
      structure(v, buf, interner, forCall, depth + 1);
    } else if (v == null) {
      throw new PathError("expected a tensor, a Java value or a nested list, map or record, got null", null);
    } else if (v instanceof org.tensorflow.Operand) {
      throw new PathError("got an operand of a graph (" + v + "): call takes tensors; use apply inside a body", null);
    } else if (v instanceof Variable) {
      throw new PathError("a Variable cannot be nested in a structure: declare it with variableInput", null);
    } else if (v instanceof Tensor) {
      tensor((Tensor) v, buf);
    } else if (Records.isUnmarkedDataClass(v.getClass())) {
      throw new PathError("got a " + v.getClass().getName() + ", a data class holding tensors that is not a record: "
          + "annotate it @JvmRecord (Kotlin) so its components are traced", null);
    } else {
      // Any other value is a Java value, part of the signature by equals/hashCode, as a Python
      // value nested in a tf.function argument is.
      buf.literal(interner.literal(v.getClass(), v));
    }
  }

  private static void tensor(Tensor t, CallBuffer buf) {
    try {
      buf.tensor(t);
    } catch (IllegalStateException closed) {
      throw new PathError("the tensor is closed", closed);
    }
  }

  private static void structure(Object v, CallBuffer buf, Interner interner, boolean forCall, int depth) {
    if (v instanceof List) {
      List<?> list = (List<?>) v;
      int n = list.size();
      buf.list(n);
      if (list instanceof RandomAccess) {
        for (int i = 0; i < n; i++) {
          element(list.get(i), i, buf, interner, forCall, depth);
        }
      } else {
        int i = 0;
        for (Object e : list) {
          element(e, i++, buf, interner, forCall, depth);
        }
      }
    } else if (v instanceof Map) {
      Map<?, ?> map = (Map<?, ?>) v;
      String[] keys = sortedKeys(map);
      buf.map(keys.length);
      for (String k : keys) {
        buf.key(interner.string(k));
        try {
          value(map.get(k), buf, interner, forCall, depth);
        } catch (PathError e) {
          throw e.in(key(k));
        }
      }
    } else {
      Records.Info info = Records.of(v.getClass());
      buf.record(interner.string(info.type().getName()), info.size());
      for (int i = 0; i < info.size(); i++) {
        buf.key(interner.string(info.names()[i]));
        try {
          value(info.get(v, i), buf, interner, forCall, depth);
        } catch (PathError e) {
          throw e.in(component(info.names()[i]));
        }
      }
    }
  }

  private static void element(Object e, int i, CallBuffer buf, Interner interner, boolean forCall, int depth) {
    try {
      value(e, buf, interner, forCall, depth);
    } catch (PathError err) {
      throw err.in(index(i));
    }
  }

  /** The keys of a nested map in Rust's order; a key that is not a string is a PathError. */
  public static String[] sortedKeys(Map<?, ?> map) {
    for (Object k : map.keySet()) {
      if (!(k instanceof String)) {
        throw new PathError("map keys must be strings, got key " + Interner.repr(k) + " ("
            + (k == null ? "null" : k.getClass().getName()) + ")", null);
      }
      String malformed = Interner.malformedKey((String) k);
      if (malformed != null) {
        throw new PathError(malformed, null);
      }
    }
    String[] keys = map.keySet().toArray(new String[0]);
    inRustOrder(keys);
    return keys;
  }

  /** Sorts map keys as Rust's {@code BTreeMap<String, _>} does: by code point, as facts list them. */
  public static void inRustOrder(String[] keys) {
    java.util.Arrays.sort(keys, Nests::compareCodePoints);
  }

  /**
   * {@code map}'s entries sorted by key in code point order: the order Rust flattens a map in,
   * and Python's {@code sorted} (so {@code tf.nest}) orders a dict's keys in. Java's own String
   * order (UTF-16 units) differs for keys mixing characters above U+FFFF with U+E000 to U+FFFF.
   */
  public static <V> java.util.SortedMap<String, V> inCodePointOrder(Map<String, V> map) {
    java.util.SortedMap<String, V> sorted = new java.util.TreeMap<>(Nests::compareCodePoints);
    sorted.putAll(map);
    return sorted;
  }

  /** Compares strings in code point order, as Python's {@code sorted} and Rust's {@code Ord} do. */
  public static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
