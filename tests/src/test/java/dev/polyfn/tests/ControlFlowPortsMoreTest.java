package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowPorts.*;
import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;

import dev.polyfn.Flow;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/**
 * RNNs, growing shapes, mixed dtypes and second derivatives: programs in the manner of TensorFlow's own control flow tests (while_v2_test.py, cond_v2_test.py,
 * control_flow_ops_py_test.py, map_fn_test.py, functional_ops_test.py), written with Flow, give the
 * values and gradients TensorFlow 2.21 gave: nested loops and conds, input-dependent and zero trip
 * counts, maximum_iterations, loop variables of several dtypes or growing shapes, TensorList
 * accumulators, several outputs, captures, map_fn over several inputs with a dtype change, scan and
 * foldl as loops, first and second derivatives. tests/python/control_flow_ports_more.py runs the
 * Python programs and records every call's inputs and outputs and the trace count
 * (control_flow_ports_more.json); {@link ControlFlowPorts#check} feeds the same inputs and compares (floats within
 * 1e-5 of the larger of 1 and the value, integers and booleans exactly, shapes and dtypes too).
 */
class ControlFlowPortsMoreTest {
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
}
