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
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * Conds, mapFn and nested control flow: programs in the manner of TensorFlow's own control flow tests (while_v2_test.py, cond_v2_test.py,
 * control_flow_ops_py_test.py, map_fn_test.py, functional_ops_test.py), written with Flow, give the
 * values and gradients TensorFlow 2.21 gave: nested loops and conds, input-dependent and zero trip
 * counts, maximum_iterations, loop variables of several dtypes or growing shapes, TensorList
 * accumulators, several outputs, captures, map_fn over several inputs with a dtype change, scan and
 * foldl as loops, first and second derivatives. tests/python/control_flow_ports_more.py runs the
 * Python programs and records every call's inputs and outputs and the trace count
 * (control_flow_ports_more.json); {@link ControlFlowPorts#check} feeds the same inputs and compares (floats within
 * 1e-5 of the larger of 1 and the value, integers and booleans exactly, shapes and dtypes too).
 */
class ControlFlowPortsCondsTest {
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
}
