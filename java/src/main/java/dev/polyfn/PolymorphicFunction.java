package dev.polyfn;

import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.CallPaths;
import dev.polyfn.internal.FunctionHandle;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * What every Polyfn function shares: typing calls, looking up or tracing concrete functions,
 * introspection and release. The subclasses differ in what the body returns and what a call
 * returns: {@link MapFunction} (named outputs), {@link ListFunction}, {@link SingleFunction},
 * {@link UnaryFunction}.
 *
 * <p>Thread-safe: any number of threads may call one function. Calls of cached signatures take
 * no lock; a new signature is traced by one thread at a time while the others wait. Close it to
 * release its concrete functions; later calls throw {@link IllegalStateException}.
 */
public abstract class PolymorphicFunction implements AutoCloseable {
  private final FunctionOptions options;
  private final FunctionHandle handle;
  private final Interner interner;
  /** Held while tracing: one trace of this function at a time. */
  final Object traceLock = new Object();
  /** Output names by the key a call returns with its outputs (recorded before publication). */
  private final OutputNames outputNames;
  /** The parameters as the first trace declared them; null before it (set after {@link #captures}). */
  private volatile Param[] params;
  /** The captures as the first trace declared them. */
  private volatile Capture[] captures = new Capture[0];
  /** Variables created by the first trace: the function's, closed with it. */
  private final List<Variable<?>> ownedVariables = new CopyOnWriteArrayList<>();
  private final Map<String, Variable<?>> namedVariables = new ConcurrentHashMap<>();
  /** The warm-start cache, null without one; set at definition, before the function is published. */
  private volatile TraceCache cache;
  /** Loaded from a SavedModel without a body: a call no saved signature accepts fails, it cannot trace. */
  private volatile boolean bodyless;
  /** Concrete functions loaded from a SavedModel: traced by the process that saved them. */
  private volatile int savedTraces;

  PolymorphicFunction(FunctionOptions options) {
    this.options = Objects.requireNonNull(options, "options");
    this.outputNames = new OutputNames(options.name());
    this.handle = new FunctionHandle(
        this, options.name(), options.reduceRetracing(), options.maxConcreteFunctions());
    CallPaths.apply(handle, options.fastPath(), options.grappler(), options.jitCompile());
    this.interner = new Interner(handle);
  }

  /** Runs the body while tracing; returns its outputs, named. */
  abstract Traced trace(Ops tf, Inputs inputs);

  /** A body's outputs: names and operands, in output order. */
  record Traced(String[] names, Operand<?>[] operands) {}

  /** The output tensors of one call, which the caller owns. */
  record Result(String[] names, TType[] tensors) {}

  /** Calls with named arguments. */
  final Result invoke(Map<String, ?> args) {
    return Calls.invoke(this, args);
  }

  /** Calls a single-parameter function with its one argument. */
  final Result invokeSingle(Object value) {
    return Calls.invokeSingle(this, value);
  }

  /** The facts of a call for a trace (null when the parameter list is not known yet). */
  CallBuffer describeForTrace(Map<String, ?> args) {
    Param[] ps = params;
    if (ps == null) {
      return null;
    }
    CallBuffer buf = CallBuffer.fresh();
    try {
      return Arguments.describe(ps, captures, args, buf, interner, false) ? buf : null;
    } finally {
      buf.release();
    }
  }

  /**
   * Traces the body for the arguments in {@code lookup}. {@code call} describes the call, when
   * known, so Rust can explain and generalize the retrace. With {@code run}, runs the new concrete
   * function on the arguments (the call that traced it) and returns its outputs; else returns null.
   */
  Result traceLocked(long fn, Arguments.Lookup lookup, CallBuffer call, boolean forCall, boolean run) {
    return traceLocked(fn, lookup, call, forCall, run, null);
  }

