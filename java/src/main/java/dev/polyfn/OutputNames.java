package dev.polyfn;

import dev.polyfn.internal.TensorFlowInternals;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.tensorflow.types.family.TType;

/**
 * The output names of a function's concrete functions, by the key each returns with its outputs.
 * A trace records its names here before it publishes the concrete function, so every call that
 * finds the function can name its outputs, however early it arrives.
 */
final class OutputNames {
  private final Map<Integer, String[]> byKey = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();

  /** Records {@code names}; returns the key to publish the concrete function with. */
  int record(String[] names) {
    int key = next.incrementAndGet();
    byKey.put(key, names);
    return key;
  }

  /** The names recorded under {@code key}. */
  String[] get(int key) {
    return byKey.get(key);
  }

  /**
   * A call's outputs from the native result {@code [outputsKey, output addresses...]}: the names
   * recorded under the key, and the tensors, adopted as TensorFlow Java tensors the caller owns.
   * There is one output per name; {@code r} may be longer (a reused array).
   */
  PolymorphicFunction.Result adopt(long[] r) {
    String[] names = get((int) r[0]);
    if (names == null || names.length >= r.length) {
      throw new IllegalStateException("a call returned outputs under an unknown key " + r[0]);
    }
    TType[] tensors = new TType[names.length];
    for (int i = 0; i < tensors.length; i++) {
      tensors[i] = TensorFlowInternals.adoptTensor(r[i + 1]);
    }
    return new PolymorphicFunction.Result(names, tensors);
  }
}
