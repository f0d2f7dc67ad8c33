package dev.polyfn.tests;

import dev.polyfn.Function;
import dev.polyfn.SingleFunction;
import java.util.Map;
import org.tensorflow.types.TFloat32;

/**
 * Loaded by {@link TwoClassLoadersTest} in class loaders of its own, each with its own copy of
 * Polyfn: defines a function whose body differs per loader and calls it.
 */
public final class ClassLoaderProbe {
  private ClassLoaderProbe() {}

  /** Defines {@code y = x * factor} and returns it at {@code x}. */
  public static float scale(float factor, float x) {
    try (SingleFunction f = Function.defineSingle((tf, in) ->
            tf.math.mul(in.input("x", TFloat32.class), tf.constant(factor)));
        TFloat32 t = TFloat32.scalarOf(x);
        TFloat32 y = (TFloat32) f.call(Map.of("x", t))) {
      return y.getFloat();
    }
  }
}
