package dev.polyfn.bench;

import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Arrays;
import java.util.Map;
import org.tensorflow.Tensor;

/**
 * {@link FirstCallBench#polyfnFirstCall} without JMH, for short processes run back to back with
 * the Rust floor ({@code native/tf/examples/first_call.rs}): {@code warmup} fresh functions' first
 * calls of {@code add2}, then {@code measured} more, each timed alone (defining and closing the
 * function are not timed). Prints one JSON object with the median in milliseconds.
 *
 * <p>Usage: {@code FirstCallMain [warmup] [measured]} (defaults 20 and 21: about JMH's warm-up).
 */
public final class FirstCallMain {
  private FirstCallMain() {}

  public static void main(String[] a) {
    int warmup = a.length > 0 ? Integer.parseInt(a[0]) : 20;
    int measured = a.length > 1 ? Integer.parseInt(a[1]) : 21;
    Workload w = Workload.get("add2");
    Map<String, Tensor> args = w.newInputs();
    double[] ms = new double[measured];
    for (int i = -warmup; i < measured; i++) {
      MapFunction fn = w.polyfn();
      long t0 = System.nanoTime();
      try (Outputs out = fn.call(args)) {
        if (out.get("y") == null) {
          throw new IllegalStateException("no output");
        }
      }
      long t = System.nanoTime() - t0;
      fn.close();
      if (i >= 0) {
        ms[i] = t / 1e6;
      }
    }
    args.values().forEach(Tensor::close);
    Arrays.sort(ms);
    System.out.println(String.format("{\"workload\": \"add2\", \"warmup\": %d, \"measured\": %d, \"first_call_ms\": %.4f, "
        + "\"min_ms\": %.4f}", warmup, measured, ms[measured / 2], ms[0]));
  }
}
