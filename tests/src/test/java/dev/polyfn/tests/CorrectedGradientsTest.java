package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * Gathers whose gradient Polyfn builds itself (CorrectedGradients), found by the review of the
 * registry audit: complex params got zeros (every gather was taken for one to correct, and only
 * float params got a gradient there), and an int64 axis failed to build. Expected values are
 * TensorFlow 2.21's ({@code tf.function} and {@code GradientTape}), for x = [[0.59, 1.82, -1.06],
 * [-1.55, 1.46, 1.17]].
 */
class CorrectedGradientsTest {
  private static final float[] X = {0.59f, 1.82f, -1.06f, -1.55f, 1.46f, 1.17f};

  private static float[] gradient(java.util.function.BiFunction<Ops, Operand<TFloat32>, Operand<TFloat32>> loss) {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(2, 3));
          return Map.of("g", Flow.gradients(tf, loss.apply(tf, x), List.of(x)).get(0));
        });
        TFloat32 x = TFloat32.tensorOf(Shape.of(2, 3), DataBuffers.of(X));
        Outputs out = f.call(Map.of("x", x))) {
      float[] v = new float[6];
      out.get("g", TFloat32.class).asRawTensor().data().asFloats().read(v);
      return v;
    }
  }

  /**
   * {@code l = sum(real(g * g) * [[1, 1.1], [1.2, 1.3]])}, {@code g = gather(complex(x, 0.5x), [2, 0],
   * axis)}: Python's [0.9735, 0, -1.59, -3.0225, 0, 2.106] for axis 1 and -1; Polyfn gave zeros.
   */
  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void aGatherOfComplexValuesPassesTheGradientOn() {
    for (int axis : new int[] {1, -1}) {
      float[] g = gradient((tf, x) -> {
        Operand c = (Operand) tf.scope().opBuilder("Complex", "complex").addInput(x.asOutput())
            .addInput(tf.math.mul(x, tf.constant(0.5f)).asOutput()).build().output(0);
        Operand gathered = tf.gather(c, tf.constant(new int[] {2, 0}), tf.constant(axis));
        Operand r = (Operand) tf.scope().opBuilder("Real", "real").addInput(tf.math.mul(gathered, gathered).asOutput())
            .build().output(0);
        return tf.sum(tf.math.mul((Operand<TFloat32>) r, tf.constant(new float[][] {{1f, 1.1f}, {1.2f, 1.3f}})),
            tf.constant(new int[] {0, 1}));
      });
      assertArrayEquals(new float[] {0.9735f, 0f, -1.59f, -3.0225f, 0f, 2.106f}, g, 1e-4f, "axis " + axis);
    }
  }

  /**
   * {@code l = sum(gather(x, [2, 0], axis) * [[1, 1.1], [1.2, 1.3]])} with an int64 axis, -1 and 1:
   * Python's [1.1, 0, 1.0, 1.3, 0, 1.2]; the registry's gradient failed to build ("Inconsistent
   * values for attr 'Index' DT_INT32 vs. DT_INT64").
   */
  @Test
  void aGatherAlongAnInt64AxisIsDifferentiated() {
    for (long axis : new long[] {-1L, 1L}) {
      float[] g = gradient((tf, x) -> tf.sum(tf.math.mul(tf.gather(x, tf.constant(new int[] {2, 0}), tf.constant(axis)),
          tf.constant(new float[][] {{1f, 1.1f}, {1.2f, 1.3f}})), tf.constant(new int[] {0, 1})));
      assertArrayEquals(new float[] {1.1f, 0f, 1.0f, 1.3f, 0f, 1.2f}, g, 1e-6f, "axis " + axis);
    }
  }
}
