package dev.polyfn.internal.trace;

import dev.polyfn.CompositeSpec;
import dev.polyfn.Inputs;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import dev.polyfn.internal.Aliases;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.EagerResource;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.Wire;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * The {@link Inputs} a body sees while it is traced: each declaration writes the call's argument
 * facts, asks Rust for the parameter's placeholder specs (the argument's type under the declared
 * constraint) and builds the placeholders in the trace graph.
 */
public final class TracingInputs extends BodyInputs {
  private final Graph graph;
  private final Ops tf;
  private final Interner interner;
  private final boolean firstTrace;
  /** The placeholders built so far, each with its place among the function's inputs. */
  private final Placeholders placeholders;
  /** The slot of each variable's shared placeholder, by alias index. */
  private final Map<Integer, Placeholders.Slot> variableSlots = new HashMap<>();
  private final List<Param> declared = new ArrayList<>();
  private final List<Capture> captures = new ArrayList<>();
  /** Resource placeholders by alias index: a variable used twice is one graph input. */
  private final Map<Integer, Operand<? extends TType>> variableHandles = new HashMap<>();
  /** Variables this trace captured, by identity. */
  private final Map<Variable<?>, Operand<? extends TType>> capturedVariables = new IdentityHashMap<>();
  private final Map<EagerResource, Operand<? extends TType>> capturedResources = new IdentityHashMap<>();

  public TracingInputs(FunctionCore function, long trace, Graph graph, Ops tf, Arguments.Lookup args,
      Interner interner, boolean firstTrace) {
    super(function, trace, args, "its trace", "tracing it");
    this.graph = graph;
    this.tf = tf;
    this.placeholders = new Placeholders(graph, tf);
    this.interner = interner;
    this.firstTrace = firstTrace;
  }

  /** Examples whose types this trace coalesces into each parameter's constraint, if any. */
  private Inference inference;

  public void inferFrom(Inference inference) {
    this.inference = inference;
  }

  public Graph graph() {
    return graph;
  }

  public long trace() {
    return trace;
  }

  public boolean firstTrace() {
    return firstTrace;
  }

  public String functionName() {
    return function.name();
  }

  public void adopt(Variable<?> v) {
    function.adopt(v);
  }

  @Override
  public <T extends TType> Operand<T> constCapture(T value) {
    Objects.requireNonNull(value, "value");
    return tf.constantOf(value);
  }

  @Override
  public <T extends TType> Operand<T> capture(Supplier<T> value) {
    return capture("capture_" + captures.size(), value);
  }

  @Override
  public <T extends TType> Operand<T> capture(String name, Supplier<T> value) {
    checkActive();
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    Capture c = Capture.of(name, value);
    CallBuffer facts = CallBuffer.fresh();
    facts.useAliases(aliases);
    long[] spec;
    try {
      Arguments.writeCapture(c, c.value(), facts);
      spec = Native.declareCapture(trace, name, false, facts.facts(), facts.factCount());
    } finally {
      facts.release();
    }
    placeholders.at(Placeholders.CAPTURES, captures.size());
    captures.add(c);
    return placeholders.build(spec, 1);
  }

  /**
   * The graph handle of variable {@code v}, captured by handle once per trace. The capture is
   * declared even when {@code v} is also an argument: its alias index records that pattern in the
   * signature, and only the placeholder is shared.
   */
  public Operand<? extends TType> captureVariable(Variable<?> v) {
    checkActive();
    Operand<? extends TType> known = capturedVariables.get(v);
    if (known != null) {
      return known;
    }
    int alias = Aliases.index(aliases.aliasOf(v));
    long[] spec = declareByHandle(Capture.of(v), v.dtypeCode(), v.dims(), alias);
    Operand<? extends TType> handle = spec[0] == 0 ? variableHandles.get(alias) : variableHandle(spec, v, alias);
    variableHandles.put(alias, handle);
    capturedVariables.put(v, handle);
    return handle;
  }

  /**
   * The graph handle of resource {@code r} (a lookup table restored from a SavedModel, captured by
   * a loaded function this body calls), captured by handle once per trace, as a variable is: typed
   * as a variable of resources, which is how calls feed it ({@link Arguments#writeCapture}).
   */
  public Operand<? extends TType> captureResource(String name, EagerResource r) {
    checkActive();
    Operand<? extends TType> known = capturedResources.get(r);
    if (known != null) {
      return known;
    }
    int alias = Aliases.index(aliases.aliasOf(r));
    long[] spec = declareByHandle(Capture.of(name, r), Wire.DT_RESOURCE, new long[0], alias);
    Operand<? extends TType> handle = placeholders.build(spec, 1);
    capturedResources.put(r, handle);
    return handle;
  }

  /**
   * Declares capture {@code c}, taken by handle (a variable, or a resource typed as a variable of
   * resources) of {@code dtype} and {@code dims}, and files it among the captures; returns its spec.
   */
  private long[] declareByHandle(Capture c, int dtype, long[] dims, int alias) {
    CallBuffer facts = CallBuffer.fresh();
    facts.variable(dtype, dims, alias, 0);
    long[] spec = Native.declareCapture(trace, c.name(), true, facts.facts(), facts.factCount());
    placeholders.at(Placeholders.CAPTURES, captures.size());
    captures.add(c);
    return spec;
  }

