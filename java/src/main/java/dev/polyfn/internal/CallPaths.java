package dev.polyfn.internal;

/**
 * How a function's calls run, as flags for the native side: the caller-thread path, Grappler, XLA
 * (bits of {@code CallFlags} in the JNI crate). The native side chooses the path per concrete
 * function by inspecting it; these flags only allow or forbid.
 */
public final class CallPaths {
  /**
   * The system property that, set to {@code false}, keeps every function of the JVM off the
   * caller-thread path (to compare the paths, or to run a test suite once on each).
   */
  public static final String FAST_PATH_PROPERTY = "dev.polyfn.fastPath";

  private static final int FAST_PATH = 1;
  private static final int GRAPPLER = 2;
  private static final int JIT_COMPILE = 4;

  private CallPaths() {}

  /** Whether the caller-thread path is allowed in this JVM (the property is read at each definition). */
  public static boolean fastPathAllowed() {
    return !"false".equalsIgnoreCase(System.getProperty(FAST_PATH_PROPERTY, "true").trim());
  }

  /** Sets the call options of a new function, before its first trace. */
  public static void apply(FunctionHandle handle, boolean fastPath, boolean grappler, boolean jitCompile) {
    int flags = (fastPath && fastPathAllowed() ? FAST_PATH : 0) | (grappler ? GRAPPLER : 0) | (jitCompile ? JIT_COMPILE : 0);
    Native.setCallOptions(handle.address(), flags);
  }
}
