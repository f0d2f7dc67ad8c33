package dev.polyfn.internal;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.FunctionType;
import dev.polyfn.SignatureSuggestion;
import dev.polyfn.TraceEvent;

/**
 * Polyfn's JNI entry points (implemented in Rust, crate {@code polyfn-jni}, one module per
 * concern). Loading this class loads the native library and registers every method, checking each
 * Java declaration against the Rust function's signature: a mismatch fails here, naming the method.
 *
 * <p>Every method turns a Rust error or panic into a Java exception: {@link
 * IllegalArgumentException} for bad arguments (naming the parameter), {@link
 * IllegalStateException} for misuse, TensorFlow Java's {@code org.tensorflow.exceptions} types for
 * runtime errors.
 *
 * <p>Handles are Rust objects owned by the Java object that created them: a function handle by its
 * {@code FunctionHandle} (freed by {@link #freeFunction}), a trace handle by the tracing code (freed
 * by {@link #freeTrace}). Callers keep the owner reachable for the whole call.
 */
public final class Native {
  private Native() {}

  static {
    NativeLibrary.ensureLoaded();
  }

  /** Registers the other native methods (the one method the JVM finds by its symbol name). */
  static native void registerNatives();

  /** Binds to TensorFlow's runtime and its eager context; returns TensorFlow's version. */
  static native String init(long eagerContext);

  /** The names of the Rust side's wire constants, in the order of {@link #wireValues}. */
  static native String[] wireNames();

  /** The values of the Rust side's wire constants. */
  static native long[] wireValues();

  /**
   * A new polymorphic function (no concrete function yet).
   *
   * @param maxConcreteFunctions the cache bound, 0 for none
   */
  public static native long newFunction(String name, boolean reduceRetracing, int maxConcreteFunctions);

  /** Releases every concrete function; the handle stays valid until {@link #freeFunction}. */
  public static native void closeFunction(long function);

  /** How the function's concrete functions run ({@link CallPaths}); set before the first trace. */
  public static native void setCallOptions(long function, int flags);

  /** Frees the function's Rust state. Called once, when no call can be in flight. */
  public static native void freeFunction(long function);

  /**
   * The call path: types the call from {@code facts}, dispatches, executes on the {@code
   * TF_Tensor} addresses in {@code tensors}. Returns {@code [head, output addresses..., output
   * descriptions...]}, the head holding the outputs key (low 32 bits) and how many addresses
   * follow (above {@link Wire#RESULT_COUNT_SHIFT}), whose tensors the caller then owns, each
   * described by its dtype, rank and dims, written into {@code result} when it is long enough
   * (elements after the outputs are left as they were) or into a new array; or {@code null} when
   * no cached concrete function fits (trace, then call again). A found function counts a hit in
   * the statistics.
   */
  public static native long[] call(
      long function, long[] facts, int factCount, long[] tensors, int tensorCount, long[] result);

  /** Runs the concrete function that {@code trace} produced, like {@link #call} but without a lookup. */
  public static native long[] callTraced(long trace, long[] tensors, int tensorCount);

  /**
   * Starts a trace for a call with these argument names; binds them against known parameters.
   * {@code facts} (null when unknown) describe the call, to explain the retrace and generalize it.
   * {@code forCall} counts the call as a miss in the statistics. {@code slowNanos} is the
   * slow-work threshold ({@link SlowWork#thresholdNanos}, read now): the trace and its first run
   * are logged at INFO when they take longer, with no call back into Java to ask. {@code logLevel}
   * is {@link NativeLog#wantedLevel}, read now: the trace's more verbose records are dropped
   * without asking the logger again.
   */
  public static native long beginTrace(long function, String[] argumentNames, long[] facts, int factCount,
      boolean forCall, long slowNanos, int logLevel);

  /**
   * Declares a parameter in a trace and returns its placeholder specs in flatten order (list
   * elements in order, map values by sorted key), then the static shape of each of its composites
   * as traced (generalized with reduce-retracing), in flatten order; see {@link Wire} for the layout.
   *
   * @param kind one of {@code Wire.KIND_*}
   * @param dtypes accepted (element) dtype codes (empty: any)
   * @param shapeRank {@link Wire#SHAPE_UNDECLARED}, {@link Wire#RANK_UNKNOWN} or the rank
   * @param dims the declared dims ({@link Wire#DIM_UNKNOWN} unknown) when {@code shapeRank >= 0}
   * @param javaClass the declared class of a Java parameter, else null
   * @param facts the type facts of the call's argument (none: the argument is absent)
   */
  public static native long[] declareParameter(long trace, String name, int kind, boolean optional,
      int[] dtypes, int shapeRank, long[] dims, String javaClass, long[] facts, int factCount);

