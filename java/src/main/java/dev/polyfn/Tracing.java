package dev.polyfn;

import dev.polyfn.internal.CallBuffer;
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
final class Tracing {
  private static final ThreadLocal<Deque<TracingInputs>> ACTIVE = ThreadLocal.withInitial(ArrayDeque::new);
  /** The signatures being traced on this thread, innermost last. */
  private static final ThreadLocal<List<Reentry>> TRACING = ThreadLocal.withInitial(ArrayList::new);
  /** Nested traces of one function on one thread beyond which Polyfn stops (each holds a stack frame chain). */
  static final int MAX_NESTED_TRACES = 16;

  private Tracing() {}

  /**
   * Marks that this thread starts tracing {@code f} for the call described by {@code call} (null
   * before the parameter list is known). A body that applies its own function with the signature
   * being traced would trace again, and again, until the stack runs out (possibly inside
   * TensorFlow's native code): that is refused, naming the function and signature.
   */
  static Reentry enter(PolymorphicFunction f, CallBuffer call, Arguments.Lookup args) {
    long[] facts = call == null ? null : Arrays.copyOf(call.facts(), call.factCount());
    List<Reentry> active = TRACING.get();
    int depth = 0;
    for (Reentry r : active) {
      if (r.function == f) {
        depth++;
        if (r.facts == null || facts == null || Arrays.equals(r.facts, facts) || depth >= MAX_NESTED_TRACES) {
          throw new IllegalStateException("function '" + f.name() + "' is already being traced on this thread for "
              + describe(args) + ": its body calls the function itself with the signature being traced, which "
              + "would trace again forever. Recursion needs TensorFlow control flow (a loop), not re-tracing.");
        }
      }
    }
    Reentry r = new Reentry(f, facts);
    active.add(r);
    return r;
  }

  /** A trace in progress on this thread; {@link #exit()} when it ends. */
  static final class Reentry {
    private final PolymorphicFunction function;
    private final long[] facts;

    private Reentry(PolymorphicFunction function, long[] facts) {
      this.function = function;
      this.facts = facts;
    }

    void exit() {
      TRACING.get().remove(this);
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

  static void push(TracingInputs inputs) {
    ACTIVE.get().push(inputs);
  }

  static void pop(TracingInputs inputs) {
    Deque<TracingInputs> stack = ACTIVE.get();
    if (stack.peek() == inputs) {
      stack.pop();
    }
  }

  /** The innermost trace on this thread, or null. */
  static TracingInputs current() {
    return ACTIVE.get().peek();
  }

  /** The trace building {@code env}'s graph on this thread, or null (a user's graph). */
  static TracingInputs owning(ExecutionEnvironment env) {
    for (TracingInputs t : ACTIVE.get()) {
      if (t.graph() == env) {
        return t;
      }
    }
    return null;
  }

  /** As tf.function: variables may be created while tracing only on a function's first trace. */
  static void checkVariableCreationAllowed() {
    TracingInputs t = current();
    if (t != null && !t.firstTrace()) {
      throw new IllegalStateException("function '" + t.functionName() + "' creates a variable on a trace other than "
          + "its first: variables can only be created on the first trace (as in tf.function). Create the variable "
          + "outside the body, or only on the first trace (Inputs.variable returns the same variable by name).");
    }
  }

  /** A variable created during a first trace belongs to that function. */
  static void adoptCreatedVariable(Variable<?> v) {
    TracingInputs t = current();
    if (t != null) {
      t.adopt(v);
    }
  }

  /** The handle of {@code v} in the graph of {@code tf}, captured by the trace that owns it. */
  static Operand<? extends TType> captureVariable(Ops tf, Variable<?> v) {
    TracingInputs t = owning(tf.scope().env());
    if (t == null) {
      throw new IllegalStateException("variables can be used in a graph only while Polyfn traces it; "
          + "in your own Graph, pass values in as tensors");
    }
    return t.captureVariable(v);
  }
}
