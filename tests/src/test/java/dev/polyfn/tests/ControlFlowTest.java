package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.UnaryFunction;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/** cond, whileLoop and mapFn run by TensorFlow: branches chosen at run time, captures, nesting, errors. */
class ControlFlowTest {

  @Test
  void condPicksTheBranchAtRunTimeWithoutRetracing() {
    AtomicInteger traces = new AtomicInteger();
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> {
      traces.incrementAndGet();
      Operand<TFloat32> scale = tf.constant(10f); // captured by the then branch
      return Flow.cond(tf, tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)),
          () -> tf.math.mul(x, scale),
          () -> tf.math.neg(x));
    })) {
      try (TFloat32 a = TFloat32.vectorOf(1f, 2f); TFloat32 y = f.call(a)) {
        assertEquals(20f, y.getFloat(1), 0f);
      }
      try (TFloat32 a = TFloat32.vectorOf(-1f, -2f); TFloat32 y = f.call(a)) {
        assertEquals(2f, y.getFloat(1), 0f);
      }
      assertEquals(1, traces.get());
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void theReadmeExampleRuns() {
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> {
      Operand<TFloat32> ten = tf.constant(10f);
      Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)),
          () -> tf.math.mul(x, ten),
          () -> tf.math.neg(x));
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(y), Flow.loop().maximumIterations(100),
          v -> tf.math.greater(tf.max((Operand<TFloat32>) v.get(0), tf.constant(0)), tf.constant(1f)),
          v -> List.of(tf.math.div((Operand<TFloat32>) v.get(0), tf.constant(2f))));
      return (Operand<TFloat32>) out.get(0);
    })) {
      try (TFloat32 x = TFloat32.vectorOf(1f, 3f); TFloat32 y = f.call(x)) {
        assertArrayEquals(new float[] {10f / 32, 30f / 32}, new float[] {y.getFloat(0), y.getFloat(1)});
      }
      try (TFloat32 x = TFloat32.vectorOf(-1f, -3f); TFloat32 y = f.call(x)) {
        assertArrayEquals(new float[] {0.25f, 0.75f}, new float[] {y.getFloat(0), y.getFloat(1)});
      }
    }
  }

  /**
   * A stateful operation built only from the branch's own values (here a file write of constants)
   * runs only when its branch is taken, as with tf.cond: the branch's original operations are not
   * the traced function's effects (control outputs), so TensorFlow prunes them from its body.
   */
  @Test
  void anUntakenBranchDoesNotRunItsStatefulOperations(@TempDir Path dir) {
    Path file = dir.resolve("written");
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)),
          () -> tf.withControlDependencies(List.of(tf.io.writeFile(tf.constant(file.toString()), tf.constant("ran"))))
              .identity(x),
          () -> tf.math.neg(x));
      return Map.of("y", y);
    })) {
      try (TFloat32 negative = TFloat32.scalarOf(-1f); Outputs out = f.call(Map.of("x", negative))) {
        assertEquals(1f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertFalse(Files.exists(file), "the untaken branch wrote its file");
      try (TFloat32 positive = TFloat32.scalarOf(2f); Outputs out = f.call(Map.of("x", positive))) {
        assertEquals(2f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertTrue(Files.exists(file), "the taken branch did not write its file");
    }
  }

  @Test
  void anUntakenBranchDoesNotAssignItsVariable() {
    try (TFloat32 zero = TFloat32.scalarOf(0f); Variable<TFloat32> v = Variable.create(zero);
        MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)),
              () -> {
                Operand<TFloat32> next = tf.math.add(v.read(tf), x);
                return tf.withControlDependencies(List.of(v.assign(tf, next))).identity(x);
              },
              () -> tf.math.neg(x));
          return Map.of("y", y);
        })) {
      callScalar(f, -3f);
      try (TFloat32 now = v.value()) {
        assertEquals(0f, now.getFloat(), 0f);
      }
      callScalar(f, 2f);
      try (TFloat32 now = v.value()) {
        assertEquals(2f, now.getFloat(), 0f);
      }
    }
  }

  @Test
  void whileLoopRunsInOneCallAndSeesCaptures() {
    try (UnaryFunction<TInt32, TFloat32> f = Function.unary(TInt32.class, (tf, n) -> {
      Operand<TFloat32> step = tf.constant(0.5f);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f)),
          v -> tf.math.less(i(v.get(0)), n),
          v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.add(f32(v.get(1)), step)));
      return f32(out.get(1));
    })) {
      for (int n : new int[] {0, 3, 1000}) {
        try (TInt32 a = TInt32.scalarOf(n); TFloat32 y = f.call(a)) {
          assertEquals(0.5f * n, y.getFloat(), 0f);
        }
      }
      assertEquals(1, f.traceCount());
    }
  }

  @Test
  void maximumIterationsBoundsTheLoop() {
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> f32(Flow.whileLoop(tf,
        List.of(x), Flow.loop().maximumIterations(4), v -> tf.constant(true),
        v -> List.of(tf.math.mul(f32(v.get(0)), tf.constant(2f)))).get(0)));
        TFloat32 a = TFloat32.scalarOf(1f); TFloat32 y = f.call(a)) {
      assertEquals(16f, y.getFloat(), 0f);
    }
  }

  @Test
  void aGrowingLoopVariableNeedsARelaxedShape() {
    Ops[] holder = new Ops[1];
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> f32(Flow.whileLoop(tf,
          List.of(x), v -> tf.constant(false), v -> List.of(tf.concat(List.of(f32(v.get(0)), f32(v.get(0))),
              tf.constant(0)))).get(0)));
          TFloat32 a = TFloat32.vectorOf(1f)) {
        f.call(a).close();
      }
    });
    assertTrue(e.getMessage().contains("loop variable 0 has shape [1] on entry but [2] after an iteration"),
        e.getMessage());
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> f32(Flow.whileLoop(tf,
        List.of(x), Flow.loop().shape(0, Shape.of(-1)),
        v -> tf.math.less(tf.size(f32(v.get(0))), tf.constant(8)),
        v -> List.of(tf.concat(List.of(f32(v.get(0)), f32(v.get(0))), tf.constant(0)))).get(0)));
        TFloat32 a = TFloat32.vectorOf(1f); TFloat32 y = f.call(a)) {
      assertEquals(Shape.of(8), y.shape());
    }
  }

  @Test
  void branchesOfDifferentDtypesAreRefusedNamingTheOutput() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> f32(Flow.condList(tf,
          tf.constant(true), () -> List.of(x), () -> List.of(tf.constant(1))).get(0)));
          TFloat32 a = TFloat32.scalarOf(1f)) {
        f.call(a).close();
      }
    });
    assertEquals("cond: output 0 is FLOAT in the then branch but INT32 in the else branch", e.getMessage());
  }

  @Test
  void mapFnAppliesTheLambdaToEachRow() {
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class,
            (tf, x) -> Flow.mapFn(tf, x, row -> tf.sum(tf.math.square(row), tf.constant(0))));
        TFloat32 a = TFloat32.tensorOf(org.tensorflow.ndarray.StdArrays.ndCopyOf(new float[][] {{1, 2}, {3, 4}, {0, 5}}));
        TFloat32 y = f.call(a)) {
      assertEquals(Shape.of(3), y.shape());
      assertArrayEquals(new float[] {5f, 25f, 25f}, new float[] {y.getFloat(0), y.getFloat(1), y.getFloat(2)});
    }
  }

  @Test
  void aCondInsideAWhileInsideAFunctionCalledByAnother() {
    // Collatz steps: the loop body branches on parity.
    try (UnaryFunction<TInt32, TInt32> steps = Function.unary(TInt32.class, (tf, n) -> {
          List<Operand<?>> out = Flow.whileLoop(tf, List.of(n, tf.constant(0)),
              v -> tf.math.greater(i(v.get(0)), tf.constant(1)),
              v -> {
                Operand<TInt32> x = i(v.get(0));
                Operand<TInt32> next = Flow.cond(tf, tf.math.equal(tf.math.mod(x, tf.constant(2)), tf.constant(0)),
                    () -> tf.math.div(x, tf.constant(2)),
                    () -> tf.math.add(tf.math.mul(x, tf.constant(3)), tf.constant(1)));
                return List.of(next, tf.math.add(i(v.get(1)), tf.constant(1)));
              });
          return i(out.get(1));
        });
        UnaryFunction<TInt32, TInt32> outer = Function.unary(TInt32.class,
            (tf, n) -> tf.math.add(steps.apply(tf, n), tf.constant(1000)))) {
      int[][] cases = {{1, 0}, {6, 8}, {27, 111}};
      for (int[] c : cases) {
        try (TInt32 a = TInt32.scalarOf(c[0]); TInt32 y = outer.call(a)) {
          assertEquals(1000 + c[1], y.getInt());
        }
      }
    }
  }

  @Test
  void gradientsThroughLoopsMatchTheirClosedForms() {
    // w squared until it reaches 100: from w = 3, three times (w^8); w multiplied into 1 five times (w^5);
    // a bounded loop squaring twice (w^4). Each loop's gradient depends on the values of every iteration.
    float w0 = 3f;
    assertGradient(w0, Math.pow(w0, 8), 8 * Math.pow(w0, 7), (tf, w) -> f32(Flow.whileLoop(tf, List.of(w),
        v -> tf.math.less(f32(v.get(0)), tf.constant(100f)), v -> List.of(tf.math.square(f32(v.get(0))))).get(0)));
    assertGradient(w0, Math.pow(w0, 5), 5 * Math.pow(w0, 4), (tf, w) -> f32(Flow.whileLoop(tf,
        List.of(tf.constant(1f)), v -> tf.math.less(f32(v.get(0)), tf.constant(100f)),
        v -> List.of(tf.math.mul(f32(v.get(0)), w))).get(0)));
    assertGradient(w0, Math.pow(w0, 4), 4 * Math.pow(w0, 3), (tf, w) -> f32(Flow.whileLoop(tf, List.of(w),
        Flow.loop().maximumIterations(2), v -> tf.constant(true), v -> List.of(tf.math.square(f32(v.get(0))))).get(0)));
    assertGradient(w0, Math.pow(w0, 3), 3 * Math.pow(w0, 2), (tf, w) -> Flow.cond(tf,
        tf.math.greater(w, tf.constant(0f)), () -> tf.math.mul(w, tf.math.square(w)), () -> tf.math.neg(w)));
    assertGradient(-w0, w0, -1, (tf, w) -> Flow.cond(tf,
        tf.math.greater(w, tf.constant(0f)), () -> tf.math.mul(w, tf.math.square(w)), () -> tf.math.neg(w)));
  }

  private static void assertGradient(float w0, double y, double dy,
      java.util.function.BiFunction<Ops, Operand<TFloat32>, Operand<TFloat32>> body) {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> w = in.input("w", TFloat32.class);
          Operand<TFloat32> out = body.apply(tf, w);
          return Map.of("y", out, "d", Flow.gradients(tf, out, List.of(w)).get(0));
        });
        TFloat32 w = TFloat32.scalarOf(w0); Outputs o = f.call(Map.of("w", w))) {
      assertEquals(y, o.get("y", TFloat32.class).getFloat(), 1e-3 * Math.abs(y));
      assertEquals(dy, o.get("d", TFloat32.class).getFloat(), 1e-3 * Math.abs(dy));
    }
  }

  private static void callScalar(MapFunction f, float x) {
    try (TFloat32 a = TFloat32.scalarOf(x); Outputs out = f.call(Map.of("x", a))) {
      out.get("y", TFloat32.class);
    }
  }

  @SuppressWarnings("unchecked")
  static Operand<TInt32> i(Operand<?> o) {
    return (Operand<TInt32>) o;
  }

  @SuppressWarnings("unchecked")
  static Operand<TFloat32> f32(Operand<?> o) {
    return (Operand<TFloat32>) o;
  }
}
