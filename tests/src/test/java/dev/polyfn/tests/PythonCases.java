package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.tensorflow.SparseTensor;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * Calls of a Polyfn function recorded with their results, then replayed by Python's {@code
 * tf.saved_model.load} on the saved function ({@code tests/python/check_saved.py}), which must
 * return the same numbers from each signature and from the restored {@code tf.function}.
 */
final class PythonCases {
  /** One call: the signature it runs, its flat inputs by signature key, and Polyfn's outputs. */
  private final List<String> cases = new ArrayList<>();

  static String tensor(TFloat32 t) {
    List<String> values = new ArrayList<>();
    for (float f : SavedModelTest.floats(t)) {
      values.add(Float.toString(f));
    }
    return tensor("float32", t.shape().asArray(), values);
  }

  private static String tensor(TInt64 t) {
    List<String> values = new ArrayList<>();
    t.scalars().forEach(s -> values.add(Long.toString(s.getLong())));
    return tensor("int64", t.shape().asArray(), values);
  }

  private static String tensor(String dtype, long[] shape, List<String> values) {
    List<String> dims = new ArrayList<>();
    for (long d : shape) {
      dims.add(Long.toString(d));
    }
    return "{\"dtype\": \"" + dtype + "\", \"shape\": [" + String.join(",", dims) + "], \"values\": [" + String.join(",", values) + "]}";
  }

  /**
   * Calls {@code f} with {@code args} and records the call: {@code flat} are the signature's
   * inputs, {@code pythonArgs} what Python passes to the restored function (may omit defaults).
   */
  void record(MapFunction f, String signature, Map<String, ?> flat, Map<String, ?> args, Map<String, ?> pythonArgs) {
    try (Outputs out = f.call(args)) {
      String inputs = flat.entrySet().stream().map(e -> "\"" + e.getKey() + "\": " + json(e.getValue()))
          .collect(Collectors.joining(", "));
      String outputs = out.names().stream().map(n -> "\"" + n + "\": " + tensor((TFloat32) out.get(n)))
          .collect(Collectors.joining(", "));
      cases.add("{\"signature\": \"" + signature + "\", \"inputs\": {" + inputs + "}, \"args\": " + json(pythonArgs)
          + ", \"outputs\": {" + outputs + "}}");
    }
  }

  void record(MapFunction f, String signature, Map<String, ?> flat, Map<String, ?> args) {
    record(f, signature, flat, args, args);
  }

  /**
   * A call's arguments as JSON: tensors as {@link #tensor}, lists and maps of them; a record as
   * {@code {"__record__": simple class name, "fields": {...}}} (check_saved.py builds it with the
   * namedtuple class Python's load made); a Java number, boolean or string (no quote or backslash
   * in it) as Python's literal.
   */
  private static String json(Object v) {
    if (v instanceof SparseTensor<?> s) { // first: a SparseTensor is also a tensor of its values' type
      return "{\"indices\": " + tensor(s.indices()) + ", \"values\": " + tensor((TFloat32) s.values()) + ", \"dense_shape\": "
          + tensor(s.denseShape()) + "}";
    }
    if (v instanceof TFloat32 t) {
      return tensor(t);
    }
    if (v instanceof TInt64 t) {
      return tensor(t);
    }
    if (v instanceof Record r) {
      List<String> fields = new ArrayList<>();
      for (RecordComponent c : r.getClass().getRecordComponents()) {
        try {
          fields.add("\"" + c.getName() + "\": " + json(c.getAccessor().invoke(r)));
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException(e);
        }
      }
      return "{\"__record__\": \"" + r.getClass().getSimpleName() + "\", \"fields\": {" + String.join(", ", fields) + "}}";
    }
    if (v instanceof Map<?, ?> m) {
      return m.entrySet().stream().map(e -> "\"" + e.getKey() + "\": " + json(e.getValue()))
          .collect(Collectors.joining(", ", "{", "}"));
    }
    if (v instanceof Boolean || v instanceof Number) { // a Java value: Python's literal
      return v.toString();
    }
    if (v instanceof String s) {
      return "\"" + s + "\"";
    }
    return ((List<?>) v).stream().map(PythonCases::json).collect(Collectors.joining(", ", "[", "]"));
  }

  /** {@link #check(Path, List, String)} of the signatures only. */
  String check(Path saved, List<String> signatures) throws Exception {
    return check(saved, signatures, null);
  }

  /**
   * Runs check_saved.py on {@code saved}: the signatures, and with {@code function} not null the
   * restored function of that name called with each case's arguments.
   */
  String check(Path saved, List<String> signatures, String function) throws Exception {
    Path spec = saved.resolveSibling(saved.getFileName() + "-cases.json");
    Files.writeString(spec, "{" + (function == null ? "" : "\"function\": \"" + function + "\", ") + "\"signatures\": [" + signatures.stream().map(s -> "\"" + s + "\"").collect(Collectors.joining(","))
        + "], \"cases\": [" + String.join(",\n", cases) + "]}");
    String out = PythonScripts.checkSaved(saved, spec);
    cases.clear();
    return out;
  }
}