  @Override
  public <T extends TType> Operand<? extends TType> variableInput(String name, Class<T> type) {
    Param p = new Param(name, Param.Kind.VARIABLE, check(type), null, null, false, null);
    long[] spec = ((Specs) declare(p)).spec;
    Variable<?> v = (Variable<?>) Arguments.valueFor(p, args.asMap());
    int alias = Aliases.index(aliases.aliasOf(v));
    if (spec[0] == 0) {
      // Captured before this parameter declared it: the call feeds it here, among the parameters.
      Placeholders.Slot shared = variableSlots.get(alias);
      if (shared.group() == Placeholders.CAPTURES) {
        variableSlots.put(alias, placeholders.moveToParameter(shared, declared.size() - 1));
      }
      return variableHandles.get(alias);
    }
    Operand<? extends TType> handle = variableHandle(spec, v, alias);
    variableHandles.put(alias, handle);
    return handle;
  }

  /**
   * The resource placeholder of variable {@code v}, carrying the dtype and shape of its value as
   * TensorFlow's handle data: reads of it then have the variable's static shape, as in TensorFlow.
   */
  private Operand<? extends TType> variableHandle(long[] spec, Variable<?> v, int alias) {
    Operand<? extends TType> handle = placeholders.build(spec, 1);
    variableSlots.put(alias, placeholders.last());
    if (v.dims() != null) { // an unknown rank: no handle data, so reads have an unknown shape
      Native.setHandleShape(TensorFlowInternals.graphAddress(graph), handle.op().name(), v.dtypeCode(), v.dims());
    }
    return handle;
  }

  @Override
  protected Operands operandsOf(Param p, long[] spec, CallBuffer facts) {
    placeholders.at(Placeholders.PARAMETERS, declared.size());
    declared.add(p);
    return new Specs(spec);
  }

  /**
   * A parameter's placeholders, built from its specs as the body asks for them: spec[0] counts the
   * tensors, then each is its dtype, its rank and its dims; then come the count of its composites
   * and each one's traced static shape (rank, dims), in flatten order.
   */
  private final class Specs implements Operands {
    final long[] spec;
    private int at = 1;
    /** Where each placeholder handed out so far starts in {@link #spec}. */
    private final int[] starts;
    private int handed;
    /** Where the next composite's static shape starts (past the placeholders), once known. */
    private int shapeAt = -1;

    Specs(long[] spec) {
      this.spec = spec;
      this.starts = new int[(int) spec[0]];
    }

    @Override
    public int count() {
      return (int) spec[0];
    }

    @Override
    public Operand<?> next() {
      Operand<?> o = placeholders.build(spec, at);
      starts[handed++] = at;
      at = pastTensor(at);
      return o;
    }

    /**
     * The composite's spec as traced: with reduce-retracing its static shape and components' dims
     * are the generalized ones the trace is cached under, which the view must build on (a view
     * baking the call's dims into the graph would serve later calls wrongly). {@code components}
     * are the placeholders {@link #next} handed out last ({@code Nest.build} takes them just
     * before), so {@link #starts} holds where each one's spec starts.
     */
    @Override
    public CompositeSpec traced(CompositeSpec call, List<Operand<?>> components) {
      if (shapeAt < 0) {
        shapeAt = 1;
        for (int i = 0; i < count(); i++) {
          shapeAt = pastTensor(shapeAt);
        }
        shapeAt++; // the composites' count, which the nest's walk matches one by one
      }
      if (shapeAt >= spec.length) {
        throw new IllegalStateException("the trace sent no static shape for a composite of this parameter");
      }
      Shape shape = shapeAt(shapeAt);
      shapeAt = pastShape(shapeAt);
      List<TensorSpec> specs = new ArrayList<>();
      for (int i = 0; i < components.size(); i++) {
        int start = starts[handed - components.size() + i];
        specs.add(TensorSpec.of(call.components().get(i).type(), shapeAt(start + 1)));
      }
      return new CompositeSpec(call.dtype(), shape, call.metadata(), call.names(), specs);
    }

    /** Where the spec after the tensor's (dtype, rank, dims...) at {@code i} starts. */
    private int pastTensor(int i) {
      return pastShape(i + 1);
    }

    /** Where the spec after the shape's (rank, dims...) at {@code i} starts. */
    private int pastShape(int i) {
      return i + 1 + Math.max(0, (int) spec[i]);
    }

    /** The shape written as (rank, dims...) at {@code i}; rank -1: unknown. */
    private Shape shapeAt(int i) {
      int rank = (int) spec[i];
      return rank < 0 ? Shape.unknown() : Shape.of(Arrays.copyOfRange(spec, i + 1, i + 1 + rank));
    }
  }

  @Override
  protected Interner interner() {
    return interner;
  }

  @Override
  protected boolean forCall() {
    return args.forCall();
  }

  @Override
  protected void beforeDeclare(Param p) {
    if (inference != null) {
      inference.infer(p, function.address(), interner);
    }
  }

  /** The placeholder operation names in the order calls feed the function's inputs. */
  public String[] placeholderNames() {
    return placeholders.names();
  }

  public Param[] declared() {
    return declared.toArray(new Param[0]);
  }

  public Capture[] captures() {
    return captures.toArray(new Capture[0]);
  }
}
