package dev.polyfn;

import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * The body of a {@link UnaryFunction}: one typed input {@code x}, one typed output.
 *
 * <pre>{@code
 * UnaryBody<TFloat32, TFloat32> twice = (tf, x) -> tf.math.mul(x, tf.constant(2f));
 * }</pre>
 */
@FunctionalInterface
public interface UnaryBody<I extends TType, O extends TType> {
  /** Builds the function's graph from its one input {@code x}; returns the output. */
  Operand<O> define(Ops tf, Operand<I> x);
}
