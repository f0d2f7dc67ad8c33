package dev.polyfn.internal.saved;

import dev.polyfn.internal.structure.Nests;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.tensorflow.proto.DataType;

/**
 * The flat inputs of a concrete function, read from its serialized traced type, and the default
 * signature names derived from them.
 *
 * <p>A concrete function takes its arguments flattened in parameter order: a tensor is one input,
 * a list one input per element in order, a map one per value in sorted key order (nested lists
 * and maps likewise). Each flat input becomes a signature input whose key is the parameter name,
 * then {@code _<index>} per list level and {@code _<key>} per map level, with characters other
 * than letters, digits and {@code _} replaced by {@code _} ({@code x}, {@code xs_0}, {@code
 * feats_age}).
 */
public final class SavedSignatures {
  private SavedSignatures() {}

  /**
   * One flat input: its signature key, dtype and dims (null: unknown rank), and where it comes
   * from, for errors ({@code xs[1]}, {@code feats["a"]}, {@code point.x}).
   */
  public record Input(String key, DataType dtype, long[] dims, String origin) {}

  /** The flat inputs of the traced type document {@code tracedJson}, in the function's input order. */
  @SuppressWarnings("unchecked")
  public static List<Input> inputs(String tracedJson) {
    Map<String, Object> doc = (Map<String, Object>) Json.parse(tracedJson);
    Map<String, Object> type = (Map<String, Object>) doc.get("function_type");
    List<Input> out = new ArrayList<>();
    for (Object p : (List<Object>) type.get("parameters")) {
      Map<String, Object> param = (Map<String, Object>) p;
      String name = (String) param.get("name");
      flatten(sanitize(name), name, (Map<String, Object>) param.get("type"), out);
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static void flatten(String key, String origin, Map<String, Object> type, List<Input> out) {
    String kind = type == null ? "none" : (String) type.get("kind");
    switch (kind) {
      case "tensor_spec" -> out.add(tensorInput(key, origin, type));
      case "list" -> {
        List<Object> elements = (List<Object>) type.get("elements");
        for (int i = 0; i < elements.size(); i++) {
          flatten(key + "_" + i, origin + "[" + i + "]", (Map<String, Object>) elements.get(i), out);
        }
      }
      case "map" -> {
        for (Map.Entry<String, Object> e : Nests.inCodePointOrder((Map<String, Object>) type.get("entries")).entrySet()) {
          flatten(key + "_" + sanitize(e.getKey()), origin + "[\"" + e.getKey() + "\"]", (Map<String, Object>) e.getValue(), out);
        }
      }
      case "record" -> {
        // Components in declaration order, as the function's inputs are flattened.
        List<Object> names = (List<Object>) type.get("names");
        List<Object> types = (List<Object>) type.get("types");
        for (int i = 0; i < names.size(); i++) {
          flatten(key + "_" + sanitize((String) names.get(i)), origin + "." + names.get(i), (Map<String, Object>) types.get(i), out);
        }
      }
      case "composite" -> {
        // A composite (a SparseTensor...) is its component tensors, in the type's order.
        List<Object> names = (List<Object>) type.get("component_names");
        List<Object> types = (List<Object>) type.get("components");
        for (int i = 0; i < names.size(); i++) {
          flatten(key + "_" + sanitize((String) names.get(i)), origin + "." + names.get(i), (Map<String, Object>) types.get(i), out);
        }
      }
      case "literal" -> {
        // A Java value inside a record or nest is part of the concrete function, not an input.
      }
      default -> throw new IllegalStateException("input '" + key + "' has a " + kind
          + " type, which a SavedModel signature cannot take (only tensors, and lists, maps, records and composites of them)");
    }
  }

  /** The input of a {@code tensor_spec} type at signature key {@code key}, named so in errors. */
  static Input tensorInput(String key, Map<String, Object> type) {
    return tensorInput(key, key, type);
  }

  private static Input tensorInput(String key, String origin, Map<String, Object> type) {
    return new Input(key, dtype(type.get("dtype")), dims(type.get("shape")), origin);
  }

  private static DataType dtype(Object name) {
    if (name instanceof Long code) {
      DataType t = DataType.forNumber(code.intValue());
      if (t != null) {
        return t;
      }
    } else if (name instanceof String s) {
      try {
        return DataType.valueOf("DT_" + s);
      } catch (IllegalArgumentException e) {
        // falls through to the error below
      }
    }
    throw new IllegalStateException("unknown dtype " + name);
  }

  @SuppressWarnings("unchecked")
  private static long[] dims(Object shape) {
    if (!(shape instanceof List<?>)) {
      return null; // "unknown": unknown rank
    }
    // A loop, not a stream: the first stream of a fresh JVM loads some 25 classes, a few ms of a load.
    List<Long> dims = (List<Long>) shape;
    long[] out = new long[dims.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = dims.get(i);
    }
    return out;
  }

  /**
   * The default signature name of a concrete function: the function's name, {@code __}, then each
   * flat input's dtype and dims ({@code scale__float32_N_3}: a float tensor of shape [-1, 3];
   * {@code scalar} for rank 0, {@code N} for an unknown dim, {@code unknown} for an unknown rank;
   * {@code noinputs} without inputs), joined by {@code __}. A name already taken gets {@code _2},
   * {@code _3}...
   */
  public static String defaultName(String function, List<Input> inputs, Set<String> taken) {
    StringBuilder b = new StringBuilder(sanitize(function)).append("__");
    if (inputs.isEmpty()) {
      b.append("noinputs");
    }
    for (int i = 0; i < inputs.size(); i++) {
      if (i > 0) {
        b.append("__");
      }
      Input in = inputs.get(i);
      b.append(dtypeName(in.dtype()));
      if (in.dims() == null) {
        b.append("_unknown");
      } else if (in.dims().length == 0) {
        b.append("_scalar");
      }
      for (long d : in.dims() == null ? new long[0] : in.dims()) {
        b.append('_').append(d < 0 ? "N" : Long.toString(d));
      }
    }
    String name = b.toString();
    for (int n = 2; taken.contains(name); n++) {
      name = b + "_" + n;
    }
    taken.add(name);
    return name;
  }

  /** Python's dtype names: {@code float32} for DT_FLOAT, {@code int64} for DT_INT64... */
  public static String dtypeName(DataType t) {
    return switch (t) {
      case DT_FLOAT -> "float32";
      case DT_DOUBLE -> "float64";
      case DT_HALF -> "float16";
      default -> t.name().substring(3).toLowerCase(Locale.ROOT);
    };
  }

  /** Letters, digits and {@code _} kept; anything else becomes {@code _}; never starts with a digit. */
  public static String sanitize(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      b.append((c < 128 && Character.isLetterOrDigit(c)) || c == '_' ? c : '_');
    }
    if (b.length() == 0 || Character.isDigit(b.charAt(0))) {
      b.insert(0, '_');
    }
    return b.toString();
  }

  /**
   * Refuses inputs that a signature, or Python's loader, could not tell apart: two with the same
   * key ({@code x_1} from a list and a parameter {@code x_1}), two whose keys Python turns into
   * the same parameter name ({@code _b} and {@code arg__b}: see {@link PythonNames#argName}),
   * which makes {@code tf.saved_model.load} refuse the whole SavedModel, and a key that is a
   * Python keyword ({@code lambda}), which it refuses too.
   */
  public static void checkNames(String function, String signature, List<Input> inputs) {
    String where = "cannot save '" + function + "': signature " + signature + ": ";
    // A key taken twice is a Python name taken twice, first by the input of that key (an input of
    // another key taking it before would have been refused first): named as a key taken twice.
    PythonNames.checkArgNames(inputs, Input::key, new PythonNames.Refusal<>() {
      @Override
      public String keyword(Input in, String python) {
        return where + "input " + in.origin() + " would be Python's parameter '" + python
            + "', a Python keyword, so Python's tf.saved_model.load would refuse the SavedModel; rename it";
      }

      @Override
      public String clash(Input before, Input in, String python) {
        if (before.key().equals(in.key())) {
          return where + "inputs " + before.origin() + " and " + in.origin()
              + " would both be the signature input '" + in.key() + "' once flattened; rename a parameter";
        }
        return where + "inputs " + before.origin() + " and " + in.origin() + " (signature inputs '"
            + before.key() + "' and '" + in.key() + "') would both be Python's parameter '" + python
            + "' (Python names an input that does not start with a letter arg_<name>), so Python's"
            + " tf.saved_model.load would refuse the SavedModel; rename one of them";
      }
    });
  }
}
