package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.MapFunction;
import dev.polyfn.Nest;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TType;

/**
 * Dispatch compared call by call with Python's {@code tf.function}: the sequences of calls of
 * tests/python/retracing_parity.py (in the manner of TensorFlow's own cache tests), whose tracing
 * count after each call and the trace that served it (the static shapes and Java values the body
 * was traced for) were recorded from TensorFlow 2.21 in retracing_parity.json. With and without
 * reduce-retracing, over shapes, dtypes, Java values, lists, maps, nests, a concrete function made from a spec and a
 * partly known signature.
 */
class RetracingParityTest {
  private static final Map<String, Object> PY = load();
  private static final int SEP = ((Double) PY.get("separator")).intValue();

  /** One tensor {@code x} of any dtype. */
  @Test
  void oneTensorMatchesPython() {
    for (String name : List.of("shapes_default", "shapes_reduce", "two_axes_reduce", "scalar_then_vectors_reduce",
        "dtypes_reduce")) {
      boolean reduce = name.endsWith("_reduce");
      replay(name, reduce, (tf, in) -> record(tf, List.of(in.input("x", TType.class))),
          c -> Map.of("x", tensor((String) c.get("dtype"), shape(c.get("shape")))));
    }
  }

  /** A tensor and a Java value (a Python int in Python's program). */
  @Test
  void tensorAndJavaValueMatchPython() {
    for (String name : List.of("python_ints_default", "python_ints_reduce")) {
      replay(name, name.endsWith("_reduce"), (tf, in) -> {
        Operand<TFloat32> x = in.input("x", TFloat32.class);
        int n = in.javaInput("n", Integer.class);
        return record(tf, List.of(x), n);
      }, c -> Map.of("x", tensor("float32", shape(c.get("shape"))), "n", ((Double) c.get("n")).intValue()));
    }
  }

  @Test
  void listsMatchPython() {
    for (String name : List.of("lists_default", "lists_reduce")) {
      replay(name, name.endsWith("_reduce"), (tf, in) -> record(tf, new ArrayList<>(in.list("xs", TFloat32.class))),
          c -> {
            List<Tensor> xs = new ArrayList<>();
            for (Object s : (List<?>) c.get("shapes")) {
              xs.add(tensor("float32", shape(s)));
            }
            return Map.of("xs", xs);
          });
    }
  }

  @Test
  void mapsMatchPython() {
    replay("dicts_reduce", true, (tf, in) -> record(tf, new ArrayList<>(in.map("m", TFloat32.class).values())), c -> {
      Map<String, Tensor> m = new LinkedHashMap<>();
      map(c.get("shapes")).forEach((k, s) -> m.put(k, tensor("float32", shape(s))));
      return Map.of("m", m);
    });
  }

  /** A nest of maps and lists, flattened in sorted key order as {@code tf.nest.flatten}. */
  @Test
  void nestsMatchPython() {
    replay("nests_reduce", true, (tf, in) -> {
      List<Operand<?>> leaves = new ArrayList<>();
      flatten(in.nest("n"), leaves);
      return record(tf, leaves);
    }, c -> Map.of("n", build(c.get("nest"))));
  }

