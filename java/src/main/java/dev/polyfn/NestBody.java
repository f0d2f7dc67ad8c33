package dev.polyfn;

import org.tensorflow.op.Ops;

/**
 * The body of a {@link NestFunction}: returns its outputs as any nest of operands in lists, maps
 * and records (a record's components that hold tensors must be generic in their type, so the
 * caller's record can hold tensors where the body's held operands).
 *
 * <pre>{@code
 * record Heads<T>(T logits, T probs) {}
 *
 * NestBody classify = (tf, in) -> {
 *   Operand<TFloat32> logits = tf.linalg.matMul(in.input("x", TFloat32.class), w);
 *   return new Heads<>(logits, tf.nn.softmax(logits));
 * };
 * }</pre>
 */
@FunctionalInterface
public interface NestBody {
  /** Builds the function's graph: declares parameters on {@code inputs}, returns the output nest. */
  Object define(Ops tf, Inputs inputs);
}
