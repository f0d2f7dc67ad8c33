package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.MapFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint8;

/**
 * Programs ported from TensorFlow's own tests of {@code tf.function} and of its control flow
 * (polymorphic_function_test.py, tracing_compilation_test.py, default_types_test.py, cond_v2_test.py,
 * while_v2_test.py, map_fn_test.py), with the results TensorFlow 2.21's {@code tf.function} gave
 * recorded as the expected values: each was run by tests/python/tf_function_ports.py, which prints
 * them. Each case names the Python program it ports.
 */
class TfFunctionPortsTest {

  // ---- gradients through control flow (while_v2_test.py, cond_v2_test.py, map_fn_test.py) ----

  /**
   * while_v2_test testGradientOfWhileLoop-style: y = x^n by a loop on a tensor bound n;
   * {@code tf.gradients(y, x)} at x=2 is 0 for n=0 (the loop never runs) and 32 for n=4.
   */
  @Test
  void gradientOfALoopThatRunsZeroOrFourTimes() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TInt32> n = in.input("n", TInt32.class);
          Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)),
              v -> tf.math.less(i(v.get(0)), n),
              v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul(f32(v.get(1)), x))).get(1));
          return List.of(Flow.gradients(tf, y, List.of(x)).get(0));
        })) {
      assertEquals(List.of(0f), scalars(f, Map.of("x", 2f, "n", 0)));
      assertEquals(List.of(32f), scalars(f, Map.of("x", 2f, "n", 4)));
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
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(tf.constant(0), x), v -> tf.math.less(i(v.get(0)), tf.constant(4)),
              v -> {
                Operand<TFloat32> w = f32(v.get(1));
                return List.of(tf.math.add(i(v.get(0)), tf.constant(1)), Flow.cond(tf, tf.math.greater(w, tf.constant(5f)),
                    () -> tf.math.mul(w, tf.constant(0.5f)), () -> tf.math.mul(w, x)));
              }).get(1));
          return List.of(y, Flow.gradients(tf, y, List.of(x)).get(0));
        })) {
      assertEquals(List.of(6.75f, 6.75f), scalars(f, Map.of("x", 3f)));
    }
  }

  /** while_v2_test testNestedWhile-style: an inner loop whose bound is the outer counter, reading x. */
  @Test
  void gradientOfNestedLoops() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(tf.constant(0), x), v -> tf.math.less(i(v.get(0)), tf.constant(3)),
              v -> {
                Operand<TInt32> bound = i(v.get(0));
                Operand<TFloat32> w = f32(Flow.whileLoop(tf, List.of(tf.constant(0), f32(v.get(1))),
                    u -> tf.math.less(i(u.get(0)), bound),
                    u -> List.of(tf.math.add(i(u.get(0)), tf.constant(1)),
                        tf.math.add(f32(u.get(1)), tf.math.mul(x, tf.dtypes.cast(i(u.get(0)), TFloat32.class))))).get(1));
                return List.of(tf.math.add(bound, tf.constant(1)), w);
              }).get(1));
          return List.of(y, Flow.gradients(tf, y, List.of(x)).get(0));
        })) {
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
  @Disabled("Defect (loud, not silent): Flow.gradients of a loop's gradient fails with 'gradients through loop"
      + " gradients/while_1: loop variable 4 is VARIANT': the first gradient's backward loop carries the recorded"
      + " values in TensorLists, which the loop gradient refuses; Python's while_v2 differentiates it (12, 12)")
  void secondDerivativeThroughALoop() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)), v -> tf.math.less(i(v.get(0)), tf.constant(3)),
              v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul(f32(v.get(1)), x))).get(1));
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

  // ---- cond and while semantics (cond_v2_test.py, while_v2_test.py) ----

  /**
   * cond_v2_test: Python's tf.cond takes a predicate of shape [1] (the If kernel reads its one
   * element: [2.] here) and fails only when run for shape [2]. Polyfn refuses any predicate that is
   * not a scalar when the body is traced, naming it: stricter than Python, never a wrong answer.
   */
  @Test
  void condWithAOneElementPredicateIsRefusedAtTraceTime() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return List.of(Flow.cond(tf, tf.math.greater(x, tf.constant(0f)),
              () -> tf.math.mul(x, tf.constant(2f)), () -> tf.math.neg(x)));
        })) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> floats(f, Map.of("x", new float[] {1f})));
      assertTrue(e.getMessage().contains("pred must be a scalar BOOL, got shape [1]"), e.getMessage());
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f)));
    }
  }

  /** cond_v2_test: branches of shapes [2] and [3] give [None]; [2] and [2, 2] an unknown rank. */
  @Test
  void condOutputShapeIsTheMostSpecificBothBranchesFit() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TBool> p = in.input("p", TBool.class);
          Operand<TFloat32> a = Flow.cond(tf, p, () -> tf.zeros(tf.constant(new int[] {2}), TFloat32.class),
              () -> tf.zeros(tf.constant(new int[] {3}), TFloat32.class));
          Operand<TFloat32> b = Flow.cond(tf, p, () -> tf.zeros(tf.constant(new int[] {2}), TFloat32.class),
              () -> tf.zeros(tf.constant(new int[] {2, 2}), TFloat32.class));
          return List.of(tf.constant(staticShape(a.shape())), tf.constant(staticShape(b.shape())));
        })) {
      try (TBool p = TBool.scalarOf(true); ListOutputs out = f.call(Map.of("p", p))) {
        assertArrayEquals(new int[] {1, -1}, ints(out.get(0, TInt32.class)));
        assertArrayEquals(new int[] {-1}, ints(out.get(1, TInt32.class)));
      }
    }
  }

  /** while_v2_test testMaximumIterationsZero-style: maximum_iterations=0 returns the initial value. */
  @Test
  void loopWithZeroMaximumIterations() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(Flow.whileLoop(tf, List.of(in.input("x", TInt32.class)),
        Flow.loop().maximumIterations(0), v -> tf.constant(true), v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1))))
        .get(0)))) {
      try (TInt32 x = TInt32.scalarOf(5); ListOutputs out = f.call(Map.of("x", x))) {
        assertEquals(5, out.get(0, TInt32.class).getInt());
      }
    }
  }

  // ---- retracing (polymorphic_function_test.py, quarantine_test.py, default_types_test.py) ----

  /**
   * Reduce-retracing over shapes with a zero dim: [0] then [3] relax to [None]; [0] is served by its
   * own exact trace (the most specific); [0, 2] relaxes to an unknown rank, which serves the rest.
   * Python: seen [1,0] 1, [1,-1] 2, [1,0] 2, [-1] 3, [-1] 3, [-1] 3.
   */
  @Test
  void reduceRetracingWithZeroSizedDims() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(tf.constant(staticShape(in.input("x", TFloat32.class).shape()))),
        FunctionOptions.defaults().withReduceRetracing(true))) {
      long[][] shapes = {{0}, {3}, {0}, {0, 2}, {0, 3}, {1, 3}};
      int[][] seen = {{1, 0}, {1, -1}, {1, 0}, {-1}, {-1}, {-1}};
      int[] traces = {1, 2, 2, 3, 3, 3};
      for (int k = 0; k < shapes.length; k++) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(shapes[k])); ListOutputs out = f.call(Map.of("x", x))) {
          assertArrayEquals(seen[k], ints(out.get(0, TInt32.class)), "call " + k);
        }
        assertEquals(traces[k], f.traceCount(), "traces after call " + k);
      }
    }
  }

  /**
   * quarantine_test testFunctionRelaxationLosesInnerDimWithKerasLayer-style (reduce_retracing with a
   * non-tensor argument and a list): a string value keys the cache; within it, list element shapes
   * relax. Python: ('hi',[]) 1 trace, ('hi',[1]) relaxes to [None] 2, ('hi',[2]) 2, ('bye',[]) 3,
   * ('bye',[1]) 4, ('hi',[3]) 4.
   */
  @Test
  void reduceRetracingWithAStringValueAndAList() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          in.javaInput("a", String.class);
          List<Operand<TFloat32>> b = in.list("b", TFloat32.class);
          return List.of(tf.math.add(b.get(0), tf.constant(1f)), tf.constant((int) b.get(1).shape().get(0)));
        }, FunctionOptions.defaults().withReduceRetracing(true));
        TFloat32 b0 = TFloat32.scalarOf(1f)) {
      Object[][] calls = {{"hi", 0, 0, 1}, {"hi", 1, -1, 2}, {"hi", 2, -1, 2}, {"bye", 0, 0, 3}, {"bye", 1, -1, 4},
          {"hi", 3, -1, 4}};
      for (Object[] c : calls) {
        try (TFloat32 b1 = TFloat32.tensorOf(Shape.of((Integer) c[1]));
            ListOutputs out = f.call(Map.of("a", new String((String) c[0]), "b", List.of(b0, b1)))) {
          assertEquals(2f, out.get(0, TFloat32.class).getFloat());
          assertEquals((int) c[2], out.get(1, TInt32.class).getInt(), "seen dim for " + List.of(c));
        }
        assertEquals((int) c[3], f.traceCount(), "traces after " + List.of(c));
      }
    }
  }

  /**
   * polymorphic_function_test testNestedFunctionsRetrace-style: an inner function called from an
   * outer one traces per symbolic signature; Python: after outer([2]), outer([3]), outer([2]) both
   * traced twice.
   */
  @Test
  void nestedFunctionTracesPerSymbolicSignature() {
    try (MapFunction inner = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f))));
        ListFunction outer = Function.defineList((tf, in) -> List.of(tf.math.add(
            (Operand<TFloat32>) inner.apply(tf, Map.of("x", in.input("x", TFloat32.class))).get("y"), tf.constant(1f))))) {
      for (int n : new int[] {2, 3, 2}) {
        try (TFloat32 x = TFloat32.vectorOf(new float[n]); ListOutputs out = outer.call(Map.of("x", x))) {
          assertEquals(1f, out.get(0, TFloat32.class).getFloat(0));
        }
      }
      assertEquals(2, inner.traceCount());
      assertEquals(2, outer.traceCount());
    }
  }

  /**
   * An inner function first traced for [None] (from an outer function with
   * input_signature=[TensorSpec([None])]) serves later symbolic [4] and [5] from another outer
   * function: Python's inner traced once.
   */
  @Test
  void nestedFunctionTracedForAnUnknownDimServesKnownOnes() {
    try (MapFunction inner = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f))));
        ListFunction relaxed = Function.defineList((tf, in) -> List.of(
            inner.apply(tf, Map.of("x", in.input("x", TFloat32.class, Shape.of(-1)))).get("y")));
        ListFunction known = Function.defineList((tf, in) -> List.of(
            inner.apply(tf, Map.of("x", in.input("x", TFloat32.class))).get("y")))) {
      try (TFloat32 x = TFloat32.tensorOf(Shape.of(2))) {
        relaxed.call(Map.of("x", x)).close();
      }
      for (int n : new int[] {4, 5}) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(n))) {
          known.call(Map.of("x", x)).close();
        }
      }
      assertEquals(1, inner.traceCount());
    }
  }

  /**
   * polymorphic_function_test testDefaultArgs-style: a tensor default is a capture: omitting it and
   * passing tensors of its dtype and shape share one trace. Python: 2.0, 3.0, 6.0, 2.0 in 1 trace.
   */
  @Test
  void aTensorDefaultSharesTheTraceOfPassedTensors() {
    try (TFloat32 d = TFloat32.scalarOf(1f);
        ListFunction f = Function.defineList((tf, in) -> List.of(tf.math.add(in.input("x", TFloat32.class),
            in.input("y", TFloat32.class, d))))) {
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f)));
      assertEquals(List.of(3f), scalars(f, Map.of("x", 1f, "y", 2f)));
      assertEquals(List.of(6f), scalars(f, Map.of("x", 1f, "y", 5f)));
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f)));
      assertEquals(1, f.traceCount());
    }
  }

  /** A Java-value default: omitting it and passing an equal value share a trace. Python: 3.0, 3.0, 6.0 in 2 traces. */
  @Test
  void aJavaValueDefaultSharesTheTraceOfAnEqualValue() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(tf.math.mul(in.input("x", TFloat32.class),
        tf.constant((float) in.javaInput("n", Integer.class, 1)))))) {
      assertEquals(List.of(3f), scalars(f, Map.of("x", 3f)));
      assertEquals(List.of(3f), scalars(f, Map.of("x", 3f, "n", 1)));
      assertEquals(List.of(6f), scalars(f, Map.of("x", 3f, "n", 2)));
      assertEquals(2, f.traceCount());
    }
  }

  /**
   * String tensors: tf.strings.length and join; one trace per shape, and with reduce-retracing
   * [1], [2], [3], [] trace 3 times. Python: [1, 2, 0], ["aa", "bcbc", ""]; 2 traces; 3 with reduce.
   */
  @Test
  void stringTensorsTraceByShape() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TString> x = in.input("x", TString.class);
          return List.of(tf.strings.stringLength(x), tf.strings.join(List.of(x, x)));
        });
        ListFunction r = Function.defineList((tf, in) -> List.of(tf.strings.stringLength(in.input("x", TString.class))),
            FunctionOptions.defaults().withReduceRetracing(true))) {
      try (TString x = TString.vectorOf("a", "bc", ""); ListOutputs out = f.call(Map.of("x", x))) {
        assertArrayEquals(new int[] {1, 2, 0}, ints(out.get(0, TInt32.class)));
        TString j = out.get(1, TString.class);
        assertEquals(List.of("aa", "bcbc", ""), List.of(j.getObject(0), j.getObject(1), j.getObject(2)));
      }
      for (TString x : List.of(TString.vectorOf("xyz", "q", "w"), TString.vectorOf("a"))) {
        f.call(Map.of("x", x)).close();
        x.close();
      }
      assertEquals(2, f.traceCount());
      for (TString x : List.of(TString.vectorOf("a"), TString.vectorOf("a", "b"), TString.vectorOf("a", "b", "c"),
          TString.scalarOf("a"))) {
        r.call(Map.of("x", x)).close();
        x.close();
      }
      assertEquals(3, r.traceCount());
    }
  }

  /** Python Enum values as arguments (default_types_test Literal-style): one trace per member; values [2, 3, 2], 2 traces. */
  enum Mode { A, B }

  @Test
  void enumValuesTraceOncePerMember() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Mode m = in.javaInput("m", Mode.class);
          return List.of(tf.math.add(x, tf.constant(m == Mode.A ? 1f : 2f)));
        })) {
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f, "m", Mode.A)));
      assertEquals(List.of(3f), scalars(f, Map.of("x", 1f, "m", Mode.B)));
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f, "m", Mode.A)));
      assertEquals(2, f.traceCount());
    }
  }

  /**
   * default_types_test: equal strings (not the same object) and equal tuples (Java arrays, by
   * elements) share a trace. Python: strings "ab", "abc", "a"+"b" give [3, 4, 3] in 2 traces;
   * tuples (1, 2), (1, 2), (2, 1) give [4, 4, 4] in 2 traces.
   */
  @Test
  void equalStringsAndEqualArraysShareATrace() {
    try (ListFunction s = Function.defineList((tf, in) -> List.of(tf.math.add(in.input("x", TFloat32.class),
            tf.constant((float) in.javaInput("name", String.class).length()))));
        ListFunction t = Function.defineList((tf, in) -> List.of(tf.math.add(in.input("x", TFloat32.class),
            tf.constant((float) java.util.Arrays.stream(in.javaInput("t", int[].class)).sum()))))) {
      String a = "a";
      assertEquals(List.of(3f), scalars(s, Map.of("x", 1f, "name", "ab")));
      assertEquals(List.of(4f), scalars(s, Map.of("x", 1f, "name", "abc")));
      assertEquals(List.of(3f), scalars(s, Map.of("x", 1f, "name", a + "b")));
      assertEquals(2, s.traceCount());
      assertEquals(List.of(4f), scalars(t, Map.of("x", 1f, "t", new int[] {1, 2})));
      assertEquals(List.of(4f), scalars(t, Map.of("x", 1f, "t", new int[] {1, 2})));
      assertEquals(List.of(4f), scalars(t, Map.of("x", 1f, "t", new int[] {2, 1})));
      assertEquals(2, t.traceCount());
    }
  }

  /**
   * Python float values: two NaNs (different objects) share one trace, as Double.equals makes them
   * equal. 0.0 and -0.0 share one in Python (0.0 == -0.0, so f(1.0, -0.0) returns the 0.0 trace's
   * 0.0); Polyfn keys Java values by equals, which tells them apart (documented: "by its class and
   * equals/hashCode"), so it traces twice and returns -0.0: an intended difference.
   */
  @Test
  void nanValuesShareATraceAndSignedZerosDoNot() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(tf.math.mul(in.input("x", TFloat32.class),
        tf.constant(in.javaInput("z", Double.class).floatValue()))))) {
      assertTrue(Float.isNaN(scalars(f, Map.of("x", 1f, "z", Double.NaN)).get(0)));
      assertTrue(Float.isNaN(scalars(f, Map.of("x", 1f, "z", Double.longBitsToDouble(0x7ff8000000000001L))).get(0)));
      assertEquals(1, f.traceCount());
      assertEquals(0f, scalars(f, Map.of("x", 1f, "z", 0.0)).get(0));
      assertEquals(-0f, scalars(f, Map.of("x", 1f, "z", -0.0)).get(0)); // Python: 0.0 from the 0.0 trace
      assertEquals(3, f.traceCount());                                  // Python: 2
    }
  }

  // ---- variables (polymorphic_function_test.py, variables tests) ----

  /**
   * polymorphic_function_test testRetracingOnDifferentVaribleCombinationPatterns: three variable
   * arguments; a new aliasing pattern retraces, the same pattern with other variables does not, and
   * an assignment through one alias is seen by a read through another. Python, a.assign_add(1) then
   * a + b + c: (v1,v1,v1) 6.0 1 trace, (v2,v2,v2) 33.0 1, (v1,v2,v1) 17.0 2, (v2,v3,v2) 124.0 2,
   * (v1,v2,v3) 116.0 3, (v3,v1,v2) 117.0 3, (v1,v1,v2) 22.0 4; then v1 5, v2 12, v3 101.
   */
  @Test
  void variableAliasingPatternsRetraceAsInPython() {
    try (dev.polyfn.Variable<TFloat32> v1 = dev.polyfn.Variable.create(TFloat32.scalarOf(1f));
        dev.polyfn.Variable<TFloat32> v2 = dev.polyfn.Variable.create(TFloat32.scalarOf(10f));
        dev.polyfn.Variable<TFloat32> v3 = dev.polyfn.Variable.create(TFloat32.scalarOf(100f));
        ListFunction f = Function.defineList((tf, in) -> {
          Operand<?> a = in.variableInput("a", TFloat32.class);
          Operand<?> b = in.variableInput("b", TFloat32.class);
          Operand<?> c = in.variableInput("c", TFloat32.class);
          tf.assignAddVariableOp(a, tf.constant(1f));
          return List.of(tf.math.add(tf.math.add(tf.readVariableOp(a, TFloat32.class), tf.readVariableOp(b, TFloat32.class)),
              tf.readVariableOp(c, TFloat32.class)));
        })) {
      Object[][] calls = {{v1, v1, v1, 6f, 1}, {v2, v2, v2, 33f, 1}, {v1, v2, v1, 17f, 2}, {v2, v3, v2, 124f, 2},
          {v1, v2, v3, 116f, 3}, {v3, v1, v2, 117f, 3}, {v1, v1, v2, 22f, 4}};
      for (Object[] c : calls) {
        try (ListOutputs out = f.call(Map.of("a", c[0], "b", c[1], "c", c[2]))) {
          assertEquals((float) c[3], out.get(0, TFloat32.class).getFloat(), "result for " + List.of(c));
        }
        assertEquals((int) c[4], f.traceCount(), "traces after " + List.of(c));
      }
      try (TFloat32 a = v1.value(); TFloat32 b = v2.value(); TFloat32 c = v3.value()) {
        assertEquals(List.of(5f, 12f, 101f), List.of(a.getFloat(), b.getFloat(), c.getFloat()));
      }
    }
  }

  /**
   * polymorphic_function_test testVariableCreatedInFunction-style: a variable made on the first
   * call only, assign_add at every call: Python returns 3.0, then 6.0.
   */
  @Test
  void variableCreatedOnTheFirstCallOnly() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          dev.polyfn.Variable<TFloat32> v = in.variable("v", TFloat32.scalarOf(1f));
          v.assign(tf, tf.math.add(v.read(tf), x));
          return List.of(v.read(tf));
        })) {
      assertEquals(List.of(3f), scalars(f, Map.of("x", 2f)));
      assertEquals(List.of(6f), scalars(f, Map.of("x", 3f)));
    }
  }

  /**
   * Assignments in a cond's branches and in a loop body (automatic control dependencies): Python
   * cond: 2.0, 1.0, 4.0; loop doubling w n times: 8.0, 8.0, 32.0 for n = 3, 0, 2.
   */
  @Test
  void assignmentsInsideCondAndLoop() {
    try (dev.polyfn.Variable<TFloat32> v = dev.polyfn.Variable.create(TFloat32.scalarOf(0f));
        dev.polyfn.Variable<TFloat32> w = dev.polyfn.Variable.create(TFloat32.scalarOf(1f));
        ListFunction ca = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Flow.cond(tf, tf.math.greater(x, tf.constant(0f)), () -> {
            v.assign(tf, tf.math.add(v.read(tf), x));
            return tf.constant(0f);
          }, () -> {
            v.assign(tf, tf.math.sub(v.read(tf), tf.constant(1f)));
            return tf.constant(0f);
          });
          return List.of(v.read(tf));
        });
        ListFunction wa = Function.defineList((tf, in) -> {
          Operand<TInt32> n = in.input("n", TInt32.class);
          Flow.whileLoop(tf, List.of(tf.constant(0)), u -> tf.math.less(i(u.get(0)), n), u -> {
            w.assign(tf, tf.math.mul(w.read(tf), tf.constant(2f)));
            return List.of(tf.math.add(i(u.get(0)), tf.constant(1)));
          });
          return List.of(w.read(tf));
        })) {
      assertEquals(List.of(2f), scalars(ca, Map.of("x", 2f)));
      assertEquals(List.of(1f), scalars(ca, Map.of("x", -5f)));
      assertEquals(List.of(4f), scalars(ca, Map.of("x", 3f)));
      assertEquals(List.of(8f), scalars(wa, Map.of("n", 3)));
      assertEquals(List.of(8f), scalars(wa, Map.of("n", 0)));
      assertEquals(List.of(32f), scalars(wa, Map.of("n", 2)));
    }
  }

  // ---- dtypes (math_ops tests run in a tf.function) ----

  /** uint8 wraps modulo 256 and int64 at its bounds, as TensorFlow's kernels do in Python. */
  @Test
  void integerOverflowWrapsAsInPython() {
    try (ListFunction u8 = Function.defineList((tf, in) -> {
          Operand<TUint8> x = in.input("x", TUint8.class);
          return List.of(tf.math.add(x, tf.constant((byte) 10)), tf.math.mul(x, tf.constant((byte) 2)),
              tf.math.sub(x, tf.constant((byte) 20)));
        });
        ListFunction i64 = Function.defineList((tf, in) -> {
          Operand<TInt64> x = in.input("x", TInt64.class);
          return List.of(tf.math.add(x, tf.constant(1L)), tf.math.mul(x, tf.constant(2L)), tf.math.neg(x), tf.math.abs(x));
        });
        TUint8 x8 = TUint8.vectorOf((byte) 250, (byte) 5, (byte) 128);
        TInt64 x64 = TInt64.vectorOf(Long.MAX_VALUE, Long.MIN_VALUE);
        ListOutputs o8 = u8.call(Map.of("x", x8)); ListOutputs o64 = i64.call(Map.of("x", x64))) {
      int[][] want8 = {{4, 15, 138}, {244, 10, 0}, {230, 241, 108}};
      for (int k = 0; k < 3; k++) {
        TUint8 t = o8.get(k, TUint8.class);
        for (int j = 0; j < 3; j++) {
          assertEquals(want8[k][j], Byte.toUnsignedInt(t.getByte(j)), "uint8 output " + k + "[" + j + "]");
        }
      }
      long[][] want64 = {{Long.MIN_VALUE, Long.MIN_VALUE + 1}, {-2, 0}, {-Long.MAX_VALUE, Long.MIN_VALUE},
          {Long.MAX_VALUE, Long.MIN_VALUE}};
      for (int k = 0; k < 4; k++) {
        TInt64 t = o64.get(k, TInt64.class);
        assertEquals(want64[k][0], t.getLong(0), "int64 output " + k);
        assertEquals(want64[k][1], t.getLong(1), "int64 output " + k);
      }
    }
  }

  /**
   * map_fn_test: the results keep elems' static first dimension. Python: map_fn over a [3, 2]
   * tensor gives static shape [3, 2]; over [None, 2], [None, 2].
   */
  @Test
  void mapFnKeepsTheStaticNumberOfElements() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(
            tf.constant(staticShape(Flow.mapFn(tf, in.input("e", TFloat32.class), r -> tf.math.mul(r, tf.constant(2f))).shape())),
            tf.constant(staticShape(Flow.mapFn(tf, in.input("u", TFloat32.class, Shape.of(-1, 2)),
                r -> tf.math.mul(r, tf.constant(2f))).shape()))));
        TFloat32 e = TFloat32.tensorOf(Shape.of(3, 2)); TFloat32 u = TFloat32.tensorOf(Shape.of(3, 2));
        ListOutputs out = f.call(Map.of("e", e, "u", u))) {
      assertArrayEquals(new int[] {2, 3, 2}, ints(out.get(0, TInt32.class)));
      assertArrayEquals(new int[] {2, -1, 2}, ints(out.get(1, TInt32.class)));
    }
  }

  // ---- helpers ----

  /** A function of a float {@code x} returning {@code y(x)} and its gradient with respect to x. */
  private static ListFunction valueAndGradient(java.util.function.BiFunction<Ops, Operand<TFloat32>, Operand<TFloat32>> y) {
    return Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> v = y.apply(tf, x);
      return List.of(v, Flow.gradients(tf, v, List.of(x)).get(0));
    });
  }

  /** Calls {@code f} with Java numbers and booleans for its tensor parameters (cast to their dtypes), its float outputs. */
  private static List<float[]> floats(ListFunction f, Map<String, Object> args) {
    try (ListOutputs out = f.call(args)) {
      List<float[]> values = new ArrayList<>();
      for (int k = 0; k < out.size(); k++) {
        values.add(SavedModelTest.floats(out.get(k, TFloat32.class)));
      }
      return values;
    }
  }

  private static List<Float> scalars(ListFunction f, Map<String, Object> args) {
    List<Float> l = new ArrayList<>();
    for (float[] v : floats(f, args)) {
      assertEquals(1, v.length);
      l.add(v[0]);
    }
    return l;
  }

  private static int[] ints(TInt32 t) {
    int[] v = new int[(int) t.size()];
    for (int k = 0; k < v.length; k++) {
      v[k] = t.getInt(k);
    }
    return v;
  }

  /** Rank then dims (-1 unknown), or [-1] for an unknown rank, as the Python programs record them. */
  static int[] staticShape(Shape s) {
    if (s.isUnknown()) {
      return new int[] {-1};
    }
    int[] out = new int[s.numDimensions() + 1];
    out[0] = s.numDimensions();
    for (int k = 0; k < s.numDimensions(); k++) {
      out[k + 1] = (int) s.size(k);
    }
    return out;
  }
}
