package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.UnaryFunction;
import dev.polyfn.Variable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * The programs of tests/python/control_flow_parity.py, written with Flow, give the outputs Python's
 * tf.cond / tf.while_loop / tf.map_fn gave (recorded in control_flow_parity.json), gradients
 * included, and a tiny model trained through a cond and a bounded while follows Python's losses.
 */
class ControlFlowParityTest {
  private static final Map<String, Object> PY = MiniJson.resource("/control_flow_parity.json");

  @Test
  void condMatchesPython() {
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> Flow.cond(tf,
        tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)),
        () -> tf.math.mul(x, tf.constant(10f)), () -> tf.math.neg(x)))) {
      for (Map<String, Object> c : cases("cond_scale")) {
        try (TFloat32 x = vector(c.get("x")); TFloat32 y = f.call(x)) {
          assertVector(c.get("y"), y);
        }
      }
    }
  }

  @Test
  void whileLoopsMatchPython() {
    try (UnaryFunction<TInt32, TFloat32> sum = Function.unary(TInt32.class, (tf, n) -> f32(Flow.whileLoop(tf,
            List.of(tf.constant(0), tf.constant(0f)), v -> tf.math.less(i(v.get(0)), n),
            v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.add(f32(v.get(1)), tf.constant(0.5f))))
            .get(1)));
        UnaryFunction<TFloat32, TFloat32> doubled = Function.unary(TFloat32.class, (tf, x) -> f32(Flow.whileLoop(tf,
            List.of(x), Flow.loop().maximumIterations(4), v -> tf.constant(true),
            v -> List.of(tf.math.mul(f32(v.get(0)), tf.constant(2f)))).get(0)));
        UnaryFunction<TFloat32, TFloat32> grow = Function.unary(TFloat32.class, (tf, x) -> f32(Flow.whileLoop(tf,
            List.of(x), Flow.loop().shape(0, Shape.of(-1)), v -> tf.math.less(tf.size(f32(v.get(0))), tf.constant(8)),
            v -> List.of(tf.concat(List.of(f32(v.get(0)), f32(v.get(0))), tf.constant(0)))).get(0)))) {
      for (Map<String, Object> c : cases("while_sum")) {
        try (TInt32 n = TInt32.scalarOf(num(c.get("n")).intValue()); TFloat32 y = sum.call(n)) {
          assertEquals(num(c.get("y")), y.getFloat(), 1e-4);
        }
      }
      for (Map<String, Object> c : cases("bounded_double")) {
        try (TFloat32 x = TFloat32.scalarOf(num(c.get("x")).floatValue()); TFloat32 y = doubled.call(x)) {
          assertEquals(num(c.get("y")), y.getFloat(), 1e-6);
        }
      }
      Map<String, Object> g = map(PY.get("grow"));
      try (TFloat32 x = vector(g.get("x")); TFloat32 y = grow.call(x)) {
        assertVector(g.get("y"), y);
      }
    }
  }

  @Test
  void aCondInsideAWhileMatchesPython() {
    try (UnaryFunction<TInt32, TInt32> steps = Function.unary(TInt32.class, (tf, n) -> i(Flow.whileLoop(tf,
        List.of(n, tf.constant(0)), v -> tf.math.greater(i(v.get(0)), tf.constant(1)), v -> {
          Operand<TInt32> x = i(v.get(0));
          return List.of(Flow.cond(tf, tf.math.equal(tf.math.floorMod(x, tf.constant(2)), tf.constant(0)),
              () -> tf.math.floorDiv(x, tf.constant(2)), () -> tf.math.add(tf.math.mul(x, tf.constant(3)), tf.constant(1))),
              tf.math.add(i(v.get(1)), tf.constant(1)));
        }).get(1)))) {
      for (Map<String, Object> c : cases("collatz_steps")) {
        try (TInt32 n = TInt32.scalarOf(num(c.get("n")).intValue()); TInt32 y = steps.call(n)) {
          assertEquals(num(c.get("y")).intValue(), y.getInt());
        }
      }
    }
  }

  @Test
  void mapFnMatchesPython() {
    Map<String, Object> c = map(PY.get("row_square_sums"));
    List<?> rows = (List<?>) c.get("x");
    float[][] data = new float[rows.size()][];
    for (int r = 0; r < data.length; r++) {
      data[r] = floats(rows.get(r));
    }
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class,
            (tf, x) -> Flow.mapFn(tf, x, row -> tf.sum(tf.math.square(row), tf.constant(0))));
        TFloat32 x = TFloat32.tensorOf(StdArrays.ndCopyOf(data)); TFloat32 y = f.call(x)) {
      assertVector(c.get("y"), y);
    }
  }

  /**
   * The same programs compiled with XLA (jitCompile) give Python's numbers too, gradients through
   * a cond and a bounded while included.
   */
  @Test
  void withXlaCondWhileMapFnAndGradientsMatchPython() {
    FunctionOptions xla = FunctionOptions.defaults().withJitCompile(true);
    try (UnaryFunction<TFloat32, TFloat32> cond = Function.unary(TFloat32.class, (tf, x) -> Flow.cond(tf,
            tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)),
            () -> tf.math.mul(x, tf.constant(10f)), () -> tf.math.neg(x)), xla);
        UnaryFunction<TInt32, TFloat32> sum = Function.unary(TInt32.class, (tf, n) -> f32(Flow.whileLoop(tf,
            List.of(tf.constant(0), tf.constant(0f)), v -> tf.math.less(i(v.get(0)), n),
            v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.add(f32(v.get(1)), tf.constant(0.5f))))
            .get(1)), xla);
        UnaryFunction<TFloat32, TFloat32> squares = Function.unary(TFloat32.class,
            (tf, x) -> Flow.mapFn(tf, x, row -> tf.sum(tf.math.square(row), tf.constant(0))), xla);
        MapFunction model = Function.define((tf, in) -> {
          Operand<TFloat32> w = in.input("w", TFloat32.class);
          Operand<TFloat32> b = in.input("b", TFloat32.class);
          Operand<TFloat32> loss = modelLoss(tf, w, b, in.input("x", TFloat32.class), in.input("t", TFloat32.class));
          List<Operand<?>> d = Flow.gradients(tf, loss, List.of(w, b));
          return Map.of("loss", loss, "dw", d.get(0), "db", d.get(1));
        }, xla)) {
      for (Map<String, Object> c : cases("cond_scale")) {
        try (TFloat32 x = vector(c.get("x")); TFloat32 y = cond.call(x)) {
          assertVector(c.get("y"), y);
        }
      }
      for (Map<String, Object> c : cases("while_sum")) {
        try (TInt32 n = TInt32.scalarOf(num(c.get("n")).intValue()); TFloat32 y = sum.call(n)) {
          assertEquals(num(c.get("y")), y.getFloat(), 1e-4);
        }
      }
      Map<String, Object> rows = map(PY.get("row_square_sums"));
      List<?> r = (List<?>) rows.get("x");
      float[][] data = new float[r.size()][];
      for (int k = 0; k < data.length; k++) {
        data[k] = floats(r.get(k));
      }
      try (TFloat32 x = TFloat32.tensorOf(StdArrays.ndCopyOf(data)); TFloat32 y = squares.call(x)) {
        assertVector(rows.get("y"), y);
      }
      for (Map<String, Object> c : cases("model_gradients")) {
        try (TFloat32 w = TFloat32.scalarOf(num(c.get("w")).floatValue());
            TFloat32 b = TFloat32.scalarOf(num(c.get("b")).floatValue());
            TFloat32 x = vector(c.get("x")); TFloat32 t = vector(c.get("t"));
            Outputs out = model.call(Map.of("w", w, "b", b, "x", x, "t", t))) {
          assertEquals(num(c.get("loss")), out.get("loss", TFloat32.class).getFloat(), 1e-4);
          assertEquals(num(c.get("dw")), out.get("dw", TFloat32.class).getFloat(), 1e-3);
          assertEquals(num(c.get("db")), out.get("db", TFloat32.class).getFloat(), 1e-3);
        }
      }
    }
  }

  /**
   * As in Python, a loop differentiated under XLA needs maximumIterations (the recorded values need
   * a list of fixed size): without it the call fails with TensorFlow's message saying so, and the
   * JVM goes on.
   */
  @Test
  void withXlaAGradientThroughAnUnboundedLoopFailsSayingWhy() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> w = in.input("w", TFloat32.class);
          Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(tf.constant(0), w), v -> tf.math.less(i(v.get(0)),
              tf.constant(3)), v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul(f32(v.get(1)), w)))
              .get(1));
          return Map.of("d", Flow.gradients(tf, y, List.of(w)).get(0));
        }, FunctionOptions.defaults().withJitCompile(true));
        TFloat32 w = TFloat32.scalarOf(2f)) {
      Exception e = assertThrows(Exception.class, () -> f.call(Map.of("w", w)).close());
      assertTrue(e.getMessage().contains("XLA compilation requires a fixed tensor list size"), e.getMessage());
    }
  }

  /** The model of the Python script: a cond on the input's sign, three iterations of v = v * w + b, squared error. */
  static Operand<TFloat32> modelLoss(Ops tf, Operand<TFloat32> w, Operand<TFloat32> b, Operand<TFloat32> x,
      Operand<TFloat32> t) {
    Operand<TFloat32> h = Flow.cond(tf, tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)),
        () -> tf.math.mul(w, x), () -> tf.math.mul(tf.math.mul(w, x), tf.constant(0.5f)));
    Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(h), Flow.loop().maximumIterations(3), vs -> tf.constant(true),
        vs -> List.of(tf.math.add(tf.math.mul(f32(vs.get(0)), w), b))).get(0));
    return tf.sum(tf.math.square(tf.math.sub(v, t)), tf.constant(0));
  }

  @Test
  void gradientsThroughCondAndWhileMatchPython() {
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> w = in.input("w", TFloat32.class);
      Operand<TFloat32> b = in.input("b", TFloat32.class);
      Operand<TFloat32> loss = modelLoss(tf, w, b, in.input("x", TFloat32.class), in.input("t", TFloat32.class));
      List<Operand<?>> d = Flow.gradients(tf, loss, List.of(w, b));
      return Map.of("loss", loss, "dw", d.get(0), "db", d.get(1));
    })) {
      for (Map<String, Object> c : cases("model_gradients")) {
        try (TFloat32 w = TFloat32.scalarOf(num(c.get("w")).floatValue());
            TFloat32 b = TFloat32.scalarOf(num(c.get("b")).floatValue());
            TFloat32 x = vector(c.get("x")); TFloat32 t = vector(c.get("t"));
            Outputs out = f.call(Map.of("w", w, "b", b, "x", x, "t", t))) {
          assertEquals(num(c.get("loss")), out.get("loss", TFloat32.class).getFloat(), 1e-4);
          assertEquals(num(c.get("dw")), out.get("dw", TFloat32.class).getFloat(), 1e-3);
          assertEquals(num(c.get("db")), out.get("db", TFloat32.class).getFloat(), 1e-3);
        }
      }
    }
  }

  @Test
  void aTinyModelTrainsThroughACondAndABoundedWhile() {
    Map<String, Object> tr = map(PY.get("training"));
    float lr = num(tr.get("lr")).floatValue();
    try (TFloat32 w0 = TFloat32.scalarOf(0.5f); TFloat32 b0 = TFloat32.scalarOf(0.1f);
        Variable<TFloat32> w = Variable.create(w0); Variable<TFloat32> b = Variable.create(b0);
        MapFunction step = Function.define((tf, in) -> {
          Operand<TFloat32> wv = w.read(tf);
          Operand<TFloat32> bv = b.read(tf);
          Operand<TFloat32> loss = modelLoss(tf, wv, bv, in.input("x", TFloat32.class), in.input("t", TFloat32.class));
          List<Operand<?>> d = Flow.gradients(tf, loss, List.of(wv, bv));
          w.assign(tf, tf.math.sub(wv, tf.math.mul(tf.constant(lr), f32(d.get(0)))));
          b.assign(tf, tf.math.sub(bv, tf.math.mul(tf.constant(lr), f32(d.get(1)))));
          return Map.of("loss", loss);
        });
        TFloat32 x = vector(tr.get("x")); TFloat32 t = vector(tr.get("t"))) {
      List<?> losses = (List<?>) tr.get("losses");
      for (Object expected : losses) {
        try (Outputs out = step.call(Map.of("x", x, "t", t))) {
          assertEquals(num(expected), out.get("loss", TFloat32.class).getFloat(), 1e-3 * Math.max(1, num(expected)));
        }
      }
      assertEquals(1, step.traceCount());
      try (TFloat32 wv = w.value(); TFloat32 bv = b.value()) {
        assertEquals(num(tr.get("w")), wv.getFloat(), 1e-4);
        assertEquals(num(tr.get("b")), bv.getFloat(), 1e-4);
      }
      assertTrue(num(losses.get(losses.size() - 1)) < num(losses.get(0)), "the Python run itself learned");
    }
  }

  @Test
  void tensorFlowsOwnGradientsNameTheOpTheyCannotDifferentiate() {
    Exception e = assertThrows(Exception.class, () -> {
      try (MapFunction f = Function.define((tf, in) -> {
            Operand<TFloat32> w = in.input("w", TFloat32.class);
            Operand<TFloat32> y = Flow.cond(tf, tf.constant(true), () -> tf.math.square(w), () -> w);
            return Map.of("d", tf.gradients(y, List.of(w)).dy(0));
          });
          TFloat32 w = TFloat32.scalarOf(1f)) {
        f.call(Map.of("w", w)).close();
      }
    });
    assertTrue(e.getMessage().contains("StatelessIf"), e.getMessage());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> cases(String name) {
    return (List<Map<String, Object>>) PY.get(name);
  }

  private static Double num(Object o) {
    return (Double) o;
  }

  private static float[] floats(Object list) {
    List<?> l = (List<?>) list;
    float[] a = new float[l.size()];
    for (int k = 0; k < a.length; k++) {
      a[k] = num(l.get(k)).floatValue();
    }
    return a;
  }

  private static TFloat32 vector(Object list) {
    return TFloat32.vectorOf(floats(list));
  }

  private static void assertVector(Object expected, TFloat32 y) {
    float[] e = floats(expected);
    assertEquals(Shape.of(e.length), y.shape());
    for (int k = 0; k < e.length; k++) {
      assertEquals(e[k], y.getFloat(k), 1e-4 * Math.max(1, Math.abs(e[k])));
    }
  }
}
