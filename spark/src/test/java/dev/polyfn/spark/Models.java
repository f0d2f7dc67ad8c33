package dev.polyfn.spark;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;

/** Functions the tests score with; factories are references to these static methods. */
final class Models {
  /** How many times this JVM defined each function (the factories count). */
  static final AtomicInteger AFFINE_DEFINED = new AtomicInteger();

  private Models() {}

  /** y = 2 x + 1 (double), z = sum of the row's features (float). */
  static MapFunction affine() {
    AFFINE_DEFINED.incrementAndGet();
    return Function.define((tf, in) -> {
      Operand<TFloat64> x = in.input("x", TFloat64.class, Shape.of(-1));
      Operand<TFloat32> features = in.input("features", TFloat32.class, Shape.of(-1, 3));
      return Map.of(
          "y", tf.math.add(tf.math.mul(x, tf.constant(2.0)), tf.constant(1.0)),
          "z", tf.sum(features, tf.constant(1)));
    }, FunctionOptions.defaults().withName("affine"));
  }

  /** doubled = 2 * features, a [rows, 3] output. */
  static MapFunction doubled() {
    return Function.define((tf, in) -> {
      Operand<TFloat32> features = in.input("features", TFloat32.class, Shape.of(-1, 3));
      return Map.of("doubled", tf.math.mul(features, tf.constant(2f)));
    }, FunctionOptions.defaults().withName("doubled"));
  }

  /** y = 2 x + 1 on a float column. */
  static MapFunction affineFloat() {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(2f)), tf.constant(1f)));
    }, FunctionOptions.defaults().withName("affineFloat"));
  }

  /** y = a x + b on a double column: factories capturing different (a, b) are different models. */
  static MapFunction line(double a, double b) {
    return Function.define((tf, in) -> {
      Operand<TFloat64> x = in.input("x", TFloat64.class, Shape.of(-1));
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(a)), tf.constant(b)));
    }, FunctionOptions.defaults().withName("line"));
  }

  /** w = v + 1 on a double column. */
  static MapFunction plusOne() {
    return Function.define((tf, in) -> {
      Operand<TFloat64> v = in.input("v", TFloat64.class, Shape.of(-1));
      return Map.of("w", tf.math.add(v, tf.constant(1.0)));
    }, FunctionOptions.defaults().withName("plusOne"));
  }
}
