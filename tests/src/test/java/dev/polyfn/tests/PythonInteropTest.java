package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SparseOperand;
import dev.polyfn.Variable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * SavedModels written by Polyfn, loaded by Python's {@code tf.saved_model.load} (TensorFlow 2.21
 * from the build's virtualenv, see tests/pom.xml): every signature is there and returns the
 * numbers Polyfn returned for the same inputs ({@code tests/python/check_saved.py} compares them).
 */
class PythonInteropTest {
  private final PythonCases cases = new PythonCases();

  private void record(MapFunction f, String signature, Map<String, ?> flat, Map<String, ?> args) {
    cases.record(f, signature, flat, args);
  }

  private String check(Path saved, List<String> signatures) throws Exception {
    return cases.check(saved, signatures);
  }

  private String check(Path saved, List<String> signatures, String function) throws Exception {
    return cases.check(saved, signatures, function);
  }

  @Test
  void pythonLoadsEverySignatureWithTheSameNumbers(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("scale");
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f));
         MapFunction f = SavedModelTest.scale(w);
         TFloat32 x3 = TFloat32.vectorOf(1f, 1f, 2f);
         TFloat32 x23 = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f, 3f}, {4f, 5f, 6f}}))) {
      record(f, "scale__float32_3", Map.of("x", x3), Map.of("x", x3));
      record(f, "scale__float32_2_3", Map.of("x", x23), Map.of("x", x23));
      f.save(saved);
    }
    // Python's m.scale(x) dispatches across the saved concrete functions, as for its own tf.function.
    assertTrue(check(saved, List.of("scale__float32_3", "scale__float32_2_3"), "scale").contains("OK 2"));

    Path combo = dir.resolve("combo");
    try (MapFunction f = Function.define(SavedModelTest.COMBO, FunctionOptions.defaults().withName("combo"));
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f);
         TFloat32 c = TFloat32.vectorOf(-1f)) {
      Map<String, TFloat32> flat = new LinkedHashMap<>();
      flat.put("xs_0", a);
      flat.put("xs_1", b);
      flat.put("feats_a", a);
      flat.put("feats_b", b);
      record(f, "combo__float32_2__float32_2__float32_2__float32_2", flat, Map.of("xs", List.of(a, b), "feats", Map.of("a", a, "b", b)));
      record(f, "combo__float32_1__float32_1__float32_1", Map.of("xs_0", c, "feats_a", c, "feats_b", c),
          Map.of("xs", List.of(c), "feats", Map.of("a", c, "b", c)));
      f.save(combo);
    }
    assertTrue(check(combo, List.of("combo__float32_2__float32_2__float32_2__float32_2", "combo__float32_1__float32_1__float32_1"),
        "combo").contains("OK 2"));
  }

  /**
   * SavedModels Python's tf.saved_model.save wrote (generated now by tests/python/make_saved.py):
   * a tf.function traced on two signatures with a captured variable, and a tf.Module with three
   * functions loaded by name. Polyfn's loaded functions return what Python's restored ones did,
   * dispatch without tracing, and refuse a call no saved signature accepts.
   */
  @Test
  void pythonWrittenSavedModelsLoadWithTheirDispatch(@TempDir Path dir) throws Exception {
    String python = System.getProperty("polyfn.python", "python3");
    Process p = new ProcessBuilder(python, Path.of("python", "make_saved.py").toString(), dir.toString()).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out + err);
    Map<String, float[]> expected = PythonScripts.namedValues(out);
    try (MapFunction f = (MapFunction) Function.load(dir.resolve("function"));
         TFloat32 v = TFloat32.vectorOf(1f, 2f, 3f, 4f);
         TFloat32 m = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f, 3f}, {4f, 5f, 6f}}));
         TFloat32 wrong = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f}}))) {
      assertEquals(2, f.concreteFunctions().size());
      try (Outputs o = f.call(Map.of("x", v))) {
        assertArrayEquals(expected.get("vector"), SavedModelTest.floats(o.get("y")));
      }
      try (Outputs o = f.call(Map.of("x", m))) {
        assertArrayEquals(expected.get("matrix"), SavedModelTest.floats(o.get("y")));
        assertArrayEquals(expected.get("total"), SavedModelTest.floats(o.get("total")));
      }
      assertEquals(2, f.traceCount()); // the two saved concrete functions; the calls traced nothing
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("x", wrong)).close());
      assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Function.load(dir.resolve("module")));
    assertTrue(e.getMessage().contains("[add, combine, mul]"), e.getMessage());
    try (MapFunction add = Function.load(dir.resolve("module"), "add");
         MapFunction mul = Function.load(dir.resolve("module"), "mul");
         MapFunction combine = Function.load(dir.resolve("module"), "combine");
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f);
         TFloat32 s = TFloat32.scalarOf(2.5f)) {
      try (Outputs o = add.call(Map.of("a", a, "b", b))) {
        assertArrayEquals(expected.get("add"), SavedModelTest.floats(o.get("sum")));
      }
      try (Outputs o = mul.call(Map.of("a", s))) {
        assertArrayEquals(expected.get("mul"), SavedModelTest.floats(o.get("product")));
      }
      try (Outputs o = combine.call(Map.of("xs", List.of(a, b), "feats", Map.of("a", a, "b", b)))) {
        assertArrayEquals(expected.get("combine"), SavedModelTest.floats(o.get("z")));
      }
      assertEquals(3, add.traceCount() + mul.traceCount() + combine.traceCount());
    }
    e = assertThrows(IllegalArgumentException.class,
        () -> Function.load(dir.resolve("module"), "nope"));
    assertTrue(e.getMessage().contains("no function 'nope'"), e.getMessage());
    pythonLiteralsDispatchByValue(dir.resolve("literals"), expected);

    // An object graph whose root names a child node that does not exist: refused naming the file.
    Path pb = dir.resolve("function").resolve("saved_model.pb");
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(pb));
    MetaGraphDef meta = model.getMetaGraphs(0);
    SavedObjectGraph.Builder graph = meta.getObjectGraphDef().toBuilder();
    graph.getNodesBuilder(0).getChildrenBuilder(0).setNodeId(99_999);
    Files.write(pb, model.toBuilder().setMetaGraphs(0, meta.toBuilder().setObjectGraphDef(graph)).build().toByteArray());
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("function")));
    assertTrue(e.getMessage().startsWith(pb + ": a malformed object graph"), e.getMessage());
  }

  /**
   * A tf.function traced with Python literals (training=True/False, an int, a str, a float, a
   * None default and a False default): each literal becomes a Java-value parameter, and a call
   * with the same values reaches the concrete function Python's restored function picks.
   */
  private static void pythonLiteralsDispatchByValue(Path saved, Map<String, float[]> expected) {
    try (MapFunction f = (MapFunction) Function.load(saved); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      assertEquals(5, f.concreteFunctions().size()); // none left out
      Map<String, Object[]> calls = new LinkedHashMap<>();
      calls.put("lit_train", new Object[] {true, 2, "pos", 0.5, false});
      calls.put("lit_infer", new Object[] {false, 2, "pos", 0.5, false});
      calls.put("lit_neg", new Object[] {true, 3, "neg", 0.5, false});
      calls.put("lit_flag", new Object[] {false, 2, "pos", 0.5, true});
      calls.put("lit_scale", new Object[] {false, 2, "pos", 0.25, false});
      for (var call : calls.entrySet()) {
        Object[] v = call.getValue();
        Map<String, Object> args = new LinkedHashMap<>(Map.of("x", x, "training", v[0], "k", v[1], "mode", v[2], "scale", v[3]));
        if ((Boolean) v[4]) {
          args.put("flag", true); // omitted otherwise: Python's default False applies, as in Python
        }
        try (Outputs o = f.call(args)) {
          assertArrayEquals(expected.get(call.getKey()), SavedModelTest.floats(o.get("y")),
              call.getKey());
        }
      }
      assertEquals(5, f.traceCount()); // the saved concrete functions only: no call traced
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("x", x, "training", true, "k", 5, "mode", "pos", "scale", 0.5)).close());
      assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("x", x, "training", true, "k", 2L, "mode", "pos", "scale", 0.5)).close());
      assertTrue(e.getMessage().contains("argument 'k'") && e.getMessage().contains("java.lang.Integer"), e.getMessage());
    }
  }

  /** A record holding a tensor and a list, and one holding a Java value too. */
  record Batch(TFloat32 features, List<TFloat32> extra) {}

  record Scaled(TFloat32 features, int scale) {}

  /** A record whose component is named as a Python keyword. */
  record Span(TFloat32 from, TFloat32 to) {}

  /**
   * Record and nest parameters save: the signature takes their tensors flattened and named by path
   * (a record's components in declaration order, a map's keys sorted), Python's loaded signature
   * returns Polyfn's numbers, and {@code Function.load} restores the record and nest parameters.
   */
  @Test
  void recordAndNestParametersSaveAndLoadBothWays(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("structured");
    MapBody body = (tf, in) -> {
      var b = in.record("batch", Batch.class);
      var n = in.nest("n");
      Operand<TFloat32> x = b.get(Batch::features);
      Operand<TFloat32> e = b.nest(Batch::extra).get(0).operand(TFloat32.class);
      Operand<TFloat32> u = n.get(0).get("u").operand(TFloat32.class);
      Operand<TFloat32> v = n.get(1).get(1).operand(TFloat32.class);
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(3f)), tf.math.sub(e, tf.math.mul(u, v))));
    };
    try (MapFunction f = Function.define(body, FunctionOptions.defaults().withName("structured"));
         TFloat32 x = TFloat32.vectorOf(1f, 2f);
         TFloat32 e = TFloat32.vectorOf(10f, 20f);
         TFloat32 u = TFloat32.vectorOf(3f, 4f);
         TFloat32 v0 = TFloat32.vectorOf(0f, 0f);
         TFloat32 v1 = TFloat32.vectorOf(-1f, 0.5f)) {
      Map<String, TFloat32> flat = new LinkedHashMap<>();
      flat.put("batch_features", x);
      flat.put("batch_extra_0", e);
      flat.put("n_0_u", u);
      flat.put("n_1_0", v0);
      flat.put("n_1_1", v1);
      Map<String, Object> args = Map.of("batch", new Batch(x, List.of(e)), "n", List.of(Map.of("u", u), List.of(v0, v1)));
      record(f, "structured__float32_2__float32_2__float32_2__float32_2__float32_2", flat, args);
      f.save(saved);
      float[] y;
      try (Outputs o = f.call(args)) {
        y = SavedModelTest.floats(o.get("y"));
      }
      try (MapFunction loaded = (MapFunction) Function.load(saved)) {
        try (Outputs o = loaded.call(args)) {
          assertArrayEquals(y, SavedModelTest.floats(o.get("y")));
        }
        assertEquals(1, loaded.traceCount());
        assertEquals("nest", loaded.concreteFunctions().get(0).functionType().parameters().get(0).kind());
        // Another structure is another concrete function, which was not saved: refused, naming the path.
        IllegalArgumentException err = assertThrows(IllegalArgumentException.class,
            () -> loaded.call(Map.of("batch", new Batch(x, List.of(e, e)), "n", List.of(Map.of("u", u), List.of(v0, v1)))).close());
        assertTrue(err.getMessage().contains("matches no saved signature") && err.getMessage().contains("batch"), err.getMessage());
      }
    }
    // Python calls m.structured(batch=Batch(...), n=...) with the namedtuple class its load made
    // (type(m.structured.concrete_functions[0].structured_input_signature[0][0])), named as the record.
    String out = check(saved, List.of("structured__float32_2__float32_2__float32_2__float32_2__float32_2"), "structured");
    assertTrue(out.contains("record Batch as namedtuple('features', 'extra')") && out.contains("OK 1"), out);

    // A component named as a Python keyword cannot be a namedtuple field (Python's load would
    // fail): the record is a tuple for Python, of its components in declaration order.
    try (MapFunction f = Function.define((tf, in) -> {
          var span = in.record("span", Span.class);
          return Map.of("y", tf.math.sub(span.get(Span::to), span.get(Span::from)));
        }, FunctionOptions.defaults().withName("span"));
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(5f, 7f)) {
      record(f, "span__float32_2__float32_2", Map.of("span_from", a, "span_to", b), Map.of("span", new Span(a, b)));
      f.save(dir.resolve("span"));
    }
    out = check(dir.resolve("span"), List.of("span__float32_2__float32_2"), "span");
    assertTrue(out.contains("record Span as tuple") && out.contains("OK 1"), out);

    // A Java value inside a record saves as its text, and Python's literal in the namedtuple:
    // m.scaled(batch=Scaled(features=x, scale=3)) runs the trace of scale 3 (refused before 2026-11-28).
    try (MapFunction f = Function.define((tf, in) -> {
          var b = in.record("batch", Scaled.class);
          return Map.of("y", tf.math.mul(b.get(Scaled::features), tf.constant((float) b.value(Scaled::scale))));
        }, FunctionOptions.defaults().withName("scaled"));
         TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      record(f, "scaled__float32_2", Map.of("batch_features", x), Map.of("batch", new Scaled(x, 3)));
      f.save(dir.resolve("scaled"));
      try (MapFunction g = (MapFunction) Function.load(dir.resolve("scaled"))) {
        assertArrayEquals(new float[] {3f, 6f}, SavedModelTest.call(g, Map.of("batch", new Scaled(x, 3)), "y"));
        assertThrows(IllegalArgumentException.class, () -> g.call(Map.of("batch", new Scaled(x, 4))).close());
      }
    }
    out = check(dir.resolve("scaled"), List.of("scaled__float32_2"), "scaled");
    assertTrue(out.contains("record Scaled as namedtuple") && out.contains("OK 1"), out);
  }

  /**
   * A SparseTensor parameter saves: the signature takes its indices, values and dense shape
   * (named by path), Python's {@code m.sparse(s)} takes a {@code tf.sparse.SparseTensor}, both
   * return Polyfn's numbers, and {@code Function.load} restores the parameter.
   */
  @Test
  void sparseTensorParametersSaveAndLoadBothWays(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("sparse");
    MapBody body = (tf, in) -> {
      SparseOperand<TFloat32> s = in.sparse("s", TFloat32.class);
      return Map.of("total", tf.sum(s.values(), tf.constant(0)), "scaled", tf.math.mul(s.values(), tf.constant(3f)));
    };
    try (MapFunction f = Function.define(body, FunctionOptions.defaults().withName("sparse"));
         TInt64 idx = TInt64.tensorOf(StdArrays.ndCopyOf(new long[][] {{0, 1}, {2, 3}}));
         TFloat32 vals = TFloat32.vectorOf(1.5f, -4f);
         TInt64 dense = TInt64.vectorOf(3, 4)) {
      SparseTensor<TFloat32> s = SparseTensor.of(idx, vals, dense);
      Map<String, Object> flat = new LinkedHashMap<>();
      flat.put("s_indices", idx);
      flat.put("s_values", vals);
      flat.put("s_dense_shape", dense);
      record(f, "sparse__int64_N_2__float32_N__int64_2", flat, Map.of("s", s));
      f.save(saved);
      float[] scaled;
      try (Outputs o = f.call(Map.of("s", s))) {
        scaled = SavedModelTest.floats(o.get("scaled"));
      }
      try (MapFunction loaded = (MapFunction) Function.load(saved); Outputs o = loaded.call(Map.of("s", s))) {
        assertArrayEquals(scaled, SavedModelTest.floats(o.get("scaled")));
        assertEquals(1, loaded.traceCount());
      }
    }
    assertTrue(check(saved, List.of("sparse__int64_N_2__float32_N__int64_2"), "sparse").contains("OK 1"));
  }
}
