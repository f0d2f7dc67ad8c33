package dev.polyfn.internal;

import java.util.concurrent.atomic.AtomicReference;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerScope;

/**
 * The scope an output tensor's {@code RawTensor} closes, in place of the one TensorFlow Java gave
 * it: it gives back the tensor's reference once, whichever of the tensor's own {@code close()}
 * and its outputs object's {@code close()} comes first, from any number of threads.
 *
 * <p>TensorFlow Java's scope is not thread-safe: two threads closing it at once can both pop the
 * tensor from its stack and release its one reference twice, and JavaCPP then runs the
 * deallocator twice ({@code TF_DeleteTensor} of freed memory: "double free or corruption"), or
 * frees it under a call that holds a reference of its own. Here the release is an atomic
 * exchange.
 */
final class OwnedScope extends PointerScope {
  private final AtomicReference<Pointer> owned;

  /** A scope owning the one reference the tensor's original scope took on {@code pointer}. */
  OwnedScope(Pointer pointer) {
    // A new scope is pushed on this thread's scope stack; an extended scope's close() only pops
    // it, releasing nothing: it is then attached to no thread.
    super();
    extend();
    super.close();
    this.owned = new AtomicReference<>(pointer);
  }

  /** Releases the tensor's reference, once. */
  @Override
  public void close() {
    Pointer p = owned.getAndSet(null);
    if (p != null) {
      p.releaseReference();
    }
  }

  /** Whether the reference was given back. */
  boolean isClosed() {
    return owned.get() == null;
  }
}
