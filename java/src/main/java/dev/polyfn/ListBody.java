package dev.polyfn;

import java.util.List;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;

/**
 * The body of a {@link ListFunction}: returns its outputs as a list.
 *
 * <pre>{@code
 * ListBody minMax = (tf, in) -> {
 *   Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
 *   return List.of(tf.min(x, tf.constant(0)), tf.max(x, tf.constant(0)));
 * };
 * }</pre>
 */
@FunctionalInterface
public interface ListBody {
  /** Builds the function's graph: declares parameters on {@code inputs}, returns the outputs. */
  List<Operand<?>> define(Ops tf, Inputs inputs);
}
