package dev.polyfn.internal.trace;

import dev.polyfn.Variable;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.VariableTracing;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.tensorflow.ExecutionEnvironment;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * The traces in progress on this thread (a stack: a body may call another function, which may
 * trace). Lets code outside {@code Inputs} — variables, nested calls — find the trace that owns a
 * graph.
 */
public final class Tracing {
  static {
    VariableTracing.install(new VariableTracing.Hooks() {
      @Override
      public void checkCreationAllowed() {
        checkVariableCreationAllowed();
      }

      @Override
      public void adoptCreated(Object variable) {
        adoptCreatedVariable((Variable<?>) variable);
      }

      @Override
      public Operand<? extends TType> capture(Ops tf, Object variable) {
        return captureVariable(tf, (Variable<?>) variable);
      }
    });
  }

  private static final ThreadLocal<Deque<TracingInputs>> ACTIVE = ThreadLocal.withInitial(ArrayDeque::new);
  /** The signatures being traced on this thread, innermost last. */
  private static final ThreadLocal<List<Reentry>> TRACING = ThreadLocal.withInitial(ArrayList::new);
  /**
   * Nested traces of one function on one thread beyond which Polyfn stops. Recursion over Java
   * values ({@code f(n)} applying {@code f(n - 1)}) traces a new signature at each level, as in
   * Python; a recursion that never reaches its base case would otherwise end in a stack overflow.
   */
  public static final int MAX_NESTED_TRACES = 200;

  private Tracing() {}

  /**
   * Marks that this thread starts tracing {@code f} for the arguments in {@code args} ({@code call}
   * describes them when the parameter list is known). A body that applies its own function with
   * the very signature being traced would trace again, and again, until the stack runs out
   * (possibly inside TensorFlow's native code): that is refused, naming the function and
   * signature. Another signature is a recursion that may end (a Java value counting down), so it
   * is allowed up to {@link #MAX_NESTED_TRACES} levels.
   */
  public static Reentry enter(FunctionCore f, CallBuffer call, Arguments.Lookup args) {
    long[] facts = call == null ? null : Arrays.copyOf(call.facts(), call.factCount());
    Reentry entered = new Reentry(f, facts, args);
    List<Reentry> active = TRACING.get();
    int depth = 0;
    for (Reentry r : active) {
      if (r.function != f) {
        continue;
      }
      depth++;
      boolean same = r.facts != null && facts != null
          ? Arrays.equals(r.facts, facts)
          : r.signature().equals(entered.signature());
      if (same) {
        throw new IllegalStateException("function '" + f.name() + "' is already being traced on this thread for "
            + describe(args) + ": its body calls the function itself with the signature being traced, which "
            + "would trace again forever. Recursion needs TensorFlow control flow (a loop), or a Java value that "
            + "changes at each level until a base case.");
      }
      if (depth >= MAX_NESTED_TRACES) {
        throw new IllegalStateException("function '" + f.name() + "' is being traced " + depth + " times nested on "
            + "this thread (now for " + describe(args) + "): a recursion over Java values deeper than "
            + MAX_NESTED_TRACES + " levels, or one that never reaches its base case");
      }
    }
    if (!active.isEmpty() && !StackHeadroom.has(StackHeadroom.NESTED_TRACE_BYTES)) {
      // Native code that runs out of stack aborts the JVM: refuse while Java can still throw.
      throw new IllegalStateException("function '" + f.name() + "' cannot trace a nested call for " + describe(args)
          + ": this thread's stack is nearly used up (" + active.size() + " traces are nested on it). Run the "
          + "call on a thread with a larger stack (new Thread(group, task, name, stackSize), or -Xss), or nest less.");
    }
    active.add(entered);
    return entered;
  }

  /** Traces in progress on this thread, of any function (0 outside every trace). */
  public static int inProgress() {
    return TRACING.get().size() + ACTIVE.get().size();
  }

  /** A trace in progress on this thread; {@link #exit()} when it ends. */
  public static final class Reentry {
    private final FunctionCore function;
    private final long[] facts;
    private final Arguments.Lookup args;
    /** {@link Signatures#of} the arguments, made when a nested trace of the function first compares. */
    private Object signature;

    private Reentry(FunctionCore function, long[] facts, Arguments.Lookup args) {
      this.function = function;
      this.facts = facts;
      this.args = args;
    }

    /**
     * The arguments' stand-in, computed on first use: only a nested trace of the same function
     * on this thread compares it, and most traces have none (their tensors' dtypes and shapes
     * are kept by the tensors, so a later read gives what the call passed).
     */
    private Object signature() {
      if (signature == null) {
        signature = Signatures.of(args);
      }
      return signature;
    }

    public void exit() {
      List<Reentry> active = TRACING.get();
      active.remove(this);
      if (active.isEmpty()) {
        TRACING.remove(); // a pool thread keeps nothing of Polyfn's once its traces are done
      }
    }
  }

