package dev.polyfn;

import dev.polyfn.internal.trace.OwnedTensors;
import java.util.List;
import org.tensorflow.types.family.TType;

/**
 * The outputs of one call of a {@link NestFunction}: the nest the body returned, with a tensor
 * where it returned an operand. Closing it closes every tensor in it, so use try-with-resources.
 */
public final class NestOutputs implements AutoCloseable {
  private final Object value;
  private final OwnedTensors tensors;

  NestOutputs(Object value, TType[] tensors) {
    this.value = value;
    this.tensors = new OwnedTensors(tensors);
  }

  /**
   * The output nest, typed as the caller expects it ({@code Map<String, List<TFloat32>>}, {@code
   * Heads<TFloat32>}); unchecked, as a nest's type is known only to the body.
   *
   * @throws IllegalStateException if the outputs are closed
   */
  @SuppressWarnings("unchecked")
  public <V> V value() {
    tensors.checkOpen();
    return (V) value;
  }

  /**
   * The output nest as {@code type}, checked.
   *
   * @throws IllegalArgumentException if it is not a {@code type}
   */
  public <V> V value(Class<V> type) {
    tensors.checkOpen();
    if (!type.isInstance(value)) {
      throw new IllegalArgumentException("the outputs are a " + value.getClass().getName() + ", not a " + type.getName());
    }
    return type.cast(value);
  }

  /** Every output tensor, in flatten order (list index, map key, record component). */
  public List<TType> tensors() {
    return tensors.list();
  }

  /** Closes every output tensor. Idempotent. */
  @Override
  public void close() {
    tensors.close();
  }

  @Override
  public String toString() {
    return tensors.isClosed() ? "NestOutputs(closed)" : "NestOutputs(" + tensors.size() + " tensors)";
  }
}