  /**
   * {@link #traceLocked(long, Arguments.Lookup, CallBuffer, boolean, boolean)} of example inputs
   * (when {@code inference} is given): arguments are narrowed to the declarations, and the
   * first such trace infers from the examples first.
   */
  Result traceLocked(long fn, Arguments.Lookup lookup, CallBuffer call, boolean forCall, boolean run,
      Inference inference) {
    if (bodyless) {
      throw SavedModelLoader.miss(this, call);
    }
    // Entered before anything that can fail, and left in every case: a record left behind would
    // refuse every later call of this function on this thread as a recursion.
    Tracing.Reentry reentry = Tracing.enter(this, call, lookup);
    try {
      return traceEntered(fn, lookup, call, forCall, run, inference);
    } finally {
      reentry.exit();
    }
  }

  private Result traceEntered(long fn, Arguments.Lookup lookup, CallBuffer call, boolean forCall, boolean run,
      Inference inference) {
    long trace = call == null
        ? Native.beginTrace(fn, lookup.names(), null, 0, forCall)
        : Native.beginTrace(fn, lookup.names(), call.facts(), call.factCount(), forCall);
    if (inference != null) {
      Native.traceExamples(trace);
    }
    TracingInputs inputs = null;
    Graph traced = null;
    try (Graph graph = new Graph()) {
      traced = graph;
      Ops tf = Ops.create(graph);
      inputs = new TracingInputs(this, trace, graph, tf, lookup, interner, params == null);
      inputs.inferFrom(inference);
      Tracing.push(inputs);
      Traced outs = trace(tf, inputs);
      TraceOutputs.Resolved resolved = TraceOutputs.resolve(name(), graph, outs);
      String[] absorbed = Regions.absorbed(graph);
      Regions.requireNotUsedOutside(graph, absorbed, name(), resolved.ops());
      int key = outputNames.record(outs.names());
      int id = Native.finishTrace(trace, TensorFlowInternals.graphAddress(graph), inputs.placeholderNames(),
          outs.names(), resolved.ops(), resolved.indices(), TraceOutputs.effects(graph), absorbed, key);
      if (params == null) {
        captures = inputs.captures();
        params = inputs.declared();
      }
      if (cache != null) {
        cache.traced(this, id, outs.names());
      }
      return run ? Calls.runTraced(this, trace, lookup.asMap()) : null;
    } finally {
      if (inputs != null) {
        Tracing.pop(inputs);
        inputs.close();
      }
      Native.freeTrace(trace);
      Regions.forget(traced); // control flow's bookkeeping of the graph (it holds branch lambdas)
    }
  }

  void adopt(Variable<?> v) {
    ownedVariables.add(v);
  }

  boolean ownsVariables() {
    return !ownedVariables.isEmpty();
  }

  Variable<?> namedVariable(String name) {
    return namedVariables.get(name);
  }

  void nameVariable(String name, Variable<?> v) {
    namedVariables.put(name, v);
  }

  /** The options the function was defined with. */
  FunctionOptions options() {
    return options;
  }

  /** The parameters fixed by the first trace (null before it). */
  Param[] params() {
    return params;
  }

  /** Interns this function's map keys and Java values. */
  Interner interner() {
    return interner;
  }

  /** The captures fixed by the first trace. */
  Capture[] captures() {
    return captures;
  }

  /** The native function's address, for calls made on this function's behalf. */
  long address() {
    return handle.address();
  }

