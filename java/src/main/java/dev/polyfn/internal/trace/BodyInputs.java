package dev.polyfn.internal.trace;

import dev.polyfn.CompositeSpec;
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
import dev.polyfn.internal.Wire;
import dev.polyfn.internal.structure.CompositeRegistry;
import dev.polyfn.internal.structure.Records;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TType;

/**
 * The parameter declarations every {@link Inputs} a body sees shares, whether the body is traced
 * ({@link TracingInputs}) or runs eagerly ({@link EagerInputs}): each declaration writes the
 * call's argument facts and declares them to a native trace session, which checks them (so both
 * give the same messages). Only where a parameter's operands come from differs: placeholders built
 * from the returned specs when tracing, the call's own tensors fed as handles when eager.
 */
abstract class BodyInputs implements Inputs {
  protected final FunctionCore function;
  protected final long trace;
  protected final Arguments.Lookup args;
  /** Variable alias numbering shared by every declaration of this run of the body. */
  protected final Aliases aliases = new Aliases();
  /** Tensors made from Java numbers while the body runs, closed when it ends. */
  protected final CallBuffer temporaries = CallBuffer.fresh();
  /** The thread running the body; declarations from any other are refused. */
  private final Thread owner = Thread.currentThread();
  /** Set when the body's run ends: its native state is freed, so later declarations are refused. */
  private volatile boolean finished;
  /** What ended ("its trace") and what the owning thread does ("tracing it"), for the misuse message. */
  private final String run;
  private final String ownerDoes;

  BodyInputs(FunctionCore function, long trace, Arguments.Lookup args, String run, String ownerDoes) {
    this.function = function;
    this.trace = trace;
    this.args = args;
    this.run = run;
    this.ownerDoes = ownerDoes;
  }

  /**
   * The operands of one declared parameter, in the order a call feeds them: {@link #count()} of
   * them, each taken by {@link #next()}, and the spec of a composite among them ({@link
   * #traced}), as a nest view takes them.
   */
  protected interface Operands extends Nest.Placeholders {
    /** How many tensors the parameter has. */
    int count();
  }

  /** The parameter's operands, once the native trace accepted its declaration (spec) and facts. */
  protected abstract Operands operandsOf(Param p, long[] spec, CallBuffer facts);

  /** The interner the argument's facts are written with. */
  protected abstract Interner interner();

  /** Whether the arguments belong to a call (their tensors are fed) rather than to an inferred signature. */
  protected abstract boolean forCall();

