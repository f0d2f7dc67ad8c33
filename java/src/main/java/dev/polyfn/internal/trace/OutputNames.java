package dev.polyfn.internal.trace;

import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.Wire;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.tensorflow.types.family.TType;

/**
 * The output names of a function's concrete functions, by the key each returns with its outputs.
 * A trace records its names here before it publishes the concrete function, so every call that
 * finds the function can name its outputs, however early it arrives.
 */
public final class OutputNames {
  private final Map<Integer, String[]> byKey = new ConcurrentHashMap<>();
  private final Map<List<String>, Integer> keys = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();
  private final Map<List<String>, String[]> canonical = new ConcurrentHashMap<>();
  private final String function;

  /** @param function the function's name, for error messages */
  public OutputNames(String function) {
    this.function = function;
  }

  /**
   * Records {@code names}; returns the key to publish the concrete function with. Equal names
   * share one key, so a function that keeps retracing (evicting as it goes) keeps one entry per
   * distinct list of names, not one per trace.
   */
  public int record(String[] names) {
    return keys.computeIfAbsent(List.of(names), k -> {
      int key = next.incrementAndGet();
      byKey.put(key, names.clone());
      return key;
    });
  }

  /** How many distinct lists of names are recorded. */
  int size() {
    return byKey.size();
  }

  /**
   * One array for each list of names: the names of an eager call's outputs, which a {@code
   * NestFunction} keys its output templates by (by identity, one array per concrete function).
   */
  public String[] canonical(String[] names) {
    return canonical.computeIfAbsent(List.of(names), k -> names);
  }

  /** The names recorded under {@code key}. */
  public String[] get(int key) {
    return byKey.get(key);
  }

  /**
   * A call's outputs from the native result {@code [head, output addresses..., descriptions...]}
   * (see {@link Wire#RESULT_COUNT_SHIFT}): the names
   * recorded under the head's key, and the tensors, adopted as TensorFlow Java tensors the caller
   * owns. Only the addresses this call wrote are read (the head counts them: the array is reused
   * and may hold an earlier call's addresses after them); they are released if the names do not
   * match them one for one.
   *
   * @throws IllegalStateException if the recorded names are not one per output (a trace cache
   *     entry or saved function that lists other names than its function has outputs)
   */
  public Result adopt(long[] r) {
    int key = (int) r[0];
    long count = r[0] >>> Wire.RESULT_COUNT_SHIFT;
    if (count > r.length - 1) {
      throw new IllegalStateException("function '" + function + "': a call reported " + count
          + " outputs in a result of " + (r.length - 1));
    }
    String[] names = get(key);
    if (names == null || names.length != count) {
      release(r, 0, (int) count);
      throw new IllegalStateException("function '" + function + "': its concrete function returned " + count
          + " outputs, but " + (names == null ? "no output names are recorded for it (key " + key + ")"
              : names.length + " output names are recorded for it " + Arrays.toString(names))
          + "; a trace cache entry or saved function that lists other output names than its function has"
          + " outputs cannot be called");
    }
    TType[] tensors = new TType[names.length];
    // Each output's description (dtype, rank, dims) follows the addresses.
    int at = 1 + names.length;
    for (int i = 0; i < tensors.length; i++) {
      try {
        long rank = at + 2 <= r.length ? r[at + 1] : -1;
        if (rank < 0 || rank > Wire.MAX_RANK || at + 2 + rank > r.length) {
          Native.deleteTensor(r[i + 1]); // as adoptTensor does when it fails
          throw new IllegalStateException("the call described it with rank " + rank + " in a result of " + r.length);
        }
        int dtype = (int) r[at];
        long[] dims = Arrays.copyOfRange(r, at + 2, at + 2 + (int) rank);
        at += 2 + (int) rank;
        tensors[i] = TensorFlowInternals.adoptTensor(r[i + 1], dtype, dims);
      } catch (RuntimeException e) {
        // The ones adopted are closed, the others deleted (this one was, by adoptTensor): the
        // caller gets none of them.
        new OwnedTensors(Arrays.copyOf(tensors, i)).close();
        release(r, i + 1, names.length);
        throw new IllegalStateException("function '" + function + "': its output '" + names[i]
            + "' cannot be handed over as a TensorFlow Java tensor: " + e.getMessage()
            + (e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")"), e);
      }
    }
    return new Result(names, tensors);
  }

  /** Deletes the output tensors {@code from} (inclusive) to {@code to} (exclusive) of result {@code r}. */
  private static void release(long[] r, int from, int to) {
    for (int i = from; i < to; i++) {
      Native.deleteTensor(r[i + 1]);
    }
  }
}
