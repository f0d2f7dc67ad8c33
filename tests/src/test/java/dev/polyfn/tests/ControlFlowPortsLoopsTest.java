package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowPorts.*;
import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;

import dev.polyfn.Flow;
import dev.polyfn.Variable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;

/**
 * Loops: programs in the manner of TensorFlow's own control flow tests (while_v2_test.py, cond_v2_test.py,
 * control_flow_ops_py_test.py, map_fn_test.py, functional_ops_test.py), written with Flow, give the
 * values and gradients TensorFlow 2.21 gave: nested loops and conds, input-dependent and zero trip
 * counts, maximum_iterations, loop variables of several dtypes or growing shapes, TensorList
 * accumulators, several outputs, captures, map_fn over several inputs with a dtype change, scan and
 * foldl as loops, first and second derivatives. tests/python/control_flow_ports_more.py runs the
 * Python programs and records every call's inputs and outputs and the trace count
 * (control_flow_ports_more.json); {@link ControlFlowPorts#check} feeds the same inputs and compares (floats within
 * 1e-5 of the larger of 1 and the value, integers and booleans exactly, shapes and dtypes too).
 */
class ControlFlowPortsLoopsTest {
  // ---- loops ----

  /** while_v2_test testNestedWhile-style: an inner loop bounded by the outer counter, the outer by an input (0, 1, 3 trips). */
  @Test
  void nestedWhileWithAnInputTripCount() {
    check("nested_while_input_trips", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)), s -> tf.math.less(i(s.get(0)), n), s -> {
        Operand<TInt32> k = i(s.get(0));
        Operand<?> a = Flow.whileLoop(tf, List.of(tf.constant(0), s.get(1)), t -> tf.math.lessEqual(i(t.get(0)), k),
            t -> List.of(tf.math.add(i(t.get(0)), tf.constant(1)), tf.math.add(tf.math.mul(f32(t.get(1)), x), y))).get(1);
        return List.of(tf.math.add(k, tf.constant(1)), a);
      }).get(1);
      return withGradients(tf, List.of(v), v, x, y);
    });
  }

  /** cond_v2_test testWhileInCond-style: a bounded loop in one branch only. */
  @Test
  void whileInsideACondBranch() {
    check("while_in_cond_branch", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<TFloat32> v = Flow.cond(tf, in.input("p", TBool.class),
          () -> f32(Flow.whileLoop(tf, List.of(y), Flow.loop().maximumIterations(6), s -> tf.math.less(f32(s.get(0)), tf.constant(20f)),
              s -> List.of(tf.math.add(tf.math.mul(f32(s.get(0)), x), y))).get(0)),
          () -> tf.math.mul(x, y));
      return withGradients(tf, List.of(v), v, x, y);
    });
  }

  /** control_flow_ops_py_test testCondInWhile-style: a cond on a scalar the body reduces from a vector loop variable. */
  @Test
  void condOnAScalarComputedInTheLoop() {
    check("cond_on_reduced_scalar_in_loop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> t = f(in, "t");
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {0.5f, 1f, -0.25f})),
          s -> tf.math.less(i(s.get(0)), tf.constant(5)), s -> {
            Operand<TFloat32> u = f32(s.get(1));
            Operand<TFloat32> sum = tf.sum(u, tf.constant(0));
            return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), Flow.cond(tf, tf.math.greater(sum, t),
                () -> tf.math.mul(u, tf.constant(0.5f)), () -> tf.math.add(tf.math.mul(u, x), tf.constant(1f))));
          }).get(1));
      return withGradients(tf, List.of(v), tf.sum(tf.math.mul(v, v), tf.constant(0)), x, t);
    });
  }

  /** while_v2_test: a loop run zero times gives a captured vector a zero gradient of its shape. */
  @Test
  void zeroTripLoopGivesCapturesZeroGradients() {
    check("zero_trip_capture", (tf, in) -> {
      Operand<TFloat32> w = f(in, "w");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {1f, 2f})),
          s -> tf.math.less(i(s.get(0)), n), s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.add(tf.math.mul(f32(s.get(1)), w), tf.sum(w, tf.constant(0))))).get(1));
      return withGradients(tf, List.of(v), tf.sum(v, tf.constant(0)), w);
    });
  }

  /** while_v2_test testGradientOfWhileWithMaximumIterations: the condition stops first, or the bound, or no iteration runs. */
  @Test
  void maximumIterationsWithAndWithoutAnEarlyStop() {
    check("max_iter_early_stop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), x), Flow.loop().maximumIterations(4),
          s -> tf.math.less(f32(s.get(1)), tf.constant(10f)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.mul(f32(s.get(1)), x)));
      return withGradients(tf, out, out.get(1), x);
    });
  }

  /** while_v2_test: an always-true condition bounded by maximum_iterations, first and second derivatives. */
  @Test
  void boundedLoopSecondDerivatives() {
    check("max_iter_no_stop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<?> v = Flow.whileLoop(tf, List.of(y), Flow.loop().maximumIterations(5), s -> tf.constant(true),
          s -> List.of(tf.math.add(tf.math.mul(f32(s.get(0)), x), y))).get(0);
      List<Operand<?>> g = Flow.gradients(tf, v, List.of(x, y));
      List<Operand<?>> out = new ArrayList<>(List.of(v, g.get(0), g.get(1)));
      out.addAll(Flow.gradients(tf, g.get(0), List.of(x, y)));
      return out;
    });
  }

  /** control_flow_ops_py_test: int32 and int64 counters beside float32 and float64 accumulators. */
  @Test
  void loopVariablesOfFourDtypes() {
    check("mixed_dtype_loop_vars", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat64> d = in.input("d", TFloat64.class);
      Operand<TInt32> n = in.input("n", TInt32.class);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1L), x, tf.constant(0.5)),
          s -> tf.math.less(i(s.get(0)), n),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.mul(i64(s.get(1)), tf.constant(3L)),
              tf.math.add(tf.math.mul(f32(s.get(2)), x), tf.dtypes.cast(i(s.get(0)), TFloat32.class)),
              tf.math.add(f64(s.get(3)), tf.math.mul(d, tf.dtypes.cast(i64(s.get(1)), TFloat64.class)))));
      List<Operand<?>> r = new ArrayList<>(out);
      r.add(Flow.gradients(tf, out.get(2), List.of(x)).get(0));
      r.add(Flow.gradients(tf, out.get(3), List.of(d)).get(0));
      return r;
    });
  }

  /** while_v2_test testShapeInvariants-style: a vector grown by concat each iteration, differentiated. */
  @Test
  void aGrowingLoopVariableIsDifferentiated() {
    check("growing_concat", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.reshape(x, tf.constant(new int[] {1}))),
          Flow.loop().shape(0, Shape.of(-1)), s -> tf.math.less(tf.size(f32(s.get(0))), n), s -> {
            Operand<TFloat32> u = f32(s.get(0));
            Operand<TFloat32> last = tf.slice(u, tf.reshape(tf.math.sub(tf.size(u), tf.constant(1)), tf.constant(new int[] {1})),
                tf.constant(new int[] {1}));
            return List.of(tf.concat(List.of(u, tf.math.add(tf.math.mul(last, x), tf.constant(1f))), tf.constant(0)));
          }).get(0));
      return withGradients(tf, List.of(v), tf.sum(tf.math.mul(v, v), tf.constant(0)), x);
    });
  }

  /** while_v2_test testTensorArray-style: each iteration sets an item of a reserved TensorList; stacked and differentiated. */
  @Test
  void aTensorArrayWrittenInTheLoopIsStacked() {
    check("tensor_array_stack", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<?> list = tf.tensorListReserve(tf.constant(new int[] {2}), n, TFloat32.class);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {0.3f, 1f}), list),
          s -> tf.math.less(i(s.get(0)), n), s -> {
            Operand<TFloat32> v = tf.math.mul(tf.math.sin(f32(s.get(1))), x);
            return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), v, tf.tensorListSetItem(s.get(2), i(s.get(0)), v));
          });
      Operand<TFloat32> stacked = tf.tensorListStack(out.get(2), tf.constant(new int[] {2}), TFloat32.class);
      return withGradients(tf, List.of(stacked),
          tf.sum(tf.math.mul(stacked, tf.constant(new float[] {1f, 2f})), tf.constant(new int[] {0, 1})), x);
    });
  }

  /** list_ops_test / while_v2_test: a TensorList grown by TensorListPushBack in the loop, then stacked. */
  @Test
  void aTensorListPushedInTheLoopIsStacked() {
    check("push_back_stack", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<?> list = tf.emptyTensorList(tf.constant(new int[0]), tf.constant(-1), TFloat32.class);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), x, list), s -> tf.math.less(i(s.get(0)), n), s -> {
        Operand<TFloat32> v = tf.math.add(tf.math.mul(f32(s.get(1)), x), tf.constant(0.5f));
        return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), v, tf.tensorListPushBack(s.get(2), v));
      });
      Operand<TFloat32> stacked = tf.tensorListStack(out.get(2), tf.constant(new int[0]), TFloat32.class);
      return withGradients(tf, List.of(stacked), tf.sum(stacked, tf.constant(0)), x);
    });
  }

  /** while_v2_test testGradientOfOneOutput-style: two loop variables of x, each differentiated alone. */
  @Test
  void gradientOfEachOfTwoLoopOutputs() {
    check("two_outputs_one_used", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f), tf.constant(0f)),
          s -> tf.math.less(i(s.get(0)), tf.constant(3)), s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.mul(f32(s.get(1)), x), tf.math.add(f32(s.get(2)), f32(s.get(1)))));
      return List.of(out.get(1), out.get(2), Flow.gradients(tf, out.get(1), List.of(x)).get(0),
          Flow.gradients(tf, out.get(2), List.of(x)).get(0));
    });
  }

  /** while_v2_test: y decides the trip count only (no gradient through the predicate); d acc/dx is the trip count. */
  @Test
  void aVariableThatOnlyDecidesTheTripCountGetsAZeroGradient() {
    check("trips_decided_by_another_var", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<?> acc = Flow.whileLoop(tf, List.of(y, tf.constant(0f)), s -> tf.math.less(f32(s.get(0)), tf.constant(10f)),
          s -> List.of(tf.math.mul(f32(s.get(0)), y), tf.math.add(f32(s.get(1)), x))).get(1);
      return withGradients(tf, List.of(acc), acc, x, y);
    });
  }

  /** while_v2_test testSecondDerivative with two captures: the mixed derivatives d2v/dxdy and d2v/dydx agree. */
  @Test
  void mixedSecondDerivativeOfALoop() {
    check("mixed_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)), s -> tf.math.less(i(s.get(0)), tf.constant(3)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.add(tf.math.mul(f32(s.get(1)), x), tf.math.mul(y, y)))).get(1);
      List<Operand<?>> g = Flow.gradients(tf, v, List.of(x, y));
      return List.of(v, g.get(0), g.get(1), Flow.gradients(tf, g.get(0), List.of(y)).get(0),
          Flow.gradients(tf, g.get(1), List.of(x)).get(0));
    });
  }

  /** while_v2_test: the body returns a captured tensor as the next value of a loop variable. */
  @Test
  void aBodyReturningACapture() {
    check("body_returns_capture", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), x, tf.constant(1f)), s -> tf.math.less(i(s.get(0)), tf.constant(2)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), y, tf.math.add(tf.math.mul(f32(s.get(1)), f32(s.get(2))), x)));
      return withGradients(tf, List.of(out.get(1), out.get(2)), out.get(2), x, y);
    });
  }

  /**
   * control_flow_ops_py_test testWhileGrad_Variable-style: Python reads the variable inside the body
   * and differentiates with respect to the variable; Polyfn differentiates with respect to a value,
   * so the variable is read once before the loop and the loop captures that value (the documented
   * way), which gives Python's numbers.
   */
  @Test
  void aVariableReadBeforeTheLoopIsDifferentiated() {
    try (TFloat32 init = TFloat32.scalarOf(0.5f); Variable<TFloat32> w = Variable.create(init)) {
      check("variable_read_in_loop", (tf, in) -> {
        Operand<TFloat32> x = f(in, "x");
        in.input("w0", TFloat32.class); // Python's program takes it too (the variable's value, for the record)
        Operand<TFloat32> wv = w.read(tf);
        Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)), s -> tf.math.less(i(s.get(0)), tf.constant(3)),
            s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.add(tf.math.mul(f32(s.get(1)), wv), x))).get(1);
        return withGradients(tf, List.of(v), v, wv, x);
      });
    }
  }

  /** while_v2_test: a map of loop variables (an int counter, two vectors), differentiated to a capture. */
  @Test
  void aMapOfLoopVariables() {
    check("dict_loop_vars", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Map<String, Operand<?>> r = Flow.whileLoop(tf,
          Map.of("i", tf.constant(0), "p", tf.constant(new float[] {1f, 2f}), "q", tf.constant(new float[] {0f, 0f})),
          s -> tf.math.less(i(s.get("i")), tf.constant(3)),
          s -> Map.of("i", tf.math.add(i(s.get("i")), tf.constant(1)), "p", tf.math.mul(f32(s.get("p")), x),
              "q", tf.math.add(f32(s.get("q")), f32(s.get("p")))));
      return withGradients(tf, List.of(r.get("i"), r.get("p"), r.get("q")), tf.sum(f32(r.get("q")), tf.constant(0)), x);
    });
  }

  /** while_v2_test: the trip count is the number of positive elements; the body reads elems[i]. Two shapes: two traces. */
  @Test
  void aTripCountFromTheInputsValues() {
    check("trip_count_from_values", (tf, in) -> {
      Operand<TFloat32> e = f(in, "e");
      Operand<TInt32> n = tf.sum(tf.dtypes.cast(tf.math.greater(e, tf.constant(0f)), TInt32.class), tf.constant(0));
      Operand<?> acc = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f)), s -> tf.math.less(i(s.get(0)), n),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.add(tf.math.mul(f32(s.get(1)), tf.constant(0.5f)), tf.gather(e, i(s.get(0)), tf.constant(0))))).get(1);
      return withGradients(tf, List.of(acc), acc, e);
    });
  }
}