  /** Called before a parameter is declared, once its facts are written. */
  protected void beforeDeclare(Param p) {}

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
    return (Operand<T>) declare(new Param(name, Param.Kind.TENSOR, check(type), null, shape, optional, def)).next();
  }

  @Override
  public List<Operand<?>> list(String name) {
    return Collections.unmodifiableList(new ArrayList<>(list(name, TType.class)));
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends TType> List<Operand<T>> list(String name, Class<T> type) {
    Operands operands = declare(new Param(name, Param.Kind.LIST, check(type), null, null, false, null));
    List<Operand<T>> result = new ArrayList<>();
    for (int i = 0; i < operands.count(); i++) {
      result.add((Operand<T>) operands.next());
    }
    return Collections.unmodifiableList(result);
  }

  @Override
  public Map<String, Operand<?>> map(String name) {
    return Collections.unmodifiableMap(new LinkedHashMap<>(map(name, TType.class)));
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends TType> Map<String, Operand<T>> map(String name, Class<T> type) {
    Param p = new Param(name, Param.Kind.MAP, check(type), null, null, false, null);
    Operands operands = declare(p);
    String[] keys = Arguments.sortedKeys(p, (Map<?, ?>) Arguments.valueFor(p, args.asMap()));
    Map<String, Operand<T>> result = new LinkedHashMap<>();
    for (int i = 0; i < operands.count(); i++) {
      result.put(keys[i], (Operand<T>) operands.next());
    }
    return Collections.unmodifiableMap(result);
  }

  @Override
  public Nest nest(String name) {
    Param p = new Param(name, Param.Kind.NEST, null, null, null, false, null);
    Operands operands = declare(p);
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
    Operands operands = declare(p);
    return new RecordInput<>(type, type.cast(value), nestView(name, value, operands));
  }

  @Override
  public <B> B composite(String name, CompositeType<?, B> type) {
    Objects.requireNonNull(type, "type");
    Param p = new Param(name, Param.Kind.NEST, null, null, null, false, null);
    Object value = Arguments.valueFor(p, args.asMap());
    CompositeRegistry.checkArgument(name, value, type);
    Operands operands = declare(p);
    return nestView(name, value, operands).composite(type.viewClass());
  }

  @Override
  public <T extends TType> SparseOperand<T> sparse(String name, Class<T> type) {
    return builtIn(name, SparseTensor.class, "SparseTensor", type, s -> ((SparseOperand<?>) s).values());
  }

  @Override
  public <T extends TType> RaggedOperand<T> ragged(String name, Class<T> type) {
    return builtIn(name, RaggedTensor.class, "RaggedTensor", type, r -> ((RaggedOperand<?>) r).flatValues());
  }

  /**
   * A parameter of a built-in composite ({@code valueClass}: a SparseTensor or RaggedTensor),
   * whose {@code values} must be of tensor type {@code type}.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private <V> V builtIn(String name, Class<?> valueClass, String what, Class<? extends TType> type,
      java.util.function.Function<Object, Operand<?>> values) {
    Objects.requireNonNull(type, "type");
    Object view = composite(name, (CompositeType) CompositeRegistry.forValue(valueClass));
    Class<?> got = values.apply(view).type();
    if (!type.isAssignableFrom(got)) {
      throw new IllegalArgumentException("argument '" + name + "': expected a " + what + " of " + type.getSimpleName()
          + " values, got " + got.getSimpleName() + " values");
    }
    return (V) view;
  }

  /** The body's view of nested argument {@code value}, its tensors the parameter's operands. */
  private static Nest nestView(String name, Object value, Operands operands) {
    int[] left = {operands.count()};
    return Nest.build(name, value, new Nest.Placeholders() {
      @Override
      public Operand<?> next() {
        if (left[0]-- <= 0) {
          throw new IllegalStateException("argument '" + name + "' has more tensors than its type has placeholders");
        }
        return operands.next();
      }

      @Override
      public CompositeSpec traced(CompositeSpec call, List<Operand<?>> components) {
        return operands.traced(call, components);
      }
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
  public <T extends TType> Variable<T> variable(String name, T initialValue) {
    checkActive();
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(initialValue, "initialValue");
    @SuppressWarnings("unchecked")
    Variable<T> existing = (Variable<T>) function.namedVariables().get(name);
    if (existing != null) {
      // One restored from a SavedModel written by another body may differ from this declaration.
      if (function.namedVariables().isRestored(name) && (existing.dtypeCode() != DataTypes.code(initialValue.type())
          || !dev.polyfn.internal.ShapeValues.equal(existing.shape(), initialValue.shape()))) {
        throw new IllegalStateException("function '" + function.name() + "': variable '" + name + "' is "
            + existing + " (restored from the SavedModel it was loaded from), but the body creates it as "
            + initialValue.type().getSimpleName() + " of shape " + initialValue.shape() + "; load it with the body"
            + " that saved it");
      }
      return existing;
    }
    // Refused on a later trace; adopted by the function either way (Tracing's hooks).
    Variable<T> created = Variable.create(initialValue);
    function.namedVariables().put(name, created);
    return created;
  }

  /** Declares {@code p} with the call's argument (or its default) and returns its operands. */
  protected final Operands declare(Param p) {
    checkActive();
    Objects.requireNonNull(p.name(), "name");
    args.use(p.name());
    Object value = Arguments.valueFor(p, args.asMap());
    CallBuffer facts = CallBuffer.fresh();
    // Everything from the first argument tensor written (and so referenced) on is in the try:
    // whatever fails, the references are released and tensors made here closed.
    try {
      facts.useAliases(aliases);
      if (value != null) {
        Arguments.write(p, value, facts, interner(), forCall());
        facts.handOverTemporaries(temporaries);
      }
      int rank = p.shape() == null ? Wire.SHAPE_UNDECLARED : p.shape().isUnknown() ? Wire.RANK_UNKNOWN : p.shape().numDimensions();
      long[] dims = rank > 0 ? p.shape().asArray() : new long[0];
      int[] dtypes = p.tensorType() == null ? new int[0] : DataTypes.accepted(p.tensorType());
      String javaClass = p.javaClass() == null || p.kind() == Param.Kind.NEST ? null : p.javaClass().getName();
      beforeDeclare(p);
      long[] spec = Native.declareParameter(trace, p.name(), p.kind().wire, p.optional(), dtypes, rank, dims, javaClass,
          facts.facts(), facts.factCount());
      return operandsOf(p, spec, facts);
    } finally {
      facts.release();
    }
  }

  protected static <T extends TType> Class<T> check(Class<T> type) {
    return Objects.requireNonNull(type, "type");
  }

  /** Closes the tensors made from Java numbers; later declarations are refused. */
  public void close() {
    finished = true;
    temporaries.closeTemporaries();
  }

  /**
   * Refuses a declaration made after the body's run ended (a body that kept its {@code Inputs}) or
   * from another thread: the native session it would write to is freed, or in use by the owner.
   */
  protected final void checkActive() {
    if (finished || Thread.currentThread() != owner) {
      throw new IllegalStateException("the Inputs of function '" + function.name() + "' were used "
          + (finished ? "after " + run + " ended" : "from another thread than the one " + ownerDoes)
          + ": declare parameters and captures only inside the body, on the thread that runs it");
    }
  }
}
