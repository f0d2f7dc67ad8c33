package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * Signature inference: 1,000 calls of a small dense layer with 50 distinct batch sizes, timed
 * from the definition of the function to the last call (traces included), unconstrained, with a
 * signature inferred from three examples, from a profile of the unconstrained run, and with
 * reduce-retracing. Prints one line per round on stderr and, on stdout, one JSON line with the
 * medians over rounds per variant: traces, total milliseconds, milliseconds to the first call's
 * return (definition and traces ahead of calls included), the median microseconds of a call that
 * did not trace and the median milliseconds of one that did (where the time goes). Each variant runs on a fresh function; a
 * first round warms the JVM up and is not reported.
 *
 * <p>Run: {@code java -cp <polyfn jar, TensorFlow Java, this class> dev.polyfn.bench.InferenceBench [rounds]}.
 */
public final class InferenceBench {
  private static final int CALLS = 1000;
  private static final int SIZES = 50;
  private static final int FEATURES = 16;

  private InferenceBench() {}

  private static MapFunction dense(FunctionOptions options) {
    return Function.define((Ops tf, dev.polyfn.Inputs in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);      // no shape declared
      Operand<TFloat32> w = tf.fill(tf.constant(new long[] {FEATURES, 8}), tf.constant(0.1f));
      return Map.of("y", tf.math.tanh(tf.math.add(tf.linalg.matMul(x, w), tf.constant(0.5f))));
    }, options);
  }

  /**
   * Defines the function and makes the 1,000 calls; returns {traces, total nanoseconds, nanoseconds
   * until the first call returned (definition and any traces ahead of calls included), median
   * nanoseconds of the calls that did not trace}.
   */
  private static long[] run(FunctionOptions options, List<TFloat32> batches, Path profileOut) {
    long t0 = System.nanoTime();
    long[] hits = new long[CALLS];
    long[] traced = new long[CALLS];
    int hitCount = 0;
    int tracedCount = 0;
    long firstCall = 0;
    try (MapFunction f = dense(options)) {
      for (int i = 0; i < CALLS; i++) {
        long traces = f.traceCount();
        long c0 = System.nanoTime();
        // Batch sizes in a scattered order, each of the 50 used 20 times.
        try (Outputs out = f.call(Map.of("x", batches.get((i * 7) % SIZES)))) {
          out.get("y", TFloat32.class);
        }
        long c1 = System.nanoTime();
        if (i == 0) {
          firstCall = c1 - t0;
        }
        if (f.traceCount() == traces) {
          hits[hitCount++] = c1 - c0;
        } else {
          traced[tracedCount++] = c1 - c0;
        }
      }
      long nanos = System.nanoTime() - t0;
      if (profileOut != null) {
        f.writeSignatureProfile(profileOut);
      }
      long[] h = Arrays.copyOf(hits, hitCount);
      Arrays.sort(h);
      long[] t = Arrays.copyOf(traced, tracedCount);
      Arrays.sort(t);
      return new long[] {f.traceCount(), nanos, firstCall, h.length == 0 ? 0 : h[h.length / 2],
          t.length == 0 ? 0 : t[t.length / 2]};
    }
  }

  private static double median(List<Long> values) {
    List<Long> sorted = new ArrayList<>(values);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    List<TFloat32> batches = new ArrayList<>();
    for (int n = 1; n <= SIZES; n++) {
      batches.add(TFloat32.tensorOf(Shape.of(n, FEATURES)));
    }
    Path profile = Files.createTempFile("polyfn-profile", ".json");
    FunctionOptions examples = FunctionOptions.defaults().withExampleInputs(
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(2, FEATURES))),
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(5, FEATURES))),
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(1, FEATURES))));
    String[] names = {"unconstrained", "inferred", "profile", "reduce_retracing"};
    Map<String, List<long[]>> all = new LinkedHashMap<>();
    for (String n : names) {
      all.put(n, new ArrayList<>());
    }
    for (int round = 0; round <= rounds; round++) {
      long[] plain = run(FunctionOptions.defaults(), batches, profile);
      long[] inferred = run(examples, batches, null);
      long[] profiled = run(FunctionOptions.defaults().withSignatureProfile(profile), batches, null);
      long[] reduce = run(FunctionOptions.defaults().withReduceRetracing(true), batches, null);
      if (round == 0) {
        continue; // warm-up
      }
      all.get("unconstrained").add(plain);
      all.get("inferred").add(inferred);
      all.get("profile").add(profiled);
      all.get("reduce_retracing").add(reduce);
      System.err.printf("round %d: unconstrained %d traces %.1f ms | inferred from 3 examples %d traces %.1f ms (%.1fx less) "
              + "| from the profile %d traces %.1f ms (%.1fx less) | reduce-retracing %d traces %.1f ms%n",
          round, plain[0], plain[1] / 1e6, inferred[0], inferred[1] / 1e6, (double) plain[1] / inferred[1],
          profiled[0], profiled[1] / 1e6, (double) plain[1] / profiled[1], reduce[0], reduce[1] / 1e6);
    }
    // One JSON line: per variant, the medians over rounds.
    StringBuilder json = new StringBuilder("{\"calls\": " + CALLS + ", \"batch_sizes\": " + SIZES);
    for (Map.Entry<String, List<long[]>> e : all.entrySet()) {
      List<long[]> rs = e.getValue();
      json.append(String.format(", \"%s\": {\"traces\": %d, \"total_ms\": %.2f, \"first_call_ms\": %.3f, "
              + "\"call_us\": %.2f, \"tracing_call_ms\": %.3f}", e.getKey(), rs.get(0)[0],
          median(rs.stream().map(r -> r[1]).toList()) / 1e6, median(rs.stream().map(r -> r[2]).toList()) / 1e6,
          median(rs.stream().map(r -> r[3]).toList()) / 1e3, median(rs.stream().map(r -> r[4]).toList()) / 1e6));
    }
    System.out.println(json.append('}'));
    batches.forEach(TFloat32::close);
    Files.deleteIfExists(profile);
  }
}
