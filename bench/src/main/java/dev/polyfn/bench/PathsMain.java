package dev.polyfn.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The default call path against the thread pool's, alternating in one JVM (issue 27 item 2: the
 * default is the faster of the paths it chooses between). For each workload of {@link
 * FastPathBench.Call}, the function under the default options (the session path after 64 calls,
 * kept only if its trial finds it faster) and the same function with the caller-thread paths off
 * (every call on TensorFlow's thread pool) are defined side by side, warmed up past the
 * promotion and its trial, then sampled in alternating rounds (the order flips every round), as
 * {@link ModelBench} does for loaded models. JMH's separate forks run minutes apart on a machine
 * whose speed drifts by more than the 5 % this target allows; rounds a second apart do not.
 *
 * <p>Prints one JSON object per workload: the median sample of each path, the median of the
 * rounds' ratios (default over thread pool), and the trial's verdict as Polyfn logged it.
 *
 * <p>Usage: {@code PathsMain [rounds] [sampleMs] [workload...]}.
 */
public final class PathsMain {
  private PathsMain() {}

  public static void main(String[] a) throws Exception {
    int rounds = a.length > 0 ? Integer.parseInt(a[0]) : 15;
    long sampleNanos = (a.length > 1 ? Long.parseLong(a[1]) : 200) * 1_000_000L;
    List<String> workloads = new ArrayList<>();
    for (int i = 2; i < a.length; i++) {
      workloads.add(a[i]);
    }
    if (workloads.isEmpty()) {
      workloads.addAll(List.of("add2", "mlp", "matmul512", "args16", "list100", "ew20"));
    }
    Verdicts verdicts = Verdicts.install();
    for (String workload : workloads) {
      FastPathBench.Call chosen = call(workload, "default");
      FastPathBench.Call pooled = call(workload, "pooled");
      try {
        ModelBench.Contender d = contender(chosen);
        ModelBench.Contender p = contender(pooled);
        verdicts.clear();
        ModelBench.warmUp(d, Long.MAX_VALUE);
        String verdict = verdicts.last();
        ModelBench.warmUp(p, Long.MAX_VALUE);
        // The JIT's warm-up, not sampled.
        ModelBench.sample(d, 1_000_000_000L);
        ModelBench.sample(p, 1_000_000_000L);
        double[] ds = new double[rounds];
        double[] ps = new double[rounds];
        double[] ratios = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          if (r % 2 == 0) {
            ds[r] = ModelBench.sample(d, sampleNanos);
            ps[r] = ModelBench.sample(p, sampleNanos);
          } else {
            ps[r] = ModelBench.sample(p, sampleNanos);
            ds[r] = ModelBench.sample(d, sampleNanos);
          }
          ratios[r] = ds[r] / ps[r];
        }
        System.out.printf(Locale.ROOT, "{\"workload\": \"%s\", \"default_us\": %.4g, \"pooled_us\": %.4g, "
                + "\"default_over_pooled\": %.3f, \"rounds\": %d, \"sample_ms\": %d, \"verdict\": \"%s\", "
                + "\"default_samples_us\": %s, \"pooled_samples_us\": %s}%n",
            workload, ModelBench.median(ds), ModelBench.median(ps), ModelBench.median(ratios), rounds,
            sampleNanos / 1_000_000, verdict.replace("\"", "'"), ModelBench.json(ds), ModelBench.json(ps));
      } finally {
        chosen.tearDown();
        pooled.tearDown();
      }
    }
  }

  static FastPathBench.Call call(String workload, String variant) {
    FastPathBench.Call c = new FastPathBench.Call();
    c.workload = workload;
    c.variant = variant;
    c.setUp();
    return c;
  }

  static ModelBench.Contender contender(FastPathBench.Call c) {
    return new ModelBench.Contender() {
      @Override
      public void call() {
        c.fn.call(c.callArgs).close();
      }

      @Override
      public float[] result() {
        throw new UnsupportedOperationException();
      }

      @Override
      public void close() {}
    };
  }

  /** The session path's verdicts, from Polyfn's debug records (the logger's level is set to FINE for them). */
  static final class Verdicts extends Handler {
    /** Held: java.util.logging keeps loggers weakly, and a collected one forgets its level. */
    private static final Logger LOGGER = Logger.getLogger("dev.polyfn");

    private final List<String> seen = new ArrayList<>();

    static Verdicts install() {
      Logger logger = LOGGER;
      logger.setLevel(Level.FINE);
      Verdicts v = new Verdicts();
      v.setLevel(Level.FINE);
      logger.addHandler(v);
      return v;
    }

    @Override
    public synchronized void publish(LogRecord r) {
      String m = r.getMessage();
      if (m != null && (m.contains("keeps its session path") || m.contains("goes back to the eager path"))) {
        seen.add(m);
      }
    }

    synchronized void clear() {
      seen.clear();
    }

    synchronized String last() {
      return seen.isEmpty() ? "none logged (the function never took the session path)" : seen.get(seen.size() - 1);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