  /** The argument types of a call, for messages: {@code (x: TensorSpec(FLOAT, [2]))}. */
  private static String describe(Arguments.Lookup args) {
    StringBuilder b = new StringBuilder("(");
    for (Map.Entry<String, ?> e : args.asMap().entrySet()) {
      if (b.length() > 1) {
        b.append(", ");
      }
      b.append(e.getKey()).append(": ").append(typeOf(e.getValue()));
    }
    return b.append(")").toString();
  }

  private static String typeOf(Object v) {
    if (v instanceof Operand<?> o) {
      return "TensorSpec(" + o.asOutput().dataType() + ", " + o.shape() + ")";
    }
    if (v instanceof Tensor t) {
      return "TensorSpec(" + t.dataType() + ", " + t.shape() + ")";
    }
    if (v instanceof List<?> l) {
      return "list of length " + l.size();
    }
    if (v instanceof Map<?, ?> m) {
      return "map with keys " + m.keySet();
    }
    return v == null ? "null" : v.getClass().getSimpleName();
  }

  /**
   * The eager calls whose bodies run on this thread (see {@link EagerCall}), innermost first; no
   * entry while none runs (asked at every Flow call: a thread keeps nothing of it).
   */
  private static final ThreadLocal<Deque<EagerInputs>> EAGER = new ThreadLocal<>();

  /** Traces begun on this thread and not ended (an eager call records it to know what is inner). */
  static int activeTraces() {
    return ACTIVE.get().size();
  }

  static void pushEager(EagerInputs inputs) {
    Deque<EagerInputs> stack = EAGER.get();
    if (stack == null) {
      stack = new ArrayDeque<>();
      EAGER.set(stack);
    }
    stack.push(inputs);
  }

  static void popEager(EagerInputs inputs) {
    Deque<EagerInputs> stack = EAGER.get();
    if (stack != null) {
      stack.removeFirstOccurrence(inputs);
      if (stack.isEmpty()) {
        EAGER.remove();
        if (ACTIVE.get().isEmpty()) {
          ACTIVE.remove(); // made by activeTraces(): a pool thread keeps nothing once its calls are done
        }
      }
    }
  }

  /** Eager calls whose bodies run on this thread, nested (0 outside every eager call). */
  static int eagerDepth() {
    Deque<EagerInputs> stack = EAGER.get();
    return stack == null ? 0 : stack.size();
  }

  /**
   * The eager call whose body runs innermost on this thread, or null: none runs, or a trace began
   * inside it (whose body is built in a graph, so the trace's rules apply).
   */
  public static EagerInputs currentEager() {
    Deque<EagerInputs> stack = EAGER.get();
    EagerInputs e = stack == null ? null : stack.peek();
    return e != null && e.tracesOutside() == ACTIVE.get().size() ? e : null;
  }

  public static void push(TracingInputs inputs) {
    ACTIVE.get().push(inputs);
  }

  public static void pop(TracingInputs inputs) {
    Deque<TracingInputs> stack = ACTIVE.get();
    stack.removeFirstOccurrence(inputs); // the top, unless a nested trace failed to pop its own
    if (stack.isEmpty()) {
      ACTIVE.remove();
    }
  }

  /** The innermost trace on this thread, or null. */
  public static TracingInputs current() {
    return ACTIVE.get().peek();
  }

  /** The trace building {@code env}'s graph on this thread, or null (a user's graph). */
  public static TracingInputs owning(ExecutionEnvironment env) {
    for (TracingInputs t : ACTIVE.get()) {
      if (t.graph() == env) {
        return t;
      }
    }
    return null;
  }

  /** As tf.function: variables may be created while tracing only on a function's first trace. */
  public static void checkVariableCreationAllowed() {
    EagerInputs eager = currentEager();
    if (eager != null) {
      eager.checkVariableCreationAllowed();
      return;
    }
    TracingInputs t = current();
    if (t != null && !t.firstTrace()) {
      throw new IllegalStateException("function '" + t.functionName() + "' creates a variable on a trace other than "
          + "its first: variables can only be created on the first trace (as in tf.function). Create the variable "
          + "outside the body, or only on the first trace (Inputs.variable returns the same variable by name).");
    }
  }

  /** A variable created during a first trace belongs to that function. */
  public static void adoptCreatedVariable(Variable<?> v) {
    EagerInputs eager = currentEager();
    if (eager != null) {
      eager.function().adopt(v);
      return;
    }
    TracingInputs t = current();
    if (t != null) {
      t.adopt(v);
    }
  }

  /** The handle of {@code v} in the graph of {@code tf}, captured by the trace that owns it. */
  public static Operand<? extends TType> captureVariable(Ops tf, Variable<?> v) {
    TracingInputs t = owning(tf.scope().env());
    if (t == null) {
      throw new IllegalStateException(VariableTracing.NOT_TRACED);
    }
    return t.captureVariable(v);
  }
}
