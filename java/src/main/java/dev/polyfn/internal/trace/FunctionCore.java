package dev.polyfn.internal.trace;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Variable;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.CallPaths;
import dev.polyfn.internal.EagerResource;
import dev.polyfn.internal.FunctionHandle;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.saved.FunctionLibrary;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongFunction;
import java.util.stream.Collectors;

/**
 * One polymorphic function's state and protocol, which the public {@code FunctionCore}
 * wraps: its native handle, parameters and captures (fixed by the first trace), variables, trace
 * lock, output names and trace cache; the calls (the cached path: describe the arguments, one
 * native call, no lock; on a miss, the trace under the trace lock, then a run of what it traced)
 * and the trace protocol ({@link Trace}). The public class only checks arguments and converts
 * results; the machinery works on this class and never on the public one.
 *
 * <p>The native function is freed when this object becomes unreachable (or on {@link #close}):
 * every method that passes the native address on keeps this object reachable until it returns.
 */
public final class FunctionCore {
  private final FunctionOptions options;
  private final String kind;
  private final Class<?> unaryInput;
  private final Body body;
  private final FunctionHandle handle;
  private final Interner interner;
  /** Held while tracing: one trace of this function at a time. */
  private final TraceLock traceLock;
  /** Output names by the key a call returns with its outputs (recorded before publication). */
  private final OutputNames outputNames;
  /** The parameters as the first trace declared them; null before it (set after {@link #captures}). */
  private volatile Param[] params;
  /** The captures as the first trace declared them. */
  private volatile Capture[] captures = new Capture[0];
  /** Variables, resources and tensors closed with the function. */
  private final Owned owned;
  private final NamedVariables namedVariables = new NamedVariables();
  /** The warm-start cache, null without one; set at definition, before the function is published. */
  private volatile TraceCache cache;
  /** Loaded from a SavedModel without a body: a call no saved signature accepts fails, it cannot trace. */
  private volatile boolean bodyless;
  /** Set once an eager call ran the body to its end (see {@link #bodyHasRun}). */
  private volatile boolean ranEagerly;
  /** Concrete functions loaded from a SavedModel: traced by the process that saved them. */
  private volatile int savedTraces;

  /**
   * A function of {@code kind} ({@code "map"}, {@code "list"}, {@code "single"}, {@code "nest"},
   * {@code "unary"} over {@code unaryInput}), whose traces run {@code body}.
   */
  public FunctionCore(FunctionOptions options, String kind, Class<?> unaryInput, Body body) {
    this.options = Objects.requireNonNull(options, "options");
    this.kind = kind;
    this.unaryInput = unaryInput;
    this.body = body;
    this.outputNames = new OutputNames(options.name());
    this.traceLock = new TraceLock(options.name());
    this.handle = new FunctionHandle(
        this, options.name(), options.reduceRetracing(), options.maxConcreteFunctions());
    CallPaths.apply(handle, options.fastPath(), options.grappler(), options.jitCompile());
    this.interner = new Interner(handle);
    this.owned = new Owned(handle);
  }

