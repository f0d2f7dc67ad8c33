package dev.polyfn.internal.trace;

import dev.polyfn.Inputs;
import dev.polyfn.Variable;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.TensorFlowInternals;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * The {@link Inputs} a body sees when its function runs eagerly (see {@link EagerCall}): each
 * declaration is checked as a trace checks it (the argument's facts declared to a native trace
 * session that is never finished, so the messages are the same and nothing is traced), and
 * returns the call's own tensors as eager operands, fed as tensor handles.
 */
public final class EagerInputs extends BodyInputs {
  private final Ops tf;
  /** Traces in progress on this thread when the call began: one begun later is inner to it. */
  private final int tracesOutside;
  private final Set<String> declared = new LinkedHashSet<>();
  private int captures;
  /** Gives back the uses of the variables passed to the body, when its run ends. */
  private final List<Runnable> uses = new ArrayList<>();

  EagerInputs(FunctionCore function, long trace, Ops tf, Arguments.Lookup args) {
    super(function, trace, args, "its eager call", "running it eagerly");
    this.tf = tf;
    this.tracesOutside = Tracing.activeTraces();
  }

  int tracesOutside() {
    return tracesOutside;
  }

  @Override
  public <T extends TType> Operand<T> constCapture(T value) {
    Objects.requireNonNull(value, "value");
    checkActive();
    // Fed as a handle, never as an eager Const of the user's data (see TensorFlowInternals.eagerInput).
    return TensorFlowInternals.eagerInput(value);
  }

  @Override
  public <T extends TType> Operand<T> capture(Supplier<T> value) {
    return capture("capture_" + captures, value);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends TType> Operand<T> capture(String name, Supplier<T> value) {
    checkActive();
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    captures++;
    T t = (T) Capture.of(name, value).value(); // read now, as a traced call reads it at each call
    try {
      return TensorFlowInternals.eagerInput(t);
    } catch (IllegalStateException e) {
      throw new IllegalArgumentException("argument 'capture " + name + "': the tensor is closed", e);
    }
  }

  @Override
  public <T extends TType> Operand<? extends TType> variableInput(String name, Class<T> type) {
    Param p = new Param(name, Param.Kind.VARIABLE, check(type), null, null, false, null);
    declare(p);
    Variable<?> v = (Variable<?>) Arguments.valueFor(p, args.asMap());
    Operand<? extends TType> handle = v.handle(tf);
    // Held until the body's run ends (as a traced call holds its arguments until it returns): a
    // concurrent close empties the variable only after the body's ops on the handle ran.
    v.retainResource();
    uses.add(v.releaser());
    return handle;
  }

  /** Closes what the body's run made and gives back the variables it held. */
  @Override
  public void close() {
    try {
      super.close();
    } finally {
      for (Runnable release : uses) {
        release.run();
      }
      uses.clear();
    }
  }

  /** The argument's tensors as eager operands, in the order a traced call feeds them. */
  @Override
  protected Operands operandsOf(Param p, long[] spec, CallBuffer facts) {
    declared.add(p.name());
    List<Operand<?>> operands = new ArrayList<>();
    for (int i = 0; i < facts.tensorCount(); i++) {
      Operand<?> o = facts.eagerOperand(i);
      if (o != null) {
        operands.add(o);
      }
    }
    Iterator<Operand<?>> next = operands.iterator();
    return new Operands() {
      @Override
      public int count() {
        return operands.size();
      }

      @Override
      public Operand<?> next() {
        return next.next();
      }
    };
  }

  @Override
  protected Interner interner() {
    return function.interner();
  }

  @Override
  protected boolean forCall() {
    return true;
  }

  /** After the body: refuses arguments it declared no parameter for, as a finished trace does. */
  void checkNoUnexpected() {
    List<String> unexpected = new ArrayList<>();
    for (String name : args.asMap().keySet()) {
      if (!declared.contains(name)) {
        unexpected.add(name);
      }
    }
    if (!unexpected.isEmpty()) {
      Collections.sort(unexpected);
      throw new IllegalArgumentException("unexpected argument" + (unexpected.size() == 1 ? "" : "s") + " '"
          + String.join("', '", unexpected) + "': the function's parameters are (" + String.join(", ", declared)
          + ")");
    }
  }

  /**
   * As a trace allows only the first: a variable may be created only on the function's first run
   * of its body (its first call, eager or traced); later ones would make a new variable per call.
   */
  void checkVariableCreationAllowed() {
    if (function.bodyHasRun()) {
      throw new IllegalStateException("function '" + function.name() + "' runs eagerly (FunctionOptions"
          + ".withRunEagerly or Function.runFunctionsEagerly) and creates a variable on a call other than its "
          + "first: variables can only be created on the first call, as on the first trace (tf.function). Create "
          + "the variable outside the body, or only on the first call (Inputs.variable returns the same variable "
          + "by name).");
    }
  }
}
