package dev.polyfn;

import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;

/**
 * The body of a {@link MapFunction}: builds the function's graph with {@code tf}, declaring its
 * parameters through {@code inputs}, and returns its named outputs.
 *
 * <p>The body runs only while Polyfn traces (once per new input signature), never on calls that
 * hit the cache: Java side effects in it happen once per trace, as in Python's {@code tf.function}.
 *
 * <pre>{@code
 * MapBody addTwo = (tf, in) -> {
 *   Operand<TFloat32> x = in.input("x", TFloat32.class);
 *   return Map.of("y", tf.math.add(x, tf.constant(2f)));
 * };
 * }</pre>
 */
@FunctionalInterface
public interface MapBody {
  /**
   * Defines the function.
   *
   * @param tf ops that build the traced graph
   * @param inputs declares parameters and returns their placeholders
   * @return the outputs by name; each must be an operand of {@code tf}'s graph
   */
  Map<String, Operand<?>> define(Ops tf, Inputs inputs);
}
