package dev.polyfn.internal;

import java.lang.ref.Cleaner;

/**
 * Owns one Rust polymorphic function. {@link #close()} releases its concrete functions (TensorFlow
 * resources) at once and is idempotent; the small Rust object itself is freed by a {@link Cleaner}
 * when the owner becomes unreachable, so a call racing with {@code close()} finds a closed function
 * (an {@link IllegalStateException}), never freed memory.
 */
public final class FunctionHandle implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  private final long address;
  private final String name;
  private volatile boolean closed;

  public FunctionHandle(Object owner, String name, boolean reduceRetracing, int maxConcreteFunctions) {
    NativeLibrary.ensureLoaded();
    this.name = name;
    this.address = Native.newFunction(name, reduceRetracing, maxConcreteFunctions);
    CLEANER.register(owner, new Free(address));
  }

  /**
   * The native address.
   *
   * @throws IllegalStateException if closed
   */
  public long address() {
    if (closed) {
      throw new IllegalStateException("function '" + name + "' is closed");
    }
    return address;
  }

  /**
   * What a call should throw for {@code e} that it met: the function's closed error when the
   * function is closed (a close on another thread also released the function's variables,
   * tables and restored defaults, which the call then found closed: the caller never saw them),
   * else {@code e}.
   */
  public RuntimeException closedInstead(RuntimeException e) {
    if (!closed) {
      return e;
    }
    String message = "function '" + name + "' is closed";
    return message.equals(e.getMessage()) ? e : new IllegalStateException(message, e);
  }

  /** Whether {@link #close} has begun (it marks the handle closed before releasing anything). */
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      Native.closeFunction(address);
    }
  }

  private static final class Free implements Runnable {
    private final long address;

    Free(long address) {
      this.address = address;
    }

    @Override
    public void run() {
      Native.closeFunction(address);
      Native.freeFunction(address);
    }
  }
}