  /** Adds a call of this function to the graph of {@code tf} (see {@link GraphCall}). */
  final Traced applyInGraph(Ops tf, Map<String, ?> args) {
    Objects.requireNonNull(tf, "tf");
    Objects.requireNonNull(args, "args");
    try {
      return GraphCall.apply(this, tf, args);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Adopts a call's output tensors, named by the key the call returned with them. */
  Result result(long[] r) {
    return outputNames.adopt(r);
  }

  /**
   * The concrete function for these arguments, traced now if no cached one accepts them, without
   * executing it ({@code tf.function.get_concrete_function}). Values may be tensors or {@link
   * TensorSpec}s, also as list elements and map values:
   *
   * <pre>{@code
   * f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1))));
   * }</pre>
   *
   * A later call whose types are subtypes of a traced spec reuses it.
   *
   * @param argsOrSpecs the arguments by parameter name: tensors, specs, Java values, variables
   * @return the cached or newly traced concrete function that accepts them
   */
  public ConcreteFunctionInfo getConcreteFunction(Map<String, ?> argsOrSpecs) {
    Objects.requireNonNull(argsOrSpecs, "argsOrSpecs");
    try {
      synchronized (traceLock) {
        long fn = handle.address();
        // clearCache takes the trace lock too, and evictions happen only in traces: the function
        // found here stays cached until this returns.
        int id = find(fn, argsOrSpecs);
        if (id < 0) {
          traceLocked(fn, Arguments.Lookup.of(argsOrSpecs), describeForTrace(argsOrSpecs), false, false);
          id = find(fn, argsOrSpecs);
        }
        final int found = id;
        return concreteFunctions().stream().filter(c -> c.id() == found).findFirst()
            .orElseThrow(() -> new IllegalStateException("the trace of '" + name() + "' does not accept its arguments"));
      }
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** At definition: restores the trace cache's entries, then traces the inferred signatures. */
  final void traceInferred(Object body) {
    try {
      cache = TraceCache.open(options, body);
      if (cache != null) {
        cache.restoreInto(this);
      }
      Inference.traceAtDefinition(this, options);
    } catch (RuntimeException | Error e) {
      // The caller never gets this function to close: free it and the concrete functions the
      // examples before the failing one traced now, not whenever the garbage collector runs.
      close();
      throw e;
    }
  }

  /** Adds a concrete function read from the trace cache; the first one fixes the parameter list. */
  void restoreCached(Param[] ps, String declared, String traced, FunctionLibrary.Restorable def, String[] names) {
    restoreConcrete(ps, new Capture[0], declared, traced, def, names);
  }

  /** Adds a concrete function traced elsewhere (trace cache, SavedModel), with its captures. */
  void restoreConcrete(Param[] ps, Capture[] cs, String declared, String traced, FunctionLibrary.Restorable def,
      String[] names) {
    synchronized (traceLock) {
      if (params != null && !Arrays.equals(params, ps)) {
        throw new IllegalArgumentException("its parameters differ from those of an earlier entry");
      }
      int key = outputNames.record(names);
      Native.restoreConcrete(handle.address(), declared, traced, def.main(), def.library(), names, key);
      if (params == null) {
        captures = cs;
        params = ps;
      }
    }
  }

  /** Makes a function loaded without a body refuse, instead of trace, calls no saved signature accepts. */
  void markBodyless() {
    bodyless = true;
  }

  /** Counts {@code n} concrete functions loaded from a SavedModel as traces (see {@link #traceCount}). */
  void countSavedTraces(int n) {
    savedTraces = n;
  }

  /**
   * Writes this function as a TensorFlow SavedModel in {@code dir} (Python, TensorFlow Java and
   * TensorFlow Serving load it as it is; {@link Function#load} restores its dispatch): every
   * concrete function, one signature each (named {@code <function>__<dtype>_<dims>...}, e.g.
   * {@code scale__float32_N_3}), the captured variables' current values, and Polyfn's metadata in
   * {@code assets.extra/polyfn.json}. The README's "Save, load, deploy" section has the layout.
   *
   * @throws IllegalStateException when there is no concrete function yet, or a capture by
   *     reference, a Java-value or Variable parameter, or a nested Polyfn call
   * @throws java.io.UncheckedIOException when the directory cannot be written
   */
  public void save(Path dir) {
    save(dir, SaveOptions.defaults());
  }

  /** {@link #save(Path)} with tags, signature names or a TensorFlow Serving version directory. */
  public void save(Path dir, SaveOptions options) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(options, "options");
    try {
      SavedModelWriter.save(this, dir, options);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * What signature inference said, one line per parameter: the inferred constraint and where it
   * came from ({@code x: TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples)}), or why its
   * examples keep separate traces ({@code n: Java values 1, 2 are traced one per value; pass n as
   * a tensor to share one trace}). Empty without examples or a profile.
   *
   * @return the lines, in parameter declaration order
   */
  public List<String> inferenceReport() {
    return native_(() -> List.of(Native.inferenceNotes(handle.address())));
  }

  /**
   * The signature this function's calls suggest: every call is recorded by its type (a counter
   * per call type, bumped without a lock, on by default), and the recorded types are coalesced
   * as examples are. Null before the first trace.
   *
   * @return the suggested declarations with the trace counts before and after
   */
  public SignatureSuggestion suggestedSignature() {
    return native_(() -> Native.suggestedSignature(handle.address()));
  }

  /**
   * Writes the recorded call types, with their counts, as a signature profile (JSON) that {@link
   * FunctionOptions#withSignatureProfile} loads to trace the suggested signature when a later run
   * defines the function.
   *
   * @throws java.io.UncheckedIOException if the file cannot be written
   */
  public void writeSignatureProfile(Path file) {
    Objects.requireNonNull(file, "file");
    SignatureProfile.write(file, native_(() -> Native.signatureProfile(handle.address())));
  }

  int find(long fn, Map<String, ?> args) {
    CallBuffer buf = describeForTrace(args); // released: it holds only the facts now
    return buf == null ? -1 : Native.find(fn, buf.facts(), buf.factCount());
  }

  /**
   * The function's name (from {@link FunctionOptions#withName}).
   *
   * @return the display name
   */
  public String name() {
    return options.name();
  }

  /**
   * How many concrete functions tracing has produced (failed traces do not count). A function
   * loaded from a SavedModel ({@link Function#load}) counts the saved concrete functions, traced
   * by the process that saved them; concrete functions restored from a trace cache do not count.
   *
   * @return the number of successful traces
   */
  public int traceCount() {
    return native_(() -> Native.traceCount(handle.address())) + savedTraces;
  }

  /**
   * The polymorphic type: the declared parameters and their constraints, e.g. {@code (x:
   * TensorSpec({FLOAT, DOUBLE}, [-1]), n: Literal<java.lang.Integer>)}. Empty before the first
   * trace, which fixes the parameter list.
   *
   * @return the declared type
   */
  public FunctionType functionType() {
    FunctionType t = native_(() -> Native.parameters(handle.address()));
    return t == null ? FunctionType.empty() : t;
  }

  /**
   * Every cached concrete function with its monomorphic type, in the order they were traced.
   *
   * @return the cached concrete functions
   */
  public List<ConcreteFunctionInfo> concreteFunctions() {
    return List.of(native_(() -> Native.concreteFunctions(handle.address())));
  }

  /**
   * Releases every concrete function now; the parameter list stays, and the next call of each
   * signature traces again. ({@code tf.function} has no such method.)
   */
  public void clearCache() {
    // Under the trace lock: a trace, getConcreteFunction or nested call in progress keeps the
    // concrete function it found until it is done with it.
    synchronized (traceLock) {
      native_(() -> {
        Native.clearCache(handle.address());
        return null;
      });
    }
  }

  /**
   * Counters of calls (exact and inexact hits, misses) and traces, with trace times.
   *
   * @return a snapshot of the counters
   */
  public FunctionStatistics statistics() {
    return FunctionStatistics.fromWire(native_(() -> Native.statistics(handle.address())));
  }

  /**
   * The most recent traces (up to 64), oldest first, each with the reason no cached signature
   * matched. The same records are logged at {@code DEBUG} to the {@code System.Logger} named
   * {@code dev.polyfn}; when 5 of the last 10 calls traced, a {@code WARNING} names the function,
   * the parameters that keep changing and the options that would help.
   *
   * @return the recent traces
   */
  public List<TraceEvent> traceHistory() {
    return List.of(native_(() -> Native.traceHistory(handle.address())));
  }

  /** Runs a native query, keeping this function (and so its native state) alive until it returns. */
  private <T> T native_(Supplier<T> query) {
    try {
      return query.get();
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Releases every concrete function and the variables the function created. Idempotent; later
   * calls throw {@link IllegalStateException}.
   */
  @Override
  public void close() {
    handle.close();
    for (Variable<?> v : ownedVariables) {
      v.close();
    }
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "(" + name() + functionType() + ")";
  }
}
