package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * TensorList indices from the caller, where TensorFlow's kernels do not check them: a negative
 * index given to {@code TensorListScatterIntoExistingList} aborts the process (as in Python), and
 * the gradient of a {@code TensorListGather} is one, written with the gather's own indices, which
 * the gather (pruned when nothing else reads it) did not check. The gradient now checks them as
 * the gather does; each bad call is a clear exception, and a good call after it still answers.
 */
class ListIndexGuardTest {

  /**
   * dy/dx of {@code y = sum(gather(from_tensor(x * [1, 2, 3]), idx) * 5)}, the gradient alone (so
   * nothing else needs the gather). Python's TensorFlow 2.21 aborts on idx = [-3]; at idx = [1] it
   * gives 10, and at idx = [3] (one past the end) it gives 5, where the gather would have failed.
   */
  @Test
  void theGatherGradientChecksItsIndicesFirst() {
    try (ListFunction f = Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TInt32> idx = in.input("idx", TInt32.class);
      Operand<?> l = tf.tensorListFromTensor(tf.math.mul(x, tf.constant(new float[] {1, 2, 3})), tf.constant(new int[0]));
      Operand<TFloat32> g = tf.tensorListGather(l, idx, tf.constant(new int[0]), TFloat32.class);
      Operand<TFloat32> y = tf.sum(tf.math.mul(g, tf.constant(new float[] {5})), tf.constant(0));
      return List.of(Flow.gradients(tf, y, List.of(x)).get(0));
    })) {
      for (int round = 0; round < 3; round++) {
        assertArrayEquals(new float[] {10f}, PortCalls.floats(f, Map.of("x", 2f, "idx", new int[] {1})).get(0));
        for (int[] bad : List.of(new int[] {-3}, new int[] {3}, new int[] {0, -1})) {
          RuntimeException e = assertThrows(RuntimeException.class, () -> PortCalls.floats(f, Map.of("x", 2f, "idx", bad)));
          String m = String.valueOf(e.getMessage());
          assertTrue(m.contains("is not in [0, 3)") || m.contains("out o range; list only has 3 elements"), e.toString());
        }
      }
      assertArrayEquals(new float[] {20f}, PortCalls.floats(f, Map.of("x", 2f, "idx", new int[] {2, 0})).get(0));
    }
  }
}
