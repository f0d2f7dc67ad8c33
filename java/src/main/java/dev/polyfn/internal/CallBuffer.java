package dev.polyfn.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bytedeco.javacpp.Pointer;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.internal.c_api.TF_Tensor;
import org.tensorflow.ndarray.Shape;

/**
 * A reusable description of one call: its type facts (the wire format of {@code polyfn-core}'s
 * {@code facts} module) and the {@code TF_Tensor} addresses of its tensors, in flatten order.
 * Writing it touches tensor metadata only, never tensor data. Tensors Polyfn made for the call
 * (Java numbers cast to tensors) are held as temporaries and closed after it.
 */
public final class CallBuffer {

  /** A subclass, not {@code withInitial(CallBuffer::new)}: a lambda's first bootstrap costs a first call. */
  private static final ThreadLocal<CallBuffer> PER_THREAD = new ThreadLocal<>() {
    @Override
    protected CallBuffer initialValue() {
      return new CallBuffer();
    }
  };

  private long[] facts = new long[64];
  private int factCount;
  private long[] tensors = new long[16];
  /**
   * The objects owning {@link #tensors}' addresses, kept strongly reachable until the call
   * returns, so that the GC cannot free an argument tensor (through JavaCPP's deallocator) while
   * the runtime reads it, whatever the caller's frames keep alive. A tensor's entry is its {@code
   * TF_Tensor} pointer, on which the buffer holds a reference of its own until {@link #release}:
   * a concurrent {@code close()} of the tensor then frees nothing until the call is over.
   */
  private Object[] pins = new Object[16];
  private int tensorCount;
  /** Where the native call writes its outputs, reused from call to call (see {@link #result()}). */
  private long[] result = new long[16];
  private final List<Tensor> temporaries = new ArrayList<>();
  private Aliases aliases = new Aliases();
  /** Whether this thread's buffer describes a call now (between {@link #get} and {@link #release}). */
  private boolean inUse;

  /** This thread's buffer, emptied. Not re-entrant: release it before anything can call again. */
  public static CallBuffer get() {
    CallBuffer b = PER_THREAD.get();
    if (b.inUse) {
      // A call made while this thread's buffer is busy (user code run inside a call, such as a
      // log handler that calls a function): it gets a buffer of its own.
      return fresh();
    }
    b.inUse = true;
    b.factCount = 0;
    b.aliases.clear();
    return b;
  }

  /** A fresh buffer, for descriptions made while tracing. */
  public static CallBuffer fresh() {
    return new CallBuffer();
  }

  /**
   * Appends a tensor argument.
   *
   * @throws IllegalStateException if the tensor is closed (callers name the argument)
   */
  public void tensor(Tensor t) {
    Shape shape = t.shape();
    int rank = shape.numDimensions();
    ensureFacts(3 + rank);
    facts[factCount++] = Wire.TAG_TENSOR;
    facts[factCount++] = t.dataType().getNumber();
    facts[factCount++] = rank;
    for (int i = 0; i < rank; i++) {
      facts[factCount++] = shape.get(i);
    }
    TF_Tensor retained = TensorFlowInternals.retainTensor(t);
    pin(retained.address(), retained);
  }

  private void pin(long address, Object owner) {
    if (tensorCount == tensors.length) {
      tensors = Arrays.copyOf(tensors, tensors.length * 2);
      pins = Arrays.copyOf(pins, pins.length * 2);
    }
    pins[tensorCount] = owner;
    tensors[tensorCount++] = address;
  }

  /** Appends a tensor type without a value (a spec): {@code dims} null for an unknown rank. */
  public void spec(int dtype, long[] dims) {
    int rank = dims == null ? -1 : dims.length;
    ensureFacts(3 + Math.max(rank, 0));
    facts[factCount++] = Wire.TAG_TENSOR;
    facts[factCount++] = dtype;
    facts[factCount++] = rank;
    for (int i = 0; i < rank; i++) {
      facts[factCount++] = dims[i];
    }
  }

  /**
   * Appends a variable: its dtype, shape ({@code dims} null for an unknown rank, a restored Python
   * variable's) and alias index (which distinct variable of the call it is). Its resource handle
   * is fed only at its first occurrence ({@code resource} non-zero).
   */
  public void variable(int dtype, long[] dims, int alias, long resource) {
    variable(dtype, dims, alias, resource, null);
  }

  /**
   * {@link #variable(int, long[], int, long)}, holding the resource while the call runs: {@code
   * release} runs when the call ends (it gives back the reference the caller took on it).
   */
  public void variable(int dtype, long[] dims, int alias, long resource, Runnable release) {
    ensureFacts(4 + (dims == null ? 0 : dims.length));
    facts[factCount++] = Wire.TAG_VARIABLE;
    facts[factCount++] = dtype;
    facts[factCount++] = dims == null ? Wire.RANK_UNKNOWN : dims.length;
    for (int i = 0; dims != null && i < dims.length; i++) {
      facts[factCount++] = dims[i];
    }
    facts[factCount++] = alias;
    if (resource != 0) {
      pin(resource, release);
    }
  }

  /** Shares {@code shared}'s alias numbering (descriptions of one call written piece by piece). */
  public void useAliases(Aliases shared) {
    this.aliases = shared;
  }

  /** The alias numbering of this call's variables. */
  public Aliases aliases() {
    return aliases;
  }

  /** Starts a list of {@code length} elements; the elements follow. */
  public void list(int length) {
    ensureFacts(2);
    facts[factCount++] = Wire.TAG_LIST;
    facts[factCount++] = length;
  }

