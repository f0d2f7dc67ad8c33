package dev.polyfn;

import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.NativeLibrary;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.VariableTracing;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.DataType;
import org.tensorflow.op.Op;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.AssignVariableOp;
import org.tensorflow.op.core.ReadVariableOp;
import org.tensorflow.op.core.VarHandleOp;
import org.tensorflow.types.family.TType;

/**
 * A resource variable in TensorFlow's eager context (TensorFlow Java has none): state that
 * functions read and update in place, shared by every function that uses it and by eager code.
 *
 * <pre>{@code
 * try (Variable<TFloat32> counter = Variable.create(TFloat32.scalarOf(0f));
 *      SingleFunction increment = Function.defineSingle((tf, in) -> {
 *        Operand<TFloat32> next = tf.math.add(counter.read(tf), tf.constant(1f));
 *        counter.assign(tf, next);   // an effect: runs at every call
 *        return next;
 *      })) {
 *   increment.call(Map.of()).close();
 *   counter.value().getFloat();      // 1.0, seen by eager code
 * }
 * }</pre>
 *
 * <p>Inside a body, {@link #read(Ops)} and {@link #assign(Ops, Operand)} capture the variable by
 * its handle (no copy): every call sees its current value, and an assignment made by one call is
 * seen by the next call, by eager code and by every other function. The same variable used twice
 * in a body is one graph input. Outside a trace the same methods run eagerly. Within one call,
 * uses of a variable run in program order (a read after an assignment sees it), in the body and in
 * {@link Flow} branches and loop bodies, as with {@code tf.function}'s automatic control
 * dependencies.
 *
 * <p>A variable created while a body is traced is created once, in the eager context (as {@code
 * tf.function}'s init scope), on the function's first trace, and belongs to the function (closed
 * with it); creating one on a later trace throws {@link IllegalStateException}. Close variables
 * you create outside bodies.
 */
public final class Variable<T extends TType> implements AutoCloseable {
  private static final AtomicLong NEXT_ID = new AtomicLong();
  private static final AtomicLong LIVE = new AtomicLong();
  /** {@code ResourceHandle::ANONYMOUS_NAME}: a new resource per run of {@code VarHandleOp}. */
  private static final String ANONYMOUS_NAME = "cd2c89b7-88b7-44c8-ad83-06c2a9158347";

  private final long id;
  private final Class<T> type;
  private final Shape shape;
  /** Fixed at creation and written into every call's facts: computed once. */
  private final int dtypeCode;
  /** The declared shape's dims (-1 for an unknown size), null for an unknown rank. */
  private final long[] dims;
  private final Ops eager;
  private final Operand<? extends TType> handle;
  /** The resource handle resolved to a {@code TF_Tensor} (owned), fed to functions at each call. */
  private final long resource;
  private volatile boolean closed;
  /** The function that owns the variable and closes it with itself, if one does (for messages). */
  private volatile String owner;
  /** Taken by the one {@link #close()} that releases the variable. */
  private final AtomicBoolean closing = new AtomicBoolean();
  /** Uses of the resource: the owner's (until {@link #close()}) and each call's that feeds it. */
  private final AtomicInteger uses = new AtomicInteger(1);
  private final Runnable releaseUse = this::releaseUse;