  /** Calls with named arguments. */
  public Result invoke(Map<String, ?> args) {
    Objects.requireNonNull(args, "args");
    try {
      if (EagerCall.applies(this, bodyless)) {
        return EagerCall.run(this, Arguments.Lookup.ofCall(args));
      }
      Param[] ps = params;
      if (ps != null) {
        Result r = tryCall(handle.address(), ps, args);
        if (r != null) {
          return r;
        }
      }
      return traceAndCall(Arguments.Lookup.ofCall(args), args);
    } catch (RuntimeException e) {
      throw handle.closedInstead(e); // a close on another thread also closed the variables the call used
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Calls a single-parameter function with its one argument. */
  public Result invokeSingle(Object value) {
    Objects.requireNonNull(value, "argument");
    Param[] ps = params;
    if (ps == null) {
      try {
        if (EagerCall.applies(this, bodyless)) {
          return EagerCall.run(this, Arguments.Lookup.single(value)); // binds to the first parameter declared
        }
        // The first call fixes the parameter list: trace it with the value bound to the one
        // parameter the body declares, and run it.
        Result r = traceAndCall(Arguments.Lookup.single(value), null);
        if (r != null) {
          return r;
        }
      } catch (RuntimeException e) {
        throw handle.closedInstead(e);
      } finally {
        Reference.reachabilityFence(this);
      }
      ps = params;
    }
    if (ps.length != 1) {
      throw new IllegalArgumentException("function '" + name() + "' has " + ps.length + " parameters "
          + Arrays.stream(ps).map(p -> p.name()).collect(Collectors.joining(", ", "(", ")"))
          + "; call it with a map of arguments");
    }
    return invoke(Collections.singletonMap(ps[0].name(), value));
  }

  /** The cached path: null when the arguments do not fit the parameters or no concrete function accepts them. */
  Result tryCall(long fn, Param[] ps, Map<String, ?> args) {
    CallBuffer buf = CallBuffer.get();
    try {
      if (!Arguments.describe(ps, captures, args, buf, interner, true)) {
        return null;
      }
      long[] r = Native.call(fn, buf.facts(), buf.factCount(), buf.tensors(), buf.tensorCount(), buf.result());
      if (r == null) {
        return null;
      }
      buf.keepResult(r);
      return outputNames.adopt(r);
    } finally {
      buf.release(); // the buffer held the arguments until here
    }
  }

  private Result traceAndCall(Arguments.Lookup lookup, Map<String, ?> args) {
    return MissedCall.traceAndCall(this, lookup, args);
  }

  /** Runs the concrete function {@code trace} just produced on the call's arguments. */
  Result runTraced(long trace, Map<String, ?> args) {
    CallBuffer buf = CallBuffer.get();
    try {
      if (!Arguments.describe(params, captures, args, buf, interner, true)) {
        return null;
      }
      return outputNames.adopt(Native.callTraced(trace, buf.tensors(), buf.tensorCount()));
    } finally {
      buf.release();
    }
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
   * Traces the body for the arguments in {@code lookup} (under the trace lock). {@code call}
   * describes the call, when known, so Rust can explain and generalize the retrace. With {@code
   * run}, runs the new concrete function on the arguments (the call that traced it) and returns
   * its outputs; else returns null. With {@code inference} (example inputs), arguments are
   * narrowed to the declarations, and the first such trace infers from the examples first.
   */
  Result traceLocked(long fn, Arguments.Lookup lookup, CallBuffer call, boolean forCall, boolean run,
      Inference inference) {
    if (bodyless) {
      throw miss(call);
    }
    // Entered before anything that can fail, and left in every case: a record left behind would
    // refuse every later call of this function on this thread as a recursion.
    Tracing.Reentry reentry = Tracing.enter(this, call, lookup);
    try {
      return Trace.run(this, fn, lookup, call, forCall, run, inference);
    } finally {
      reentry.exit();
    }
  }

  /** After a successful trace: the first fixes the parameter list; the trace cache writes it. */
  void traced(TracingInputs inputs, int id, String[] names) {
    if (params == null) {
      captures = inputs.captures();
      params = inputs.declared();
    }
    if (cache != null) {
      cache.traced(this, id, names);
    }
  }

  /** The error of a call that no saved signature of a function loaded without a body accepts. */
  private IllegalArgumentException miss(CallBuffer call) {
    String why = call == null ? null : Native.explainMiss(handle.address(), call.facts(), call.factCount());
    if (why == null) {
      why = "no saved signature of '" + name() + "' accepts the call; saved: " + concreteFunctions().stream()
          .map(c -> c.functionType().toString()).collect(Collectors.joining(", "));
    }
    return new IllegalArgumentException(why + " (a function loaded without a body cannot trace; load it with a body"
        + " to trace new signatures)");
  }

  /** The concrete function for these arguments or specs, traced now if none accepts them. */
  public ConcreteFunctionInfo getConcreteFunction(Map<String, ?> argsOrSpecs) {
    Objects.requireNonNull(argsOrSpecs, "argsOrSpecs");
    try {
      return TraceLock.retrying(() -> ConcreteLookup.findOrTrace(this, argsOrSpecs));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** At definition: restores the trace cache's entries, then traces the inferred signatures. */
  public void traceInferred(Object userBody) {
    try {
      // Read once: the trace cache's key and the declarations traced come from the same bytes.
      SignatureProfile profile = options.signatureProfile() == null ? null : SignatureProfile.read(options.signatureProfile());
      cache = TraceCache.open(options, userBody, kind, unaryInput, profile);
      if (cache != null) {
        cache.restoreInto(this);
      }
      Inference.traceAtDefinition(this, options, profile);
    } catch (RuntimeException | Error e) {
      // The caller never gets this function to close: free it and the concrete functions the
      // examples before the failing one traced now, not whenever the garbage collector runs.
      close();
      throw e;
    }
  }

  /** Adds a concrete function traced elsewhere (trace cache, SavedModel): captures, output shapes (JSON, or null). */
  public void restoreConcrete(Param[] ps, Capture[] cs, String declared, String traced, FunctionLibrary.Restorable def,
      String[] names, String outputShapes) {
    traceLock.lock();
    try {
      if (params != null && !Arrays.equals(params, ps)) {
        throw new IllegalArgumentException("its parameters differ from those of an earlier entry");
      }
      int key = outputNames.record(names);
      Native.restoreConcrete(handle.address(), declared, traced, def.main(), def.library(), names, key, outputShapes);
      if (params == null) {
        captures = cs;
        params = ps;
      }
    } finally {
      traceLock.unlock();
    }
  }

  /** Makes a function loaded without a body refuse, instead of trace, calls no saved signature accepts. */
  public void markBodyless() {
    bodyless = true;
  }

  /**
   * Serves each call from the first concrete function restored (in order) that accepts it, as
   * Python's loader does, instead of the most specific: before restoring a Python SavedModel's.
   */
  public void useSavedOrder() {
    Native.useSavedOrder(handle.address());
  }

  /** Counts {@code n} concrete functions loaded from a SavedModel as traces (see {@link #traceCount}). */
  public void countSavedTraces(int n) {
    savedTraces = n;
  }

  /** Whether the body has run to its end before: traced (the parameter list is fixed) or eagerly. */
  boolean bodyHasRun() {
    return params != null || ranEagerly;
  }

  void bodyRan() {
    ranEagerly = true;
  }

  /** Makes {@code v} (a variable its first trace created) the function's: closed with it. */
  public void adopt(Variable<?> v) {
    v.ownedBy(name());
    owned.adopt(v);
  }

  /** Makes {@code r} the function's (a resource restored with it): closed with it. */
  public void adopt(EagerResource r) {
    owned.adopt(r);
  }

  /** Makes {@code t} the function's (a default restored with it): closed with it. */
  public void adopt(org.tensorflow.Tensor t) {
    owned.adopt(t);
  }

  /** Whether the function's first trace created variables. */
  public boolean ownsVariables() {
    return owned.hasVariables();
  }

  /** The variables the body created by name ({@code in.variable}), and restored ones named so. */
  public NamedVariables namedVariables() {
    return namedVariables;
  }

  Body body() {
    return body;
  }

  OutputNames outputNames() {
    return outputNames;
  }

  /** Held while tracing and while a nested call or export uses a concrete function it found. */
  public TraceLock traceLock() {
    return traceLock;
  }

  /** The options the function was defined with. */
  public FunctionOptions options() {
    return options;
  }

  /** {@code "map"}, {@code "list"}, {@code "single"}, {@code "nest"} or {@code "unary"}. */
  public String kind() {
    return kind;
  }

  /** A unary function's input tensor class (null for other kinds). */
  public Class<?> unaryInput() {
    return unaryInput;
  }

  /** The parameters fixed by the first trace (null before it). */
  public Param[] params() {
    return params;
  }

  /** The captures fixed by the first trace. */
  public Capture[] captures() {
    return captures;
  }

  /** Interns this function's map keys and Java values. */
  public Interner interner() {
    return interner;
  }

  /** The native function's address, for calls made on this function's behalf. */
  public long address() {
    return handle.address();
  }

  /** The function's name (from {@link FunctionOptions#withName}). */
  public String name() {
    return options.name();
  }

  /** Successful traces, counting the concrete functions loaded from a SavedModel. */
  public int traceCount() {
    return query(Native::traceCount) + savedTraces;
  }

  /** Every cached concrete function with its monomorphic type, in the order they were traced. */
  public List<ConcreteFunctionInfo> concreteFunctions() {
    return List.of(query(Native::concreteFunctions));
  }

  /** Releases every concrete function now; the parameter list stays. */
  public void clearCache() {
    // Under the trace lock: a trace, getConcreteFunction or nested call in progress keeps the
    // concrete function it found until it is done with it.
    traceLock.lock();
    try {
      query(fn -> {
        Native.clearCache(fn);
        return null;
      });
    } finally {
      traceLock.unlock();
    }
  }

  /**
   * Runs a native query of the function, keeping it (and so its native state) alive until it
   * returns. A close that lands while the query runs empties what it reads (the parameter list,
   * the table, the call profile): the query then throws the closed error rather than return an
   * empty answer that looks like a function never traced (or write an empty profile file).
   */
  public <T> T query(LongFunction<T> query) {
    try {
      T answer = query.apply(handle.address());
      handle.address(); // throws if a close landed meanwhile
      return answer;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Releases every concrete function and the variables the function created. Idempotent. */
  public void close() {
    if (cache != null && !handle.isClosed()) {
      cache.closing(this); // before the concrete functions it asks about are released
    }
    handle.close();
    owned.closeAll();
  }
}
