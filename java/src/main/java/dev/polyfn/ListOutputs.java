package dev.polyfn;

import dev.polyfn.internal.trace.OwnedTensors;
import java.util.AbstractList;
import org.tensorflow.Tensor;
import org.tensorflow.types.family.TType;

/**
 * The output tensors of one {@link ListFunction} call, in order. Closing it closes them all:
 *
 * <pre>{@code
 * try (ListOutputs out = f.call(Map.of("x", x))) {
 *   TFloat32 first = out.get(0, TFloat32.class);
 * }
 * }</pre>
 */
public final class ListOutputs extends AbstractList<Tensor> implements AutoCloseable {
  private final OwnedTensors tensors;

  ListOutputs(TType[] tensors) {
    this.tensors = new OwnedTensors(tensors);
  }

  @Override
  public Tensor get(int index) {
    return tensors.get(index);
  }

  /**
   * Output {@code index} as {@code type}.
   *
   * @throws IllegalArgumentException if it is not a {@code type}
   */
  public <T extends TType> T get(int index, Class<T> type) {
    TType t = tensors.get(index);
    if (!type.isInstance(t)) {
      throw new IllegalArgumentException(
          "output " + index + " is a " + t.type().getSimpleName() + ", not a " + type.getSimpleName());
    }
    return type.cast(t);
  }

  @Override
  public int size() {
    return tensors.size();
  }

  /** Closes every output tensor. Idempotent. */
  @Override
  public void close() {
    tensors.close();
  }
}
