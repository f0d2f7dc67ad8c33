package dev.polyfn.internal;

import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * How a {@code Variable} reaches the trace in progress on its thread without the API's value type
 * depending on the tracing machinery: {@code internal.trace.Tracing} installs its hooks when it
 * is initialized, which happens before any body runs (every trace enters {@code Tracing} first).
 * Until then no trace can be in progress, and the defaults say so.
 */
public final class VariableTracing {
  private VariableTracing() {}

  /** What a variable asks of the trace in progress. */
  public interface Hooks {
    /** Refuses a variable created on a trace other than a function's first. */
    void checkCreationAllowed();

    /** Gives a variable created during a first trace to that function. */
    void adoptCreated(Object variable);

    /** The handle of {@code variable} in the graph of {@code tf}, captured by the trace that owns it. */
    Operand<? extends TType> capture(Ops tf, Object variable);
  }

  /** Why a variable cannot be used in a graph no trace owns. */
  public static final String NOT_TRACED = "variables can be used in a graph only while Polyfn traces it; "
      + "in your own Graph, pass values in as tensors";

  private static final Hooks NONE = new Hooks() {
    @Override
    public void checkCreationAllowed() {}

    @Override
    public void adoptCreated(Object variable) {}

    @Override
    public Operand<? extends TType> capture(Ops tf, Object variable) {
      throw new IllegalStateException(NOT_TRACED);
    }
  };

  private static volatile Hooks hooks = NONE;

  /** Called once, by {@code Tracing}'s static initializer. */
  public static void install(Hooks tracing) {
    hooks = tracing;
  }

  /** The hooks of the tracing machinery, or the defaults before any trace began. */
  public static Hooks hooks() {
    return hooks;
  }
}