  /**
   * Coalesces the example arguments of parameter {@code name} into its inferred constraint, which
   * every later declaration of it is merged with.
   *
   * @param facts the facts of each example's argument, one after another
   * @param lengths how many facts each example has
   * @param profileCalls 0 for examples, else the number of recorded calls they stand for
   * @return what inference said about the parameter (empty: nothing)
   */
  public static native String[] inferParameter(long function, String name, long[] facts, int[] lengths,
      long profileCalls);

  /**
   * Marks a trace as one of example inputs at definition: each argument is narrowed to its
   * declared constraint (or replaced by the first example the declaration admits).
   */
  public static native void traceExamples(long trace);

  /**
   * Whether an example call needs no trace of its own at definition: a concrete function serves
   * it once narrowed to the declared constraints, or the declaration leaves it out.
   */
  public static native boolean exampleServed(long function, long[] facts, int factCount);

  /** What inference said, one line per parameter. */
  public static native String[] inferenceNotes(long function);

  /** The signature the recorded calls suggest, or null before the first trace. */
  public static native SignatureSuggestion suggestedSignature(long function);

  /** The recorded calls as a signature profile (JSON). */
  public static native String signatureProfile(long function);

  /** Registers the map key that {@code id} stands for in facts. */
  public static native void registerString(long function, int id, String value);

  /**
   * Registers the Java value that literal {@code id} stands for in facts: {@code repr} its short
   * text for explanations, {@code profileValue} its whole text for signature profiles (null when a
   * profile cannot restore it).
   */
  public static native void registerLiteral(long function, int id, String repr, String className, String profileValue);

  /** The id of the cached concrete function that accepts the call described by {@code facts}, or -1. */
  public static native int find(long function, long[] facts, int factCount);

  /** Records the first call, described by {@code facts} once its trace fixed the parameter list, in the profile. */
  public static native void recordFirstCall(long function, long[] facts, int factCount);

  /**
   * Turns the traced graph into a concrete function, registers and caches it; returns its id.
   *
   * @param placeholders the placeholder operation names, in declaration order
   * @param outputOps operation names of the outputs, with {@code outputIndices}
   * @param controlOps operations run for their effects (variable assignments) though no output needs them
   * @param absorbedOps operations left out of the function: control flow's originals gathered into
   *     branch functions, and the dead values wired into them (none: every operation of the graph)
   * @param outputsKey the key under which the caller recorded the output names; calls return it
   */
  public static native int finishTrace(long trace, long graph, String[] placeholders, String[] outputNames,
      String[] outputOps, int[] outputIndices, String[] controlOps, String[] absorbedOps, int outputsKey);

  /**
   * Declares a capture (a hidden input fed at every call) of a tensor or, if {@code variable}, a
   * variable handle; returns its placeholder specs (none when it aliases one already placed).
   */
  public static native long[] declareCapture(long trace, String name, boolean variable, long[] facts, int factCount);

  /**
   * Adds a call of concrete function {@code concreteId} to {@code graph} as operation {@code
   * opName} over the given inputs; returns its number of outputs, or -1 (nothing added) when that
   * concrete function is no longer cached (a concurrent clear). When {@code outerTrace} is the
   * trace that owns the graph (a nested call), the traced function keeps the callee alive.
   */
  public static native int addCall(long function, int concreteId, long outerTrace, long graph, String opName,
      String[] inputOps, int[] inputIndices);

  /**
   * Gives the resource placeholder {@code opName} of {@code graph} the dtype and shape of a
   * variable's value (TensorFlow's handle data), so that reads of it have a static shape.
   */
  public static native void setHandleShape(long graph, String opName, int dtype, long[] dims);

  /**
   * Whether any operation of {@code graph} may run for its effect: one without outputs, or of a
   * type TensorFlow registers as stateful (or does not know). When none does, a trace has no
   * effects to order or keep.
   */
  public static native boolean mayHaveEffects(long graph);

  /**
   * Adds placeholder {@code name} to {@code graph} as described at {@code spec[at]} (dtype, rank,
   * dims) of specs {@link #declareParameter} or {@link #declareCapture} returned; returns the
   * operation's address. Cheaper than TensorFlow Java's operation builder before the JIT warms up.
   */
  public static native long addPlaceholder(long graph, String name, long[] spec, int at);

  /**
   * Rewires the gradient operations of {@code graph} named under {@code prefix} (one {@code
   * TF_AddGradients} call's) that the outputs {@code dxOps}/{@code dxIndices} depend on, leaving
   * out the reductions static shapes show reduce nothing; returns each of those outputs, or what
   * replaced it, as {@code "operation:index"}.
   */
  public static native String[] unbroadcastGradients(long graph, String prefix, String[] dxOps, int[] dxIndices);

