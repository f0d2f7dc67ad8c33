package dev.polyfn.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import org.bytedeco.javacpp.PointerScope;
import org.tensorflow.EagerSession;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Operation;
import org.tensorflow.Output;
import org.tensorflow.RawTensor;
import org.tensorflow.Tensor;
import org.tensorflow.TensorFlow;
import org.tensorflow.internal.types.registry.TensorTypeInfo;
import org.tensorflow.internal.types.registry.TensorTypeRegistry;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.DataType;
import org.bytedeco.javacpp.Pointer;
import org.tensorflow.internal.c_api.TFE_Context;
import org.tensorflow.internal.c_api.TFE_Op;
import org.tensorflow.internal.c_api.TF_Status;
import org.tensorflow.internal.c_api.global.tensorflow;
import org.tensorflow.internal.c_api.TFE_TensorHandle;
import org.tensorflow.internal.c_api.TF_Graph;
import org.tensorflow.internal.c_api.TF_Operation;
import org.tensorflow.internal.c_api.TF_Tensor;
import org.tensorflow.types.family.TType;

/**
 * The one place that reaches TensorFlow Java's package-private native handles (tensor, eager
 * context, graph). Handles are looked up once (those of tensors and the context when Polyfn loads,
 * those only tracing uses at its first use); a TensorFlow Java without them fails here, with a
 * message naming the version Polyfn was built against.
 */
public final class TensorFlowInternals {
  /** The TensorFlow Java version Polyfn is built and tested against. */
  public static final String BUILT_AGAINST = "1.1.0";

  private static final MethodHandle TENSOR_HANDLE;
  private static final MethodHandle TENSOR_FROM_HANDLE;
  private static final MethodHandle TENSOR_AS_TYPED;
  /** {@code new RawTensor(typeInfo, shape)}, package-private: an output built from its description. */
  private static final MethodHandle NEW_RAW_TENSOR;
  /** {@code RawTensor.tensorHandle}, set on an output built from its description. */
  private static final VarHandle TENSOR_HANDLE_FIELD;
  /** {@code RawTensor.tensorScope}: an output's is replaced by an {@link OwnedScope}. */
  private static final VarHandle TENSOR_SCOPE;
  private static final MethodHandle CONTEXT_HANDLE;

  static {
    try {
      MethodHandles.Lookup raw = MethodHandles.privateLookupIn(RawTensor.class, MethodHandles.lookup());
      TENSOR_HANDLE = raw.findVirtual(RawTensor.class, "nativeHandle", MethodType.methodType(TF_Tensor.class));
      TENSOR_FROM_HANDLE =
          raw.findStatic(RawTensor.class, "fromHandle", MethodType.methodType(RawTensor.class, TF_Tensor.class));
      TENSOR_AS_TYPED = raw.findVirtual(RawTensor.class, "asTypedTensor", MethodType.methodType(TType.class));
      TENSOR_SCOPE = raw.findVarHandle(RawTensor.class, "tensorScope", PointerScope.class);
      NEW_RAW_TENSOR = raw.findConstructor(RawTensor.class, MethodType.methodType(void.class, TensorTypeInfo.class, Shape.class));
      TENSOR_HANDLE_FIELD = raw.findVarHandle(RawTensor.class, "tensorHandle", TF_Tensor.class);
      MethodHandles.Lookup eager = MethodHandles.privateLookupIn(EagerSession.class, MethodHandles.lookup());
      CONTEXT_HANDLE = eager.findVirtual(EagerSession.class, "nativeHandle", MethodType.methodType(TFE_Context.class));
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw unreachable(e);
    }
  }

  private static IllegalStateException unreachable(Exception e) {
    return new IllegalStateException(
        "Polyfn cannot reach TensorFlow Java's native handles (built against TensorFlow Java "
            + BUILT_AGAINST + ", running TensorFlow " + TensorFlow.version() + ")"
            + (NativeLibrary.missingModuleFlags().isEmpty() ? ""
                : ". Start the JVM with " + NativeLibrary.missingModuleFlags()) + ": " + e,
        e);
  }

