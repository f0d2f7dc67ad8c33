package dev.polyfn.tests;

import static dev.polyfn.tests.PortCalls.floats;
import static dev.polyfn.tests.PortCalls.scalars;
import static dev.polyfn.tests.PortCalls.valueAndGradient;
import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;

/**
 * Gradients through cond, while loops and map_fn, ported from TensorFlow's cond_v2_test.py,
 * while_v2_test.py and map_fn_test.py, with the results TensorFlow 2.21 gave as expected values
 * (printed by tests/python/tf_function_ports.py). Each case names the Python program it ports.
 */
class TfFunctionGradientPortsTest {

  // ---- gradients through control flow (while_v2_test.py, cond_v2_test.py, map_fn_test.py) ----

  /**
   * while_v2_test testGradientOfWhileLoop-style: y = x^n by a loop on a tensor bound n;
   * {@code tf.gradients(y, x)} at x=2 is 0 for n=0 (the loop never runs) and 32 for n=4.
   */
  @Test
  void gradientOfALoopThatRunsZeroOrFourTimes() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = LoopSecondDerivativeTest.power(tf, x, in.input("n", TInt32.class));
          return List.of(Flow.gradients(tf, y, List.of(x)).get(0));
        })) {
      assertEquals(List.of(0f), scalars(f, Map.of("x", 2f, "n", 0)));
      assertEquals(List.of(32f), scalars(f, Map.of("x", 2f, "n", 4)));
    }
  }

  /**
   * math_grad.py: Round, Ceil, Rint and Floor have no gradient (None), so only the other factor's
   * path counts; TensorFlow's C++ registry knows none of the first three. Python at x = 2.4:
   * y = round(x)*x + ceil(x)*x + rint(x) + floor(x)*x = 18.8, dy/dx = 2 + 3 + 0 + 2 = 7.
   */
  @Test
  void roundingOpsHaveNoGradient() {
    try (ListFunction f = valueAndGradient((tf, x) -> tf.math.add(tf.math.add(tf.math.mul(tf.math.round(x), x),
        tf.math.mul(tf.math.ceil(x), x)), tf.math.add(tf.math.rint(x), tf.math.mul(tf.math.floor(x), x))))) {
      List<Float> got = scalars(f, Map.of("x", 2.4f));
      assertEquals(18.8f, got.get(0), 1e-5f);
      assertEquals(7f, got.get(1), 1e-6f);
    }
  }

  /** while_v2_test: v = v*v until v >= 100, starting at x = 3: y = x^8 = 6561, dy/dx = 8x^7 = 17496. */
  @Test
  void gradientOfALoopWhoseTripCountDependsOnX() {
    try (ListFunction f = valueAndGradient((tf, x) -> f32(Flow.whileLoop(tf, List.of(x), v -> tf.math.less(f32(v.get(0)), tf.constant(100f)),
            v -> List.of(tf.math.mul(f32(v.get(0)), f32(v.get(0))))).get(0)))) {
      assertEquals(List.of(6561f, 17496f), scalars(f, Map.of("x", 3f)));
    }
  }

  /** while_v2_test testCondInsideWhile-style: a cond on the loop variable in the body; at x=3, y = x^3/4. */
  @Test
  void gradientOfACondInsideALoop() {
    try (ListFunction f = valueAndGradient((tf, x) -> f32(Flow.whileLoop(tf, List.of(tf.constant(0), x), v -> tf.math.less(i(v.get(0)), tf.constant(4)),
              v -> {
                Operand<TFloat32> w = f32(v.get(1));
                return List.of(tf.math.add(i(v.get(0)), tf.constant(1)), Flow.cond(tf, tf.math.greater(w, tf.constant(5f)),
                    () -> tf.math.mul(w, tf.constant(0.5f)), () -> tf.math.mul(w, x)));
              }).get(1)))) {
      assertEquals(List.of(6.75f, 6.75f), scalars(f, Map.of("x", 3f)));
    }
  }

  /** while_v2_test testNestedWhile-style: an inner loop whose bound is the outer counter, reading x. */
  @Test
  void gradientOfNestedLoops() {
    try (ListFunction f = valueAndGradient((tf, x) -> f32(Flow.whileLoop(tf, List.of(tf.constant(0), x), v -> tf.math.less(i(v.get(0)), tf.constant(3)),
              v -> {
                Operand<TInt32> bound = i(v.get(0));
                Operand<TFloat32> w = f32(Flow.whileLoop(tf, List.of(tf.constant(0), f32(v.get(1))),
                    u -> tf.math.less(i(u.get(0)), bound),
                    u -> List.of(tf.math.add(i(u.get(0)), tf.constant(1)),
                        tf.math.add(f32(u.get(1)), tf.math.mul(x, tf.dtypes.cast(i(u.get(0)), TFloat32.class))))).get(1));
                return List.of(tf.math.add(bound, tf.constant(1)), w);
              }).get(1)))) {
      assertEquals(List.of(4f, 2f), scalars(f, Map.of("x", 2f)));
    }
  }

  /** map_fn_test testMapGradient-style: sum(map_fn(a -> a*a*x, e)) with respect to x and to e. */
  @Test
  void gradientOfMapFn() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> e = in.input("e", TFloat32.class);
          Operand<TFloat32> y = tf.sum(Flow.mapFn(tf, e, a -> tf.math.mul(tf.math.mul(a, a), x)), tf.constant(0));
          List<Operand<?>> d = Flow.gradients(tf, y, List.of(x, e));
          return List.of(y, d.get(0), d.get(1));
        })) {
      List<float[]> out = floats(f, Map.of("x", 2f, "e", new float[] {1, 2, 3}));
      assertArrayEquals(new float[] {28f}, out.get(0));
      assertArrayEquals(new float[] {14f}, out.get(1));
      assertArrayEquals(new float[] {4f, 8f, 12f}, out.get(2));
    }
  }

  /** map_fn_test: an empty elems: y = 0 and gradients 0 and [] (the gradient stacks an empty list). */
  @Test
  void gradientOfMapFnOverNoElements() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> e = in.input("e", TFloat32.class);
          Operand<TFloat32> y = tf.sum(Flow.mapFn(tf, e, a -> tf.math.mul(tf.math.mul(a, a), x)), tf.constant(0));
          List<Operand<?>> d = Flow.gradients(tf, y, List.of(x, e));
          return List.of(y, d.get(0), d.get(1));
        })) {
      List<float[]> out = floats(f, Map.of("x", 2f, "e", new float[0]));
      assertArrayEquals(new float[] {0f}, out.get(0));
      assertArrayEquals(new float[] {0f}, out.get(1));
      assertArrayEquals(new float[0], out.get(2));
    }
  }

  /** map_fn_test: int elements cast in fn (fn_output_signature=tf.float32); the gradient with respect to the capture. */
  @Test
  void gradientOfMapFnOverIntegers() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TInt32> e = in.input("e", TInt32.class);
          Operand<TFloat32> y = tf.sum(Flow.mapFn(tf, e, TFloat32.class,
              a -> tf.math.mul(tf.dtypes.cast(a, TFloat32.class), x)), tf.constant(0));
          return List.of(y, Flow.gradients(tf, y, List.of(x)).get(0));
        });
        TFloat32 x = TFloat32.scalarOf(2f); TInt32 e = TInt32.vectorOf(1, 2, 3);
        ListOutputs out = f.call(Map.of("x", x, "e", e))) {
      assertEquals(12f, out.get(0, TFloat32.class).getFloat());
      assertEquals(6f, out.get(1, TFloat32.class).getFloat());
    }
  }

  /** map_fn_test: rows of a matrix mapped to rows, a weighted sum; gradients to the capture and to every element. */
  @Test
  void gradientOfMapFnOverRows() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> e = in.input("e", TFloat32.class);
          Operand<TFloat32> y = Flow.mapFn(tf, e, r -> tf.math.add(tf.math.mul(tf.math.sin(r), x), tf.math.mul(r, r)));
          Operand<TFloat32> l = tf.sum(tf.math.mul(y, tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}})),
              tf.constant(new int[] {0, 1}));
          List<Operand<?>> d = Flow.gradients(tf, l, List.of(x, e));
          return List.of(l, d.get(0), tf.reshape(d.get(1), tf.constant(new int[] {-1})));
        });
        TFloat32 x = TFloat32.scalarOf(0.5f);
        TFloat32 e = TFloat32.tensorOf(org.tensorflow.ndarray.StdArrays.ndCopyOf(new float[][] {{0.1f, 0.2f}, {0.3f, 0.4f}, {0.5f, 0.6f}}));
        ListOutputs out = f.call(Map.of("x", x, "e", e))) {
      assertEquals(8.773194313049316f, out.get(0, TFloat32.class).getFloat(), 1e-5f);
      assertEquals(8.726388931274414f, out.get(1, TFloat32.class).getFloat(), 1e-5f);
      assertArrayEquals(new float[] {0.6975021362304688f, 1.7800666093826294f, 3.2330048084259033f, 5.042121887207031f,
          7.19395637512207f, 9.676007270812988f}, SavedModelTest.floats(out.get(2, TFloat32.class)), 1e-5f);
    }
  }

  /** while_v2_test / map_fn_test: a map_fn in a loop body, differentiated with respect to what it captures. */
  @Test
  void gradientOfMapFnInsideALoop() {
    try (ListFunction f = valueAndGradient((tf, x) -> tf.sum(f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {1f, 2f})),
            v -> tf.math.less(i(v.get(0)), tf.constant(2)),
            v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), Flow.mapFn(tf, f32(v.get(1)), a -> tf.math.mul(a, x))))
            .get(1)), tf.constant(0)))) {
      assertEquals(List.of(27f, 18f), scalars(f, Map.of("x", 3f)));
    }
  }

  /** cond_v2_test testGradientOfOneOutput-style: a cond with two outputs, gradients of one and of their sum. */
  @Test
  void gradientOfACondWithTwoOutputs() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TBool> p = in.input("p", TBool.class);
          List<Operand<?>> ab = Flow.condList(tf, p,
              () -> List.of(tf.math.mul(x, tf.constant(2f)), tf.math.mul(x, x)),
              () -> List.of(tf.math.mul(x, tf.constant(3f)), tf.math.mul(tf.math.mul(x, x), x)));
          return List.of(Flow.gradients(tf, ab.get(1), List.of(x)).get(0),
              Flow.gradients(tf, tf.math.add(f32(ab.get(0)), f32(ab.get(1))), List.of(x)).get(0));
        })) {
      assertEquals(List.of(4f, 6f), scalars(f, Map.of("x", 2f, "p", true)));
      assertEquals(List.of(12f, 15f), scalars(f, Map.of("x", 2f, "p", false)));
    }
  }

  /** cond_v2_test: gradients with respect to two inputs, one of them unused in one branch (0 there, as Python). */
  @Test
  void gradientOfACondWithRespectToTwoInputs() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> z = in.input("z", TFloat32.class);
          Operand<TBool> p = in.input("p", TBool.class);
          Operand<TFloat32> y = Flow.cond(tf, p, () -> tf.math.mul(x, z), () -> tf.math.add(x, tf.constant(1f)));
          return Flow.gradients(tf, y, List.of(x, z));
        })) {
      assertEquals(List.of(1f, 0f), scalars(f, Map.of("x", 2f, "z", 5f, "p", false)));
      assertEquals(List.of(5f, 2f), scalars(f, Map.of("x", 2f, "z", 5f, "p", true)));
    }
  }

  /** while_v2_test: a vector loop variable, a bounded loop (maximum_iterations=3) that stops first on its bound. */
  @Test
  void gradientOfABoundedVectorLoop() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(3),
              v -> tf.math.less(tf.sum(f32(v.get(0)), tf.constant(0)), tf.constant(1000f)),
              v -> List.of(tf.math.mul(f32(v.get(0)), x))).get(0));
          return List.of(y, Flow.gradients(tf, tf.sum(y, tf.constant(0)), List.of(x)).get(0));
        })) {
      List<float[]> out = floats(f, Map.of("x", new float[] {1, 2}));
      assertArrayEquals(new float[] {1f, 16f}, out.get(0));
      assertArrayEquals(new float[] {4f, 32f}, out.get(1));
    }
  }

  /** while_v2_test: five iterations of v = sin(v) + v/2 from x = 0.7. */
  @Test
  void gradientOfANonlinearLoop() {
    try (ListFunction f = valueAndGradient((tf, x) -> f32(Flow.whileLoop(tf, List.of(tf.constant(0), x), v -> tf.math.less(i(v.get(0)), tf.constant(5)),
            v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)),
                tf.math.add(tf.math.sin(f32(v.get(1))), tf.math.mul(f32(v.get(1)), tf.constant(0.5f))))).get(1)))) {
      List<Float> out = scalars(f, Map.of("x", 0.7f));
      assertEquals(1.8785167f, out.get(0), 1e-6f);
      assertEquals(0.106711365f, out.get(1), 1e-6f);
    }
  }

  /** cond_v2_test testSecondDerivative-style: the gradient of a gradient through a cond; Python at x=2: T (x^3) 12, 12; F (x^2) 4, 2. */
  @Test
  void secondDerivativeThroughACond() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TBool> p = in.input("p", TBool.class);
          Operand<TFloat32> y = Flow.cond(tf, p, () -> tf.math.mul(tf.math.mul(x, x), x), () -> tf.math.mul(x, x));
          Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
          return List.of(g, Flow.gradients(tf, g, List.of(x)).get(0));
        })) {
      assertEquals(List.of(12f, 12f), scalars(f, Map.of("x", 2f, "p", true)));
      assertEquals(List.of(4f, 2f), scalars(f, Map.of("x", 2f, "p", false)));
    }
  }

  /** while_v2_test testSecondDerivative-style: y = x^3 by a loop; Python at x=2: 12, 12. */
  @Test
  void secondDerivativeThroughALoop() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = LoopSecondDerivativeTest.power(tf, x, tf.constant(3));
          Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
          return List.of(g, Flow.gradients(tf, g, List.of(x)).get(0));
        })) {
      assertEquals(List.of(12f, 12f), scalars(f, Map.of("x", 2f)));
    }
  }

  /** cond_v2_test testNestedCond-style gradients; Python at x=2: (T,T) 3, (T,F) 4, (F,T) cos(2). */
  @Test
  void gradientOfNestedConds() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TBool> p = in.input("p", TBool.class);
          Operand<TBool> q = in.input("q", TBool.class);
          Operand<TFloat32> y = Flow.cond(tf, p, () -> Flow.cond(tf, q, () -> tf.math.mul(x, tf.constant(3f)), () -> tf.math.mul(x, x)),
              () -> tf.math.sin(x));
          return List.of(Flow.gradients(tf, y, List.of(x)).get(0));
        })) {
      assertEquals(List.of(3f), scalars(f, Map.of("x", 2f, "p", true, "q", true)));
      assertEquals(List.of(4f), scalars(f, Map.of("x", 2f, "p", true, "q", false)));
      assertEquals(-0.416146844625473f, scalars(f, Map.of("x", 2f, "p", false, "q", true)).get(0), 1e-6f);
    }
  }

  /**
   * tf.gradients with respect to an intermediate value h = 2x and the input x behind it: each is
   * a total derivative (the path from x through h counts for x). Python at x=2, through a cond and
   * without one: 8, 16.
   */
  @Test
  void gradientWithRespectToAnIntermediateValue() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> h = tf.math.mul(x, tf.constant(2f));
          Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(h, tf.constant(3f)), () -> tf.math.mul(h, h), () -> h);
          List<Operand<?>> plain = Flow.gradients(tf, tf.math.mul(h, h), List.of(h, x));
          List<Operand<?>> out = new ArrayList<>(Flow.gradients(tf, y, List.of(h, x)));
          out.addAll(plain);
          return out;
        })) {
      assertEquals(List.of(8f, 16f, 8f, 16f), scalars(f, Map.of("x", 2f)));
    }
  }

  /** while_v2_test: x is both a loop variable's initial value and a capture; Python at x=3: y 39, dy/dx 34. */
  @Test
  void gradientOfAnInputThatIsBothLoopVariableAndCapture() {
    try (ListFunction f = valueAndGradient((tf, x) -> f32(Flow.whileLoop(tf, List.of(tf.constant(0), x), v -> tf.math.less(i(v.get(0)), tf.constant(2)),
            v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.add(tf.math.mul(f32(v.get(1)), x), x))).get(1)))) {
      assertEquals(List.of(39f, 34f), scalars(f, Map.of("x", 3f)));
    }
  }

  /** while_v2_test: a loop variable passed through unchanged; Python: d/dx 15, d/dz 6. */
  @Test
  void gradientThroughAPassThroughLoopVariable() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> z = in.input("z", TFloat32.class);
          Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f), z),
              u -> tf.math.less(i(u.get(0)), tf.constant(3)),
              u -> List.of(tf.math.add(i(u.get(0)), tf.constant(1)), tf.math.add(f32(u.get(1)), tf.math.mul(f32(u.get(2)), x)), u.get(2)))
              .get(1));
          return Flow.gradients(tf, v, List.of(x, z));
        })) {
      assertEquals(List.of(15f, 6f), scalars(f, Map.of("x", 2f, "z", 5f)));
    }
  }

  /** cond_v2_test: branches broadcasting a scalar to [2], a weighted sum; Python: 4 at x=2, -4 at x=-2. */
  @Test
  void gradientOfACondThatBroadcasts() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> zeros = tf.zeros(tf.constant(new int[] {2}), TFloat32.class);
          Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)), () -> tf.math.add(zeros, x),
              () -> tf.math.sub(zeros, x));
          return List.of(Flow.gradients(tf, tf.sum(tf.math.mul(y, tf.constant(new float[] {1f, 3f})), tf.constant(0)),
              List.of(x)).get(0));
        })) {
      assertEquals(List.of(4f), scalars(f, Map.of("x", 2f)));
      assertEquals(List.of(-4f), scalars(f, Map.of("x", -2f)));
    }
  }

  /** cond_v2_test: stop_gradient inside a branch; Python at x=3: 3. */
  @Test
  void stopGradientInsideACond() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)), () -> tf.math.mul(tf.stopGradient(x), x), () -> x);
          return List.of(Flow.gradients(tf, y, List.of(x)).get(0));
        })) {
      assertEquals(List.of(3f), scalars(f, Map.of("x", 3f)));
    }
  }

  /** while_v2_test: a float64 loop; Python at x=1.5: y 3.375, dy/dx 6.75. */
  @Test
  void gradientOfAFloat64Loop() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat64> x = in.input("x", TFloat64.class);
          Operand<?> y = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1.0)), v -> tf.math.less(i(v.get(0)), tf.constant(3)),
              v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul((Operand<TFloat64>) v.get(1), x))).get(1);
          return List.of(y, Flow.gradients(tf, y, List.of(x)).get(0));
        });
        TFloat64 x = TFloat64.scalarOf(1.5); ListOutputs out = f.call(Map.of("x", x))) {
      assertEquals(3.375, out.get(0, TFloat64.class).getDouble());
      assertEquals(6.75, out.get(1, TFloat64.class).getDouble());
    }
  }
}
