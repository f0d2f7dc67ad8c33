package dev.polyfn.internal.trace;

import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * Debug mode (Python's {@code tf.config.run_functions_eagerly}): a call that runs the body eagerly
 * on the call's tensors instead of tracing it. The body gets the {@code Ops} of TensorFlow Java's
 * default eager session (where variables live) and {@link EagerInputs}; its outputs are copied out
 * as tensors the caller owns, named as a traced call names them. Nothing is traced or cached.
 */
public final class EagerCall {
  /** The JVM-wide switch ({@code Function.runFunctionsEagerly}), initially the system property. */
  private static volatile boolean everyFunction = Boolean.getBoolean("dev.polyfn.runEagerly");

  /**
   * Held while a body runs eagerly: TensorFlow Java's default eager session is not thread-safe
   * (each op it builds is attached to a plain {@code WeakHashMap}, which concurrent calls corrupt
   * into an endless loop), so eager calls run one at a time in the JVM.
   */
  private static final ReentrantLock SESSION = new ReentrantLock();
  /** How long an eager call made inside a trace waits for another thread's eager call. */
  static final long WAIT_IN_TRACE_SECONDS = 30;

  /** Eager calls nested on one thread beyond which Polyfn stops (a recursion that never ends). */
  static final int MAX_NESTED_CALLS = Tracing.MAX_NESTED_TRACES;

  private EagerCall() {}

  /** Sets the JVM-wide switch: every function with a body runs its calls eagerly. */
  public static void runEveryFunctionEagerly(boolean on) {
    everyFunction = on;
  }

  /** Whether the JVM-wide switch is on. */
  public static boolean everyFunctionRunsEagerly() {
    return everyFunction;
  }

  /** Whether a call of {@code f} runs its body eagerly now. */
  static boolean applies(FunctionCore f, boolean bodyless) {
    return !bodyless && (everyFunction || f.options().runEagerly());
  }

  /** Runs {@code f}'s body eagerly on {@code args}; the caller owns the returned tensors. */
  static Result run(FunctionCore f, Arguments.Lookup args) {
    int depth = Tracing.eagerDepth();
    if (depth >= MAX_NESTED_CALLS) {
      throw new IllegalStateException("function '" + f.name() + "' runs eagerly " + depth + " times nested on this "
          + "thread: a recursion deeper than " + MAX_NESTED_CALLS + " levels, or one that never reaches its base case");
    }
    if (depth + Tracing.inProgress() > 0 && !StackHeadroom.has(StackHeadroom.NESTED_TRACE_BYTES)) {
      // Native code that runs out of stack aborts the JVM: refuse while Java can still throw.
      throw new IllegalStateException("function '" + f.name() + "' cannot run a nested eager call: this thread's "
          + "stack is nearly used up. Run the call on a thread with a larger stack, or nest less.");
    }
    lockSession(f);
    try {
      return runLocked(f, args);
    } finally {
      SESSION.unlock();
    }
  }

  /**
   * Takes {@link #SESSION}. Inside a trace this thread holds a trace lock, which the thread running
   * an eager call may be waiting for (its body calls the function being traced): waiting without
   * bound could deadlock, so such a call waits {@link #WAIT_IN_TRACE_SECONDS} and then fails.
   */
  private static void lockSession(FunctionCore f) {
    if (SESSION.isHeldByCurrentThread() || Tracing.inProgress() == 0) {
      SESSION.lock();
      return;
    }
    boolean locked;
    try {
      locked = SESSION.tryLock(WAIT_IN_TRACE_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      locked = false;
    }
    if (!locked) {
      throw new IllegalStateException("function '" + f.name() + "' runs eagerly, called inside a trace, and another "
          + "thread's eager call did not end within " + WAIT_IN_TRACE_SECONDS + " s (eager calls run one at a time: "
          + "TensorFlow Java's eager session is not thread-safe); it may be waiting for this trace");
    }
  }

  private static Result runLocked(FunctionCore f, Arguments.Lookup args) {
    Ops tf = Ops.create(EagerSession.getDefault());
    // A native trace session, never finished, checks the arguments exactly as a trace would.
    long session = Native.beginTrace(f.address(), args.names(), null, 0, false, -1, 0); // never finished: nothing to log
    EagerInputs inputs = null;
    try {
      inputs = new EagerInputs(f, session, tf, args);
      Tracing.pushEager(inputs);
      Traced outs = f.body().trace(tf, inputs);
      inputs.checkNoUnexpected();
      Result r = copyOut(f, outs);
      f.bodyRan();
      return r;
    } finally {
      if (inputs != null) {
        Tracing.popEager(inputs);
        inputs.close();
      }
      Native.freeTrace(session);
    }
  }

  /** The body's outputs, checked as a trace checks them, as new tensors the caller owns. */
  private static Result copyOut(FunctionCore f, Traced outs) {
    String function = f.name();
    int n = outs.names().length;
    if (outs.operands().length != n) {
      throw new IllegalStateException("the body of '" + function + "' returned " + n + " output names for "
          + outs.operands().length + " outputs");
    }
    Output<?>[] resolved = new Output<?>[n];
    for (int i = 0; i < n; i++) {
      String name = outs.names()[i];
      if (name == null || outs.operands()[i] == null) {
        throw new IllegalStateException("the body of '" + function + "' returned a null output or output name");
      }
      Output<?> o = outs.operands()[i].asOutput();
      if (!o.env().isEager()) {
        throw new IllegalStateException("output '" + name + "' of '" + function + "' is not an eager operand, and '"
            + function + "' runs eagerly: build outputs with the Ops passed to the body");
      }
      TraceOutputs.checkDataType(function, name, o.dataType());
      resolved[i] = o;
    }
    TType[] tensors = new TType[n];
    for (int i = 0; i < n; i++) {
      try {
        tensors[i] = TensorFlowInternals.copyOut(resolved[i]);
      } catch (RuntimeException e) {
        new OwnedTensors(Arrays.copyOf(tensors, i)).close(); // the caller gets none of them
        throw e;
      }
    }
    return new Result(f.outputNames().canonical(outs.names()), tensors);
  }

  /**
   * {@code f.apply(tf, args)} inside a body that runs eagerly: {@code f} is called on the values
   * of the eager operands (eagerly too if its calls run eagerly, else traced), and its outputs
   * come back as eager operands, as Python's nested {@code tf.function} call does.
   */
  static Traced apply(FunctionCore f, Map<String, ?> args) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (Map.Entry<String, ?> e : args.entrySet()) {
      values.put(e.getKey(), value(e.getValue()));
    }
    Result r = f.invoke(values);
    Operand<?>[] operands = new Operand<?>[r.tensors().length];
    try {
      for (int i = 0; i < operands.length; i++) {
        operands[i] = TensorFlowInternals.eagerInput(r.tensors()[i]); // shares the buffer
      }
    } finally {
      new OwnedTensors(r.tensors()).close();
    }
    return new Traced(r.names(), operands);
  }

  /** An argument of a nested call with each eager operand (alone, in a list, or a map value) as its tensor. */
  private static Object value(Object v) {
    if (v instanceof Operand<?> o) {
      if (!o.env().isEager()) {
        throw new IllegalArgumentException("apply: an argument is an operand of a graph, but the body runs eagerly: "
            + "pass operands of the Ops passed to the body");
      }
      synchronized (EagerLock.LOCK) { // recorded in the eager session, which is not thread-safe
        return o.asTensor(); // owned by the eager session
      }
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>(l.size());
      for (Object x : l) {
        out.add(value(x));
      }
      return out;
    }
    if (v instanceof Map<?, ?> m) {
      Map<Object, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : m.entrySet()) {
        out.put(e.getKey(), value(e.getValue()));
      }
      return out;
    }
    return v;
  }
}
