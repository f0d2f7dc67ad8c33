package dev.polyfn.internal.trace;

import dev.polyfn.CompositeType;
import dev.polyfn.Inputs;
import dev.polyfn.Nest;
import dev.polyfn.RaggedOperand;
import dev.polyfn.RaggedTensor;
import dev.polyfn.RecordInput;
import dev.polyfn.SparseOperand;
import dev.polyfn.Variable;
import dev.polyfn.internal.Aliases;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.Wire;
import dev.polyfn.internal.structure.CompositeRegistry;
import dev.polyfn.internal.structure.Records;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.family.TType;

/**
 * The {@link Inputs} a body sees while it is traced: each declaration writes the call's argument
 * facts, asks Rust for the parameter's placeholder specs (the argument's type under the declared
 * constraint) and builds the placeholders in the trace graph.
 */
public final class TracingInputs implements Inputs {
  private final FunctionCore function;
  private final long trace;
  private final Graph graph;
  private final Ops tf;
  private final Arguments.Lookup args;
  private final Interner interner;
  /** The thread running the body; declarations from any other are refused. */
  private final Thread owner = Thread.currentThread();
  /** Set when the trace ends: its native state is freed, so later declarations are refused. */
  private volatile boolean finished;
  private final boolean firstTrace;
  private final CallBuffer temporaries = CallBuffer.fresh();
  /** The placeholders built so far, each with its place among the function's inputs. */
  private final Placeholders placeholders;
  /** The slot of each variable's shared placeholder, by alias index. */
  private final Map<Integer, Placeholders.Slot> variableSlots = new HashMap<>();
  private final List<Param> declared = new ArrayList<>();
  private final List<Capture> captures = new ArrayList<>();
  /** Variable alias numbering shared by every declaration of this trace. */
  private final Aliases aliases = new Aliases();
  /** Resource placeholders by alias index: a variable used twice is one graph input. */
  private final Map<Integer, Operand<? extends TType>> variableHandles = new HashMap<>();
  /** Variables this trace captured, by identity. */
  private final Map<Variable<?>, Operand<? extends TType>> capturedVariables = new IdentityHashMap<>();

