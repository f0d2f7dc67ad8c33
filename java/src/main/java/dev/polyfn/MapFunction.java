package dev.polyfn;

import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.FunctionHandle;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * A polymorphic function with named outputs, made by {@link Function#define(MapBody)}.
 *
 * <p>Each call is typed (the dtype and shape of every tensor argument); the first call of a new
 * type traces the body into a TensorFlow function, which is cached; calls of a known type run that
 * function natively in one JNI call, with no copy of tensor data.
 *
 * <pre>{@code
 * try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(3f))));
 *     TFloat32 x = TFloat32.vectorOf(1, 2);
 *     Outputs out = f.call(Map.of("x", x))) {
 *   out.get("y", TFloat32.class);  // [3.0, 6.0]
 *   f.traceCount();                // 1
 *   f.functionType();              // (x: TensorSpec(FLOAT, *))
 * }
 * }</pre>
 *
 * <p>Thread-safe: any number of threads may call one function. Close it to release its concrete
 * functions.
 */
public final class MapFunction implements AutoCloseable {
  private final MapBody body;
  private final FunctionOptions options;
  private final FunctionHandle handle;
  private final Object traceLock = new Object();
  private final Map<Integer, String[]> outputNames = new ConcurrentHashMap<>();
  /** Parameter names in order, known after the first trace. */
  private volatile String[] parameters;

  MapFunction(MapBody body, FunctionOptions options) {
    this.body = Objects.requireNonNull(body, "body");
    this.options = Objects.requireNonNull(options, "options");
    this.handle = new FunctionHandle(this, options.name());
  }

  /**
   * Calls the function.
   *
   * @param args an argument for every parameter, by name: TensorFlow Java tensors
   * @return the outputs, which the caller must close
   * @throws IllegalArgumentException for a missing, unexpected, null or mistyped argument (the
   *     message names the parameter and what was expected); the function stays usable
   * @throws IllegalStateException if the function is closed
   */
  public Outputs call(Map<String, ?> args) {
    Objects.requireNonNull(args, "args");
    try {
      long fn = handle.address();
      String[] params = parameters;
      if (params != null) {
        CallBuffer buf = CallBuffer.get();
        if (describe(params, args, buf)) {
          long[] result = Native.call(fn, buf.facts(), buf.factCount(), buf.tensors(), buf.tensorCount());
          if (result != null) {
            return outputs(result);
          }
        }
      }
      return traceAndCall(args);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Writes the call's facts in parameter order; false if the arguments do not bind. */
  private static boolean describe(String[] params, Map<String, ?> args, CallBuffer buf) {
    if (args.size() != params.length) {
      return false;
    }
    for (String name : params) {
      Object value = args.get(name);
      if (value == null) {
        if (args.containsKey(name)) {
          throw new IllegalArgumentException("argument '" + name + "': expected a tensor, got null");
        }
        return false;
      }
      if (!(value instanceof Tensor)) {
        throw new IllegalArgumentException(
            "argument '" + name + "': expected a tensor, got " + value.getClass().getName());
      }
      buf.tensor(name, (Tensor) value);
    }
    return true;
  }

  private Outputs traceAndCall(Map<String, ?> args) {
    synchronized (traceLock) {
      long fn = handle.address();
      String[] params = parameters;
      if (params != null) {
        // Another thread may have traced this signature while we waited.
        CallBuffer buf = CallBuffer.get();
        if (describe(params, args, buf)) {
          long[] result = Native.call(fn, buf.facts(), buf.factCount(), buf.tensors(), buf.tensorCount());
          if (result != null) {
            return outputs(result);
          }
        }
      }
      trace(fn, args);
      CallBuffer buf = CallBuffer.get();
      if (!describe(parameters, args, buf)) {
        throw new IllegalStateException("the trace of '" + name() + "' does not bind the call that traced it");
      }
      long[] result = Native.call(fn, buf.facts(), buf.factCount(), buf.tensors(), buf.tensorCount());
      if (result == null) {
        throw new IllegalStateException("the trace of '" + name() + "' does not accept the call that traced it");
      }
      return outputs(result);
    }
  }

  private void trace(long fn, Map<String, ?> args) {
    long trace = Native.beginTrace(fn, args.keySet().toArray(new String[0]));
    try (Graph graph = new Graph()) {
      Ops tf = Ops.create(graph);
      TracingInputs inputs = new TracingInputs(trace, tf, args);
      Map<String, Operand<?>> outs = body.define(tf, inputs);
      if (outs == null) {
        throw new IllegalStateException("the body of '" + name() + "' returned null instead of a map of outputs");
      }
      int n = outs.size();
      String[] names = new String[n];
      String[] ops = new String[n];
      int[] indices = new int[n];
      int i = 0;
      for (Map.Entry<String, Operand<?>> e : outs.entrySet()) {
        if (e.getKey() == null || e.getValue() == null) {
          throw new IllegalStateException("the body of '" + name() + "' returned a null output name or operand");
        }
        Output<?> o = e.getValue().asOutput();
        if (o.env() != graph) {
          throw new IllegalStateException(
              "output '" + e.getKey() + "' of '" + name() + "' is not an operand of the traced graph: "
                  + "build outputs with the Ops passed to the body");
        }
        names[i] = e.getKey();
        ops[i] = o.op().name();
        indices[i] = o.index();
        i++;
      }
      int id = Native.finishTrace(
          trace, TensorFlowInternals.graphAddress(graph), inputs.placeholderNames(), names, ops, indices);
      outputNames.put(id, names);
      parameters = parameterNames(Native.parameters(fn));
    } finally {
      Native.freeTrace(trace);
    }
  }

  private static String[] parameterNames(String[] quadruples) {
    String[] names = new String[quadruples.length / 4];
    for (int i = 0; i < names.length; i++) {
      names[i] = quadruples[4 * i];
    }
    return names;
  }

  private Outputs outputs(long[] result) {
    String[] names = outputNames.get((int) result[0]);
    TType[] tensors = new TType[result.length - 1];
    for (int i = 0; i < tensors.length; i++) {
      tensors[i] = TensorFlowInternals.adoptTensor(result[i + 1]);
    }
    return new Outputs(names, tensors);
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
   * The polymorphic type: the declared parameters and their constraints. Empty before the first
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
        String tfName = flat[at++];
        int outputs = Integer.parseInt(flat[at++]);
        List<String> outs = Arrays.asList(Arrays.copyOfRange(flat, at, at + outputs));
        at += outputs;
        int params = Integer.parseInt(flat[at++]);
        result.add(new ConcreteFunctionInfo(tfName, FunctionType.decode(flat, at, params), outs));
        at += 4 * params;
      }
      return result;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Releases every concrete function. Idempotent; later calls throw {@link IllegalStateException}. */
  @Override
  public void close() {
    handle.close();
  }

  @Override
  public String toString() {
    return "MapFunction(" + name() + functionType() + ")";
  }
}
