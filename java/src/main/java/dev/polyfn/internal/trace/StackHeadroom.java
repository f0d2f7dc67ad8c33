package dev.polyfn.internal.trace;

import dev.polyfn.internal.Native;

/**
 * Whether the calling thread has enough stack left for a nested trace. A nested trace runs a
 * body, which calls into TensorFlow's native code through JavaCPP; native code that runs out of
 * stack aborts the JVM instead of throwing a {@link StackOverflowError} (a recursion over Java
 * values on a thread with a small stack did). So before each nested trace Polyfn asks how much
 * stack is left (the native side reads the thread's stack bounds) and refuses the trace when
 * there is not enough.
 */
public final class StackHeadroom {
  /** The room a nested trace needs: a body's frames, TensorFlow's and JavaCPP's native calls. */
  public static final long NESTED_TRACE_BYTES = 256 * 1024;

  private StackHeadroom() {}

  /** Whether at least {@code bytes} of stack are left on this thread (true when unknown). */
  public static boolean has(long bytes) {
    long left = Native.stackLeft();
    return left < 0 || left >= bytes;
  }
}