  /** A concrete function made from a spec first serves the calls it fits, as in Python. */
  @Test
  void concreteFunctionFromSpecServesCallsAsInPython() {
    for (String name : List.of("spec_then_calls_default", "spec_then_calls_reduce")) {
      replay(name, name.endsWith("_reduce"), (tf, in) -> record(tf, List.of(in.input("x", TFloat32.class))),
          c -> Map.of("x", tensor("float32", shape(c.get("shape")))),
          f -> f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1)))));
    }
  }

  /** Python's {@code input_signature=[TensorSpec([None])]}: one trace; another rank is refused. */
  @Test
  void partlyKnownSignatureMatchesPython() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("seen",
        record(tf, List.of(in.input("x", TFloat32.class, Shape.of(-1))))))) {
      for (Map<String, Object> step : steps("signature_none")) {
        Map<String, Object> c = map(step.get("call"));
        try (Tensor x = tensor("float32", shape(c.get("shape")))) {
          if ("refused".equals(step.get("seen"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", x)).close());
            assertTrue(e.getMessage().contains("x"), e.getMessage());
          } else {
            try (Outputs out = f.call(Map.of("x", x))) {
              assertEquals(ints(step.get("seen")), seen(out), "signature_none " + c);
            }
          }
        }
        assertEquals(((Double) step.get("traces")).intValue(), f.traceCount(), "signature_none trace count after " + c);
      }
    }
  }

  /**
   * Runs Python's sequence {@code name} on a function with {@code body}, the arguments of each
   * call made by {@code args}, and compares the tracing count and the serving trace after each.
   */
  private static void replay(String name, boolean reduce, BiFunction<Ops, Inputs, Operand<TInt32>> body,
      java.util.function.Function<Map<String, Object>, Map<String, Object>> args) {
    replay(name, reduce, body, args, f -> { });
  }

  private static void replay(String name, boolean reduce, BiFunction<Ops, Inputs, Operand<TInt32>> body,
      java.util.function.Function<Map<String, Object>, Map<String, Object>> args, Consumer<MapFunction> before) {
    List<String> mismatches = new ArrayList<>();
    try (MapFunction f = Function.define((tf, in) -> Map.of("seen", body.apply(tf, in)),
        FunctionOptions.defaults().withReduceRetracing(reduce))) {
      before.accept(f);
      for (Map<String, Object> step : steps(name)) {
        Map<String, Object> c = map(step.get("call"));
        Map<String, Object> a = args.apply(c);
        try (Outputs out = f.call(a)) {
          List<Integer> want = ints(step.get("seen"));
          List<Integer> got = seen(out);
          int traces = ((Double) step.get("traces")).intValue();
          if (!want.equals(got) || traces != f.traceCount()) {
            mismatches.add(c + ": Python traces " + traces + " served by " + want + ", Polyfn traces " + f.traceCount()
                + " served by " + got);
          }
        } finally {
          closeAll(a.values());
        }
      }
    }
    assertEquals(List.of(), mismatches, name);
  }

  /** The static shape of each leaf the body was traced for (rank, dims; -1 unknown), then {@code extra}. */
  private static Operand<TInt32> record(Ops tf, List<? extends Operand<?>> leaves, int... extra) {
    List<Integer> out = new ArrayList<>();
    for (Operand<?> x : leaves) {
      Shape s = x.shape();
      if (s.isUnknown()) {
        out.add(-1);
      } else {
        out.add(s.numDimensions());
        for (long d : s.asArray()) {
          out.add((int) d);
        }
      }
      out.add(SEP);
    }
    for (int e : extra) {
      out.add(e);
    }
    return tf.constant(out.stream().mapToInt(Integer::intValue).toArray());
  }

  private static void flatten(Nest n, List<Operand<?>> leaves) {
    if (n.isOperand()) {
      leaves.add(n.operand());
    } else if (n.isList()) {
      n.elements().forEach(e -> flatten(e, leaves));
    } else {
      new TreeMap<>(n.entries()).values().forEach(e -> flatten(e, leaves));
    }
  }

  /** Python's nest: a map, a list of nests, or a tensor's dims. */
  private static Object build(Object v) {
    if (v instanceof Map) {
      Map<String, Object> m = new LinkedHashMap<>();
      map(v).forEach((k, x) -> m.put(k, build(x)));
      return m;
    }
    List<?> l = (List<?>) v;
    if (!l.isEmpty() && l.get(0) instanceof List) {
      List<Object> out = new ArrayList<>();
      l.forEach(x -> out.add(build(x)));
      return out;
    }
    return tensor("float32", shape(l));
  }

  private static List<Integer> seen(Outputs out) {
    TInt32 t = out.get("seen", TInt32.class);
    List<Integer> l = new ArrayList<>();
    t.scalars().forEach(s -> l.add(s.getInt()));
    return l;
  }

  private static Tensor tensor(String dtype, Shape shape) {
    switch (dtype) {
      case "float32":
        return TFloat32.tensorOf(shape);
      case "float64":
        return TFloat64.tensorOf(shape);
      case "int32":
        return TInt32.tensorOf(shape);
      default:
        throw new IllegalArgumentException(dtype);
    }
  }

  private static Shape shape(Object dims) {
    return Shape.of(((List<?>) dims).stream().mapToLong(d -> ((Double) d).longValue()).toArray());
  }

  private static List<Integer> ints(Object list) {
    List<Integer> l = new ArrayList<>();
    for (Object o : (List<?>) list) {
      l.add(((Double) o).intValue());
    }
    return l;
  }

  private static void closeAll(Iterable<?> values) {
    for (Object v : values) {
      if (v instanceof Tensor) {
        ((Tensor) v).close();
      } else if (v instanceof Iterable) {
        closeAll((Iterable<?>) v);
      } else if (v instanceof Map) {
        closeAll(((Map<?, ?>) v).values());
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> steps(String name) {
    return (List<Map<String, Object>>) map(PY.get("cases")).get(name);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  private static Map<String, Object> load() {
    try (InputStream s = RetracingParityTest.class.getResourceAsStream("/retracing_parity.json")) {
      return map(MiniJson.parse(new String(s.readAllBytes(), StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
