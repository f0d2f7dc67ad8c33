package dev.polyfn.tests;

import static dev.polyfn.tests.PortCalls.floats;
import static dev.polyfn.tests.PortCalls.ints;
import static dev.polyfn.tests.PortCalls.scalars;
import static dev.polyfn.tests.PortCalls.staticShape;
import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * The semantics of cond, while and map_fn (predicate shapes, output shapes, maximum_iterations),
 * ported from TensorFlow's cond_v2_test.py,
 * while_v2_test.py and map_fn_test.py, with the results TensorFlow 2.21 gave as expected values
 * (printed by tests/python/tf_function_ports.py). Each case names the Python program it ports.
 */
class TfFunctionControlFlowPortsTest {

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

  /**
   * while_v2_test / cond_v2_test: outputs keep their static shapes when several are ranked (the
   * output_shapes list attribute). Python: a loop over [2, 3], [4], [5, 1] and a cond returning
   * [2, 3], [4] give those shapes.
   */
  @Test
  void severalRankedLoopVariablesAndCondOutputsKeepTheirShapes() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> a = in.input("a", TFloat32.class);
          Operand<TFloat32> b = in.input("b", TFloat32.class);
          Operand<TFloat32> c = in.input("c", TFloat32.class);
          List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), a, b, c), v -> tf.math.less(i(v.get(0)), tf.constant(2)),
              v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.add(f32(v.get(1)), tf.constant(1f)), v.get(2), v.get(3)));
          List<Operand<?>> cond = Flow.condList(tf, tf.constant(true), () -> List.of(a, b), () -> List.of(tf.math.neg(a), b));
          List<Operand<?>> shapes = new ArrayList<>();
          for (Operand<?> o : List.of(out.get(1), out.get(2), out.get(3), cond.get(0), cond.get(1))) {
            shapes.add(tf.constant(staticShape(o.shape())));
          }
          return List.of(tf.concat((List) shapes, tf.constant(0)), tf.sum(f32(out.get(1)), tf.constant(new int[] {0, 1})));
        });
        TFloat32 a = TFloat32.tensorOf(Shape.of(2, 3), d -> d.scalars().forEach(x -> x.setFloat(0f)));
        TFloat32 b = TFloat32.tensorOf(Shape.of(4), d -> d.scalars().forEach(x -> x.setFloat(0f)));
        TFloat32 c = TFloat32.tensorOf(Shape.of(5, 1), d -> d.scalars().forEach(x -> x.setFloat(0f)));
        ListOutputs out = f.call(Map.of("a", a, "b", b, "c", c))) {
      assertArrayEquals(new int[] {2, 2, 3, 1, 4, 2, 5, 1, 2, 2, 3, 1, 4}, ints(out.get(0, TInt32.class)));
      assertEquals(12f, out.get(1, TFloat32.class).getFloat());
    }
  }

  /**
   * while_v2_test testShapeInvariants-style: a loop variable of unknown rank (shape_invariants
   * TensorShape(None)) before ranked ones; Python: the others keep [4] and [2, 3].
   */
  @Test
  void aLoopVariableOfUnknownRankLeavesTheOthersShapes() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> a = in.input("a", TFloat32.class);
          Operand<TFloat32> b = in.input("b", TFloat32.class);
          List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f), b, a),
              Flow.loop().shape(1, Shape.unknown()), v -> tf.math.less(i(v.get(0)), tf.constant(2)),
              v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), v.get(1), v.get(2), v.get(3)));
          return List.of(tf.concat(List.of(tf.constant(staticShape(out.get(1).shape())), tf.constant(staticShape(out.get(2).shape())),
              tf.constant(staticShape(out.get(3).shape()))), tf.constant(0)));
        });
        TFloat32 a = TFloat32.tensorOf(Shape.of(2, 3), d -> d.scalars().forEach(x -> x.setFloat(0f)));
        TFloat32 b = TFloat32.tensorOf(Shape.of(4), d -> d.scalars().forEach(x -> x.setFloat(0f)));
        ListOutputs out = f.call(Map.of("a", a, "b", b))) {
      assertArrayEquals(new int[] {-1, 1, 4, 2, 2, 3}, ints(out.get(0, TInt32.class)));
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
}
