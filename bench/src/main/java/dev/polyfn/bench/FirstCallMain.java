package dev.polyfn.bench;

import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Arrays;
import java.util.Map;
import org.tensorflow.Tensor;

/**
 * {@link FirstCallBench#polyfnFirstCall} without JMH, alternating in one process with the same
 * work done through TensorFlow's C API ({@link CApiFirstCall}, the floor of {@code
 * native/tf/examples/first_call.rs} driven from the JVM), so both see the same load, JIT and
 * collector: {@code warmup} rounds, then {@code measured} rounds of one Polyfn first call of a
 * fresh {@code add2} and one C API first call, in alternating order. Defining and closing the
 * Polyfn function are not timed. Prints one JSON object with the medians in milliseconds and the
 * median of the rounds' ratios.
 *
 * <p>With {@code jitRounds} above 0 the alternation goes on, unmeasured, until {@code jitRounds}
 * rounds have run, and {@code measured} more rounds are measured (keys {@code warm_*}). The
 * first window shows a new signature early in a process, while the JIT still compiles Polyfn's
 * Java side of a trace (the C API contender's side is almost all native); the second shows the
 * first call of a new signature in a process that has been tracing for a while, which is what
 * a program serving new shapes pays.
 *
 * <p>Usage: {@code FirstCallMain [warmup] [measured] [jitRounds]} (defaults 10, 40 and 0).
 */
public final class FirstCallMain {
  private FirstCallMain() {}

  public static void main(String[] a) {
    int warmup = a.length > 0 ? Integer.parseInt(a[0]) : 10;
    int measured = a.length > 1 ? Integer.parseInt(a[1]) : 40;
    int jitRounds = a.length > 2 ? Integer.parseInt(a[2]) : 0;
    Workload w = Workload.get("add2");
    Map<String, Tensor> args = w.newInputs();
    Window early = new Window(measured);
    Window warm = new Window(jitRounds > 0 ? measured : 0);
    try (CApiFirstCall capi = new CApiFirstCall()) {
      int warmStart = Math.max(jitRounds, warmup + measured);
      int rounds = jitRounds > 0 ? warmStart + measured : warmup + measured;
      for (int i = 0; i < rounds; i++) {
        long p;
        long c;
        if ((i & 1) == 0) {
          p = polyfnFirstCall(w, args);
          c = capiFirstCall(capi);
        } else {
          c = capiFirstCall(capi);
          p = polyfnFirstCall(w, args);
        }
        if (i >= warmup && i < warmup + measured) {
          early.add(i - warmup, p, c);
        } else if (jitRounds > 0 && i >= warmStart) {
          warm.add(i - warmStart, p, c);
        }
      }
      StringBuilder json = new StringBuilder(String.format(java.util.Locale.ROOT,
          "{\"workload\": \"add2\", \"warmup\": %d, \"measured\": %d, %s", warmup, measured, early.json("")));
      if (jitRounds > 0) {
        json.append(String.format(java.util.Locale.ROOT, ", \"warm_after_rounds\": %d, %s", warmStart, warm.json("warm_")));
      }
      System.out.println(json.append('}'));
    } finally {
      args.values().forEach(Tensor::close);
    }
  }

  /** One window of measured rounds: each round's times (ms) and ratio. */
  private static final class Window {
    final double[] polyfn;
    final double[] floor;
    final double[] ratios;

    Window(int n) {
      polyfn = new double[n];
      floor = new double[n];
      ratios = new double[n];
    }

    void add(int i, long p, long c) {
      polyfn[i] = p / 1e6;
      floor[i] = c / 1e6;
      ratios[i] = (double) p / c;
    }

    String json(String prefix) {
      return String.format(java.util.Locale.ROOT, "\"%sfirst_call_ms\": %.4f, \"%scapi_first_call_ms\": %.4f, \"%sratio\": %.4f",
          prefix, median(polyfn), prefix, median(floor), prefix, median(ratios));
    }
  }

  /** Nanoseconds of a fresh Polyfn function's first call. */
  static long polyfnFirstCall(Workload w, Map<String, Tensor> args) {
    MapFunction fn = w.polyfn();
    try {
      long t0 = System.nanoTime();
      try (Outputs out = fn.call(args)) {
        if (out.get("y") == null) {
          throw new IllegalStateException("no output");
        }
      }
      return System.nanoTime() - t0;
    } finally {
      fn.close();
    }
  }

  static long capiFirstCall(CApiFirstCall capi) {
    long t0 = System.nanoTime();
    float y = capi.firstCall();
    long t = System.nanoTime() - t0;
    if (y != 3f) {
      throw new IllegalStateException("C API floor returned " + y);
    }
    return t;
  }

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