  /**
   * A variable of {@code dtype}, whose values are of tensor class {@code type} ({@code TType} for
   * a dtype TensorFlow Java has none for), of declared {@code shape}, holding {@code initialValue}
   * (an eager operand, made once creation is allowed).
   */
  private Variable(Class<T> type, DataType dtype, Shape shape, Supplier<Operand<?>> initialValue) {
    NativeLibrary.ensureLoaded();
    VariableTracing.hooks().checkCreationAllowed();
    this.id = NEXT_ID.incrementAndGet();
    this.type = type;
    this.shape = shape;
    this.dtypeCode = dtype.getNumber();
    this.dims = shape.isUnknown() ? null : shape.asArray();
    this.eager = Ops.create(EagerSession.getDefault());
    synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe, see EagerLock
      // TensorFlow's anonymous name: each run of the one cached VarHandleOp kernel makes a new,
      // uniquely named resource (as Python's eager variables do). A name of its own per variable
      // would cache a kernel per variable in the eager context, kept after the variable is closed.
      this.handle = type == TType.class
          ? eager.scope().opBuilder(VarHandleOp.OP_NAME, "VarHandleOp").setAttr("dtype", dtype).setAttr("shape", shape)
              .setAttr("shared_name", ANONYMOUS_NAME).build().output(0)
          : eager.varHandleOp(type, shape, VarHandleOp.sharedName(ANONYMOUS_NAME)).resource();
      this.resource = Native.resolveHandle(TensorFlowInternals.eagerOutputHandle(handle));
      eager.assignVariableOp(handle, initialValue.get()); // Polyfn's suppliers only: no user code
    }
    LIVE.incrementAndGet();
    VariableTracing.hooks().adoptCreated(this);
  }

  /**
   * A variable holding a copy of {@code initialValue}, with its dtype and shape. The caller keeps
   * ownership of {@code initialValue}.
   *
   * @throws IllegalStateException when called while a function is traced again (not its first trace)
   */
  @SuppressWarnings("unchecked")
  public static <T extends TType> Variable<T> create(T initialValue) {
    Objects.requireNonNull(initialValue, "initialValue");
    return new Variable<>((Class<T>) initialValue.type(), initialValue.dataType(), initialValue.shape(),
        () -> TensorFlowInternals.eagerInput(initialValue));
  }

  /**
   * A variable restored from a SavedModel: holding {@code initialValue} (an eager operand, a
   * checkpoint's value) of {@code dtype}, whose declared shape is {@code shape}, which may leave
   * sizes or the rank unknown, as a Python variable created with {@code shape=None} or {@code
   * shape=[None, 3]} does: functions dispatch on the declared shape, and the value may be assigned
   * any shape the declared one accepts. A dtype TensorFlow Java has no tensor class for (int8,
   * int16, uint32, uint64, complex numbers) makes a variable whose {@link #type()} is {@code
   * TType}: functions capture, read and assign it, {@link #value()} refuses it.
   *
   * @throws IllegalArgumentException when {@code shape} does not accept {@code initialValue}'s shape
   *
   * {@hidden}
   */
  public static Variable<?> restored(Operand<?> initialValue, DataType dtype, Shape shape) {
    Objects.requireNonNull(initialValue, "initialValue");
    Objects.requireNonNull(shape, "shape");
    if (!accepts(shape.isUnknown() ? null : shape.asArray(), initialValue.shape())) {
      throw new IllegalArgumentException("a variable of shape " + shape + " cannot hold a value of shape "
          + initialValue.shape());
    }
    Class<? extends TType> type = DataTypes.hasTensorClass(dtype) ? DataTypes.tensorClass(dtype) : TType.class;
    return new Variable<>(type, dtype, shape, () -> initialValue);
  }

  /**
   * The tensor class of the variable's values, e.g. {@code TFloat32.class}; {@code TType.class}
   * for a variable restored from a SavedModel with a dtype TensorFlow Java has no class for (see
   * {@link #value()}).
   */
  public Class<T> type() {
    return type;
  }

  /**
   * The variable's shape, fixed when it was created: its value's, or for a variable restored from
   * a Python SavedModel the shape Python declared, whose sizes or rank may be unknown.
   */
  public Shape shape() {
    return shape;
  }

  /**
   * The variable's current value, read eagerly. The tensor belongs to TensorFlow Java's default
   * eager session (released with it); do not close it.
   */
  @SuppressWarnings("unchecked")
  public T value() {
    if (type == TType.class) {
      throw new UnsupportedOperationException("variable " + id + " holds " + DataType.forNumber(dtypeCode)
          + ", which TensorFlow Java has no tensor class for: read it in a body (read(tf)) and cast it");
    }
    // A use held for the read, as a call holds one: a concurrent close empties the variable after it.
    return held(() -> (T) eager.readVariableOp(handle, type).asTensor());
  }

  /**
   * Assigns {@code value} eagerly (a copy of it).
   *
   * @throws IllegalArgumentException when {@code value} has another shape: a variable keeps the
   *     shape it was created with (functions dispatch and are traced on it), as Python's does
   */
  public void assign(T value) {
    Objects.requireNonNull(value, "value");
    checkAssignable(value.dataType(), value.shape());
    // Held for the assignment: one run after a close's emptying would put the memory back.
    held(() -> eager.assignVariableOp(handle, TensorFlowInternals.eagerInput(value)));
  }

  /**
   * Reads the variable in {@code tf}'s environment: inside a traced body, a read of the captured
   * variable at each call; with eager {@code Ops}, the current value.
   */
  public Operand<T> read(Ops tf) {
    if (!tf.scope().env().isEager()) {
      return readOp(tf, handle(tf));
    }
    return held(() -> readOp(tf, handle)); // eager: it runs now, held as value() is
  }

  /** A ReadVariableOp of {@code h}; of the dtype itself where TensorFlow Java has no class for it. */
  @SuppressWarnings("unchecked")
  private Operand<T> readOp(Ops tf, Operand<? extends TType> h) {
    if (type == TType.class) {
      return (Operand<T>) tf.scope().opBuilder(ReadVariableOp.OP_NAME, "ReadVariableOp").addInput(h.asOutput())
          .setAttr("dtype", DataType.forNumber(dtypeCode)).build().output(0);
    }
    return tf.readVariableOp(h, type);
  }

  /**
   * Assigns {@code value} in {@code tf}'s environment: inside a traced body, an assignment that runs
   * at every call (the function's effect); with eager {@code Ops}, at once.
   *
   * @throws IllegalArgumentException when {@code value}'s shape is known to differ from the
   *     variable's; a traced assignment of a value whose shape is known only at the call checks
   *     it then (the call fails and the variable keeps its value)
   */
  public Op assign(Ops tf, Operand<T> value) {
    checkAssignable(value.asOutput().dataType(), value.shape());
    if (!tf.scope().env().isEager()) {
      // TensorFlow compares a validated assignment with the value held, not the declared shape: as
      // Python, validate only a fully known shape (unknown sizes were checked against the declared).
      return tf.assignVariableOp(handle(tf), value, AssignVariableOp.validateShape(fullyKnown(dims)));
    }
    return held(() -> tf.assignVariableOp(handle, value)); // eager: it runs now, held as assign(T) is
  }

  /**
   * Refuses a value of another dtype (possible only for a variable of a dtype TensorFlow Java has
   * no class for: its type parameter is {@code TType}) or whose shape is known to differ from the
   * variable's (unknown sizes may fit).
   */
  private void checkAssignable(DataType dtype, Shape value) {
    if (dtype.getNumber() != dtypeCode) {
      throw new IllegalArgumentException("variable " + id + " holds " + DataType.forNumber(dtypeCode)
          + ": cannot assign a value of " + dtype);
    }
    if (!accepts(dims, value)) {
      throw new IllegalArgumentException("variable " + id + " has shape " + shape + ": cannot assign a value of shape "
          + value + " (a variable keeps the shape it was created with)");
    }
  }

  /** Whether {@code dims} (null: an unknown rank; -1: an unknown size) is a fully known shape. */
  private static boolean fullyKnown(long[] dims) {
    if (dims == null) {
      return false;
    }
    for (long d : dims) {
      if (d < 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether a variable of {@code dims} (null: unknown rank; -1: unknown size) may hold a value of shape {@code value}. */
  private static boolean accepts(long[] dims, Shape value) {
    if (dims == null || value.isUnknown()) {
      return true;
    }
    boolean fits = value.numDimensions() == dims.length;
    for (int i = 0; fits && i < dims.length; i++) {
      fits = value.size(i) < 0 || dims[i] < 0 || value.size(i) == dims[i];
    }
    return fits;
  }

  /**
   * Runs eager {@code work} on the handle holding a use, so that a concurrent close waits for it,
   * and under {@link EagerLock} (TensorFlow Java's eager session is not thread-safe).
   */
  private <R> R held(java.util.function.Supplier<R> work) {
    retainResource();
    try {
      synchronized (EagerLock.LOCK) {
        return work.get();
      }
    } finally {
      releaseUse();
    }
  }

  /**
   * The variable's resource handle in {@code tf}'s environment, for ops Polyfn has no shortcut
   * for ({@code tf.assignAddVariableOp(v.handle(tf), delta)}). An eager handle is the variable's
   * own: use it only while the variable is open. {@link #close} gives the value's memory back at
   * once (TensorFlow keeps the variable itself while any handle refers to it), so an op run on
   * the handle afterwards reads an empty value of shape [0] instead of failing.
   */
  public Operand<? extends TType> handle(Ops tf) {
    check();
    if (tf.scope().env().isEager()) {
      return handle;
    }
    return VariableTracing.hooks().capture(tf, this);
  }

  /** {@hidden} */
  public long id() {
    return id;
  }

  /** {@hidden} */
  public int dtypeCode() {
    return dtypeCode;
  }

  /** The shape's dims, -1 for an unknown size, null for an unknown rank (callers must not modify the array). {@hidden} */
  public long[] dims() {
    return dims;
  }

  /**
   * The address of the resolved resource tensor, fed to functions by handle, with a use of the
   * resource taken for the call: a concurrent {@link #close()} frees nothing until the call gives
   * it back ({@link #releaser()}).
   *
   * @throws IllegalStateException if the variable is closed
   *
   * {@hidden}
   */
  public long retainResource() {
    for (int n = uses.get(); n > 0; n = uses.get()) {
      if (uses.compareAndSet(n, n + 1)) {
        return resource;
      }
    }
    throw new IllegalStateException(closedMessage());
  }

  /** Gives back a use taken by {@link #retainResource()}. {@hidden} */
  public Runnable releaser() {
    return releaseUse;
  }

  /**
   * Gives back one use; the last frees the variable's memory. (Not with {@code DestroyResourceOp}:
   * an anonymous variable lives as long as any tensor holding its handle, TensorFlow Java's eager
   * operations among them until they are collected, and destroying it does nothing.)
   */
  private void releaseUse() {
    if (uses.decrementAndGet() == 0) {
      try {
        Native.releaseVariable(resource, dtypeCode);
      } finally {
        LIVE.decrementAndGet();
      }
    }
  }

  /**
   * Destroys the variable's resource: its memory is given back at once (once no call in flight
   * uses it), even while this object or functions that took or captured it live on. Idempotent;
   * later use throws {@link IllegalStateException} ({@link IllegalArgumentException} when the
   * variable is passed to a function).
   */
  @Override
  public void close() {
    // Once, whichever thread closes first: destroying and deleting twice would free twice.
    if (closing.compareAndSet(false, true)) {
      closed = true;
      releaseUse(); // the owner's use; calls in flight hold theirs
    }
  }

  /** Notes that function {@code function} owns this variable and closes it with itself. {@hidden} */
  public void ownedBy(String function) {
    owner = function;
  }

  /** Why the variable cannot be used: closed, and by whom when a function owned it. */
  private String closedMessage() {
    return "variable " + id + " (" + this + ") is closed" + (owner == null ? "" : ": function '" + owner + "' owned"
        + " it (its body created it, or it was loaded with it) and closed it when it was closed; functions that call '"
        + owner + "' use it, so their calls fail too");
  }

  /** {@hidden} */
  public boolean isClosed() {
    return closed;
  }

  private void check() {
    if (closed) {
      throw new IllegalStateException(closedMessage());
    }
  }

  /** Variables created and not closed, in this process. */
  static long live() {
    return LIVE.get();
  }

  @Override
  public String toString() {
    String dtype = type == TType.class ? DataType.forNumber(dtypeCode).name() : type.getSimpleName();
    return "Variable(" + dtype + ", " + shape + (closed ? ", closed" : "") + ")";
  }
}
