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
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.Wire;
import dev.polyfn.internal.structure.CompositeRegistry;
import dev.polyfn.internal.structure.Records;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * The {@link Inputs} a body sees when its function runs eagerly (see {@link EagerCall}): each
 * declaration is checked as a trace checks it (the argument's facts declared to a native trace
 * session that is never finished, so the messages are the same and nothing is traced), and
 * returns the call's own tensors as eager operands, fed as tensor handles.
 */
public final class EagerInputs implements Inputs {
  private final FunctionCore function;
  private final long trace;
  private final Ops tf;
  private final Arguments.Lookup args;
  private final Thread owner = Thread.currentThread();
  /** Traces in progress on this thread when the call began: one begun later is inner to it. */
  private final int tracesOutside;
  private volatile boolean finished;
  private final CallBuffer temporaries = CallBuffer.fresh();
  private final Aliases aliases = new Aliases();
  private final Set<String> declared = new LinkedHashSet<>();
  private int captures;

  EagerInputs(FunctionCore function, long trace, Ops tf, Arguments.Lookup args) {
    this.function = function;
    this.trace = trace;
    this.tf = tf;
    this.args = args;
    this.tracesOutside = Tracing.activeTraces();
  }

  int tracesOutside() {
    return tracesOutside;
  }

  /** The function whose body runs. */
  public FunctionCore function() {
    return function;
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

  @SuppressWarnings("unchecked")
  private <T extends TType> Operand<T> tensor(String name, Class<T> type, Shape shape, boolean optional, T def) {
    return (Operand<T>) declare(new Param(name, Param.Kind.TENSOR, check(type), null, shape, optional, def)).get(0);
  }

  @Override
  public List<Operand<?>> list(String name) {
    return Collections.unmodifiableList(new ArrayList<>(list(name, TType.class)));
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public <T extends TType> List<Operand<T>> list(String name, Class<T> type) {
    return Collections.unmodifiableList(
        (List) declare(new Param(name, Param.Kind.LIST, check(type), null, null, false, null)));
  }

  @Override
  public Map<String, Operand<?>> map(String name) {
    return Collections.unmodifiableMap(new LinkedHashMap<>(map(name, TType.class)));
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends TType> Map<String, Operand<T>> map(String name, Class<T> type) {
    Param p = new Param(name, Param.Kind.MAP, check(type), null, null, false, null);
    List<Operand<?>> operands = declare(p);
    String[] keys = Arguments.sortedKeys(p, (Map<?, ?>) Arguments.valueFor(p, args.asMap()));
    Map<String, Operand<T>> result = new LinkedHashMap<>();
    for (int i = 0; i < keys.length; i++) {
      result.put(keys[i], (Operand<T>) operands.get(i));
    }
    return Collections.unmodifiableMap(result);
  }

  @Override
  public Nest nest(String name) {
    Param p = new Param(name, Param.Kind.NEST, null, null, null, false, null);
    List<Operand<?>> operands = declare(p);
    return nestView(name, Arguments.valueFor(p, args.asMap()), operands);
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
    List<Operand<?>> operands = declare(p);
    return new RecordInput<>(type, type.cast(value), nestView(name, value, operands));
  }

  @Override
  public <B> B composite(String name, CompositeType<?, B> type) {
    Objects.requireNonNull(type, "type");
    Param p = new Param(name, Param.Kind.NEST, null, null, null, false, null);
    Object value = Arguments.valueFor(p, args.asMap());
    CompositeRegistry.checkArgument(name, value, type);
    List<Operand<?>> operands = declare(p);
    return nestView(name, value, operands).composite(type.viewClass());
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

  /** The body's view of nested argument {@code value}, its tensors the call's, in the order they were fed. */
  private Nest nestView(String name, Object value, List<Operand<?>> operands) {
    Iterator<Operand<?>> next = operands.iterator();
    return Nest.build(name, value, () -> {
      if (!next.hasNext()) {
        throw new IllegalStateException("argument '" + name + "' has more tensors than its type has placeholders");
      }
      return next.next();
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
    checkRunning();
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
    checkRunning();
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
  public <T extends TType> Variable<T> variable(String name, T initialValue) {
    checkRunning();
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(initialValue, "initialValue");
    @SuppressWarnings("unchecked")
    Variable<T> existing = (Variable<T>) function.namedVariable(name);
    if (existing != null) {
      return existing;
    }
    Variable<T> created = Variable.create(initialValue); // adopted by the function (Tracing's hooks)
    function.nameVariable(name, created);
    return created;
  }

  @Override
  public <T extends TType> Operand<? extends TType> variableInput(String name, Class<T> type) {
    Param p = new Param(name, Param.Kind.VARIABLE, check(type), null, null, false, null);
    declare(p);
    return ((Variable<?>) Arguments.valueFor(p, args.asMap())).handle(tf);
  }

  /**
   * Declares {@code p} to the native trace session (which checks the argument as a trace does)
   * and returns the argument's tensors as eager operands, in the order a traced call feeds them.
   */
  private List<Operand<?>> declare(Param p) {
    checkRunning();
    Objects.requireNonNull(p.name(), "name");
    args.use(p.name());
    Object value = Arguments.valueFor(p, args.asMap());
    CallBuffer facts = CallBuffer.fresh();
    try {
      facts.useAliases(aliases);
      if (value != null) {
        Arguments.write(p, value, facts, function.interner(), true);
        facts.handOverTemporaries(temporaries);
      }
      int rank = p.shape() == null ? Wire.SHAPE_UNDECLARED : p.shape().isUnknown() ? Wire.RANK_UNKNOWN : p.shape().numDimensions();
      long[] dims = rank > 0 ? p.shape().asArray() : new long[0];
      int[] dtypes = p.tensorType() == null ? new int[0] : DataTypes.accepted(p.tensorType());
      String javaClass = p.javaClass() == null || p.kind() == Param.Kind.NEST ? null : p.javaClass().getName();
      Native.declareParameter(trace, p.name(), p.kind().wire, p.optional(), dtypes, rank, dims, javaClass,
          facts.facts(), facts.factCount());
      declared.add(p.name());
      List<Operand<?>> operands = new ArrayList<>();
      for (int i = 0; i < facts.tensorCount(); i++) {
        Operand<?> o = facts.eagerOperand(i);
        if (o != null) {
          operands.add(o);
        }
      }
      return operands;
    } finally {
      facts.release();
    }
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

  private static <T extends TType> Class<T> check(Class<T> type) {
    return Objects.requireNonNull(type, "type");
  }

  /** Closes the tensors made from Java numbers; later declarations are refused. */
  void close() {
    finished = true;
    temporaries.closeTemporaries();
  }

  /**
   * Refuses a declaration made after the call ended (a body that kept its {@code Inputs}) or from
   * another thread: the native session it would write to is freed, or in use by the calling thread.
   */
  private void checkRunning() {
    if (finished || Thread.currentThread() != owner) {
      throw new IllegalStateException("the Inputs of function '" + function.name() + "' were used "
          + (finished ? "after its eager call ended" : "from another thread than the one running it eagerly")
          + ": declare parameters and captures only inside the body, on the thread that runs it");
    }
  }
}