  /**
   * Makes function {@code name} of {@code graph}'s operations {@code bodyOps} (inputs and outputs
   * named by operation and output index, control outputs by operation, named {@code effect_<i>}),
   * adds it to the graph's library and returns it as a serialized {@code FunctionDef}: control
   * flow's branch and loop-body functions.
   */
  public static native byte[] graphFunction(long graph, String name, String[] bodyOps, String[] inputOps,
      int[] inputIndices, String[] outputOps, int[] outputIndices, String[] controlOps);

  /** Frees a trace (finished or not). */
  public static native void freeTrace(long trace);

  /** The polymorphic FunctionType (declared constraints), or {@code null} before the first trace. */
  public static native FunctionType parameters(long function);

  /** Every cached concrete function, in the order they were traced. */
  public static native ConcreteFunctionInfo[] concreteFunctions(long function);

  /** Number of traces that produced a concrete function. */
  public static native int traceCount(long function);

  /** Releases every concrete function; the parameter list stays. */
  public static native void clearCache(long function);

  /** The statistics, indexed by {@code Wire.STAT_*}. */
  public static native long[] statistics(long function);

  /** Recent traces, oldest first. */
  public static native TraceEvent[] traceHistory(long function);

  /** Concrete functions registered by Polyfn and not yet released, in this process. */
  public static native long liveConcreteFunctions();

  /** Bytes of stack left below the caller's frame on this thread, or -1 when the platform does not tell. */
  public static native long stackLeft();

  /** Whether TensorFlow's eager context has a function called {@code name}. */
  public static native boolean isRegistered(String name);

  /**
   * A new {@code TF_Tensor} holding the value of an eager tensor handle (for a resource handle:
   * the serialized handle, which names the variable). The caller owns it; see {@link #deleteTensor}.
   */
  public static native long resolveHandle(long tensorHandle);

  /** Deletes a {@code TF_Tensor} made by {@link #resolveHandle}. */
  public static native void deleteTensor(long tensor);

  /**
   * Releases a resource tensor (made by {@link #resolveHandle}) no call uses any more: for a
   * variable ({@code dtype} its dtype code), first assigns it an empty value, so that its memory
   * goes now although other tensors may still hold its handle (anonymous variables live as long
   * as their handles); for another resource ({@code dtype} -1), only deletes the tensor.
   */
  public static native void releaseVariable(long resource, int dtype);

  /**
   * {@code [traced, declared, output shapes]}: the serialized FunctionTypes (JSON) of concrete
   * function {@code concreteId} and of the function's declaration, for the trace cache and saves,
   * and (JSON) each output's static shape as traced (dims, -1 unknown; null an unknown rank), or
   * the JSON text {@code null} for a restored definition that recorded none. Unless {@code withLiterals}, throws
   * IllegalStateException when the types hold a literal (its id is this process's own; a save
   * writes the value in its place).
   */
  public static native String[] exportConcreteTypes(long function, int concreteId, boolean withLiterals);

  /**
   * The SHA-256 digest of {@code data}, the same bytes as {@code MessageDigest}'s, whose first use
   * in a process costs tens of milliseconds (the trace cache's keys and checksums).
   */
  public static native byte[] sha256(byte[] data);

  /**
   * The serialized TensorFlow FunctionDef of concrete function {@code concreteId}. {@code forCache}:
   * refuses (IllegalStateException) a function that calls other Polyfn functions, whose bodies a
   * trace cache key cannot see.
   */
  public static native byte[] exportFunctionDef(long function, int concreteId, boolean forCache);

  /**
   * The functions concrete function {@code concreteId}'s operations may refer to (control-flow
   * branches and called Polyfn functions, nested ones included), as a serialized {@code FunctionDefLibrary}.
   */
  public static native byte[] exportLibrary(long function, int concreteId);

  /**
   * Adds a concrete function read from the trace cache, without tracing; returns its id. {@code
   * library} (a serialized {@code FunctionDefLibrary}, possibly empty) holds the functions {@code
   * def} refers to, under names unused in this process; {@code outputShapes} (null: unknown) the
   * outputs' static shapes as JSON, as {@link #exportConcreteTypes} gives them, for a later save.
   * Malformed input is an IllegalArgumentException naming the part; nothing is registered then.
   */
  public static native int restoreConcrete(long function, String declared, String traced, byte[] def,
      byte[] library, String[] outputNames, int outputsKey, String outputShapes);

  /**
   * From now on, a call is served by the first concrete function, in the order they are restored,
   * that accepts it (as Python's {@code tf.saved_model.load} serves a restored function's calls),
   * not by the most specific one. Set before restoring, for a function loaded from Python.
   */
  public static native void useSavedOrder(long function);

  /**
   * Why no concrete function accepts the call typed by {@code facts}: the saved signatures and the
   * closest mismatch (null when one accepts it). For functions loaded without a body.
   */
  public static native String explainMiss(long function, long[] facts, int factCount);
}
