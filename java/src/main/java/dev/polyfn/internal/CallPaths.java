package dev.polyfn.internal;

/**
 * How a function's calls run, as flags for the native side: the caller-thread paths, Grappler,
 * XLA, and in the bits above them the count of calls before the session path (bits of {@code
 * CallFlags} in the JNI crate). The native side chooses the path per concrete function by
 * inspecting it; these flags only allow or forbid, and set the count.
 */
public final class CallPaths {
  /**
   * The system property that, set to {@code false}, keeps every function of the JVM off the
   * caller-thread path (to compare the paths, or to run a test suite once on each).
   */
  public static final String FAST_PATH_PROPERTY = "dev.polyfn.fastPath";

  /**
   * The system property giving how many calls a concrete function makes on the caller-thread
   * eager path before it moves to its own TensorFlow session (default {@value #SESSION_AFTER_DEFAULT};
   * 0 never moves). Tests set it low to run every function on the session path.
   */
  public static final String SESSION_AFTER_PROPERTY = "dev.polyfn.sessionPathAfter";

  /**
   * The system property that, set to {@code true}, runs functions' eager calls (before the
   * session path, or for good where a function cannot take it) on the calling thread, by turning
   * on TensorFlow's experimental, context-wide "run eager op as function" mode. Off by default:
   * under that mode TensorFlow 2.18 can return an earlier constant's value for an eager {@code
   * Const} made by the program itself (TensorFlow Java's {@code tf.constant}), see
   * docs/performance.md.
   */
  public static final String EAGER_OP_AS_FUNCTION_PROPERTY = "dev.polyfn.eagerOpAsFunction";

  /** The default of {@link #SESSION_AFTER_PROPERTY} (the JNI crate's {@code PROMOTE_AFTER}). */
  public static final int SESSION_AFTER_DEFAULT = 64;

  private static final int FAST_PATH = 1;
  private static final int GRAPPLER = 2;
  private static final int JIT_COMPILE = 4;
  private static final int EAGER_OP_AS_FUNCTION = 8;
  /** The count of {@link #SESSION_AFTER_PROPERTY} sits above these bits. */
  private static final int SESSION_AFTER_SHIFT = 8;
  private static final int SESSION_AFTER_MAX = (1 << (Integer.SIZE - 1 - SESSION_AFTER_SHIFT)) - 1;

  private CallPaths() {}

  /** Whether the caller-thread path is allowed in this JVM (the property is read at each definition). */
  public static boolean fastPathAllowed() {
    return !"false".equalsIgnoreCase(System.getProperty(FAST_PATH_PROPERTY, "true").trim());
  }

  /** Whether {@link #EAGER_OP_AS_FUNCTION_PROPERTY} opts in (read at each definition). */
  public static boolean eagerOpAsFunction() {
    return "true".equalsIgnoreCase(System.getProperty(EAGER_OP_AS_FUNCTION_PROPERTY, "false").trim());
  }

  /**
   * Calls before a concrete function moves to its session, from {@link #SESSION_AFTER_PROPERTY}
   * (read at each definition); a value that is not a count in range is refused.
   */
  public static int sessionAfter() {
    String value = System.getProperty(SESSION_AFTER_PROPERTY);
    if (value == null) {
      return SESSION_AFTER_DEFAULT;
    }
    try {
      int n = Integer.parseInt(value.trim());
      if (n >= 0 && n <= SESSION_AFTER_MAX) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "system property " + SESSION_AFTER_PROPERTY + " is '" + value + "'; expected a count of calls from 0 to " + SESSION_AFTER_MAX);
  }

  /** Sets the call options of a new function, before its first trace. */
  public static void apply(FunctionHandle handle, boolean fastPath, boolean grappler, boolean jitCompile) {
    int flags = (fastPath && fastPathAllowed() ? FAST_PATH : 0) | (grappler ? GRAPPLER : 0) | (jitCompile ? JIT_COMPILE : 0)
        | (eagerOpAsFunction() ? EAGER_OP_AS_FUNCTION : 0) | (sessionAfter() << SESSION_AFTER_SHIFT);
    Native.setCallOptions(handle.address(), flags);
  }
}
