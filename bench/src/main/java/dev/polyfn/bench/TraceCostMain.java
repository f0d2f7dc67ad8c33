package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Arrays;
import java.util.Map;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Trace cost as the cache grows: {@code y = x + 2} over a float vector called with the shapes
 * [1], [2], ..., [signatures], each call a new signature (trace, build, first run). Prints one JSON
 * line: milliseconds per new signature in each tenth of the run (mean and median), and the first and
 * last tenth. A miss should cost the same at 10,000
 * cached signatures as at 10. The first and last tenth are medians (one preempted trace on a
 * shared machine moves a mean by more than the cache size does); the means are printed too.
 *
 * <p>Run: {@code java -cp <bench classpath> dev.polyfn.bench.TraceCostMain [signatures] [warmup]}.
 */
public final class TraceCostMain {
  private TraceCostMain() {}

  public static void main(String[] args) {
    int signatures = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 2_000;
    // Warm the JVM and TensorFlow up on a function of its own, which is then closed.
    run(warmup);
    long[] nanos = run(signatures);
    int tenth = signatures / 10;
    double[] means = new double[10];
    double[] medians = new double[10];
    for (int t = 0; t < 10; t++) {
      long[] part = Arrays.copyOfRange(nanos, t * tenth, (t + 1) * tenth);
      means[t] = Arrays.stream(part).sum() / 1e6 / tenth;
      Arrays.sort(part);
      medians[t] = part[tenth / 2] / 1e6;
    }
    System.out.println(String.format(
        "{\"signatures\": %d, \"ms_per_trace_by_tenth\": %s, \"median_ms_per_trace_by_tenth\": %s, "
            + "\"first_tenth_ms\": %.4f, \"last_tenth_ms\": %.4f}",
        signatures, json(means), json(medians), medians[0], medians[9]));
  }

  private static String json(double[] values) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < values.length; i++) {
      b.append(i == 0 ? "" : ", ").append(String.format("%.4f", values[i]));
    }
    return b.append(']').toString();
  }

  /** Calls a fresh function with {@code signatures} new shapes; returns each call's nanoseconds. */
  private static long[] run(int signatures) {
    long[] nanos = new long[signatures];
    try (MapFunction fn = Function.define(
        (tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(2f))))) {
      for (int n = 1; n <= signatures; n++) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(n))) {
          long t0 = System.nanoTime();
          try (Outputs out = fn.call(Map.of("x", x))) {
            nanos[n - 1] = System.nanoTime() - t0;
          }
        }
      }
      if (fn.traceCount() != signatures) {
        throw new IllegalStateException("expected " + signatures + " traces, got " + fn.traceCount());
      }
    }
    return nanos;
  }
}
