package dev.polyfn.internal;

/**
 * Polyfn's JNI entry points (implemented in Rust, crate {@code polyfn-jni}). Every method turns a
 * Rust error or panic into a Java exception: {@link IllegalArgumentException} for bad arguments
 * (naming the parameter), {@link IllegalStateException} for misuse, TensorFlow Java's {@code
 * org.tensorflow.exceptions} types for runtime errors.
 *
 * <p>Handles are Rust objects owned by the Java object that created them: a function handle by
 * its {@code MapFunction} (freed by {@link #freeFunction}), a trace handle by the tracing code
 * (freed by {@link #freeTrace}).
 */
public final class Native {
  private Native() {}

  /** Binds to TensorFlow's runtime and its eager context; returns TensorFlow's version. */
  static native String init(long eagerContext, int logLevel);

  /**
   * A new polymorphic function (no concrete function yet).
   *
   * @param maxConcreteFunctions the cache bound, 0 for none
   */
  public static native long newFunction(String name, boolean reduceRetracing, int maxConcreteFunctions);

  /** Releases every concrete function; the handle stays valid until {@link #freeFunction}. */
  public static native void closeFunction(long function);

  /** Frees the function's Rust state. Called once, when no call can be in flight. */
  public static native void freeFunction(long function);

  /**
   * The call path: types the call from {@code facts}, dispatches, executes on the {@code
   * TF_Tensor} addresses in {@code tensors}. Returns {@code [concreteId, output addresses...]},
   * whose tensors the caller then owns, or {@code null} when no cached concrete function fits
   * (trace, then call again). {@code count} counts a hit in the statistics; the attempt after a
   * call's own trace passes false, so each call counts once (a miss is counted by its trace).
   */
  public static native long[] call(
      long function, long[] facts, int factCount, long[] tensors, int tensorCount, boolean count);

  /**
   * Starts a trace for a call with these argument names; binds them against known parameters.
   * {@code facts} (null when unknown) describe the call, to explain the retrace and generalize it.
   * {@code forCall} counts the call as a miss in the statistics.
   */
  public static native long beginTrace(
      long function, String[] argumentNames, long[] facts, int factCount, boolean forCall);

  /** Parameter kinds, as {@code polyfn-core}'s {@code ParamKind}. */
  public static final int KIND_TENSOR = 0;
  public static final int KIND_LIST = 1;
  public static final int KIND_MAP = 2;
  public static final int KIND_JAVA = 3;
  public static final int KIND_VARIABLE = 4;

  /**
   * Declares a parameter in a trace and returns its placeholder specs: {@code [count, (dtype,
   * rank, dims...)...]} in flatten order (list elements in order, map values by sorted key), rank
   * -1 meaning unknown rank, dim -1 unknown size. Java parameters have no placeholders.
   *
   * @param dtypes accepted (element) dtype codes (empty: any)
   * @param shapeRank -2 when no shape is declared, -1 for an unknown rank, else the rank
   * @param dims the declared dims (-1 unknown) when {@code shapeRank >= 0}
   * @param javaClass the declared class of a Java parameter, else null
   * @param facts the type facts of the call's argument (none: the argument is absent)
   */
  public static native long[] declareParameter(long trace, String name, int kind, boolean optional,
      int[] dtypes, int shapeRank, long[] dims, String javaClass, long[] facts, int factCount);

  /** Registers the map key that {@code id} stands for in facts. */
  public static native void registerString(long function, int id, String value);

  /** Registers the Java value that literal {@code id} stands for in facts. */
  public static native void registerLiteral(long function, int id, String repr, String className);

  /** The id of the cached concrete function that accepts the call described by {@code facts}, or -1. */
  public static native int find(long function, long[] facts, int factCount);

  /**
   * Turns the traced graph into a concrete function, registers and caches it; returns its id.
   *
   * @param placeholders the placeholder operation names, in declaration order
   * @param outputOps operation names of the outputs, with {@code outputIndices}
   * @param controlOps operations run for their effects (variable assignments) though no output needs them
   */
  public static native int finishTrace(long trace, long graph, String[] placeholders, String[] outputNames,
      String[] outputOps, int[] outputIndices, String[] controlOps);

  /**
   * Declares a capture (a hidden input fed at every call) of a tensor or, if {@code variable}, a
   * variable handle; returns its placeholder specs (none when it aliases one already placed).
   */
  public static native long[] declareCapture(long trace, String name, boolean variable, long[] facts, int factCount);

  /**
   * Adds a call of concrete function {@code concreteId} to {@code graph} as operation {@code
   * opName} over the given inputs; returns its number of outputs. When {@code outerTrace} is the
   * trace that owns the graph (a nested call), the traced function keeps the callee alive.
   */
  public static native int addCall(long function, int concreteId, long outerTrace, long graph, String opName,
      String[] inputOps, int[] inputIndices);

  /** Frees a trace (finished or not). */
  public static native void freeTrace(long trace);

  /**
   * The polymorphic FunctionType's parameters as {@code (name, kind, optional, type)} quadruples,
   * or {@code null} before the first trace.
   */
  public static native String[] parameters(long function);

  /**
   * Every cached concrete function, flattened: {@code id, tfName, inputCount, outputCount, outputNames...,
   * parameterCount, (name, kind, optional, type) quadruples...}.
   */
  public static native String[] concreteFunctions(long function);

  /** Number of traces that produced a concrete function. */
  public static native int traceCount(long function);

  /** Releases every concrete function; the parameter list stays. */
  public static native void clearCache(long function);

  /** {@code [exactHits, inexactHits, misses, traces, evictions, totalTraceNanos, lastTraceNanos]}. */
  public static native long[] statistics(long function);

  /** Recent traces, oldest first, as {@code (functionType, parameter, reason, nanos)} quadruples. */
  public static native String[] traceHistory(long function);

  /** Concrete functions registered by Polyfn and not yet released, in this process. */
  public static native long liveConcreteFunctions();

  /** Whether TensorFlow's eager context has a function called {@code name}. */
  public static native boolean isRegistered(String name);

  /**
   * A new {@code TF_Tensor} holding the value of an eager tensor handle (for a resource handle:
   * the serialized handle, which names the variable). The caller owns it; see {@link #deleteTensor}.
   */
  public static native long resolveHandle(long tensorHandle);

  /** Deletes a {@code TF_Tensor} made by {@link #resolveHandle}. */
  public static native void deleteTensor(long tensor);
}
