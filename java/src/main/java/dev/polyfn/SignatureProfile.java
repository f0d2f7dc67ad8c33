package dev.polyfn;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TBfloat16;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint16;
import org.tensorflow.types.TUint8;
import org.tensorflow.types.family.TType;

/**
 * A signature profile file read back: each recorded signature as an example argument set (of
 * {@link TensorSpec}s, lists and maps of them, and Java values), and the number of calls recorded.
 * The format is documented in the README ("Let Polyfn find the signature").
 */
final class SignatureProfile {
  private static final Map<String, Class<? extends TType>> DTYPES = Map.of(
      "FLOAT", TFloat32.class, "DOUBLE", TFloat64.class, "HALF", TFloat16.class, "BFLOAT16", TBfloat16.class,
      "INT32", TInt32.class, "INT64", TInt64.class, "UINT8", TUint8.class, "UINT16", TUint16.class,
      "BOOL", TBool.class, "STRING", TString.class);

  private final List<Map<String, ?>> examples;
  private final long calls;

  private SignatureProfile(List<Map<String, ?>> examples, long calls) {
    this.examples = examples;
    this.calls = calls;
  }

  List<Map<String, ?>> examples() {
    return examples;
  }

  long calls() {
    return calls;
  }

  /** Writes the profile JSON {@code json} to {@code file}. */
  static void write(Path file, String json) {
    try {
      Files.writeString(file, json);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot write the signature profile " + file, e);
    }
  }

  /** Reads {@code file}; a missing or malformed file is an IllegalArgumentException naming it. */
  static SignatureProfile read(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("signature profile " + file + ": cannot be read (" + e + ")", e);
    }
    try {
      Map<?, ?> root = (Map<?, ?>) new Json(text).document();
      if (!"polyfn-signature-profile".equals(root.get("format"))) {
        throw new IllegalArgumentException("not a Polyfn signature profile (\"format\" is not \"polyfn-signature-profile\")");
      }
      if (!Long.valueOf(1).equals(root.get("version"))) {
        throw new IllegalArgumentException("unsupported version " + root.get("version") + " (this Polyfn reads version 1)");
      }
      List<Map<String, ?>> examples = new ArrayList<>();
      for (Object s : (List<?>) root.get("signatures")) {
        Map<String, Object> example = new LinkedHashMap<>();
        for (Map.Entry<?, ?> p : ((Map<?, ?>) ((Map<?, ?>) s).get("parameters")).entrySet()) {
          example.put((String) p.getKey(), value((String) p.getKey(), (Map<?, ?>) p.getValue()));
        }
        examples.add(example);
      }
      if (examples.isEmpty()) {
        throw new IllegalArgumentException("it records no signature");
      }
      return new SignatureProfile(examples, (Long) root.get("calls"));
    } catch (ClassCastException | NullPointerException e) {
      throw new IllegalArgumentException("signature profile " + file + ": malformed (" + e.getMessage() + ")", e);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("signature profile " + file + ": " + e.getMessage(), e);
    }
  }

  /** One recorded value of parameter {@code name} as an example value. */
  private static Object value(String name, Map<?, ?> v) {
    if (v.containsKey("dtype")) {
      Class<? extends TType> type = DTYPES.get((String) v.get("dtype"));
      if (type == null) {
        throw new IllegalArgumentException("parameter '" + name + "': dtype " + v.get("dtype") + " has no TensorFlow Java type");
      }
      Object dims = v.get("shape");
      Shape shape = dims == null ? Shape.unknown()
          : Shape.of(((List<?>) dims).stream().mapToLong(d -> (Long) d).toArray());
      return TensorSpec.of(type, shape);
    }
    if (v.containsKey("list")) {
      List<Object> list = new ArrayList<>();
      for (Object e : (List<?>) v.get("list")) {
        list.add(value(name, (Map<?, ?>) e));
      }
      return list;
    }
    if (v.containsKey("map")) {
      Map<String, Object> map = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v.get("map")).entrySet()) {
        map.put((String) e.getKey(), value(name, (Map<?, ?>) e.getValue()));
      }
      return map;
    }
    if (v.containsKey("java")) {
      return javaValue(name, (String) v.get("java"), (String) v.get("value"));
    }
    throw new IllegalArgumentException("parameter '" + name + "': " + v.keySet()
        + " cannot be restored from a profile (only tensors, lists, maps and Java numbers, booleans and strings)");
  }

  private static Object javaValue(String name, String cls, String repr) {
    switch (cls) {
      case "java.lang.Integer": return Integer.valueOf(repr);
      case "java.lang.Long": return Long.valueOf(repr);
      case "java.lang.Short": return Short.valueOf(repr);
      case "java.lang.Byte": return Byte.valueOf(repr);
      case "java.lang.Double": return Double.valueOf(repr);
      case "java.lang.Float": return Float.valueOf(repr);
      case "java.lang.Boolean": return Boolean.valueOf(repr);
      case "java.lang.String":
        if (repr.length() >= 2 && repr.startsWith("\"") && repr.endsWith("\"")) {
          return repr.substring(1, repr.length() - 1);
        }
        break;
      default:
        break;
    }
    throw new IllegalArgumentException("parameter '" + name + "': a " + cls + " value (" + repr
        + ") cannot be restored from a profile (only numbers, booleans and strings)");
  }
}