  /**
   * The handles that only tracing, eager operands and eagerly run bodies use, looked up on their
   * first use: adapting them costs a fresh JVM some 3.5 ms, which a warm start or a load of
   * functions without variables (they trace nothing, feed no eager operation) need not pay. A
   * record's fields are constants to the JIT, as static ones are.
   *
   * @param newGraphOperation {@code GraphOperation(graph, operation)}, package-private
   * @param eagerOperation {@code EagerOperation}, package-private in TensorFlow Java
   * @param newEagerOperation {@code EagerOperation(session, op, outputs, type, name)}, package-private
   * @param sessionAttach {@code EagerSession.attach(Pointer...)}: the session frees what is attached to it
   */
  private record TracingHandles(MethodHandle graphHandle, MethodHandle newGraphOperation, Class<?> eagerOperation,
      MethodHandle eagerOutputHandle, MethodHandle newEagerOperation, MethodHandle sessionAttach) {

    /** The handles, or the failure to look them up (thrown, as a new exception, at each use). */
    private static final Object LOOKED_UP = lookUp();

    static TracingHandles get() {
      if (LOOKED_UP instanceof IllegalStateException failure) {
        throw new IllegalStateException(failure.getMessage(), failure);
      }
      return (TracingHandles) LOOKED_UP;
    }

    private static Object lookUp() {
      try {
        MethodHandles.Lookup eager = MethodHandles.privateLookupIn(EagerSession.class, MethodHandles.lookup());
        MethodHandles.Lookup graph = MethodHandles.privateLookupIn(Graph.class, MethodHandles.lookup());
        Class<?> eagerOperation = Class.forName("org.tensorflow.EagerOperation");
        return new TracingHandles(
            graph.findGetter(Graph.class, "nativeHandle", TF_Graph.class),
            graph.findConstructor(GraphOperation.class, MethodType.methodType(void.class, Graph.class, TF_Operation.class)),
            eagerOperation,
            eager.findVirtual(eagerOperation, "getUnsafeNativeHandle",
                    MethodType.methodType(TFE_TensorHandle.class, int.class))
                .asType(MethodType.methodType(TFE_TensorHandle.class, Operation.class, int.class)),
            eager.findConstructor(eagerOperation, MethodType.methodType(void.class, EagerSession.class,
                    TFE_Op.class, TFE_TensorHandle[].class, String.class, String.class))
                .asType(MethodType.methodType(Operation.class, EagerSession.class, TFE_Op.class,
                    TFE_TensorHandle[].class, String.class, String.class)),
            eager.findVirtual(EagerSession.class, "attach", MethodType.methodType(void.class, Pointer[].class)));
      } catch (ReflectiveOperationException | RuntimeException e) {
        return unreachable(e);
      }
    }
  }

  private TensorFlowInternals() {}

  /**
   * A tensor's {@code TF_Tensor} pointer, with a reference of Polyfn's own (see {@link
   * PointerReferences}); release it with {@link PointerReferences#release}.
   *
   * @throws IllegalStateException if the tensor is closed
   */
  public static TF_Tensor retainTensor(Tensor tensor) {
    TF_Tensor p;
    try {
      p = (TF_Tensor) TENSOR_HANDLE.invokeExact(tensor.asRawTensor());
    } catch (IllegalStateException e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("reading a tensor's native handle", t);
    }
    if (p == null || !PointerReferences.tryRetain(p)) {
      throw new IllegalStateException("the tensor is closed");
    }
    return p;
  }

  /**
   * Runs {@code read}, which reads {@code tensor}'s data from Java, while Polyfn holds a reference
   * to the tensor's memory: a close by another thread cannot free it under the read.
   *
   * @throws IllegalStateException if the tensor is closed
   */
  public static void whileRetained(Tensor tensor, Runnable read) {
    TF_Tensor p = retainTensor(tensor);
    try {
      read.run();
    } finally {
      PointerReferences.release(p);
    }
  }

  /**
   * Wraps a {@code TF_Tensor} the caller owns as a typed TensorFlow Java tensor that owns it. If
   * that fails (a dtype TensorFlow Java has no tensor class for), the tensor is freed here: the
   * caller must not delete it.
   */
  public static TType adoptTensor(long address) {
    return adoptTensor(address, 0, null);
  }

  /**
   * {@link #adoptTensor(long)} of a tensor whose dtype code and dims the caller read with it (a
   * call's result describes its outputs, see {@link Wire#RESULT_COUNT_SHIFT}): the tensor object
   * is built from them, without TensorFlow Java's three or more calls into TensorFlow and the
   * scope it makes only to hand over. With {@code dims} null, TensorFlow Java reads both.
   */
  public static TType adoptTensor(long address, int dtype, long[] dims) {
    TF_Tensor handle = null;
    try {
      handle = TensorOwnership.own(address);
      RawTensor raw;
      if (dims == null) {
        raw = (RawTensor) TENSOR_FROM_HANDLE.invokeExact(handle);
      } else {
        TensorTypeInfo<?> type = TensorTypeRegistry.find(DataType.forNumber(dtype));
        raw = (RawTensor) NEW_RAW_TENSOR.invokeExact(type, Shape.of(dims));
        TENSOR_HANDLE_FIELD.set(raw, handle);
        // The one reference fromHandle's scope would take, which the OwnedScope gives back.
        handle.retainReference();
      }
      // Its close() and its outputs object's, from any threads, give the reference back once.
      TENSOR_SCOPE.set(raw, new OwnedScope(handle));
      return (TType) TENSOR_AS_TYPED.invokeExact(raw);
    } catch (Throwable t) {
      // Once owned, it is registered with JavaCPP (and maybe the caller's PointerScope), which
      // would free it again: freed through it, which clears that registration.
      if (handle != null) {
        handle.deallocate();
      } else {
        Native.deleteTensor(address);
      }
      throw new IllegalStateException("wrapping an output tensor", t);
    }
  }

