package dev.polyfn.internal.trace;

import dev.polyfn.FunctionOptions;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.NativeLog;
import java.lang.System.Logger.Level;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Example argument sets whose types a first trace coalesces, parameter by parameter, into
 * inferred constraints (in Rust), before it declares each parameter. Examples are typed, never
 * run: tensors, {@link TensorSpec}s, lists and maps of them, Java values.
 */
public final class Inference {
  private final List<Map<String, ?>> examples;
  /** 0 for examples given by the user, else the number of recorded calls they stand for. */
  private final long profileCalls;
  /** False for the traces after the first: they only narrow their example to the declarations. */
  private final boolean infers;

  public Inference(List<Map<String, ?>> examples, long profileCalls) {
    this(examples, profileCalls, true);
  }

  private Inference(List<Map<String, ?>> examples, long profileCalls, boolean infers) {
    this.examples = examples;
    this.profileCalls = profileCalls;
    this.infers = infers;
  }

  /** Sends the types of every example's argument of {@code p} to Rust, which coalesces them. */
  public void infer(Param p, long function, Interner interner) {
    if (!infers) {
      return;
    }
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

  /**
   * Traces the signatures inferred from {@code options}' example inputs and {@code profile} (its
   * signature profile, as the definition read it once, or null), once, when {@code f} is defined: the first example's trace coalesces every example's types
   * into the parameters' constraints; examples that trace does not serve (another list length,
   * another Java value) are traced after it.
   */
  public static void traceAtDefinition(FunctionCore f, FunctionOptions options, SignatureProfile profile) {
    List<Map<String, ?>> examples = new ArrayList<>(options.exampleInputs());
    long profileCalls = 0;
    if (profile != null) {
      warnIfRecordedForAnother(profile, options);
      examples.addAll(profile.examples());
      profileCalls = profile.calls();
    }
    if (examples.isEmpty()) {
      return;
    }
    try {
      traceExamples(f, examples, profileCalls);
    } catch (IllegalArgumentException e) {
      if (options.signatureProfile() == null) {
        throw e;
      }
      // A profile names parameters and shapes the body may not have: say which file they came from.
      String from = options.exampleInputs().isEmpty() ? "signature profile " + options.signatureProfile()
          : "the example inputs or signature profile " + options.signatureProfile();
      throw new IllegalArgumentException(from + ": " + e.getMessage(), e);
    }
  }

  /**
   * Warns, without refusing (a function may be renamed on purpose), when the profile was recorded
   * for a function of another name: its constraints may be another function's.
   */
  private static void warnIfRecordedForAnother(SignatureProfile profile, FunctionOptions options) {
    if (profile.function() != null && !profile.function().equals(options.name())) {
      NativeLog.logger().log(Level.WARNING, "signature profile " + options.signatureProfile()
          + " was recorded for function '" + profile.function() + "' and is loaded into function '" + options.name()
          + "': its signatures are applied as recorded (if the rename is intended, set the file's \"function\" to '"
          + options.name() + "')");
    }
  }

  private static void traceExamples(FunctionCore f, List<Map<String, ?>> examples, long profileCalls) {
    try {
      // An outermost trace: again after giving one up to another thread (see TraceLock).
      TraceLock.retrying(() -> {
        traceExamplesOnce(f, examples, profileCalls);
        return null;
      });
    } finally {
      Reference.reachabilityFence(f);
    }
  }

  private static void traceExamplesOnce(FunctionCore f, List<Map<String, ?>> examples, long profileCalls) {
    f.traceLock().lock();
    try {
      long fn = f.address();
      Inference inference = new Inference(examples, profileCalls);
      List<Map<String, ?>> rest = examples;
      if (f.params() != null) {
        // Restored from a trace cache: the parameter list is known, so infer without tracing and
        // trace only the examples no restored concrete function serves.
        for (Param p : f.params()) {
          inference.infer(p, fn, f.interner());
        }
      } else {
        f.traceLocked(fn, Arguments.Lookup.of(examples.get(0)), null, false, false, inference);
        rest = examples.subList(1, examples.size());
      }
      // The other examples: traced unless a trace serves them (narrowed to the declarations)
      // or the declarations leave them out (a DOUBLE example of a TFloat32 parameter).
      Inference narrowing = new Inference(examples, profileCalls, false);
      for (Map<String, ?> e : rest) {
        CallBuffer call = f.describeForTrace(e);
        if (call == null || !Native.exampleServed(fn, call.facts(), call.factCount())) {
          f.traceLocked(fn, Arguments.Lookup.of(e), call, false, false, narrowing);
        }
      }
    } finally {
      f.traceLock().unlock();
    }
  }
}
