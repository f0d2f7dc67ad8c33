package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static dev.polyfn.tests.PortCalls.scalars;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.ListFunction;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * Gradients of gradients through {@code Flow.whileLoop} (the first gradient's backward loop pops
 * the recorded values from TensorLists, so differentiating it goes through TensorLists), and
 * gradients through loops that carry a TensorList. Expected values are TensorFlow 2.21's, from
 * tf.function programs of this form (x a float32 scalar):
 *
 * <pre>
 * &#64;tf.function
 * def second(x):
 *     y = tf.while_loop(cond, body, loop_vars)[k]  # each case's loop below
 *     g = tf.gradients(y, x)[0]
 *     return y, g, tf.gradients(g, x)[0]
 * </pre>
 */
class LoopSecondDerivativeTest {

  /**
   * x^n by a loop multiplying by x n times: Python's {@code tf.while_loop(lambda i, v: i < n, lambda
   * i, v: (i + 1, v * x), [0, tf.constant(1.0)])[1]}.
   */
  static Operand<TFloat32> power(Ops tf, Operand<TFloat32> x, Operand<TInt32> n) {
    return f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)), v -> tf.math.less(i(v.get(0)), n),
        v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul(f32(v.get(1)), x))).get(1));
  }

  /** y, dy/dx and d2y/dx2 of the y that {@code y} builds from the input x. */
  static ListFunction secondDerivative(BiFunction<Ops, Operand<TFloat32>, Operand<TFloat32>> y) {
    return Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> v = y.apply(tf, x);
      Operand<?> g = Flow.gradients(tf, v, List.of(x)).get(0);
      return List.of(v, g, Flow.gradients(tf, g, List.of(x)).get(0));
    });
  }

  private static void assertClose(List<Float> expected, List<Float> got) {
    assertEquals(expected.size(), got.size());
    for (int k = 0; k < expected.size(); k++) {
      assertEquals(expected.get(k), got.get(k), 1e-5f * Math.max(1f, Math.abs(expected.get(k))), "output " + k);
    }
  }

  /**
   * Five iterations of v = sin(v) + v/2 from x = 0.7. Python: {@code tf.while_loop(lambda i, v: i
   * < 5, lambda i, v: (i + 1, tf.sin(v) + v * 0.5), [0, x])[1]}: 1.878516674041748,
   * 0.10671136528253555, -0.7582637667655945.
   */
  @Test
  void secondDerivativeOfANonlinearLoop() {
    try (ListFunction f = secondDerivative((tf, x) -> f32(Flow.whileLoop(tf, List.of(tf.constant(0), x),
        v -> tf.math.less(i(v.get(0)), tf.constant(5)),
        v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)),
            tf.math.add(tf.math.sin(f32(v.get(1))), tf.math.mul(f32(v.get(1)), tf.constant(0.5f))))).get(1)))) {
      assertClose(List.of(1.878516674041748f, 0.10671136528253555f, -0.7582637667655945f),
          scalars(f, Map.of("x", 0.7f)));
    }
  }

  /**
   * Two loop variables that both depend on x and on each other. Python at x = 1.5: {@code _, a, b
   * = tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * x + b, b * a), [0, x,
   * tf.constant(1.0)]); y = a + b}: 45.515625, 119.3125, 276.875.
   */
  @Test
  void secondDerivativeOfALoopWithTwoVariablesOfX() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), x, tf.constant(1f)),
          v -> tf.math.less(i(v.get(0)), tf.constant(3)),
          v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)),
              tf.math.add(tf.math.mul(f32(v.get(1)), x), f32(v.get(2))), tf.math.mul(f32(v.get(2)), f32(v.get(1)))));
      return tf.math.add(f32(out.get(1)), f32(out.get(2)));
    })) {
      assertClose(List.of(45.515625f, 119.3125f, 276.875f), scalars(f, Map.of("x", 1.5f)));
    }
  }

  /**
   * y = x^n by a loop on a tensor bound n ({@link #power}). Python at x = 2: n = 4 gives g 32, g'
   * 48; n = 0 (the loop never runs) 0, 0.
   */
  @Test
  void secondDerivativeOfALoopWithATensorTripCount() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> y = power(tf, x, in.input("n", TInt32.class));
      Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
      return List.of(g, Flow.gradients(tf, g, List.of(x)).get(0));
    })) {
      assertEquals(List.of(32f, 48f), scalars(f, Map.of("x", 2f, "n", 4)));
      assertEquals(List.of(0f, 0f), scalars(f, Map.of("x", 2f, "n", 0)));
    }
  }

  /**
   * v = v*v until v >= 100, from x = 3: the trip count depends on x. Python: {@code
   * tf.while_loop(lambda v: v < 100.0, lambda v: v * v, [x])[0]}: x^8 = 6561, 8x^7 = 17496, 56x^6 =
   * 40824.
   */
  @Test
  void secondDerivativeOfALoopWhoseTripCountDependsOnX() {
    try (ListFunction f = secondDerivative((tf, x) -> f32(Flow.whileLoop(tf, List.of(x),
        v -> tf.math.less(f32(v.get(0)), tf.constant(100f)), v -> List.of(tf.math.mul(f32(v.get(0)), f32(v.get(0)))))
        .get(0)))) {
      assertEquals(List.of(6561f, 17496f, 40824f), scalars(f, Map.of("x", 3f)));
    }
  }

  /**
   * A third derivative: the second one's backward loops carry TensorLists of TensorLists. Python:
   * y = x^4 ({@link #power}), g = dy/dx, g2 = dg/dx, g3 = dg2/dx at x = 2: 32, 48, 48.
   */
  @Test
  void thirdDerivativeOfALoop() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> y = power(tf, x, tf.constant(4));
      Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
      Operand<?> g2 = Flow.gradients(tf, g, List.of(x)).get(0);
      return List.of(g, g2, Flow.gradients(tf, g2, List.of(x)).get(0));
    })) {
      assertEquals(List.of(32f, 48f, 48f), scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * A loop carrying a TensorList it writes each iteration (Python's TensorArray), stacked after.
   * Python at x = 1.5: {@code ta = tf.TensorArray(tf.float32, size=3); _, v, ta =
   * tf.while_loop(lambda i, v, ta: i < 3, lambda i, v, ta: (i + 1, v * x, ta.write(i, v * v)), [0,
   * x, ta]); y = tf.reduce_sum(ta.stack() * [1.0, 2.0, 3.0])}: 46.546875, 166.6875, 511.625.
   */
  @Test
  void gradientsOfALoopThatCarriesATensorList() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> list = tf.tensorListReserve(tf.constant(new int[0]), tf.constant(3), TFloat32.class);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), x, list),
          v -> tf.math.less(i(v.get(0)), tf.constant(3)),
          v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul(f32(v.get(1)), x),
              tf.tensorListSetItem(v.get(2), i(v.get(0)), tf.math.mul(f32(v.get(1)), f32(v.get(1))))));
      Operand<TFloat32> stacked = tf.tensorListStack(out.get(2), tf.constant(new int[0]), TFloat32.class);
      return tf.sum(tf.math.mul(stacked, tf.constant(new float[] {1f, 2f, 3f})), tf.constant(0));
    })) {
      assertClose(List.of(46.546875f, 166.6875f, 511.625f), scalars(f, Map.of("x", 1.5f)));
    }
  }

  /**
   * The second derivative through a mapFn, whose gradient is a loop writing a TensorList. Python:
   * {@code tf.reduce_sum(tf.map_fn(lambda a: a * a * x * x, e))} at x = 2, e = [1, 2, 3]: 56, 56, 28.
   */
  @Test
  void secondDerivativeThroughMapFn() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> e = tf.constant(new float[] {1f, 2f, 3f});
      Operand<TFloat32> y = tf.sum(Flow.mapFn(tf, e, a -> tf.math.mul(tf.math.mul(a, a), tf.math.mul(x, x))),
          tf.constant(0));
      Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
      return List.of(y, g, Flow.gradients(tf, g, List.of(x)).get(0));
    })) {
      assertEquals(List.of(56f, 56f, 28f), scalars(f, Map.of("x", 2f)));
    }
  }
  /**
   * Under XLA a loop's gradient is not differentiated again: recording the backward loop's
   * TensorLists pushes TensorLists into a TensorList, on which TensorFlow's XLA compiler aborts the
   * process (a failed check), so it is refused while tracing, naming the loop; the JVM goes on.
   * (Python's XLA path gives 12, 12 here.)
   */
  @Test
  void underXlaASecondDerivativeThroughALoopIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (ListFunction f = Function.defineList((tf, in) -> {
        Operand<TFloat32> x = in.input("x", TFloat32.class);
        Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)),
            Flow.loop().maximumIterations(3), v -> tf.math.less(i(v.get(0)), tf.constant(3)),
            v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul(f32(v.get(1)), x))).get(1));
        Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
        return List.of(g, Flow.gradients(tf, g, List.of(x)).get(0));
      }, FunctionOptions.defaults().withJitCompile(true))) {
        scalars(f, Map.of("x", 2f));
      }
    });
    assertTrue(e.getMessage().contains("under XLA (jitCompile): loop variable"), e.getMessage());
  }
}
