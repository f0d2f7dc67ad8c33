package dev.polyfn.internal.trace;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import org.tensorflow.types.family.TType;

/**
 * The tensors one call handed to its caller, closed together, once: the state behind {@link
 * Outputs}, {@link ListOutputs} and {@link NestOutputs}. Closing is idempotent and thread-safe:
 * of threads closing at once, one closes the tensors; a tensor closed by its own {@code close()}
 * meanwhile, on any thread, is released once (see {@code internal.OwnedScope}).
 */
public final class OwnedTensors {
  private static final VarHandle CLOSED;

  static {
    try {
      CLOSED = MethodHandles.lookup().findVarHandle(OwnedTensors.class, "closed", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final TType[] tensors;
  private volatile boolean closed;

  public OwnedTensors(TType[] tensors) {
    this.tensors = tensors;
  }

  /** Tensor {@code i}. */
  public TType get(int i) {
    checkOpen();
    return tensors[i];
  }

  /** All of them, in order (an unmodifiable list). */
  public List<TType> list() {
    checkOpen();
    return List.of(tensors);
  }

  public int size() {
    return tensors.length;
  }

  public boolean isClosed() {
    return closed;
  }

  /** @throws IllegalStateException if the tensors are closed */
  public void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the outputs are closed");
    }
  }

  /**
   * Closes every tensor. Idempotent. A tensor whose close fails does not keep the others open:
   * the first failure is thrown after all were closed.
   */
  public void close() {
    if (!CLOSED.compareAndSet(this, false, true)) {
      return;
    }
    RuntimeException first = null;
    for (TType t : tensors) {
      try {
        t.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
