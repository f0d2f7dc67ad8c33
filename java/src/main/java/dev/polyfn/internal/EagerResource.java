package dev.polyfn.internal;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.DestroyResourceOp;

/**
 * A resource other than a variable (a lookup table restored from a SavedModel) in TensorFlow's
 * eager context, captured by the functions that use it and fed to them by handle at each call, as
 * a variable's handle is. Its owner (the loaded function) closes it; calls in flight hold a use of
 * it, so the resource is destroyed when the last of them is over.
 */
public final class EagerResource implements AutoCloseable {
  private final String name;
  private final Operand<?> handle;
  /** The handle resolved to a {@code TF_Tensor} (owned), fed to functions at each call. */
  private final long resource;
  private final AtomicBoolean closing = new AtomicBoolean();
  /** Uses of the resource: the owner's (until {@link #close()}) and each call's that feeds it. */
  private final AtomicInteger uses = new AtomicInteger(1);
  private final Runnable releaseUse = this::releaseUse;

  /**
   * Takes over the eager resource handle {@code handle} (an output of an eager operation, such as
   * a restored {@code _create_resource} function): destroyed when this is closed and no call uses it.
   *
   * @param name what the resource is, for messages (e.g. the object graph's path to it)
   */
  public EagerResource(String name, Operand<?> handle) {
    this.name = name;
    this.handle = handle;
    this.resource = Native.resolveHandle(TensorFlowInternals.eagerOutputHandle(handle));
  }

  /** What the resource is, for messages. */
  public String name() {
    return name;
  }

  /** The eager handle, for the eager functions that initialize or restore the resource. */
  public Operand<?> handle() {
    if (closing.get()) {
      throw new IllegalStateException("resource " + name + " is closed");
    }
    return handle;
  }

  /**
   * The address of the resolved handle tensor, with a use of the resource taken for the call
   * ({@link #releaser()} gives it back).
   *
   * @throws IllegalStateException if the resource is closed
   */
  public long retain() {
    for (int n = uses.get(); n > 0; n = uses.get()) {
      if (uses.compareAndSet(n, n + 1)) {
        return resource;
      }
    }
    throw new IllegalStateException("resource " + name + " is closed (its function was closed)");
  }

  /** Gives back a use taken by {@link #retain()}. */
  public Runnable releaser() {
    return releaseUse;
  }

  private void releaseUse() {
    if (uses.decrementAndGet() == 0) {
      try {
        // Python's restored tables destroy nothing themselves (their _destroy_resource is empty):
        // the resource manager would keep the table for the process's life.
        synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe
          Ops.create(EagerSession.getDefault()).destroyResourceOp(handle, DestroyResourceOp.ignoreLookupError(true));
        }
      } finally {
        Native.releaseVariable(resource, -1);
      }
    }
  }

  /** Gives back the owner's use. Idempotent. */
  @Override
  public void close() {
    if (closing.compareAndSet(false, true)) {
      releaseUse();
    }
  }

  @Override
  public String toString() {
    return "EagerResource(" + name + ")";
  }
}
