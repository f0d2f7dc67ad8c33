package dev.polyfn;

import dev.polyfn.internal.Native;
import dev.polyfn.internal.NativeLibrary;
import dev.polyfn.internal.trace.Tracing;

/**
 * Process-wide counts of Polyfn's native resources, for leak checks in tests and monitoring.
 *
 * <pre>{@code
 * long before = Diagnostics.liveConcreteFunctions();
 * try (MapFunction f = ...) { f.call(...).close(); }
 * assert Diagnostics.liveConcreteFunctions() == before;
 * }</pre>
 */
public final class Diagnostics {
  private Diagnostics() {}

  /** Concrete functions registered in TensorFlow's eager context by Polyfn and not yet released. */
  public static long liveConcreteFunctions() {
    NativeLibrary.ensureLoaded();
    return Native.liveConcreteFunctions();
  }

  /** Whether TensorFlow's eager context holds a function called {@code name} (see {@link ConcreteFunctionInfo#name()}). */
  public static boolean isRegistered(String name) {
    NativeLibrary.ensureLoaded();
    return Native.isRegistered(name);
  }

  /** Variables created by {@link Variable#create} (or in bodies) and not yet closed, in this process. */
  public static long liveVariables() {
    return Variable.live();
  }

  /**
   * The traces in progress on the calling thread (0 outside every body). After any call returns,
   * normally or with an exception, this is what it was before: a failed call leaves nothing on the
   * thread that would refuse or change later calls.
   */
  public static int tracesInProgressOnThisThread() {
    return Tracing.inProgress();
  }
}
