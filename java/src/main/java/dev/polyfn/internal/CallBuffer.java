package dev.polyfn.internal;

import java.util.Arrays;
import org.tensorflow.Tensor;

/**
 * A per-thread, reusable description of one call: its type facts (the wire format of {@code
 * polyfn-core}'s {@code facts} module) and the {@code TF_Tensor} addresses of its tensors, in
 * flatten order. Writing it touches tensor metadata only, never tensor data.
 */
public final class CallBuffer {
  public static final long TAG_TENSOR = 1;
  public static final long TAG_LIST = 2;
  public static final long TAG_MAP = 3;
  public static final long TAG_LITERAL = 4;

  private static final ThreadLocal<CallBuffer> PER_THREAD = ThreadLocal.withInitial(CallBuffer::new);

  long[] facts = new long[64];
  int factCount;
  long[] tensors = new long[16];
  int tensorCount;

  /** This thread's buffer, emptied. */
  public static CallBuffer get() {
    CallBuffer b = PER_THREAD.get();
    b.factCount = 0;
    b.tensorCount = 0;
    return b;
  }

  /** A fresh buffer, for descriptions that outlive the call (tracing). */
  public static CallBuffer fresh() {
    return new CallBuffer();
  }

  /**
   * Appends a tensor argument.
   *
   * @throws IllegalArgumentException naming {@code param} if the tensor is closed
   */
  public void tensor(String param, Tensor t) {
    long address;
    try {
      address = TensorFlowInternals.tensorAddress(t);
    } catch (IllegalStateException e) {
      throw new IllegalArgumentException("argument '" + param + "': the tensor is closed", e);
    }
    org.tensorflow.ndarray.Shape shape = t.shape();
    int rank = shape.numDimensions();
    ensureFacts(3 + rank);
    facts[factCount++] = TAG_TENSOR;
    facts[factCount++] = t.dataType().getNumber();
    facts[factCount++] = rank;
    for (int i = 0; i < rank; i++) {
      facts[factCount++] = shape.get(i);
    }
    if (tensorCount == tensors.length) {
      tensors = Arrays.copyOf(tensors, tensors.length * 2);
    }
    tensors[tensorCount++] = address;
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

  private void ensureFacts(int more) {
    if (factCount + more > facts.length) {
      facts = Arrays.copyOf(facts, Math.max(facts.length * 2, factCount + more));
    }
  }
}