  /**
   * {@code tensor} as an eager operand of TensorFlow Java's default session, fed as a tensor
   * handle (the buffer is shared), never through an eager {@code Const} op. Why: once a function
   * takes the caller-thread path, the eager context runs every op as a function, and TensorFlow
   * caches a function's instantiations under a key that summarizes a tensor attribute by its
   * dtype, shape and first three values; an eager {@code Const} then returns the value of an
   * earlier one that agrees on those (a Keras LSTM's bias [0, 0, 0, 0, 1, 1, ...] came back as
   * another model's zeros). Feeding the tensor as an input leaves nothing to summarize.
   */
  @SuppressWarnings("unchecked")
  public static <T extends TType> Operand<T> eagerInput(T tensor) {
    TF_Tensor t = retainTensor(tensor);
    try {
      return (Operand<T>) eagerInput(t);
    } finally {
      PointerReferences.release(t);
    }
  }

  /** {@link #eagerInput(TType)} of a {@code TF_Tensor} the caller keeps retained until this returns. */
  static Operand<?> eagerInput(TF_Tensor t) {
    EagerSession session = EagerSession.getDefault();
    // As TensorFlow Java's own eager ops: made in a scope of their own, the handle attached to the
    // session (which frees it) and the status freed with the scope.
    try (PointerScope scope = new PointerScope()) {
      TF_Status status = TF_Status.newStatus();
      TFE_TensorHandle h = tensorflow.TFE_NewTensorHandle(t, status);
      status.throwExceptionIfNotOK();
      h = h.withDeallocator();
      TracingHandles handles = TracingHandles.get();
      synchronized (EagerLock.LOCK) { // the session's records are not thread-safe, see EagerLock
        handles.sessionAttach().invokeExact(session, new Pointer[] {h});
        // No op made it: an empty op handle (TensorFlow Java hashes it; asking it for list lengths fails).
        Operation op = (Operation) handles.newEagerOperation().invokeExact(session, new TFE_Op(),
            new TFE_TensorHandle[] {h}, "Const", "FedTensor");
        return op.output(0);
      }
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("feeding a tensor to an eager op", e);
    }
  }

  /**
   * A new tensor the caller owns (as a traced call's outputs are, see {@link #adoptTensor}) with
   * the value of eager operand {@code eagerOutput}, sharing its buffer: an eagerly run body's
   * output handed to the caller.
   */
  public static TType copyOut(Operand<?> eagerOutput) {
    return adoptTensor(Native.resolveHandle(eagerOutputHandle(eagerOutput)));
  }

  /**
   * Operation {@code address} of {@code graph}, added to it natively (see {@link
   * Native#addPlaceholder}), as TensorFlow Java's {@code GraphOperation}.
   */
  public static GraphOperation graphOperation(Graph graph, long address) {
    if (address == 0) {
      throw new IllegalStateException("no operation at address 0");
    }
    try {
      return (GraphOperation) TracingHandles.get().newGraphOperation()
          .invokeExact(graph, new TF_Operation(new OperationAt(address)));
    } catch (IllegalStateException e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("wrapping a graph operation", t);
    }
  }

  /** A raw address for a {@code TF_Operation}: the graph owns the operation, nothing is freed. */
  private static final class OperationAt extends Pointer {
    OperationAt(long address) {
      this.address = address;
    }
  }

  /** The address of the {@code TFE_Context} of TensorFlow Java's default eager session. */
  public static long defaultContextAddress() {
    try {
      return ((TFE_Context) CONTEXT_HANDLE.invokeExact(EagerSession.getDefault())).address();
    } catch (Throwable t) {
      throw new IllegalStateException("reading the default eager context", t);
    }
  }

  /** The address of a graph's {@code TF_Graph}. */
  public static long graphAddress(Graph graph) {
    try {
      TF_Graph handle = (TF_Graph) TracingHandles.get().graphHandle().invokeExact(graph);
      if (handle == null || handle.isNull()) {
        throw new IllegalStateException("the graph is closed");
      }
      return handle.address();
    } catch (IllegalStateException e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("reading a graph's native handle", t);
    }
  }

  /** A graph's {@code TF_Graph}, for the C API calls TensorFlow Java does not wrap (graph to function). */
  public static TF_Graph graphHandle(Graph graph) {
    try {
      TF_Graph handle = (TF_Graph) TracingHandles.get().graphHandle().invokeExact(graph);
      if (handle == null || handle.isNull()) {
        throw new IllegalStateException("the graph is closed");
      }
      return handle;
    } catch (IllegalStateException e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("reading a graph's native handle", t);
    }
  }

  /**
   * The address of the {@code TFE_TensorHandle} of an eager operation's output (for outputs
   * TensorFlow Java cannot type, such as resource handles).
   */
  public static long eagerOutputHandle(Operand<?> eagerOutput) {
    Output<?> o = eagerOutput.asOutput();
    TracingHandles handles = TracingHandles.get();
    if (!handles.eagerOperation().isInstance(o.op())) {
      throw new IllegalArgumentException("not an eager operation's output: " + o);
    }
    try {
      return ((TFE_TensorHandle) handles.eagerOutputHandle().invokeExact(o.op(), o.index())).address();
    } catch (Throwable t) {
      throw new IllegalStateException("reading an eager output's native handle", t);
    }
  }
}
