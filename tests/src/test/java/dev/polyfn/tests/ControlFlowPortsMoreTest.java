package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.ListBody;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.Variable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/**
 * Programs in the manner of TensorFlow's own control flow tests (while_v2_test.py, cond_v2_test.py,
 * control_flow_ops_py_test.py, map_fn_test.py, functional_ops_test.py), written with Flow, give the
 * values and gradients TensorFlow 2.21 gave: nested loops and conds, input-dependent and zero trip
 * counts, maximum_iterations, loop variables of several dtypes or growing shapes, TensorList
 * accumulators, several outputs, captures, map_fn over several inputs with a dtype change, scan and
 * foldl as loops, first and second derivatives. tests/python/control_flow_ports_more.py runs the
 * Python programs and records every call's inputs and outputs and the trace count
 * (control_flow_ports_more.json); {@link #check} feeds the same inputs and compares (floats within
 * 1e-5 of the larger of 1 and the value, integers and booleans exactly, shapes and dtypes too).
 */
class ControlFlowPortsMoreTest {
  private static final Map<String, Object> PY = MiniJson.resource("/control_flow_ports_more.json");

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

  // ---- conds ----

  /** cond_v2_test: branches of very different op counts (one returns an input), both predicates. */
  @Test
  void condBranchesOfDifferentOpCounts() {
    check("cond_uneven_branches", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<TFloat32> v = Flow.cond(tf, in.input("p", TBool.class), () -> tf.math.sub(
          tf.math.add(tf.math.mul(tf.math.mul(x, x), x), tf.math.mul(tf.math.sin(x), y)),
          tf.math.div(tf.math.exp(tf.math.mul(y, tf.constant(0.1f))), tf.math.add(tf.constant(1f), tf.math.mul(x, x)))), () -> y);
      return withGradients(tf, List.of(v), v, x, y);
    });
  }

  /** cond_v2_test testNestedCond with two outputs: nested conds in both branches, all four predicate pairs. */
  @Test
  void nestedCondsWithTwoOutputs() {
    check("nested_cond_two_outputs", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<TBool> q = in.input("q", TBool.class);
      List<Operand<?>> ab = Flow.condList(tf, in.input("p", TBool.class), () -> {
        List<Operand<?>> r = Flow.condList(tf, q, () -> List.of(tf.math.mul(x, y), tf.math.add(x, y)),
            () -> List.of(tf.math.sub(x, y), tf.math.mul(x, x)));
        return List.of(r.get(0), tf.math.mul(f32(r.get(1)), tf.constant(2f)));
      }, () -> {
        Operand<TFloat32> a = Flow.cond(tf, q, () -> tf.math.sin(x), () -> tf.math.cos(y));
        return List.of(tf.math.mul(a, y), a);
      });
      return withGradients(tf, ab, tf.math.add(f32(ab.get(0)), tf.math.mul(tf.constant(3f), f32(ab.get(1)))), x, y);
    });
  }

  /** cond_v2_test: a cond returning a map of an int and a float. */
  @Test
  void condReturningAMapOfAnIntAndAFloat() {
    check("cond_dict_int_float", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Map<String, Operand<?>> r = Flow.condMap(tf, in.input("p", TBool.class),
          () -> Map.of("k", tf.constant(1), "v", tf.math.mul(x, x)), () -> Map.of("k", tf.constant(2), "v", tf.math.mul(x, tf.constant(3f))));
      return withGradients(tf, List.of(r.get("k"), r.get("v")), r.get("v"), x);
    });
  }

  /** cond_v2_test testCaptures-style: branches capture an intermediate value and a variable's value read before the cond. */
  @Test
  void condCapturingAnIntermediateAndAVariable() {
    try (TFloat32 init = TFloat32.scalarOf(1.5f); Variable<TFloat32> w = Variable.create(init)) {
      check("cond_captures_intermediate_and_variable", (tf, in) -> {
        Operand<TFloat32> x = f(in, "x");
        Operand<TFloat32> h = tf.math.exp(tf.math.mul(x, tf.constant(0.5f)));
        Operand<TFloat32> wv = w.read(tf);
        Operand<TFloat32> v = Flow.cond(tf, in.input("p", TBool.class), () -> tf.math.add(tf.math.mul(h, wv), x), () -> tf.math.mul(h, h));
        return withGradients(tf, List.of(v), v, x, wv);
      });
    }
  }

  /** cond_v2_test: x reaches the result only through the predicate: a zero gradient. */
  @Test
  void anInputOnlyInThePredicateGetsAZeroGradient() {
    check("cond_x_only_in_pred", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> z = f(in, "z");
      Operand<TFloat32> v = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)), () -> tf.math.mul(z, tf.constant(2f)), () -> tf.math.mul(z, z));
      return withGradients(tf, List.of(v), v, x, z);
    });
  }

  /** cond_v2_test: branches returning their inputs unchanged, swapped in the other branch. */
  @Test
  void condBranchesReturningTheirInputs() {
    check("cond_passes_inputs_through", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      List<Operand<?>> ab = Flow.condList(tf, in.input("p", TBool.class), () -> List.of(x, y), () -> List.of(y, tf.math.mul(x, tf.constant(2f))));
      return withGradients(tf, ab, tf.math.add(tf.math.mul(f32(ab.get(0)), tf.constant(10f)), f32(ab.get(1))), x, y);
    });
  }

  /** cond_v2_test: branches of static shapes [4] and [2]; the gradient to x, of shape [2]. */
  @Test
  void condBranchesOfDifferentShapesAreDifferentiated() {
    check("cond_different_shapes_grad", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = Flow.cond(tf, in.input("p", TBool.class), () -> tf.concat(List.of(x, tf.math.mul(x, x)), tf.constant(0)),
          () -> tf.math.sin(x));
      return withGradients(tf, List.of(v), tf.sum(tf.math.mul(v, v), tf.constant(0)), x);
    });
  }

  /** cond_v2_test: a cond on the counter's parity inside a loop, differentiated twice. */
  @Test
  void secondDerivativeOfACondInsideALoop() {
    check("cond_in_loop_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)), s -> tf.math.less(i(s.get(0)), tf.constant(4)), s -> {
        Operand<TFloat32> u = f32(s.get(1));
        return List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
            Flow.cond(tf, tf.math.equal(tf.math.floorMod(i(s.get(0)), tf.constant(2)), tf.constant(0)),
                () -> tf.math.mul(u, x), () -> tf.math.add(u, tf.math.mul(x, x))));
      }).get(1);
      Operand<?> g = Flow.gradients(tf, v, List.of(x)).get(0);
      return List.of(v, g, Flow.gradients(tf, g, List.of(x)).get(0));
    });
  }

  /** cond_v2_test: both branches constants: a zero gradient. */
  @Test
  void condOfConstantBranchesHasAZeroGradient() {
    check("cond_constant_branches", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = Flow.cond(tf, tf.math.greater(x, tf.constant(1f)), () -> tf.constant(5f), () -> tf.constant(-5f));
      return withGradients(tf, List.of(v), v, x);
    });
  }

  /** cond_v2_test testSecondDerivative with two inputs: pure and mixed second derivatives, both branches. */
  @Test
  void mixedSecondDerivativesOfACond() {
    check("cond_mixed_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<TFloat32> v = Flow.cond(tf, in.input("p", TBool.class),
          () -> tf.math.add(tf.math.mul(tf.math.mul(x, x), y), tf.math.sin(tf.math.mul(x, y))), () -> tf.math.mul(tf.math.mul(y, y), y));
      List<Operand<?>> g = Flow.gradients(tf, v, List.of(x, y));
      List<Operand<?>> out = new ArrayList<>(g);
      out.addAll(Flow.gradients(tf, g.get(0), List.of(x, y)));
      out.add(Flow.gradients(tf, g.get(1), List.of(y)).get(0));
      return out;
    });
  }

  /** A loop whose body conds between an inner loop (bounded by the outer counter) and a nested cond. */
  @Test
  void aLoopOfACondOfALoop() {
    check("loop_of_cond_of_loop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), n), s -> {
        Operand<TInt32> k = i(s.get(0));
        Operand<TFloat32> u = f32(s.get(1));
        return List.of(tf.math.add(k, tf.constant(1)), Flow.cond(tf, tf.math.less(u, tf.constant(5f)),
            () -> f32(Flow.whileLoop(tf, List.of(tf.constant(0), u), t -> tf.math.less(i(t.get(0)), k),
                t -> List.of(tf.math.add(i(t.get(0)), tf.constant(1)), tf.math.mul(f32(t.get(1)), x))).get(1)),
            () -> Flow.cond(tf, tf.math.greater(u, tf.constant(50f)), () -> tf.math.mul(u, tf.constant(0.1f)), () -> tf.math.sub(u, x))));
      }).get(1);
      return withGradients(tf, List.of(v), v, x);
    });
  }

  // ---- map_fn, scan, foldl ----

  /** map_fn_test testMap_MultiInputSingleOutput-style: two inputs read by index, int indices to float results. */
  @Test
  void mapFnOverIndicesOfTwoInputs() {
    check("map_two_inputs_by_index", (tf, in) -> {
      Operand<TFloat32> a = f(in, "a");
      Operand<TFloat32> b = f(in, "b");
      Operand<TFloat32> r = Flow.mapFn(tf, tf.range(tf.constant(0), tf.size(a), tf.constant(1)), TFloat32.class, k -> {
        Operand<TFloat32> bk = tf.gather(b, k, tf.constant(0));
        return tf.math.add(tf.math.mul(tf.gather(a, k, tf.constant(0)), tf.dtypes.cast(tf.math.add(k, tf.constant(1)), TFloat32.class)),
            tf.math.mul(bk, bk));
      });
      return withGradients(tf, List.of(r), tf.sum(tf.math.mul(r, tf.constant(new float[] {1f, -2f, 0.5f})), tf.constant(0)), a, b);
    });
  }

  /** map_fn_test: float elements to int32 results (fn_output_signature=tf.int32). */
  @Test
  void mapFnFromFloatsToInts() {
    check("map_float_to_int", (tf, in) -> {
      Operand<TInt32> r = Flow.mapFn(tf, f(in, "e"), TInt32.class,
          a -> tf.dtypes.cast(tf.math.floor(tf.math.mul(a, tf.constant(2f))), TInt32.class));
      return List.of(r, tf.sum(r, tf.constant(0)));
    });
  }

  /** map_fn_test: a map_fn inside a map_fn's fn, differentiated to the capture and the elements. */
  @Test
  void nestedMapFn() {
    check("nested_map_fn", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> e = f(in, "e");
      Operand<TFloat32> r = Flow.mapFn(tf, e, row -> Flow.mapFn(tf, row, a -> tf.math.mul(tf.math.mul(a, a), x)));
      return withGradients(tf, List.of(r), tf.sum(tf.math.mul(r, e), tf.constant(new int[] {0, 1})), x, e);
    });
  }

  /** map_fn_test: a cond per element. */
  @Test
  void mapFnWithACondPerElement() {
    check("map_fn_with_cond", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> e = f(in, "e");
      Operand<TFloat32> r = Flow.mapFn(tf, e, a -> Flow.cond(tf, tf.math.greater(a, tf.constant(0f)), () -> tf.math.mul(a, x), () -> tf.math.mul(a, a)));
      return withGradients(tf, List.of(r), tf.sum(r, tf.constant(0)), x, e);
    });
  }

  /** map_fn_test: a while per element, its trip count depending on the element. */
  @Test
  void mapFnWithALoopPerElement() {
    check("map_fn_with_while", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> e = f(in, "e");
      Operand<TFloat32> r = Flow.mapFn(tf, e, a -> f32(Flow.whileLoop(tf, List.of(a), s -> tf.math.less(f32(s.get(0)), tf.constant(10f)),
          s -> List.of(tf.math.mul(f32(s.get(0)), x))).get(0)));
      return withGradients(tf, List.of(r), tf.sum(r, tf.constant(0)), x, e);
    });
  }

  /** functional_ops_test testScan_Simple / testScanGradient: tf.scan, as a loop writing a TensorList. */
  @Test
  void scanAsALoopOverATensorList() {
    check("scan_linear", (tf, in) -> {
      Operand<TFloat32> w = f(in, "w");
      Operand<TFloat32> e = f(in, "e");
      Operand<TInt32> n = tf.size(e);
      List<Operand<?>> out = Flow.whileLoop(tf,
          List.of(tf.constant(0), tf.constant(1f), tf.tensorListReserve(tf.constant(new int[0]), n, TFloat32.class)),
          s -> tf.math.less(i(s.get(0)), n), s -> {
            Operand<TFloat32> a = tf.math.add(tf.math.mul(f32(s.get(1)), w), tf.gather(e, i(s.get(0)), tf.constant(0)));
            return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), a, tf.tensorListSetItem(s.get(2), i(s.get(0)), a));
          });
      Operand<TFloat32> r = tf.tensorListStack(out.get(2), tf.constant(new int[0]), TFloat32.class);
      return withGradients(tf, List.of(r), tf.sum(r, tf.constant(0)), w, e);
    });
  }

  /** functional_ops_test testFoldl_Simple / testFoldl_Grad: tf.foldl, as a loop reading elems[i]. */
  @Test
  void foldlAsALoop() {
    check("foldl_product", (tf, in) -> {
      Operand<TFloat32> w = f(in, "w");
      Operand<TFloat32> e = f(in, "e");
      Operand<?> r = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)), s -> tf.math.less(i(s.get(0)), tf.size(e)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.add(tf.math.mul(f32(s.get(1)), tf.gather(e, i(s.get(0)), tf.constant(0))), w))).get(1);
      return withGradients(tf, List.of(r), r, w, e);
    });
  }

  /** A mapFn inside a loop inside a cond branch: three levels, differentiated. */
  @Test
  void aMapFnInALoopInACond() {
    check("map_in_loop_in_cond", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = Flow.cond(tf, in.input("p", TBool.class),
          () -> f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {0.5f, 1f, 1.5f})),
              s -> tf.math.less(i(s.get(0)), tf.constant(2)), s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
                  Flow.mapFn(tf, f32(s.get(1)), a -> tf.math.mul(tf.math.sin(a), x)))).get(1)),
          () -> tf.math.mul(tf.constant(new float[] {0.5f, 1f, 1.5f}), x));
      return withGradients(tf, List.of(v), tf.sum(v, tf.constant(0)), x);
    });
  }

  // ---- round two: nesting, RNNs, second derivatives ----

  /** while_v2_test: the inner loop's body reads the outer loop variable as a capture. */
  @Test
  void anInnerLoopReadingTheOuterLoopVariable() {
    check("inner_reads_outer_var", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(3)), s -> {
        Operand<TFloat32> outer = f32(s.get(1));
        Operand<TFloat32> u = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0.5f)), t -> tf.math.less(i(t.get(0)), tf.constant(2)),
            t -> List.of(tf.math.add(i(t.get(0)), tf.constant(1)), tf.math.add(tf.math.mul(f32(t.get(1)), outer), x))).get(1));
        return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.add(outer, tf.math.mul(u, tf.constant(0.1f))));
      }).get(1);
      return withGradients(tf, List.of(v), v, x);
    });
  }

  /** while_v2_test: maximum_iterations on a loop and on the loop in its body; first and second derivatives. */
  @Test
  void nestedMaximumIterations() {
    check("nested_max_iterations", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> v = Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(3), s -> tf.math.less(f32(s.get(0)), tf.constant(1000f)),
          s -> List.of(tf.math.add(f32(Flow.whileLoop(tf, List.of(s.get(0)), Flow.loop().maximumIterations(2),
              t -> tf.math.less(f32(t.get(0)), tf.constant(100f)), t -> List.of(tf.math.mul(f32(t.get(0)), x))).get(0)), tf.constant(1f)))).get(0);
      return secondDerivative(tf, v, x);
    });
  }

  /** while_v2_test testSecondDerivative of nested loops. */
  @Test
  void secondDerivativeOfNestedLoops() {
    check("nested_loop_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(2)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), Flow.whileLoop(tf, List.of(tf.constant(0), s.get(1)),
              t -> tf.math.less(i(t.get(0)), tf.constant(2)),
              t -> List.of(tf.math.add(i(t.get(0)), tf.constant(1)), tf.math.mul(tf.math.sin(f32(t.get(1))), x))).get(1))).get(1);
      return secondDerivative(tf, v, x);
    });
  }

  /** while_v2_test: the second derivative of a loop its condition stops before its bound. */
  @Test
  void secondDerivativeOfALoopStoppedBeforeItsBound() {
    check("early_stop_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> v = Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(10), s -> tf.math.less(f32(s.get(0)), tf.constant(5f)),
          s -> List.of(tf.math.mul(tf.math.mul(f32(s.get(0)), f32(s.get(0))), x))).get(0);
      return secondDerivative(tf, v, x);
    });
  }

  /** An RNN as users write it: h = tanh(W h + U x_t), states written to a TensorList; gradients to W, U, xs and h0. */
  @Test
  void anRnnOverASequence() {
    check("rnn", (tf, in) -> {
      Operand<TFloat32> w = f(in, "w");
      Operand<TFloat32> u = f(in, "u");
      Operand<TFloat32> xs = f(in, "xs");
      Operand<TFloat32> h0 = f(in, "h0");
      Operand<TInt32> n = tf.gather(tf.shape(xs), tf.constant(0), tf.constant(0));
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), h0, tf.tensorListReserve(tf.constant(new int[] {2}), n, TFloat32.class)),
          s -> tf.math.less(i(s.get(0)), n), s -> {
            Operand<TInt32> t = i(s.get(0));
            Operand<TFloat32> h = tf.math.tanh(tf.math.add(matvec(tf, w, f32(s.get(1))), matvec(tf, u, tf.gather(xs, t, tf.constant(0)))));
            return List.of(tf.math.add(t, tf.constant(1)), h, tf.tensorListSetItem(s.get(2), t, h));
          });
      Operand<TFloat32> h = f32(out.get(1));
      Operand<TFloat32> hs = tf.tensorListStack(out.get(2), tf.constant(new int[] {2}), TFloat32.class);
      Operand<TFloat32> loss = tf.math.add(tf.sum(tf.math.mul(h, h), tf.constant(0)),
          tf.sum(tf.math.mul(hs, tf.constant(0.5f)), tf.constant(new int[] {0, 1})));
      return withGradients(tf, List.of(h, hs, loss), loss, w, u, xs, h0);
    });
  }

  /** cond_v2_test: a cond in a loop returning an int counter and a float. */
  @Test
  void aCondInALoopReturningAnIntAndAFloat() {
    check("cond_int_and_float_in_loop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(6)), s -> {
        Operand<TInt32> k = i(s.get(1));
        Operand<TFloat32> v = f32(s.get(2));
        List<Operand<?>> r = Flow.condList(tf, tf.math.greater(v, tf.constant(2f)),
            () -> List.of(tf.math.add(k, tf.constant(1)), tf.math.mul(v, tf.constant(0.5f))), () -> List.of(k, tf.math.mul(v, x)));
        return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), r.get(0), r.get(1));
      });
      return withGradients(tf, List.of(out.get(1), out.get(2)), out.get(2), x);
    });
  }

  /** while_v2_test: x's double is the initial value, x is captured by the body, and both are read after the loop. */
  @Test
  void anInputUsedBeforeInsideAndAfterALoop() {
    check("input_used_before_inside_after", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> h = tf.math.mul(x, tf.constant(2f));
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), h), s -> tf.math.less(i(s.get(0)), tf.constant(3)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.sub(tf.math.mul(f32(s.get(1)), x), h))).get(1));
      Operand<TFloat32> y = tf.math.add(tf.math.mul(v, x), h);
      return withGradients(tf, List.of(y), y, x, h);
    });
  }

  /** while_v2_test: zero-trip loops pass the initial value's gradient through, also nested in a running loop. */
  @Test
  void zeroTripLoopsPassTheInitialValuesGradient() {
    check("zero_trip_init_gradient", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), tf.math.mul(x, tf.constant(3f))), s -> tf.math.less(i(s.get(0)), n),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.mul(f32(s.get(1)), f32(s.get(1))))).get(1);
      Operand<?> u = Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(2)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), Flow.whileLoop(tf, List.of(tf.constant(0), tf.math.add(f32(s.get(1)), x)),
              t -> tf.math.less(i(t.get(0)), n), t -> List.of(tf.math.add(i(t.get(0)), tf.constant(1)), tf.math.mul(f32(t.get(1)), x))).get(1))).get(1);
      return List.of(v, u, Flow.gradients(tf, v, List.of(x)).get(0), Flow.gradients(tf, u, List.of(x)).get(0));
    });
  }

  /** control_flow_ops_py_test: stop_gradient inside a loop body. */
  @Test
  void stopGradientInsideALoop() {
    check("stop_gradient_in_loop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(3)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.add(tf.math.mul(tf.stopGradient(f32(s.get(1))), x), f32(s.get(1))))).get(1);
      return withGradients(tf, List.of(v), v, x);
    });
  }

  /** while_v2_test testShapeInvariants: a [None, 2] matrix growing by rows, differentiated. */
  @Test
  void aMatrixGrowingByRows() {
    check("growing_rows", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> m = f32(Flow.whileLoop(tf, List.of(tf.reshape(x, tf.constant(new int[] {1, 2}))), Flow.loop().shape(0, Shape.of(-1, 2)),
          s -> tf.math.less(tf.gather(tf.shape(f32(s.get(0))), tf.constant(0), tf.constant(0)), tf.constant(4)), s -> {
            Operand<TFloat32> a = f32(s.get(0));
            Operand<TInt32> last = tf.reshape(tf.math.sub(tf.gather(tf.shape(a), tf.constant(0), tf.constant(0)), tf.constant(1)),
                tf.constant(new int[] {1}));
            return List.of(tf.concat(List.of(a, tf.math.mul(tf.gather(a, last, tf.constant(0)), x)), tf.constant(0)));
          }).get(0));
      return withGradients(tf, List.of(m), tf.sum(tf.math.mul(m, m), tf.constant(new int[] {0, 1})), x);
    });
  }

  /** map_fn_test: rank-3 elements mapped to scalars. */
  @Test
  void mapFnOfMatricesToScalars() {
    check("map_rank3_to_scalars", (tf, in) -> {
      Operand<TFloat32> e = f(in, "e");
      Operand<TFloat32> w = f(in, "w");
      Operand<TFloat32> r = Flow.mapFn(tf, e, m -> tf.sum(tf.math.square(matvec(tf, m, w)), tf.constant(0)));
      return withGradients(tf, List.of(r), tf.sum(r, tf.constant(0)), e, w);
    });
  }

  /** map_fn_test: the second derivative through a cond per element. */
  @Test
  void secondDerivativeThroughACondPerElement() {
    check("map_cond_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> r = tf.sum(Flow.mapFn(tf, f(in, "e"), a -> Flow.cond(tf, tf.math.greater(a, tf.constant(0f)),
          () -> tf.math.mul(tf.math.mul(tf.math.mul(a, x), x), x), () -> tf.math.sin(tf.math.mul(a, x)))), tf.constant(0));
      return secondDerivative(tf, r, x);
    });
  }

  /** control_flow_ops_py_test: tf.where in a loop; the untaken side's log of a negative kept out of the gradient. */
  @Test
  void whereInsideALoop() {
    check("where_in_loop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {2f, -1f, 0.5f})),
          s -> tf.math.less(i(s.get(0)), tf.constant(3)), s -> {
            Operand<TFloat32> a = f32(s.get(1));
            Operand<TBool> pos = tf.math.greater(a, tf.constant(0f));
            Operand<TFloat32> safe = tf.select(pos, a, tf.onesLike(a));
            return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.select(pos, tf.math.add(tf.math.log(safe), x), tf.math.mul(a, x)));
          }).get(1));
      return withGradients(tf, List.of(v), tf.sum(v, tf.constant(0)), x);
    });
  }

  /** Two gradients of one loop to different inputs, then the gradient of their sum. */
  @Test
  void twoGradientsOfOneLoopThenOfTheirSum() {
    check("two_gradient_calls", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = f(in, "y");
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), y), s -> tf.math.less(i(s.get(0)), tf.constant(3)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.add(tf.math.mul(f32(s.get(1)), x), y))).get(1);
      Operand<TFloat32> gx = f32(Flow.gradients(tf, v, List.of(x)).get(0));
      Operand<TFloat32> gy = f32(Flow.gradients(tf, v, List.of(y)).get(0));
      return withGradients(tf, List.of(v, gx, gy), tf.math.add(gx, gy), x, y);
    });
  }

  // ---- round three: total derivatives, dtypes, matrices ----

  /** gradients_test: y of a loop output and of x, differentiated to both (x's derivative total), and to x twice. */
  @Test
  void gradientsWithRespectToALoopOutputAndItsInput() {
    check("grad_wrt_loop_output_and_input", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(2)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.add(tf.math.mul(f32(s.get(1)), x), tf.constant(1f)))).get(1));
      Operand<TFloat32> y = tf.math.mul(v, x);
      List<Operand<?>> out = withGradients(tf, List.of(y), y, v, x);
      out.addAll(Flow.gradients(tf, y, List.of(x, x)));
      return out;
    });
  }

  /** while_v2_test: a loop variable whose next value ignores it: its initial value's gradient is 0 after a trip, 1 without. */
  @Test
  void aLoopVariableResetEachIteration() {
    check("loop_var_reset", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> z = f(in, "z");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), z), s -> tf.math.less(i(s.get(0)), n),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.mul(x, tf.dtypes.cast(tf.math.add(i(s.get(0)), tf.constant(1)), TFloat32.class)))).get(1);
      return withGradients(tf, List.of(v), v, x, z);
    });
  }

  /** while_v2_test testMaximumIterationsZero, differentiated: the initial value's gradient. */
  @Test
  void zeroMaximumIterationsDifferentiated() {
    check("max_iter_zero_grad", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.math.mul(x, tf.constant(2f))), Flow.loop().maximumIterations(0),
          s -> tf.math.less(f32(s.get(0)), tf.constant(100f)), s -> List.of(tf.math.mul(f32(s.get(0)), x))).get(0);
      return withGradients(tf, List.of(v), v, x);
    });
  }

  /** cond_v2_test: a cond whose predicate is a loop's output. */
  @Test
  void aCondOnALoopsOutput() {
    check("cond_on_loop_output", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(x), s -> tf.math.less(f32(s.get(0)), tf.constant(10f)),
          s -> List.of(tf.math.mul(f32(s.get(0)), tf.constant(2f)))).get(0));
      Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(v, tf.constant(15f)), () -> tf.math.mul(v, x), () -> tf.math.add(v, tf.math.mul(x, x)));
      return withGradients(tf, List.of(y), y, x);
    });
  }

  /** while_v2_test: a float16 loop, differentiated. */
  @Test
  void aHalfPrecisionLoop() {
    check("half_loop", (tf, in) -> {
      Operand<TFloat16> x = in.input("x", TFloat16.class);
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(3)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.add(tf.math.mul(f16(s.get(1)), x), tf.dtypes.cast(tf.constant(0.5f), TFloat16.class)))).get(1);
      return withGradients(tf, List.of(v), v, x);
    });
  }

  /** float64 through a cond in a loop, second derivative. */
  @Test
  void secondDerivativeOfAFloat64CondInALoop() {
    check("float64_cond_loop_second", (tf, in) -> {
      Operand<TFloat64> x = in.input("x", TFloat64.class);
      Operand<?> v = Flow.whileLoop(tf, List.of(tf.constant(0), x), s -> tf.math.less(i(s.get(0)), tf.constant(4)), s -> {
        Operand<TFloat64> u = f64(s.get(1));
        return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), Flow.cond(tf, tf.math.greater(u, tf.constant(2.0)),
            () -> tf.math.mul(tf.math.sqrt(u), x), () -> tf.math.add(tf.math.mul(u, u), x)));
      }).get(1);
      Operand<?> g = Flow.gradients(tf, v, List.of(x)).get(0);
      return List.of(v, g, Flow.gradients(tf, g, List.of(x)).get(0));
    });
  }

  /** cond_v2_test testNestedCond: the inner predicate computed in the outer branch. */
  @Test
  void anInnerPredicateComputedInTheOuterBranch() {
    check("inner_pred_from_outer_branch", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = Flow.cond(tf, in.input("p", TBool.class), () -> {
        Operand<TFloat32> h = tf.math.mul(x, x);
        return Flow.cond(tf, tf.math.greater(h, tf.constant(2f)), () -> tf.math.mul(h, x), () -> tf.math.sub(h, x));
      }, () -> tf.math.exp(x));
      return withGradients(tf, List.of(y), y, x);
    });
  }

  /** list_ops_test: a loop carrying two TensorLists, one reserved and set, one pushed back. */
  @Test
  void aLoopCarryingTwoTensorLists() {
    check("two_tensor_lists", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<?> a = tf.tensorListReserve(tf.constant(new int[0]), tf.constant(3), TFloat32.class);
      Operand<?> b = tf.emptyTensorList(tf.constant(new int[0]), tf.constant(-1), TFloat32.class);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), x, a, b), s -> tf.math.less(i(s.get(0)), tf.constant(3)), s -> {
        Operand<TFloat32> v = tf.math.mul(f32(s.get(1)), x);
        return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), v, tf.tensorListSetItem(s.get(2), i(s.get(0)), tf.math.mul(v, v)),
            tf.tensorListPushBack(s.get(3), tf.math.add(v, tf.constant(1f))));
      });
      Operand<TFloat32> sa = tf.tensorListStack(out.get(2), tf.constant(new int[0]), TFloat32.class);
      Operand<TFloat32> sb = tf.tensorListStack(out.get(3), tf.constant(new int[0]), TFloat32.class);
      return withGradients(tf, List.of(sa, sb),
          tf.math.sub(tf.sum(sa, tf.constant(0)), tf.sum(tf.math.mul(sb, sb), tf.constant(0))), x);
    });
  }

  /** while_v2_test: a loop variable of unknown rank on the gradient's path. */
  @Test
  void aLoopVariableOfUnknownRankDifferentiated() {
    check("unknown_rank_grad", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.reshape(x, tf.constant(new int[] {1, 1}))),
          Flow.loop().shape(1, Shape.unknown()), s -> tf.math.less(i(s.get(0)), tf.constant(2)),
          s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.mul(f32(s.get(1)), x))).get(1));
      return withGradients(tf, List.of(v), tf.sum(v, tf.range(tf.constant(0), tf.rank(v), tf.constant(1))), x);
    });
  }

  /** while_v2_test: a matrix power by a loop, differentiated to the matrix. */
  @Test
  void aMatrixPowerByALoop() {
    check("matrix_power", (tf, in) -> {
      Operand<TFloat32> a = f(in, "a");
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<TFloat32> p = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[][] {{1f, 0f}, {0f, 1f}})),
          s -> tf.math.less(i(s.get(0)), n), s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.linalg.matMul(f32(s.get(1)), a))).get(1));
      return withGradients(tf, List.of(p),
          tf.sum(tf.math.mul(p, tf.constant(new float[][] {{1f, 2f}, {3f, 4f}})), tf.constant(new int[] {0, 1})), a);
    });
  }

  /** An int64 counter deciding the loop, the float accumulator differentiated. */
  @Test
  void anInt64CounterDecidesTheLoop() {
    check("int64_counter", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TInt64> n = in.input("n", TInt64.class);
      Operand<?> acc = Flow.whileLoop(tf, List.of(tf.constant(0L), tf.constant(0f)), s -> tf.math.less(i64(s.get(0)), n),
          s -> List.of(tf.math.add(i64(s.get(0)), tf.constant(1L)),
              tf.math.add(f32(s.get(1)), tf.math.mul(x, tf.dtypes.cast(i64(s.get(0)), TFloat32.class))))).get(1);
      return withGradients(tf, List.of(acc), acc, x);
    });
  }

  /** math_grad_test: a reduce_max with a tie inside a loop body (the gradient split between the tied elements). */
  @Test
  void aMaxWithATieInsideALoop() {
    check("max_tie_in_loop", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {1f, 1f, 0.5f})),
          s -> tf.math.less(i(s.get(0)), tf.constant(2)), s -> List.of(tf.math.add(i(s.get(0)), tf.constant(1)),
              tf.math.add(tf.math.mul(f32(s.get(1)), tf.max(f32(s.get(1)), tf.constant(0))), x))).get(1));
      return withGradients(tf, List.of(v), tf.sum(v, tf.constant(0)), x);
    });
  }

  /**
   * math_grad_test: second derivatives of sqrt and rsqrt in a cond. The C++ registry has no
   * gradient for SqrtGrad or RsqrtGrad (this failed naming SqrtGrad); Polyfn builds Python's.
   */
  @Test
  void secondDerivativesOfSqrtAndRsqrt() {
    check("sqrt_rsqrt_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> z = f(in, "z");
      Operand<TFloat32> y = Flow.cond(tf, in.input("p", TBool.class),
          () -> tf.math.add(tf.math.mul(tf.math.sqrt(x), z), tf.math.rsqrt(tf.math.mul(x, z))), () -> tf.math.rsqrt(x));
      List<Operand<?>> g = Flow.gradients(tf, y, List.of(x, z));
      List<Operand<?>> out = new ArrayList<>(List.of(y, g.get(0), g.get(1)));
      out.addAll(Flow.gradients(tf, g.get(0), List.of(x, z)));
      return out;
    });
  }

  /** A loop body of the element-wise ops users put in one, differentiated twice. */
  @Test
  void secondDerivativeOfALoopOfCommonOps() {
    check("loop_common_ops_second_derivative", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> v = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(new float[] {0.4f, -0.7f})),
          s -> tf.math.less(i(s.get(0)), tf.constant(2)), s -> {
            Operand<TFloat32> a = f32(s.get(1));
            Operand<TFloat32> one = tf.constant(1f);
            List<Operand<TFloat32>> terms = List.of(tf.math.tanh(tf.math.mul(a, x)), tf.math.sigmoid(a),
                tf.math.softplus(tf.math.mul(a, tf.constant(0.5f))), tf.nn.relu(tf.math.sub(a, tf.constant(0.2f))),
                tf.nn.elu(tf.math.sub(a, one)), tf.math.exp(tf.math.neg(tf.math.mul(a, a))),
                tf.math.log(tf.math.add(one, tf.math.mul(a, a))), tf.math.pow(tf.math.add(tf.math.abs(a), one), x),
                tf.math.div(a, tf.math.add(one, tf.math.mul(x, x))), tf.math.mul(tf.math.square(a), tf.constant(0.1f)));
            Operand<TFloat32> u = terms.get(0);
            for (int k = 1; k < terms.size(); k++) {
              u = tf.math.add(u, terms.get(k));
            }
            return List.of(tf.math.add(i(s.get(0)), tf.constant(1)), tf.math.mul(u, tf.constant(0.3f)));
          }).get(1));
      return secondDerivative(tf, v, tf.sum(v, tf.constant(0)), x);
    });
  }

  /** nn_grad_test: second derivatives through leaky_relu (alpha 0.3) and relu6 in a cond. */
  @Test
  void secondDerivativesOfLeakyReluAndRelu6InACond() {
    check("cond_leaky_relu6_second", (tf, in) -> {
      Operand<TFloat32> x = f(in, "x");
      Operand<TFloat32> y = Flow.cond(tf, in.input("p", TBool.class),
          () -> tf.math.add(tf.math.mul(tf.nn.leakyRelu(tf.math.sub(tf.math.mul(x, x), tf.constant(1f)),
              org.tensorflow.op.nn.LeakyRelu.alpha(0.3f)), x), tf.math.mul(tf.math.mul(tf.nn.relu6(tf.math.mul(x, tf.constant(3f))), x), x)),
          () -> tf.math.mul(tf.nn.relu6(x), x));
      return secondDerivative(tf, y, x);
    });
  }

  // ---- the harness ----

  /** {@code [y, dy/dx, d2y/dx2]}. */
  private static List<Operand<?>> secondDerivative(Ops tf, Operand<?> y, Operand<TFloat32> x) {
    return secondDerivative(tf, y, y, x);
  }

  /** {@code [out, dy/dx, d2y/dx2]}. */
  private static List<Operand<?>> secondDerivative(Ops tf, Operand<?> out, Operand<?> y, Operand<TFloat32> x) {
    Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
    return List.of(out, g, Flow.gradients(tf, g, List.of(x)).get(0));
  }

  /** Python's tf.linalg.matvec: the matrix times the vector, as a vector. */
  private static Operand<TFloat32> matvec(Ops tf, Operand<TFloat32> m, Operand<TFloat32> v) {
    return tf.reshape(tf.linalg.matMul(m, tf.expandDims(v, tf.constant(-1))), tf.constant(new int[] {-1}));
  }

  /** {@code outs} followed by the gradient of {@code y} with respect to each of {@code xs}. */
  private static List<Operand<?>> withGradients(Ops tf, List<? extends Operand<?>> outs, Operand<?> y, Operand<?>... xs) {
    List<Operand<?>> r = new ArrayList<>(outs);
    r.addAll(Flow.gradients(tf, y, List.of(xs)));
    return r;
  }

  private static Operand<TFloat32> f(Inputs in, String name) {
    return in.input(name, TFloat32.class);
  }

  @SuppressWarnings("unchecked")
  private static Operand<TInt64> i64(Operand<?> o) {
    return (Operand<TInt64>) o;
  }

  @SuppressWarnings("unchecked")
  private static Operand<TFloat16> f16(Operand<?> o) {
    return (Operand<TFloat16>) o;
  }

  @SuppressWarnings("unchecked")
  private static Operand<TFloat64> f64(Operand<?> o) {
    return (Operand<TFloat64>) o;
  }

  /**
   * Cases also compiled with XLA (jitCompile), which must give the same numbers: those whose
   * differentiated loops are bounded and carry no TensorList (Python's XLA needs the bound too; a
   * TensorList loop's gradient is refused under XLA, see docs/control-flow.md).
   */
  private static final Set<String> XLA = Set.of("while_in_cond_branch", "max_iter_early_stop", "max_iter_zero_grad",
      "cond_uneven_branches", "nested_cond_two_outputs", "cond_dict_int_float", "cond_x_only_in_pred", "cond_passes_inputs_through",
      "cond_constant_branches", "cond_mixed_second_derivative", "inner_pred_from_outer_branch", "map_fn_with_cond", "nested_map_fn",
      "map_two_inputs_by_index", "map_rank3_to_scalars", "map_float_to_int", "sqrt_rsqrt_second_derivative");

  /**
   * Defines {@code body}, calls it with each of the Python case's inputs and compares every output
   * with Python's (dtype, shape, values), then the trace count with Python's; for the cases in
   * {@link #XLA}, again compiled with XLA.
   */
  private static void check(String name, ListBody body) {
    Map<String, Object> c = map(PY.get(name));
    assertTrue(c != null, "no Python record for " + name);
    check(name, c, body, FunctionOptions.defaults());
    if (XLA.contains(name)) {
      check(name + " (XLA)", c, body, FunctionOptions.defaults().withJitCompile(true));
    }
  }

  private static void check(String name, Map<String, Object> c, ListBody body, FunctionOptions options) {
    try (ListFunction fn = Function.defineList(body, options)) {
      for (Object o : (List<?>) c.get("calls")) {
        Map<String, Object> call = map(o);
        Map<String, Tensor> args = new LinkedHashMap<>();
        map(call.get("inputs")).forEach((k, v) -> args.put(k, tensor(map(v))));
        try (ListOutputs out = fn.call(args)) {
          List<?> expected = (List<?>) call.get("outputs");
          String where = name + " " + call.get("inputs");
          assertEquals(expected.size(), out.size(), where + ": output count");
          for (int k = 0; k < expected.size(); k++) {
            assertTensor(where + " output " + k, map(expected.get(k)), out.get(k));
          }
        } finally {
          args.values().forEach(Tensor::close);
        }
      }
      assertEquals(((Double) c.get("traces")).intValue(), fn.traceCount(), name + ": traces");
    }
  }

  private static Tensor tensor(Map<String, Object> t) {
    Shape shape = Shape.of(((List<?>) t.get("shape")).stream().mapToLong(d -> ((Double) d).longValue()).toArray());
    List<?> v = (List<?>) t.get("values");
    switch ((String) t.get("dtype")) {
      case "float32": {
        float[] a = new float[v.size()];
        for (int k = 0; k < a.length; k++) {
          a[k] = ((Double) v.get(k)).floatValue();
        }
        return TFloat32.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      case "float16": {
        float[] a = new float[v.size()];
        for (int k = 0; k < a.length; k++) {
          a[k] = ((Double) v.get(k)).floatValue();
        }
        return TFloat16.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      case "int64":
        return TInt64.tensorOf(shape, DataBuffers.of(v.stream().mapToLong(d -> ((Double) d).longValue()).toArray(), true, false));
      case "float64": {
        double[] a = v.stream().mapToDouble(d -> (Double) d).toArray();
        return TFloat64.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      case "int32":
        return TInt32.tensorOf(shape, DataBuffers.of(v.stream().mapToInt(d -> ((Double) d).intValue()).toArray(), true, false));
      case "bool": {
        boolean[] a = new boolean[v.size()];
        for (int k = 0; k < a.length; k++) {
          a[k] = (Boolean) v.get(k);
        }
        return TBool.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      default:
        throw new IllegalArgumentException("dtype " + t.get("dtype"));
    }
  }

  private static void assertTensor(String where, Map<String, Object> expected, Tensor actual) {
    long[] dims = ((List<?>) expected.get("shape")).stream().mapToLong(d -> ((Double) d).longValue()).toArray();
    assertArrayEquals(dims, actual.shape().asArray(), where + ": shape");
    List<?> e = (List<?>) expected.get("values");
    List<Number> a = new ArrayList<>();
    String dtype = (String) expected.get("dtype");
    if (actual instanceof TFloat32 t) {
      t.scalars().forEach(s -> a.add(s.getFloat()));
    } else if (actual instanceof TFloat16 t) {
      t.scalars().forEach(s -> a.add(s.getFloat()));
    } else if (actual instanceof TFloat64 t) {
      t.scalars().forEach(s -> a.add(s.getDouble()));
    } else if (actual instanceof TInt32 t) {
      t.scalars().forEach(s -> a.add(s.getInt()));
    } else if (actual instanceof TInt64 t) {
      t.scalars().forEach(s -> a.add(s.getLong()));
    }
    String actualType = actual instanceof TFloat32 ? "float32" : actual instanceof TFloat16 ? "float16" : actual instanceof TFloat64 ? "float64"
        : actual instanceof TInt32 ? "int32" : actual instanceof TInt64 ? "int64" : actual.getClass().getSimpleName();
    assertEquals(dtype, actualType, where + ": dtype");
    assertEquals(e.size(), a.size(), where + ": size");
    for (int k = 0; k < e.size(); k++) {
      double want = (Double) e.get(k);
      if (dtype.startsWith("int")) {
        assertEquals((long) want, a.get(k).longValue(), where + " [" + k + "]");
      } else {
        // float16 keeps 11 significant bits: the same kernels may round a last bit differently
        double tolerance = dtype.equals("float16") ? 1e-3 : 1e-5;
        assertEquals(want, a.get(k).doubleValue(), tolerance * Math.max(1, Math.abs(want)), where + " [" + k + "]: Python " + e + ", Polyfn " + a);
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }
}
