package dev.polyfn;

import org.tensorflow.Operand;
import org.tensorflow.op.Ops;

/**
 * The body of a {@link SingleFunction}: returns one output.
 *
 * <pre>{@code
 * SingleBody norm = (tf, in) -> tf.math.sqrt(tf.sum(tf.math.square(in.input("v", TFloat32.class)), tf.constant(0)));
 * }</pre>
 */
@FunctionalInterface
public interface SingleBody {
  /** Builds the function's graph: declares parameters on {@code inputs}, returns the output. */
  Operand<?> define(Ops tf, Inputs inputs);
}