  /** Starts a map of {@code size} entries; each entry is {@link #key} then its value. */
  public void map(int size) {
    ensureFacts(2);
    facts[factCount++] = Wire.TAG_MAP;
    facts[factCount++] = size;
  }

  /**
   * Starts a record of class {@code classId} (an interned string) with {@code size} components;
   * each is {@link #key} (its name) then its value, in declaration order.
   */
  public void record(int classId, int size) {
    ensureFacts(3);
    facts[factCount++] = Wire.TAG_RECORD;
    facts[factCount++] = classId;
    facts[factCount++] = size;
  }

  /**
   * Starts a composite tensor of kind {@code nameId} with its values dtype, static shape ({@code
   * dims} null for an unknown rank) and metadata ({@code metadataId} -1 for none); each of its
   * {@code size} components is {@link #key} (its name) then {@link #tensorAs}.
   */
  public void composite(int nameId, int dtype, long[] dims, long metadataId, int size) {
    int rank = dims == null ? -1 : dims.length;
    ensureFacts(6 + Math.max(rank, 0));
    facts[factCount++] = Wire.TAG_COMPOSITE;
    facts[factCount++] = nameId;
    facts[factCount++] = dtype;
    facts[factCount++] = rank;
    for (int i = 0; i < rank; i++) {
      facts[factCount++] = dims[i];
    }
    facts[factCount++] = metadataId;
    facts[factCount++] = size;
  }

  /**
   * Appends tensor {@code t} typed as the spec {@code (dtype, dims)} rather than by its own shape:
   * a composite's component, whose spec leaves out what is not part of the signature. The caller
   * checked that the tensor fits the spec.
   *
   * @throws IllegalStateException if the tensor is closed
   */
  public void tensorAs(Tensor t, int dtype, long[] dims) {
    TF_Tensor retained = TensorFlowInternals.retainTensor(t);
    spec(dtype, dims);
    pin(retained.address(), retained);
  }

  /** A map key, by its interned id. */
  public void key(int id) {
    ensureFacts(1);
    facts[factCount++] = id;
  }

  /** A Java value, by its interned id. */
  public void literal(int id) {
    ensureFacts(2);
    facts[factCount++] = Wire.TAG_LITERAL;
    facts[factCount++] = id;
  }

  /** Keeps a tensor Polyfn made for this call, appended later; it is closed by {@link #closeTemporaries}. */
  public void keep(Tensor t) {
    temporaries.add(t);
  }

  /** Appends a tensor Polyfn made for this call; it is closed by {@link #closeTemporaries}. */
  public void temporary(Tensor t) {
    temporaries.add(t);
    tensor(t);
  }

  /** Moves this buffer's temporaries to {@code other}, which closes them later. */
  public void handOverTemporaries(CallBuffer other) {
    other.temporaries.addAll(temporaries);
    temporaries.clear();
  }

  /**
   * Ends the call: unpins the arguments and closes the tensors made for it (outputs that share
   * their buffers stay valid).
   */
  public void release() {
    // Every pin is given back and every temporary closed even if one release fails (a resource's
    // release reaches TensorFlow), with an Error too (a stack overflow or an out-of-memory in a
    // release): the first failure is rethrown after the rest, and the buffer is free again
    // either way (else the thread's later calls would each make a fresh one, and its pins leak).
    Throwable failed = null;
    for (int i = 0; i < tensorCount; i++) {
      try {
        if (pins[i] instanceof Pointer p) {
          PointerReferences.release(p);
        } else if (pins[i] instanceof Runnable r) {
          r.run();
        }
      } catch (RuntimeException | Error e) {
        failed = failed == null ? e : failed;
      }
      pins[i] = null;
    }
    tensorCount = 0;
    inUse = false;
    try {
      closeTemporaries();
    } catch (RuntimeException | Error e) {
      failed = failed == null ? e : failed;
    }
    if (failed instanceof RuntimeException e) {
      throw e;
    } else if (failed instanceof Error e) {
      throw e;
    }
  }

  /** Closes the tensors made for the call (outputs that share their buffers stay valid). */
  public void closeTemporaries() {
    if (!temporaries.isEmpty()) {
      try {
        for (Tensor t : temporaries) {
          t.close();
        }
      } finally {
        temporaries.clear();
      }
    }
  }

  /**
   * Tensor {@code i} of this description as an eager operand of TensorFlow Java's default session,
   * fed as a tensor handle (see {@link TensorFlowInternals#eagerInput}), for a body run eagerly;
   * null where a variable's resource stands. The operand shares the tensor's buffer, so it stays
   * valid after {@link #release}.
   */
  public Operand<?> eagerOperand(int i) {
    return pins[i] instanceof TF_Tensor t ? TensorFlowInternals.eagerInput(t) : null;
  }

  public long[] facts() {
    return facts;
  }

  public int factCount() {
    return factCount;
  }

  public long[] tensors() {
    return tensors;
  }

  public int tensorCount() {
    return tensorCount;
  }

  /**
   * The array the native call writes {@code [outputsKey, outputs...]} into, so that a call
   * allocates none. Read it before {@link #release}: the next call on this thread overwrites it.
   */
  public long[] result() {
    return result;
  }

  /** Keeps {@code r} as the result array if the native call needed a longer one. */
  public void keepResult(long[] r) {
    if (r.length > result.length) {
      result = r;
    }
  }

  private void ensureFacts(int more) {
    if (factCount + more > facts.length) {
      facts = Arrays.copyOf(facts, Math.max(facts.length * 2, factCount + more));
    }
  }
}
