package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static dev.polyfn.tests.PortCalls.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.ListFunction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * {@code Flow.gradients} through TensorList operations (TensorFlow's C++ registry has no gradient
 * for them; Polyfn gives Python's list_ops.py ones), and its refusals: TensorList operations it has
 * no gradient for, and loops carrying a variant that is not a TensorList.
 */
class ListGradientTest {

  /**
   * A TensorList made from a tensor, read back by index and stacked. Python: {@code l =
   * list_ops.tensor_list_from_tensor(x * x, []); y = list_ops.tensor_list_get_item(l, 1, tf.float32) * 10
   * + tf.reduce_sum(list_ops.tensor_list_stack(l, tf.float32))}; dy/dx at x = [1, 2, 3] is 2x + [0, 20x, 0].
   */
  @Test
  void gradientThroughTensorListOperations() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<?> list = tf.tensorListFromTensor(tf.math.mul(x, x), tf.constant(new int[0]));
      Operand<TFloat32> item = tf.tensorListGetItem(list, tf.constant(1), tf.constant(new int[0]), TFloat32.class);
      Operand<TFloat32> all = tf.tensorListStack(list, tf.constant(new int[0]), TFloat32.class);
      Operand<TFloat32> y = tf.math.add(tf.math.mul(item, tf.constant(10f)), tf.sum(all, tf.constant(0)));
      return List.of(Flow.gradients(tf, y, List.of(x)).get(0));
    })) {
      assertArrayEquals(new float[] {2f, 44f, 6f}, floats(f, Map.of("x", new float[] {1, 2, 3})).get(0));
    }
  }

  /**
   * A TensorList operation without a gradient here is refused, naming it, rather than passing none
   * (TensorListConcatLists: Python's list_ops.py declares it not differentiable, so Python's
   * gradient leaves that path out).
   */
  @Test
  void aTensorListOperationWithoutAGradientIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (ListFunction f = Function.defineList((tf, in) -> {
        Operand<TFloat32> x = in.input("x", TFloat32.class);
        Operand<?> list = tf.tensorListFromTensor(x, tf.constant(new int[0]));
        Operand<?> both = tf.tensorListConcatLists(list, list, TFloat32.class);
        Operand<TFloat32> g = tf.tensorListStack(both, tf.constant(new int[0]), TFloat32.class);
        return List.of(Flow.gradients(tf, tf.sum(g, tf.constant(0)), List.of(x)).get(0));
      })) {
        floats(f, Map.of("x", new float[] {1, 2, 3}));
      }
    });
    assertTrue(e.getMessage().contains("no gradient for TensorListConcatLists"), e.getMessage());
  }

  /**
   * A TensorList a cond returns, carried by a loop that reads and rewrites it (it was refused as "not
   * a TensorList"). Python (TensorFlow 2.21), differentiating twice: {@code l = tf.cond(p, lambda:
   * tensor_list_from_tensor(x * [1., 2., 3.], []), lambda: tensor_list_from_tensor(x * x * [1., 1.,
   * 1.], [])); _, l, s = tf.while_loop(lambda i, l, s: i < 3, lambda i, l, s: (i + 1, set_item(l, i,
   * get_item(l, i) * x), s + get_item(l, i)), [0, l, 0.]); y = reduce_sum(stack(l)) * s}; y, dy/dx,
   * d2y/dx2 at x = 2: p true 288, 432, 432 (y = 36x^3); p false 288, 720, 1440 (y = 9x^5).
   */
  @Test
  void gradientsOfALoopCarryingATensorListACondReturns() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TBool> p = in.input("p", TBool.class);
      Operand<TInt32> scalar = tf.constant(new int[0]);
      Operand<?> list = condReturnedList(tf, p, x);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), list, tf.constant(0f)),
          v -> tf.math.less(i(v.get(0)), tf.constant(3)), v -> {
            Operand<TFloat32> e = tf.tensorListGetItem(v.get(1), i(v.get(0)), scalar, TFloat32.class);
            return List.of(tf.math.add(i(v.get(0)), tf.constant(1)),
                tf.tensorListSetItem(v.get(1), i(v.get(0)), tf.math.mul(e, x)), tf.math.add(f32(v.get(2)), e));
          });
      Operand<TFloat32> y = tf.math.mul(tf.sum(tf.tensorListStack(out.get(1), scalar, TFloat32.class),
          tf.constant(0)), f32(out.get(2)));
      Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
      return List.of(y, g, Flow.gradients(tf, g, List.of(x)).get(0));
    })) {
      assertEquals(List.of(288f, 432f, 432f), PortCalls.scalars(f, Map.of("x", 2f, "p", true)));
      assertEquals(List.of(288f, 720f, 1440f), PortCalls.scalars(f, Map.of("x", 2f, "p", false)));
    }
  }

  /**
   * {@code tf.cond(p, lambda: tensor_list_from_tensor(x * [1., 2., 3.], []), lambda:
   * tensor_list_from_tensor(x * x * [1., 1., 1.], []))}.
   */
  private static Operand<?> condReturnedList(Ops tf, Operand<TBool> p, Operand<TFloat32> x) {
    Operand<TInt32> scalar = tf.constant(new int[0]);
    return Flow.condList(tf, p,
        () -> List.of(tf.tensorListFromTensor(tf.math.mul(x, tf.constant(new float[] {1, 2, 3})), scalar)),
        () -> List.of(tf.tensorListFromTensor(tf.math.mul(tf.math.mul(x, x), tf.constant(new float[] {1, 1, 1})),
            scalar))).get(0);
  }

  /**
   * A loop reading a TensorList a cond returns, which it captures. Python: {@code l} as in {@link
   * #gradientsOfALoopCarryingATensorListACondReturns}; {@code y = tf.while_loop(lambda i, v: i < 3,
   * lambda i, v: (i + 1, v + get_item(l, i) * x), [0, 0.])[1]}; y, dy/dx, d2y/dx2 at x = 2: p true
   * 24, 24, 12 (y = 6x^2); p false 24, 36, 36 (y = 3x^3).
   */
  @Test
  void gradientsOfALoopReadingATensorListACondReturns() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<?> list = condReturnedList(tf, in.input("p", TBool.class), x);
      Operand<TFloat32> y = f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f)),
          v -> tf.math.less(i(v.get(0)), tf.constant(3)),
          v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.add(f32(v.get(1)), tf.math.mul(
              tf.tensorListGetItem(list, i(v.get(0)), tf.constant(new int[0]), TFloat32.class), x)))).get(1));
      Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
      return List.of(y, g, Flow.gradients(tf, g, List.of(x)).get(0));
    })) {
      assertEquals(List.of(24f, 24f, 12f), PortCalls.scalars(f, Map.of("x", 2f, "p", true)));
      assertEquals(List.of(24f, 36f, 36f), PortCalls.scalars(f, Map.of("x", 2f, "p", false)));
    }
  }

  /**
   * A TensorList through PlaceholderWithDefault (its gradient is the incoming one, as Python's
   * array_grad.py gives). Python: {@code l = placeholder_with_default(tensor_list_from_tensor(x * [1.,
   * 2., 3.], []), shape=[]); y = get_item(l, 2) * x}: y, dy/dx, d2y/dx2 at x = 2: 12, 12, 6.
   */
  @Test
  void gradientsThroughAPlaceholderWithDefaultOfATensorList() {
    try (ListFunction f = LoopSecondDerivativeTest.secondDerivative((tf, x) -> {
      Operand<?> list = tf.tensorListFromTensor(tf.math.mul(x, tf.constant(new float[] {1, 2, 3})),
          tf.constant(new int[0]));
      @SuppressWarnings({"unchecked", "rawtypes"})
      Operand<?> held = tf.placeholderWithDefault((Operand) list, Shape.scalar());
      return tf.math.mul(tf.tensorListGetItem(held, tf.constant(2), tf.constant(new int[0]), TFloat32.class), x);
    })) {
      assertEquals(List.of(12f, 12f, 6f), PortCalls.scalars(f, Map.of("x", 2f)));
    }
  }

  /** A loop carrying a variant that is not a TensorList (an Optional) is refused when differentiated. */
  @Test
  void aLoopCarryingAnotherVariantIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (ListFunction f = Function.defineList((tf, in) -> {
        Operand<TFloat32> x = in.input("x", TFloat32.class);
        List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), x, tf.data.optionalNone()),
            v -> tf.math.less(i(v.get(0)), tf.constant(2)),
            v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.mul(f32(v.get(1)), x), v.get(2)));
        return List.of(Flow.gradients(tf, out.get(1), List.of(x)).get(0));
      })) {
        floats(f, Map.of("x", 2f));
      }
    });
    assertTrue(e.getMessage().contains("loop variable 2 is VARIANT and not a TensorList"), e.getMessage());
  }
  /**
   * A loop body reading a TensorList it captures (Python's TensorArray read in a while_loop).
   * Python: {@code ta = tf.TensorArray(tf.float32, size=3).unstack(x * [1., 2., 3.]); y =
   * tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + ta.read(i) * x), [0, 0.])[1]} at x =
   * 2: y = 6x^2 = 24, dy/dx = 24, d2y/dx2 = 12 (Python's, differentiating its gradient again).
   */
  @Test
  void gradientOfALoopReadingACapturedTensorList() {
    try (ListFunction f = LoopSecondDerivativeTest.secondDerivative((tf, x) -> {
      Operand<?> list = tf.tensorListFromTensor(tf.math.mul(x, tf.constant(new float[] {1f, 2f, 3f})),
          tf.constant(new int[0]));
      return f32(Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f)), v -> tf.math.less(i(v.get(0)), tf.constant(3)),
          v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.math.add(f32(v.get(1)), tf.math.mul(
              tf.tensorListGetItem(list, i(v.get(0)), tf.constant(new int[0]), TFloat32.class), x)))).get(1));
    })) {
      assertEquals(List.of(24f, 24f, 12f), PortCalls.scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * A cond branch reading a TensorList it captures. Python: {@code ta = ... unstack(x * [1., 2.,
   * 3.]); y = tf.cond(p, lambda: ta.read(2) * x, lambda: x)} at x = 2, p true: y = 3x^2 = 12, dy/dx = 12.
   */
  @Test
  void gradientOfACondReadingACapturedTensorList() {
    try (ListFunction f = PortCalls.valueAndGradient((tf, x) -> {
      Operand<?> list = tf.tensorListFromTensor(tf.math.mul(x, tf.constant(new float[] {1f, 2f, 3f})),
          tf.constant(new int[0]));
      return Flow.cond(tf, tf.constant(true), () -> tf.math.mul(
          tf.tensorListGetItem(list, tf.constant(2), tf.constant(new int[0]), TFloat32.class), x), () -> x);
    })) {
      assertEquals(List.of(12f, 12f), PortCalls.scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * A variant other than a TensorList on the path (an Optional holding x): no gradient goes through
   * it, so the gradient is refused, naming the operation, rather than given without that path.
   */
  @Test
  void aPathThroughAnotherVariantIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (ListFunction f = PortCalls.valueAndGradient((tf, x) -> {
        Operand<?> held = tf.data.optionalFromValue(List.<Operand<?>>of(x));
        Operand<TFloat32> back = f32(tf.data.optionalGetValue(held, List.of(TFloat32.class), List.of(x.shape()))
            .components().get(0));
        return tf.math.add(back, LoopSecondDerivativeTest.power(tf, x, tf.constant(3)));
      })) {
        PortCalls.scalars(f, Map.of("x", 2f));
      }
    });
    assertTrue(e.getMessage().contains("OptionalGetValue"), e.getMessage());
  }

  /**
   * A TensorList set into a list of lists, read back: its gradient was dropped (18, 6). Python
   * (TensorFlow 2.21): inner = tensor_list_from_tensor(x * [1, 2], []); outer = tensor_list_reserve([],
   * 2, tf.variant); outer = tensor_list_set_item(outer, 0, inner); y = get_item(get_item(outer, 0),
   * 1) * x; y and dy/dx at x = 3: 18, 12. Found by a read-only review.
   */
  @Test
  void aListSetIntoAListOfListsPassesItsGradient() {
    try (ListFunction f = PortCalls.valueAndGradient((tf, x) -> {
      Operand<?> inner = tf.tensorListFromTensor(tf.math.mul(x, tf.constant(new float[] {1, 2})), tf.constant(new int[0]));
      Operand<?> outer = tf.scope().opBuilder("TensorListReserve", "outer").addInput(tf.constant(new int[0]).asOutput())
          .addInput(tf.constant(2).asOutput()).setAttr("element_dtype", DataType.DT_VARIANT).build().output(0);
      outer = tf.tensorListSetItem(outer, tf.constant(0), inner);
      Operand<?> got = tf.scope().opBuilder("TensorListGetItem", "got").addInput(outer.asOutput())
          .addInput(tf.constant(0).asOutput()).addInput(tf.constant(new int[0]).asOutput())
          .setAttr("element_dtype", DataType.DT_VARIANT).build().output(0);
      return tf.math.mul(tf.tensorListGetItem(got, tf.constant(1), tf.constant(new int[0]), TFloat32.class), x);
    })) {
      assertEquals(List.of(18f, 12f), PortCalls.scalars(f, Map.of("x", 3f)));
    }
  }

  /**
   * Under XLA, a TensorList of TensorLists is refused at trace: pushing a list of unknown element
   * shape into one made TensorFlow's XLA compiler abort the JVM ("Check failed: shape.IsTuple()").
   * The function stays usable for calls that trace without one.
   */
  @Test
  void aListOfListsIsRefusedUnderXla() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      boolean nested = in.javaInput("nested", Boolean.class);
      Operand<?> inner = tf.emptyTensorList(tf.constant(-1), tf.constant(3), TFloat32.class);
      Operand<?> outer = tf.scope().opBuilder("EmptyTensorList", "outer").addInput(tf.constant(-1).asOutput())
          .addInput(tf.constant(3).asOutput()).setAttr("element_dtype", nested ? DataType.DT_VARIANT : DataType.DT_FLOAT)
          .build().output(0);
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), inner, outer), Flow.loop().maximumIterations(3),
          v -> tf.math.less(i(v.get(0)), tf.constant(3)),
          v -> List.of(tf.math.add(i(v.get(0)), tf.constant(1)), tf.tensorListPushBack(v.get(1), x),
              tf.tensorListPushBack(v.get(2), nested ? v.get(1) : x)));
      return List.of(tf.sum(tf.tensorListStack(out.get(1), tf.constant(new int[0]), TFloat32.class), tf.constant(0)));
    }, FunctionOptions.defaults().withJitCompile(true))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> PortCalls.scalars(f, Map.of("x", 1.5f, "nested", true)));
      assertTrue(e.getMessage().contains("'outer' (EmptyTensorList) has a TensorList of TensorLists"), e.getMessage());
      assertEquals(List.of(4.5f), PortCalls.scalars(f, Map.of("x", 1.5f, "nested", false)));
    }
  }
}
