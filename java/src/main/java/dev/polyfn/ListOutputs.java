package dev.polyfn;

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
  private final TType[] tensors;
  private boolean closed;

  ListOutputs(TType[] tensors) {
    this.tensors = tensors;
  }

  @Override
  public Tensor get(int index) {
    check();
    return tensors[index];
  }

  /**
   * Output {@code index} as {@code type}.
   *
   * @throws IllegalArgumentException if it is not a {@code type}
   */
  public <T extends TType> T get(int index, Class<T> type) {
    check();
    TType t = tensors[index];
    if (!type.isInstance(t)) {
      throw new IllegalArgumentException(
          "output " + index + " is a " + t.type().getSimpleName() + ", not a " + type.getSimpleName());
    }
    return type.cast(t);
  }

  @Override
  public int size() {
    return tensors.length;
  }

  /** Closes every output tensor. Idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      for (TType t : tensors) {
        t.close();
      }
    }
  }

  private void check() {
    if (closed) {
      throw new IllegalStateException("the outputs are closed");
    }
  }
}
