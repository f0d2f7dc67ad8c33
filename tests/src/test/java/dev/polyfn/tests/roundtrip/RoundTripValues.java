package dev.polyfn.tests.roundtrip;

import dev.polyfn.TensorSpec;
import dev.polyfn.internal.saved.Json;
import dev.polyfn.tests.roundtrip.RoundTripCase.Leaf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.family.TType;

/**
 * Value trees of a case as Java arguments (tensors, lists, maps, {@link Feat} records, specs), and
 * tensors as the JSON the Python checker reads: {@code {"__t__": dtype, "shape": [...], "values":
 * [...]}}, a map as {@code {"__m__": {...}}}, a record as {@code {"__r__": {...}}}, a list as an
 * array, a spec as {@code {"__s__": dtype, "shape": [dims, null unknown] or null}}.
 */
public final class RoundTripValues {
  private RoundTripValues() {}

  /** The Java argument of a value tree; every tensor made is added to {@code owned}. */
  public static Object argument(Object v, List<Tensor> owned) {
    if (v instanceof Leaf l) {
      Tensor t = tensor(l);
      owned.add(t);
      return t;
    }
    if (v instanceof List<?> list) {
      List<Object> out = new ArrayList<>();
      list.forEach(e -> out.add(argument(e, owned)));
      return out;
    }
    if (v instanceof Map<?, ?> m && isRecord(m)) {
      return new Feat((TFloat32) argument(m.get("dense"), owned), (TInt64) argument(m.get("ids"), owned));
    }
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> out = new LinkedHashMap<>();
      m.forEach((k, e) -> out.put((String) k, argument(e, owned)));
      return out;
    }
    return v; // a Java value
  }

  /** Records are the generator's TreeMaps of natural order; maps use code point order (a comparator). */
  static boolean isRecord(Map<?, ?> m) {
    return m instanceof TreeMap<?, ?> t && t.comparator() == null;
  }

  /** The spec tree of a value tree traced by specs: a leaf's TensorSpec; a record as its tensors. */
  public static Object spec(Object v, List<Tensor> owned) {
    if (v instanceof Leaf l) {
      return TensorSpec.of(type(l.dtype()), l.specDims() == null ? Shape.unknown() : Shape.of(l.specDims()));
    }
    if (v instanceof List<?> list) {
      List<Object> out = new ArrayList<>();
      list.forEach(e -> out.add(spec(e, owned)));
      return out;
    }
    if (v instanceof Map<?, ?> m && isRecord(m)) {
      return argument(v, owned);
    }
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> out = new LinkedHashMap<>();
      m.forEach((k, e) -> out.put((String) k, spec(e, owned)));
      return out;
    }
    return v;
  }

  static Class<? extends TType> type(String dtype) {
    return switch (dtype) {
      case "float32" -> TFloat32.class;
      case "float64" -> TFloat64.class;
      case "float16" -> TFloat16.class;
      case "int32" -> TInt32.class;
      case "int64" -> TInt64.class;
      case "bool" -> TBool.class;
      default -> TString.class;
    };
  }

  /** The tensor of a leaf. */
  public static Tensor tensor(Leaf l) {
    Shape s = Shape.of(l.dims());
    Object[] v = l.values();
    int n = v.length;
    switch (l.dtype()) {
      case "float32", "float16" -> {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) v[i]).floatValue();
        }
        return l.dtype().equals("float32") ? TFloat32.tensorOf(s, DataBuffers.of(a)) : TFloat16.tensorOf(s, DataBuffers.of(a));
      }
      case "float64" -> {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) v[i]).doubleValue();
        }
        return TFloat64.tensorOf(s, DataBuffers.of(a));
      }
      case "int32" -> {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) v[i]).intValue();
        }
        return TInt32.tensorOf(s, DataBuffers.of(a));
      }
      case "int64" -> {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) v[i]).longValue();
        }
        return TInt64.tensorOf(s, DataBuffers.of(a));
      }
      case "bool" -> {
        boolean[] a = new boolean[n];
        for (int i = 0; i < n; i++) {
          a[i] = (Boolean) v[i];
        }
        return TBool.tensorOf(s, DataBuffers.of(a));
      }
      default -> {
        String[] a = new String[n];
        for (int i = 0; i < n; i++) {
          a[i] = (String) v[i];
        }
        return TString.tensorOf(s, DataBuffers.ofObjects(a));
      }
    }
  }

  /** A tensor's dtype (Python's name), dims and values, as a Leaf. */
  public static Leaf leaf(Tensor t) {
    List<Object> values = new ArrayList<>();
    String dtype;
    if (t instanceof TFloat32 f) {
      dtype = "float32";
      f.scalars().forEach(x -> values.add(x.getFloat()));
    } else if (t instanceof TFloat64 f) {
      dtype = "float64";
      f.scalars().forEach(x -> values.add(x.getDouble()));
    } else if (t instanceof TInt32 f) {
      dtype = "int32";
      f.scalars().forEach(x -> values.add(x.getInt()));
    } else if (t instanceof TInt64 f) {
      dtype = "int64";
      f.scalars().forEach(x -> values.add(x.getLong()));
    } else if (t instanceof TBool f) {
      dtype = "bool";
      f.scalars().forEach(x -> values.add(x.getBoolean()));
    } else if (t instanceof TString f) {
      dtype = "string";
      f.scalars().forEach(x -> values.add(x.getObject()));
    } else {
      throw new IllegalArgumentException("unexpected output " + t);
    }
    long[] dims = t.shape().asArray();
    return new Leaf(dtype, dims, dims, values.toArray());
  }

  /** Null when equal (floats within 1e-5, NaN equal to NaN; the rest exactly), else what differs. */
  public static String difference(Leaf want, Leaf got) {
    if (!want.dtype().equals(got.dtype()) || !java.util.Arrays.equals(want.dims(), got.dims())) {
      return "want " + want.dtype() + java.util.Arrays.toString(want.dims()) + ", got " + got.dtype()
          + java.util.Arrays.toString(got.dims());
    }
    for (int i = 0; i < want.values().length; i++) {
      Object a = want.values()[i];
      Object b = got.values()[i];
      boolean same = a instanceof Float || a instanceof Double
          ? Math.abs(((Number) a).doubleValue() - ((Number) b).doubleValue()) <= 1e-5
              || (Double.isNaN(((Number) a).doubleValue()) && Double.isNaN(((Number) b).doubleValue()))
          : a.equals(b);
      if (!same) {
        return "element " + i + ": want " + a + ", got " + b;
      }
    }
    return null;
  }

  /** JSON of a value tree (see the class comment); a Java value as a number. */
  public static void json(Object v, StringBuilder b) {
    json(v, b, false);
  }

  /** JSON of the spec of a value tree: leaves as {@code __s__} with their traced dims. */
  public static void specJson(Object v, StringBuilder b) {
    json(v, b, true);
  }

  private static void json(Object v, StringBuilder b, boolean spec) {
    if (v instanceof Leaf l && spec) {
      b.append("{\"__s__\": \"").append(l.dtype()).append("\", \"shape\": ").append(l.specDims() == null ? "null" : dims(l.specDims()))
          .append('}');
    } else if (v instanceof Leaf l) {
      b.append("{\"__t__\": \"").append(l.dtype()).append("\", \"shape\": ").append(dims(l.dims())).append(", \"values\": [");
      for (int i = 0; i < l.values().length; i++) {
        b.append(i > 0 ? ", " : "");
        scalar(l.values()[i], b);
      }
      b.append("]}");
    } else if (v instanceof List<?> list) {
      b.append('[');
      for (int i = 0; i < list.size(); i++) {
        b.append(i > 0 ? ", " : "");
        json(list.get(i), b, spec);
      }
      b.append(']');
    } else if (v instanceof Map<?, ?> m) {
      b.append(isRecord(m) ? "{\"__r__\": {" : "{\"__m__\": {");
      int i = 0;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        b.append(i++ > 0 ? ", " : "");
        string((String) e.getKey(), b);
        b.append(": ");
        json(e.getValue(), b, spec);
      }
      b.append("}}");
    } else {
      b.append(v);
    }
  }

  private static String dims(long[] d) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < d.length; i++) {
      b.append(i > 0 ? ", " : "").append(d[i] < 0 ? "null" : Long.toString(d[i]));
    }
    return b.append(']').toString();
  }

  private static void scalar(Object x, StringBuilder b) {
    if (x instanceof String s) {
      string(s, b);
    } else if (x instanceof Double d && (d.isNaN() || d.isInfinite()) || x instanceof Float f && (f.isNaN() || f.isInfinite())) {
      double d = ((Number) x).doubleValue();
      b.append(Double.isNaN(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
    } else {
      b.append(x);
    }
  }

  /** A JSON string, as Polyfn's own JSON writes one (the file is UTF-8). */
  public static void string(String s, StringBuilder b) {
    b.append(Json.write(s));
  }
}
