package dev.polyfn.tests;

import dev.polyfn.MapBody;
import java.util.Map;
import org.tensorflow.types.TFloat32;

/**
 * Two plain lambdas of one class, public so that a caller class compiled during a test (in
 * another class loader) can pick one: {@link TraceCacheKeyTest}'s edited caller.
 */
public final class CacheBodies {
  private CacheBodies() {}

  public static final MapBody ADD = (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.add(x, x));
  };

  public static final MapBody MUL = (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.mul(x, x));
  };
}