  public TracingInputs(FunctionCore function, long trace, Graph graph, Ops tf, Arguments.Lookup args,
      Interner interner, boolean firstTrace) {
    this.function = function;
    this.trace = trace;
    this.graph = graph;
    this.tf = tf;
    this.placeholders = new Placeholders(tf);
    this.args = args;
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
  public <T extends TType> Operand<T> input(String name, Class<T> type) {
    return tensor(name, type, null, false, null);
  }

  @Override
  public <T extends TType> Operand<T> input(String name, Class<T> type, Shape shape) {
    return tensor(name, type, Objects.requireNonNull(shape, "shape"), false, null);
  }

  @Override
  public <T extends TType> Operand<T> input(String name, Class<T> type, T defaultValue) {
    return tensor(name, type, null, true, Objects.requireNonNull(defaultValue, "defaultValue"));
  }

  @Override
  public <T extends TType> Operand<T> input(String name, Class<T> type, Shape shape, T defaultValue) {
    return tensor(name, type, Objects.requireNonNull(shape, "shape"), true,
        Objects.requireNonNull(defaultValue, "defaultValue"));
  }

  private <T extends TType> Operand<T> tensor(String name, Class<T> type, Shape shape, boolean optional, T def) {
    long[] spec = declare(new Param(name, Param.Kind.TENSOR, check(type), null, shape, optional, def));
    return placeholders.build(spec, 1);
  }

  @Override
  public List<Operand<?>> list(String name) {
    return Collections.unmodifiableList(new ArrayList<>(list(name, TType.class)));
  }

  @Override
  public <T extends TType> List<Operand<T>> list(String name, Class<T> type) {
    long[] spec = declare(new Param(name, Param.Kind.LIST, check(type), null, null, false, null));
    List<Operand<T>> result = new ArrayList<>();
    int at = 1;
    for (int i = 0; i < spec[0]; i++) {
      result.add(placeholders.build(spec, at));
      at += 2 + Math.max(0, (int) spec[at + 1]);
    }
    return Collections.unmodifiableList(result);
  }

  @Override
  public Map<String, Operand<?>> map(String name) {
    return Collections.unmodifiableMap(new LinkedHashMap<>(map(name, TType.class)));
  }

  @Override
  public <T extends TType> Map<String, Operand<T>> map(String name, Class<T> type) {
    Param p = new Param(name, Param.Kind.MAP, check(type), null, null, false, null);
    long[] spec = declare(p);
    Object value = Arguments.valueFor(p, args.asMap());
    String[] keys = Arguments.sortedKeys(p, (Map<?, ?>) value);
    Map<String, Operand<T>> result = new LinkedHashMap<>();
    int at = 1;
    for (int i = 0; i < spec[0]; i++) {
      result.put(keys[i], placeholders.build(spec, at));
      at += 2 + Math.max(0, (int) spec[at + 1]);
    }
    return Collections.unmodifiableMap(result);
  }

  @Override
  public Nest nest(String name) {
    Param p = new Param(name, Param.Kind.NEST, null, null, null, false, null);
    long[] spec = declare(p);
    return nestView(name, Arguments.valueFor(p, args.asMap()), spec);
  }

  @Override
  public <R extends Record> RecordInput<R> record(String name, Class<R> type) {
    Objects.requireNonNull(type, "type");
    Records.of(type);
    Param p = new Param(name, Param.Kind.NEST, null, type, null, false, null);
    Object value = Arguments.valueFor(p, args.asMap());
    if (value != null && !type.isInstance(value)) {
      throw new IllegalArgumentException("argument '" + name + "': expected a record " + type.getName() + ", got "
          + value.getClass().getName());
    }
    long[] spec = declare(p);
    return new RecordInput<>(type, type.cast(value), nestView(name, value, spec));
  }

  @Override
  public <B> B composite(String name, CompositeType<?, B> type) {
    Objects.requireNonNull(type, "type");
    Param p = new Param(name, Param.Kind.NEST, null, null, null, false, null);
    Object value = Arguments.valueFor(p, args.asMap());
    CompositeRegistry.checkArgument(name, value, type);
    long[] spec = declare(p);
    return nestView(name, value, spec).composite(type.viewClass());
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public <T extends TType> SparseOperand<T> sparse(String name, Class<T> type) {
    Objects.requireNonNull(type, "type");
    SparseOperand<?> s = composite(name, (CompositeType<?, SparseOperand>) CompositeRegistry.forValue(SparseTensor.class));
    if (!type.isAssignableFrom(s.values().type())) {
      throw new IllegalArgumentException("argument '" + name + "': expected a SparseTensor of " + type.getSimpleName()
          + " values, got " + s.values().type().getSimpleName() + " values");
    }
    return (SparseOperand<T>) s;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public <T extends TType> RaggedOperand<T> ragged(String name, Class<T> type) {
    Objects.requireNonNull(type, "type");
    RaggedOperand<?> r = composite(name, (CompositeType<?, RaggedOperand>) CompositeRegistry.forValue(RaggedTensor.class));
    if (!type.isAssignableFrom(r.flatValues().type())) {
      throw new IllegalArgumentException("argument '" + name + "': expected a RaggedTensor of " + type.getSimpleName()
          + " values, got " + r.flatValues().type().getSimpleName() + " values");
    }
    return (RaggedOperand<T>) r;
  }

  /** The body's view of nested argument {@code value}, its tensors the placeholders of {@code spec}. */
  private Nest nestView(String name, Object value, long[] spec) {
    int[] at = {1};
    int[] left = {(int) spec[0]};
    return Nest.build(name, value, () -> {
      if (left[0]-- <= 0) {
        throw new IllegalStateException("argument '" + name + "' has more tensors than its type has placeholders");
      }
      Operand<?> o = placeholders.build(spec, at[0]);
      at[0] += 2 + Math.max(0, (int) spec[at[0] + 1]);
      return o;
    });
  }

  @Override
  public <T> T javaInput(String name, Class<T> type) {
    return java(name, type, false, null);
  }

  @Override
  public <T> T javaInput(String name, Class<T> type, T defaultValue) {
    return java(name, type, true, Objects.requireNonNull(defaultValue, "defaultValue"));
  }

  @SuppressWarnings("unchecked")
  private <T> T java(String name, Class<T> type, boolean optional, T def) {
    Objects.requireNonNull(type, "type");
    Param p = new Param(name, Param.Kind.JAVA, null, type, null, optional, def);
    declare(p);
    return (T) Arguments.valueFor(p, args.asMap());
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
    checkTracing();
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
    checkTracing();
    Operand<? extends TType> known = capturedVariables.get(v);
    if (known != null) {
      return known;
    }
    int alias = Aliases.index(aliases.aliasOf(v));
    Capture c = Capture.of(v);
    CallBuffer facts = CallBuffer.fresh();
    facts.variable(v.dtypeCode(), v.dims(), alias, 0);
    long[] spec = Native.declareCapture(trace, c.name(), true, facts.facts(), facts.factCount());
    placeholders.at(Placeholders.CAPTURES, captures.size());
    captures.add(c);
    Operand<? extends TType> handle = spec[0] == 0 ? variableHandles.get(alias) : variableHandle(spec, v, alias);
    variableHandles.put(alias, handle);
    capturedVariables.put(v, handle);
    return handle;
  }

  @Override
  public <T extends TType> Variable<T> variable(String name, T initialValue) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(initialValue, "initialValue");
    @SuppressWarnings("unchecked")
    Variable<T> existing = (Variable<T>) function.namedVariable(name);
    if (existing != null) {
      return existing;
    }
    Variable<T> created = Variable.create(initialValue); // throws on a later trace
    function.nameVariable(name, created);
    return created;
  }

  @Override
  public <T extends TType> Operand<? extends TType> variableInput(String name, Class<T> type) {
    Param p = new Param(name, Param.Kind.VARIABLE, check(type), null, null, false, null);
    long[] spec = declare(p);
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
    Native.setHandleShape(TensorFlowInternals.graphAddress(graph), handle.op().name(), v.dtypeCode(), v.dims());
    return handle;
  }

  /** Declares {@code p} with the call's argument (or its default) and returns its placeholder specs. */
  private long[] declare(Param p) {
    checkTracing();
    Objects.requireNonNull(p.name(), "name");
    args.use(p.name());
    Object value = Arguments.valueFor(p, args.asMap());
    CallBuffer facts = CallBuffer.fresh();
    // Everything from the first argument tensor written (and so referenced) on is in the try:
    // whatever fails, the references are released and tensors made here closed.
    try {
      facts.useAliases(aliases);
      if (value != null) {
        Arguments.write(p, value, facts, interner, args.forCall());
        facts.handOverTemporaries(temporaries);
      }
      int rank = p.shape() == null ? Wire.SHAPE_UNDECLARED : p.shape().isUnknown() ? Wire.RANK_UNKNOWN : p.shape().numDimensions();
      long[] dims = rank > 0 ? p.shape().asArray() : new long[0];
      int[] dtypes = p.tensorType() == null ? new int[0] : DataTypes.accepted(p.tensorType());
      String javaClass = p.javaClass() == null || p.kind() == Param.Kind.NEST ? null : p.javaClass().getName();
      if (inference != null) {
        inference.infer(p, function.address(), interner);
      }
      long[] spec = Native.declareParameter(trace, p.name(), p.kind().wire, p.optional(), dtypes, rank, dims, javaClass,
          facts.facts(), facts.factCount());
      placeholders.at(Placeholders.PARAMETERS, declared.size());
      declared.add(p);
      return spec;
    } finally {
      facts.release();
    }
  }

  private static <T extends TType> Class<T> check(Class<T> type) {
    return Objects.requireNonNull(type, "type");
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

  /** Closes tensors made from Java numbers while tracing. */
  public void close() {
    finished = true;
    temporaries.closeTemporaries();
  }

  /**
   * Refuses a declaration made after the trace ended (a body that kept its {@code Inputs}) or from
   * another thread: the native trace it would write to is freed, or in use by the tracing thread.
   */
  private void checkTracing() {
    if (finished || Thread.currentThread() != owner) {
      throw new IllegalStateException("the Inputs of function '" + function.name() + "' were used "
          + (finished ? "after its trace ended" : "from another thread than the one tracing it")
          + ": declare parameters and captures only inside the body, on the thread that runs it");
    }
  }

  /** The function this trace belongs to. */
  public FunctionCore function() {
    return function;
  }
}
