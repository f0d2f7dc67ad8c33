package dev.polyfn;

import dev.polyfn.internal.Aliases;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.FunctionHandle;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Names;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * What every Polyfn function shares: typing calls, looking up or tracing concrete functions,
 * introspection and release. The subclasses differ in what the body returns and what a call
 * returns: {@link MapFunction} (named outputs), {@link ListFunction}, {@link SingleFunction},
 * {@link UnaryFunction}.
 *
 * <p>Thread-safe: any number of threads may call one function. Close it to release its concrete
 * functions; later calls throw {@link IllegalStateException}.
 */
public abstract class PolymorphicFunction implements AutoCloseable {
  private final FunctionOptions options;
  private final FunctionHandle handle;
  private final Interner interner;
  private final Object traceLock = new Object();
  private final Map<Integer, String[]> outputNames = new ConcurrentHashMap<>();
  /** The parameters as the first trace declared them; null before it (set after {@link #captures}). */
  private volatile Param[] params;
  /** The captures as the first trace declared them. */
  private volatile Capture[] captures = new Capture[0];
  /** Variables created by the first trace: the function's, closed with it. */
  private final List<Variable<?>> ownedVariables = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Map<String, Variable<?>> namedVariables = new ConcurrentHashMap<>();

  PolymorphicFunction(FunctionOptions options) {
    this.options = Objects.requireNonNull(options, "options");
    this.handle = new FunctionHandle(
        this, options.name(), options.reduceRetracing(), options.maxConcreteFunctions());
    this.interner = new Interner(handle);
  }

  /** Runs the body while tracing; returns its outputs, named. */
  abstract Traced trace(Ops tf, Inputs inputs);

  /** A body's outputs: names and operands, in output order. */
  static final class Traced {
    final String[] names;
    final Operand<?>[] operands;

    Traced(String[] names, Operand<?>[] operands) {
      this.names = names;
      this.operands = operands;
    }
  }

  /** The output tensors of one call, which the caller owns. */
  static final class Result {
    final String[] names;
    final TType[] tensors;

    Result(String[] names, TType[] tensors) {
      this.names = names;
      this.tensors = tensors;
    }
  }

