package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.LoopSecondDerivativeTest.secondDerivative;
import static dev.polyfn.tests.PortCalls.scalars;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.ListFunction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * {@code Flow.gradients} through the TensorList operations that move several elements at once
 * (Gather, Scatter, ScatterIntoExistingList, Concat, Split), with the gradients Python's
 * list_ops.py registers, differentiated twice. Expected values are TensorFlow 2.21's, from programs
 * of this form (x a float32 scalar, {@code list_ops} and {@code gen_list_ops} TensorFlow's):
 *
 * <pre>
 * &#64;tf.function
 * def second(x):
 *     y = ...  # each case's program below
 *     g = tf.gradients(y, x)[0]
 *     return y, g, tf.gradients(g, x)[0]
 * </pre>
 */
class ListBulkGradientTest {

  private static Operand<TFloat32> floats(Ops tf, float... v) {
    return tf.constant(v);
  }

  /** sum(t * t * w). */
  private static Operand<TFloat32> weightedSquares(Ops tf, Operand<TFloat32> t, float... w) {
    return tf.sum(tf.math.mul(tf.math.mul(t, t), floats(tf, w)), tf.constant(0));
  }

  private static Operand<TFloat32> stack(Ops tf, Operand<?> list) {
    return tf.tensorListStack(list, tf.constant(new int[0]), TFloat32.class);
  }

  /**
   * Gather, its indices and element shape read from the list (TensorListLength and ElementShape on
   * the path, which pass no gradient). Python: {@code l = tensor_list_from_tensor(x * [1., 2., 3.],
   * []); n = tensor_list_length(l); g = tensor_list_gather(l, tf.stack([n - 1, 0]), tf.float32,
   * element_shape=tensor_list_element_shape(l, shape_type=tf.int32)); y = reduce_sum(g * g * [1.,
   * 10.]) * x}: at x = 2, 152, 228, 228 (y = 19x^3).
   */
  @Test
  void gather() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> l = tf.tensorListFromTensor(tf.math.mul(x, floats(tf, 1, 2, 3)), tf.constant(new int[0]));
      Operand<TInt32> n = tf.tensorListLength(l);
      Operand<TInt32> indices = tf.stack(List.of(tf.math.sub(n, tf.constant(1)), tf.constant(0)));
      Operand<TFloat32> g = tf.tensorListGather(l, indices, tf.tensorListElementShape(l, TInt32.class), TFloat32.class);
      return tf.math.mul(weightedSquares(tf, g, 1, 10), x);
    })) {
      assertEquals(List.of(152f, 228f, 228f), scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * TensorListScatterV2 (TensorFlow Java's tensorListScatter). Python: {@code l =
   * tensor_list_scatter(x * [1., 2.], [1, 0], element_shape=[]); s = tensor_list_stack(l,
   * tf.float32); y = reduce_sum(s * s * [10., 1.]) * x}: at x = 2, 328, 492, 492 (y = 41x^3).
   */
  @Test
  void scatter() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> l = tf.tensorListScatter(tf.math.mul(x, floats(tf, 1, 2)), tf.constant(new int[] {1, 0}),
          tf.constant(new int[0]), tf.constant(-1));
      return tf.math.mul(weightedSquares(tf, stack(tf, l), 10, 1), x);
    })) {
      assertEquals(List.of(328f, 492f, 492f), scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * The first TensorListScatter (no num_elements input). Python: as {@link #scatter} with {@code
   * gen_list_ops.tensor_list_scatter(x * [1., 2.], [1, 0], element_shape=[])}: 328, 492, 492.
   */
  @Test
  void scatterV1() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Output<?> l = tf.scope().opBuilder("TensorListScatter", "scatter").addInput(tf.math.mul(x, floats(tf, 1, 2))
          .asOutput()).addInput(tf.constant(new int[] {1, 0}).asOutput()).addInput(tf.constant(new int[0]).asOutput())
          .build().output(0);
      return tf.math.mul(weightedSquares(tf, stack(tf, l), 10, 1), x);
    })) {
      assertEquals(List.of(328f, 492f, 492f), scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * TensorListScatterIntoExistingList: both the list and the scattered tensor depend on x. Python:
   * {@code base = tensor_list_from_tensor(x * x * [1., 1., 1.], []); l = tensor_list_scatter(x * [5.,
   * 7.], [2, 0], input_handle=base); s = tensor_list_stack(l, tf.float32); y = reduce_sum(s * s * [1.,
   * 2., 3.])}: at x = 2, 528, 560, 344 (y = 124x^2 + 2x^4).
   */
  @Test
  void scatterIntoAnExistingList() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> base = tf.tensorListFromTensor(tf.math.mul(tf.math.mul(x, x), floats(tf, 1, 1, 1)),
          tf.constant(new int[0]));
      Operand<?> l = tf.tensorListScatterIntoExistingList(base, tf.math.mul(x, floats(tf, 5, 7)),
          tf.constant(new int[] {2, 0}));
      return weightedSquares(tf, stack(tf, l), 1, 2, 3);
    })) {
      assertEquals(List.of(528f, 560f, 344f), scalars(f, Map.of("x", 2f)));
    }
  }

  /** The list {@code [x * [1, 2], x * x * [3], x * [4, 5, 6]]}, elements of different lengths. */
  private static Operand<?> ragged(Ops tf, Operand<TFloat32> x) {
    Operand<?> l = tf.emptyTensorList(tf.constant(new int[] {-1}), tf.constant(-1), TFloat32.class);
    l = tf.tensorListPushBack(l, tf.math.mul(x, floats(tf, 1, 2)));
    l = tf.tensorListPushBack(l, tf.math.mul(tf.math.mul(x, x), floats(tf, 3)));
    return tf.tensorListPushBack(l, tf.math.mul(x, floats(tf, 4, 5, 6)));
  }

  /**
   * TensorListConcatV2 (TensorFlow Java's tensorListConcat) of elements of different lengths.
   * Python: {@code l = empty_tensor_list([None], tf.float32)}, x * [1., 2.], x * x * [3.] and x *
   * [4., 5., 6.] pushed back, {@code c = tensor_list_concat(l, tf.float32); y = reduce_sum(c * c *
   * [1., 2., 3., 4., 5., 6.])}: at x = 2, 2088, 2520, 2124 (y = 414x^2 + 27x^4).
   */
  @Test
  void concat() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<TFloat32> c = tf.tensorListConcat(ragged(tf, x), tf.constant(new int[] {-1}),
          tf.constant(new long[0]), TFloat32.class).tensor();
      return weightedSquares(tf, c, 1, 2, 3, 4, 5, 6);
    })) {
      assertEquals(List.of(2088f, 2520f, 2124f), scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * The first TensorListConcat (element shape an attribute). Python: as {@link #concat} with {@code
   * gen_list_ops.tensor_list_concat(l, tf.float32, element_shape=[None])[0]}: 2088, 2520, 2124.
   */
  @Test
  void concatV1() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<TFloat32> c = f32(tf.scope().opBuilder("TensorListConcat", "concat")
          .addInput(ragged(tf, x).asOutput()).setAttr("element_dtype", DataType.DT_FLOAT)
          .setAttr("element_shape", Shape.of(-1)).build().output(0));
      return weightedSquares(tf, c, 1, 2, 3, 4, 5, 6);
    })) {
      assertEquals(List.of(2088f, 2520f, 2124f), scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * TensorListSplit into elements of different lengths. Python: {@code l = tensor_list_split(x * [1.,
   * 2., 3., 4., 5., 6.], element_shape=[-1], lengths=[2, 1, 3]); a = get_item(l, 2, element_shape=[-1]);
   * b = get_item(l, 0, element_shape=[-1]); y = reduce_sum(a * a) + reduce_sum(b) * x}: at x = 2, 320,
   * 320, 160 (y = 80x^2).
   */
  @Test
  void split() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> l = tf.tensorListSplit(tf.math.mul(x, floats(tf, 1, 2, 3, 4, 5, 6)), tf.constant(new int[] {-1}),
          tf.constant(new long[] {2, 1, 3}));
      Operand<TFloat32> a = tf.tensorListGetItem(l, tf.constant(2), tf.constant(new int[] {-1}), TFloat32.class);
      Operand<TFloat32> b = tf.tensorListGetItem(l, tf.constant(0), tf.constant(new int[] {-1}), TFloat32.class);
      return tf.math.add(tf.sum(tf.math.mul(a, a), tf.constant(0)), tf.math.mul(tf.sum(b, tf.constant(0)), x));
    })) {
      assertEquals(List.of(320f, 320f, 160f), scalars(f, Map.of("x", 2f)));
    }
  }

  /**
   * Repeated indices, where Python's list_ops.py gradients are not the derivative (a gather's
   * copies overwrite one another's gradients; a scatter's overwritten rows get one): Polyfn gives
   * the derivative, as Python's {@code tf.gather} and a scatter written with plain tensors do.
   * Gather: {@code g = gather(from_tensor(x * [1, 2, 3]), [2, 0, 2]); y = sum(g * g * [1, 10,
   * 100])} = 919x^2: 3676, 3676, 1838 (Python's list gradient: 3640). Scatter: {@code l =
   * scatter(x * [1, 2], [0, 0])} keeps 2x; {@code y = sum(stack(l)^2 * 3)} = 12x^2: 48, 48, 24
   * (Python's: 72). Into an existing list: {@code base = from_tensor(x * x * [1, 1]); l =
   * scatter_into(base, x * [5, 7], [1, 1])} is [x^2, 7x]; {@code y = sum(stack(l)^2 * [1, 2])} = x^4 +
   * 98x^2: 408, 424, 244.
   */
  @Test
  void repeatedIndicesGiveTheDerivative() {
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> l = tf.tensorListFromTensor(tf.math.mul(x, floats(tf, 1, 2, 3)), tf.constant(new int[0]));
      Operand<TFloat32> g = tf.tensorListGather(l, tf.constant(new int[] {2, 0, 2}), tf.constant(new int[0]), TFloat32.class);
      return weightedSquares(tf, g, 1, 10, 100);
    })) {
      assertEquals(List.of(3676f, 3676f, 1838f), scalars(f, Map.of("x", 2f)));
    }
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> l = tf.tensorListScatter(tf.math.mul(x, floats(tf, 1, 2)), tf.constant(new int[] {0, 0}),
          tf.constant(new int[0]), tf.constant(-1));
      return weightedSquares(tf, stack(tf, l), 3);
    })) {
      assertEquals(List.of(48f, 48f, 24f), scalars(f, Map.of("x", 2f)));
    }
    try (ListFunction f = secondDerivative((tf, x) -> {
      Operand<?> base = tf.tensorListFromTensor(tf.math.mul(tf.math.mul(x, x), floats(tf, 1, 1)), tf.constant(new int[0]));
      Operand<?> l = tf.tensorListScatterIntoExistingList(base, tf.math.mul(x, floats(tf, 5, 7)), tf.constant(new int[] {1, 1}));
      return weightedSquares(tf, stack(tf, l), 1, 2);
    })) {
      assertEquals(List.of(408f, 424f, 244f), scalars(f, Map.of("x", 2f)));
    }
  }
}
