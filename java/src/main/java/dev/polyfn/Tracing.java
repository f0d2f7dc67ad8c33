package dev.polyfn;

import java.util.ArrayDeque;
import java.util.Deque;
import org.tensorflow.ExecutionEnvironment;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * The traces in progress on this thread (a stack: a body may call another function, which may
 * trace). Lets code outside {@code Inputs} — variables, nested calls — find the trace that owns a
 * graph.
 */
final class Tracing {
  private static final ThreadLocal<Deque<TracingInputs>> ACTIVE = ThreadLocal.withInitial(ArrayDeque::new);

  private Tracing() {}

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
