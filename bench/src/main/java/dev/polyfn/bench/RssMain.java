package dev.polyfn.bench;

import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorflow.Tensor;

/**
 * RSS growth of the JVM over many cached calls of {@code add2}: VmRSS (/proc/self/status) after a
 * warm-up and after {@code calls} more calls, with samples in between. Run with a fixed,
 * pre-touched heap (bench/run.sh: -Xms256m -Xmx256m -XX:+AlwaysPreTouch) so heap growth does not
 * pass for a leak. Prints one JSON object.
 *
 * <p>Usage: {@code RssMain [calls] [warmupCalls]}
 */
public final class RssMain {
  public static void main(String[] a) throws Exception {
    long calls = a.length > 0 ? Long.parseLong(a[0]) : 1_000_000L;
    long warmup = a.length > 1 ? Long.parseLong(a[1]) : 100_000L;
    Workload w = Workload.get("add2");
    Map<String, Tensor> args = w.newInputs();
    MapFunction fn = w.polyfn();
    for (long i = 0; i < warmup; i++) {
      call(fn, args);
    }
    System.gc();
    long before = rssKb();
    List<String> samples = new ArrayList<>();
    long step = Math.max(1, calls / 10);
    long start = System.nanoTime();
    for (long i = 1; i <= calls; i++) {
      call(fn, args);
      if (i % step == 0) {
        samples.add("[" + i + ", " + rssKb() + "]");
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    System.gc();
    long after = rssKb();
    System.out.printf(
        "{\"calls\": %d, \"warmup_calls\": %d, \"rss_before_kb\": %d, \"rss_after_kb\": %d, "
            + "\"growth_pct\": %.3f, \"seconds\": %.2f, \"us_per_call\": %.3f, \"trace_count\": %d, "
            + "\"samples_calls_rss_kb\": [%s]}%n",
        calls, warmup, before, after, 100.0 * (after - before) / before, seconds, seconds * 1e6 / calls,
        fn.traceCount(), String.join(", ", samples));
    fn.close();
    args.values().forEach(Tensor::close);
  }

  private static void call(MapFunction fn, Map<String, Tensor> args) {
    try (Outputs out = fn.call(args)) {
      if (out.size() != 1) {
        throw new IllegalStateException();
      }
    }
  }

  private static long rssKb() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }
}
