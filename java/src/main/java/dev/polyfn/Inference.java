package dev.polyfn;

import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Native;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Example argument sets whose types a first trace coalesces, parameter by parameter, into
 * inferred constraints (in Rust), before it declares each parameter. Examples are typed, never
 * run: tensors, {@link TensorSpec}s, lists and maps of them, Java values.
 */
final class Inference {
  private final List<Map<String, ?>> examples;
  /** 0 for examples given by the user, else the number of recorded calls they stand for. */
  private final long profileCalls;

  Inference(List<Map<String, ?>> examples, long profileCalls) {
    this.examples = examples;
    this.profileCalls = profileCalls;
  }

  /** Sends the types of every example's argument of {@code p} to Rust, which coalesces them. */
  void infer(Param p, long function, Interner interner) {
    long[] facts = new long[64];
    int size = 0;
    int[] lengths = new int[examples.size()];
    for (int i = 0; i < examples.size(); i++) {
      Map<String, ?> example = examples.get(i);
      Object v;
      try {
        v = Arguments.valueFor(p, example);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("example " + (i + 1) + ": " + e.getMessage(), e);
      }
      if (v == null) {
        throw new IllegalArgumentException("example " + (i + 1) + " of " + examples.size()
            + ": missing argument '" + p.name() + "' (every example needs every required parameter)");
      }
      CallBuffer buf = CallBuffer.fresh();
      try {
        Arguments.write(p, v, buf, interner, false);
        lengths[i] = buf.factCount();
        if (size + lengths[i] > facts.length) {
          facts = Arrays.copyOf(facts, Math.max(facts.length * 2, size + lengths[i]));
        }
        System.arraycopy(buf.facts(), 0, facts, size, lengths[i]);
        size += lengths[i];
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("example " + (i + 1) + ": " + e.getMessage(), e);
      } finally {
        buf.release();
      }
    }
    Native.inferParameter(function, p.name(), Arrays.copyOf(facts, size), lengths, profileCalls);
  }
}