  /** Calls with named arguments. */
  final Result invoke(Map<String, ?> args) {
    Objects.requireNonNull(args, "args");
    try {
      long fn = handle.address();
      Param[] ps = params;
      if (ps != null) {
        Result r = tryCall(fn, ps, args, true);
        if (r != null) {
          return r;
        }
      }
      return traceAndCall(Arguments.Lookup.ofCall(args), args);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Calls a single-parameter function with its one argument. */
  final Result invokeSingle(Object value) {
    Objects.requireNonNull(value, "argument");
    Param[] ps = params;
    if (ps == null) {
      synchronized (traceLock) {
        if (params == null) {
          traceLocked(handle.address(), Arguments.Lookup.single(value), null, true);
        }
      }
      ps = params;
    }
    if (ps.length != 1) {
      throw new IllegalArgumentException("function '" + name() + "' has " + ps.length + " parameters "
          + Arrays.stream(ps).map(p -> p.name).collect(Collectors.joining(", ", "(", ")"))
          + "; call it with a map of arguments");
    }
    return invoke(Collections.singletonMap(ps[0].name, value));
  }

  /** The fast path: describe, one native call; null when the call must trace first. */
  private Result tryCall(long fn, Param[] ps, Map<String, ?> args, boolean count) {
    CallBuffer buf = CallBuffer.get();
    try {
      if (!Arguments.describe(ps, captures, args, buf, interner, true)) {
        return null;
      }
      long[] r = Native.call(fn, buf.facts(), buf.factCount(), buf.tensors(), buf.tensorCount(), count);
      return r == null ? null : result(r);
    } finally {
      buf.release(); // the buffer pinned the arguments until here
    }
  }

  private Result traceAndCall(Arguments.Lookup lookup, Map<String, ?> args) {
    synchronized (traceLock) {
      long fn = handle.address();
      Param[] ps = params;
      if (ps != null) {
        // Another thread may have traced this signature while we waited (then it is this call's hit).
        Result r = tryCall(fn, ps, args, true);
        if (r != null) {
          return r;
        }
      }
      traceLocked(fn, lookup, describeForTrace(args), true);
      Result r = tryCall(fn, params, args, false);
      if (r == null) {
        throw new IllegalStateException("the trace of '" + name() + "' does not accept the call that traced it");
      }
      return r;
    }
  }

  /** The facts of a call for a trace (null when the parameter list is not known yet). */
  private CallBuffer describeForTrace(Map<String, ?> args) {
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
   * Traces the body for the arguments in {@code lookup}; returns the new concrete function's id.
   * {@code call} describes the call, when known, so Rust can explain and generalize the retrace.
   */
  private int traceLocked(long fn, Arguments.Lookup lookup, CallBuffer call, boolean forCall) {
    long trace = call == null
        ? Native.beginTrace(fn, lookup.names(), null, 0, forCall)
        : Native.beginTrace(fn, lookup.names(), call.facts(), call.factCount(), forCall);
    TracingInputs inputs = null;
    try (Graph graph = new Graph()) {
      Ops tf = Ops.create(graph);
      inputs = new TracingInputs(this, trace, graph, tf, lookup, interner, params == null);
      Tracing.push(inputs);
      Traced outs = trace(tf, inputs);
      int n = outs.names.length;
      String[] ops = new String[n];
      int[] indices = new int[n];
      for (int i = 0; i < n; i++) {
        if (outs.names[i] == null || outs.operands[i] == null) {
          throw new IllegalStateException("the body of '" + name() + "' returned a null output or output name");
        }
        Output<?> o = outs.operands[i].asOutput();
        if (o.env() != graph) {
          throw new IllegalStateException("output '" + outs.names[i] + "' of '" + name()
              + "' is not an operand of the traced graph: build outputs with the Ops passed to the body");
        }
        ops[i] = o.op().name();
        indices[i] = o.index();
      }
      int id = Native.finishTrace(trace, TensorFlowInternals.graphAddress(graph), inputs.placeholderNames(),
          outs.names, ops, indices, effects(graph));
      outputNames.put(id, outs.names);
      if (params == null) {
        captures = inputs.captures();
        params = inputs.declared();
      }
      return id;
    } finally {
      if (inputs != null) {
        Tracing.pop(inputs);
        inputs.close();
      }
      Native.freeTrace(trace);
    }
  }

  /**
   * The operations run for their effects: those with no outputs (variable assignments...), which
   * no output depends on, become the function's control outputs so every call runs them.
   */
  private static String[] effects(Graph graph) {
    List<String> names = new ArrayList<>();
    for (java.util.Iterator<GraphOperation> it = graph.operations(); it.hasNext(); ) {
      GraphOperation op = it.next();
      if (op.numOutputs() == 0) {
        names.add(op.name());
      }
    }
    return names.toArray(new String[0]);
  }

  void adopt(Variable<?> v) {
    ownedVariables.add(v);
  }

  Variable<?> namedVariable(String name) {
    return namedVariables.get(name);
  }

  void nameVariable(String name, Variable<?> v) {
    namedVariables.put(name, v);
  }

  /**
   * Adds a call of this function to the graph of {@code tf}: dispatched on the symbolic specs of
   * {@code args} (operands of that graph), tracing a concrete function if none is cached. Inside a
   * Polyfn body the call is nested in the traced function; with the {@code Ops} of your own {@code
   * Graph}, the function is copied into it and runs in a {@code Session}.
   */
  final Traced applyInGraph(Ops tf, Map<String, ?> args) {
    Objects.requireNonNull(tf, "tf");
    Objects.requireNonNull(args, "args");
    if (!(tf.scope().env() instanceof Graph)) {
      throw new IllegalArgumentException("apply adds a call to a graph: pass the Ops of a graph or of the body being "
          + "traced; to run '" + name() + "' eagerly on tensors, use call");
    }
    Graph graph = (Graph) tf.scope().env();
    TracingInputs outer = Tracing.owning(graph);
    try {
      ConcreteFunctionInfo concrete = getConcreteFunction(specsOf(args));
      List<Operand<?>> flat = new ArrayList<>();
      Aliases seen = new Aliases();
      for (Param p : params) {
        Object v = Arguments.valueFor(p, args);
        switch (p.kind) {
          case Native.KIND_TENSOR:
            flat.add((Operand<?>) v);
            break;
          case Native.KIND_LIST:
            for (Object e : (List<?>) v) {
              flat.add((Operand<?>) e);
            }
            break;
          case Native.KIND_MAP:
            for (String key : Arguments.sortedKeys(p, (Map<?, ?>) v)) {
              flat.add((Operand<?>) ((Map<?, ?>) v).get(key));
            }
            break;
          case Native.KIND_VARIABLE:
            if (seen.aliasOf(v) < 0) {
              flat.add(Tracing.captureVariable(tf, (Variable<?>) v));
            }
            break;
          default:
            break;
        }
      }
      for (Capture c : captures) {
        if (c.variable != null) {
          if (seen.aliasOf(c.variable) < 0) {
            flat.add(Tracing.captureVariable(tf, c.variable));
          }
        } else if (outer == null) {
          throw new IllegalStateException("function '" + name() + "' captures values by reference; it can be called "
              + "inside another Polyfn function's body, but not from your own Graph");
        } else {
          flat.add(outer.capture(name() + "." + c.name, c.supplier));
        }
      }
      String[] ops = new String[flat.size()];
      int[] indices = new int[flat.size()];
      for (int i = 0; i < ops.length; i++) {
        Output<?> o = flat.get(i).asOutput();
        ops[i] = o.op().name();
        indices[i] = o.index();
      }
      String opName = tf.scope().makeOpName(Names.opName(name()));
      int n = Native.addCall(handle.address(), concrete.id(), outer == null ? 0 : outer.trace(),
          TensorFlowInternals.graphAddress(graph), opName, ops, indices);
      GraphOperation op = graph.operation(opName);
      Operand<?>[] outputs = new Operand<?>[n];
      for (int i = 0; i < n; i++) {
        outputs[i] = op.output(i);
      }
      return new Traced(concrete.outputNames().toArray(new String[0]), outputs);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Symbolic arguments as specs: each operand becomes a TensorSpec of its dtype and static shape. */
  private static Map<String, Object> specsOf(Map<String, ?> args) {
    Map<String, Object> specs = new java.util.LinkedHashMap<>();
    for (Map.Entry<String, ?> e : args.entrySet()) {
      specs.put(e.getKey(), specOf(e.getKey(), e.getValue()));
    }
    return specs;
  }

  private static Object specOf(String path, Object v) {
    if (v instanceof Operand) {
      Operand<?> o = (Operand<?>) v;
      return TensorSpec.of(o.type(), o.shape());
    }
    if (v instanceof List) {
      List<Object> out = new ArrayList<>();
      for (Object e : (List<?>) v) {
        out.add(specOf(path, e));
      }
      return out;
    }
    if (v instanceof Map) {
      Map<Object, Object> out = new java.util.LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        out.put(e.getKey(), specOf(path, e.getValue()));
      }
      return out;
    }
    if (v instanceof org.tensorflow.Tensor) {
      throw new IllegalArgumentException("argument '" + path + "': apply takes operands of the graph, not tensors; "
          + "bring a tensor in with tf.constantOf or Inputs.constCapture");
    }
    return v; // Java values, variables
  }

  private Result result(long[] r) {
    String[] names = outputNames.get((int) r[0]);
    TType[] tensors = new TType[r.length - 1];
    for (int i = 0; i < tensors.length; i++) {
      tensors[i] = TensorFlowInternals.adoptTensor(r[i + 1]);
    }
    return new Result(names, tensors);
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
   */
  public ConcreteFunctionInfo getConcreteFunction(Map<String, ?> argsOrSpecs) {
    Objects.requireNonNull(argsOrSpecs, "argsOrSpecs");
    try {
      synchronized (traceLock) {
        long fn = handle.address();
        int id = find(fn, argsOrSpecs);
        if (id < 0) {
          traceLocked(fn, Arguments.Lookup.of(argsOrSpecs), describeForTrace(argsOrSpecs), false);
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

  private int find(long fn, Map<String, ?> args) {
    Param[] ps = params;
    if (ps == null) {
      return -1;
    }
    CallBuffer buf = CallBuffer.fresh();
    try {
      return Arguments.describe(ps, captures, args, buf, interner, false) ? Native.find(fn, buf.facts(), buf.factCount()) : -1;
    } finally {
      buf.release();
    }
  }

  /** The function's name (from {@link FunctionOptions#withName}). */
  public String name() {
    return options.name();
  }

  /** How many concrete functions tracing has produced (failed traces do not count). */
  public int traceCount() {
    try {
      return Native.traceCount(handle.address());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The polymorphic type: the declared parameters and their constraints, e.g. {@code (x:
   * TensorSpec({FLOAT, DOUBLE}, [-1]), n: Literal<java.lang.Integer>)}. Empty before the first
   * trace, which fixes the parameter list.
   */
  public FunctionType functionType() {
    try {
      String[] flat = Native.parameters(handle.address());
      return flat == null ? new FunctionType(List.of()) : FunctionType.decode(flat, 0, flat.length / 4);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Every cached concrete function with its monomorphic type, in the order they were traced. */
  public List<ConcreteFunctionInfo> concreteFunctions() {
    try {
      String[] flat = Native.concreteFunctions(handle.address());
      List<ConcreteFunctionInfo> result = new ArrayList<>();
      int at = 0;
      while (at < flat.length) {
        int id = Integer.parseInt(flat[at++]);
        String tfName = flat[at++];
        int inputs = Integer.parseInt(flat[at++]);
        int outputs = Integer.parseInt(flat[at++]);
        List<String> outs = Arrays.asList(Arrays.copyOfRange(flat, at, at + outputs));
        at += outputs;
        int ps = Integer.parseInt(flat[at++]);
        result.add(new ConcreteFunctionInfo(id, tfName, FunctionType.decode(flat, at, ps), outs, inputs));
        at += 4 * ps;
      }
      return result;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Releases every concrete function now; the parameter list stays, and the next call of each
   * signature traces again. ({@code tf.function} has no such method.)
   */
  public void clearCache() {
    try {
      Native.clearCache(handle.address());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Counters of calls (exact and inexact hits, misses) and traces, with trace times. */
  public FunctionStatistics statistics() {
    try {
      return new FunctionStatistics(Native.statistics(handle.address()));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The most recent traces (up to 64), oldest first, each with the reason no cached signature
   * matched. The same records are logged at {@code DEBUG} to the {@code System.Logger} named
   * {@code dev.polyfn}; when 5 of the last 10 calls traced, a {@code WARNING} names the function,
   * the parameters that keep changing and the options that would help.
   */
  public List<TraceEvent> traceHistory() {
    try {
      String[] flat = Native.traceHistory(handle.address());
      List<TraceEvent> events = new ArrayList<>(flat.length / 4);
      for (int i = 0; i < flat.length; i += 4) {
        events.add(new TraceEvent(flat[i], flat[i + 1], flat[i + 2], java.time.Duration.ofNanos(Long.parseLong(flat[i + 3]))));
      }
      return events;
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
