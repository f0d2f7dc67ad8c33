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
 * <p>Usage: {@code FirstCallMain [warmup] [measured]} (defaults 10 and 40, JMH's full run).
 */
public final class FirstCallMain {
  private FirstCallMain() {}

  public static void main(String[] a) {
    int warmup = a.length > 0 ? Integer.parseInt(a[0]) : 10;
    int measured = a.length > 1 ? Integer.parseInt(a[1]) : 40;
    Workload w = Workload.get("add2");
    Map<String, Tensor> args = w.newInputs();
    double[] polyfn = new double[measured];
    double[] floor = new double[measured];
    double[] ratios = new double[measured];
    try (CApiFirstCall capi = new CApiFirstCall()) {
      for (int i = -warmup; i < measured; i++) {
        long p;
        long c;
        if ((i & 1) == 0) {
          p = polyfnFirstCall(w, args);
          c = capiFirstCall(capi);
        } else {
          c = capiFirstCall(capi);
          p = polyfnFirstCall(w, args);
        }
        if (i >= 0) {
          polyfn[i] = p / 1e6;
          floor[i] = c / 1e6;
          ratios[i] = (double) p / c;
        }
      }
    } finally {
      args.values().forEach(Tensor::close);
    }
    System.out.println(String.format("{\"workload\": \"add2\", \"warmup\": %d, \"measured\": %d, \"first_call_ms\": %.4f, "
        + "\"capi_first_call_ms\": %.4f, \"ratio\": %.4f}", warmup, measured, median(polyfn), median(floor),
        median(ratios)));
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
