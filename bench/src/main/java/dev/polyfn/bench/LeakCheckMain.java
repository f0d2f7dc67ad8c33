package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.Variable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.tensorflow.types.TFloat32;

/**
 * The native-memory leak check: RSS (VmRSS of /proc/self/status) over many cycles of what used to
 * keep native memory after {@code close()} (issue 23, item 12). One JSON line per workload:
 *
 * <ul>
 *   <li>{@code define}: define a function, call it once, close it;
 *   <li>{@code load}: {@code Function.load} a saved function, call it, close it;
 *   <li>{@code saveload}: define, call, save, load, call the loaded one, close both;
 *   <li>{@code evict}: one function keeping 4 concrete functions, called with a new shape each
 *       time, so every call traces and evicts the least recently used signature;
 *   <li>{@code variable}: create a variable (a new initial value each time), close it.
 * </ul>
 *
 * Each workload runs a warm-up tenth first (JIT, TensorFlow's one-off caches, allocator arenas);
 * its growth is measured from there to the end (a garbage collection before each reading). Run
 * with a fixed, pre-touched heap so heap growth does not pass for a leak ({@code bench/leak.sh}
 * does). Exit status 1 when a workload grew by {@code maxGrowthPct} or more.
 *
 * <p>Usage: {@code LeakCheckMain [cycles=10000] [evictions=100000] [maxGrowthPct=2]
 * [workloads=define,load,saveload,evict,variable]}
 */
public final class LeakCheckMain {
  /** Cycles between garbage collections. */
  private static final int GC_EVERY = 200;
  private LeakCheckMain() {}

  public static void main(String[] a) throws Exception {
    int cycles = a.length > 0 ? Integer.parseInt(a[0]) : 10_000;
    int evictions = a.length > 1 ? Integer.parseInt(a[1]) : 100_000;
    double maxGrowth = a.length > 2 ? Double.parseDouble(a[2]) : 2.0;
    String[] workloads = (a.length > 3 ? a[3] : "define,load,saveload,evict,variable").split(",");
    Path tmp = Files.createTempDirectory("polyfn-leak");
    boolean failed = false;
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f)) {
      Path saved = tmp.resolve("saved");
      try (MapFunction f = define("saved")) {
        call(f, x);
        f.save(saved);
      }
      for (String w : workloads) {
        Cycle cycle = switch (w) {
          case "define" -> i -> {
            try (MapFunction f = define("leak_define")) {
              call(f, x);
            }
          };
          case "load" -> i -> {
            try (PolymorphicFunction f = Function.load(saved)) {
              call((MapFunction) f, x);
            }
          };
          case "saveload" -> i -> {
            Path dir = tmp.resolve("cycle");
            try (MapFunction f = define("leak_saveload")) {
              call(f, x);
              f.save(dir);
              try (PolymorphicFunction g = Function.load(dir)) {
                call((MapFunction) g, x);
              }
            }
            delete(dir);
          };
          case "evict" -> evictions(tmp);
          case "variable" -> i -> {
            try (TFloat32 init = TFloat32.scalarOf(7f); Variable<TFloat32> v = Variable.create(init)) {
              if (!v.shape().equals(init.shape())) {
                throw new IllegalStateException("a variable of another shape");
              }
            }
          };
          default -> throw new IllegalArgumentException("unknown workload " + w);
        };
        int n = w.equals("evict") ? evictions : cycles;
        failed |= !measure(w, n, cycle, maxGrowth);
      }
    } finally {
      delete(tmp);
    }
    System.exit(failed ? 1 : 0);
  }

  /** The eviction workload: a function keeping 4 signatures, each call a new shape. */
  private static Cycle evictions(Path unused) {
    MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f))),
        FunctionOptions.defaults().withName("leak_evict").withMaxConcreteFunctions(4));
    return i -> {
      // 1,000 shapes in turn: with 4 kept, every call misses, traces and evicts one.
      try (TFloat32 x = TFloat32.tensorOf(org.tensorflow.ndarray.Shape.of(1 + i % 1000))) {
        call(f, x);
      }
    };
  }

  private interface Cycle {
    void run(int i) throws Exception;
  }

  private static MapFunction define(String name) {
    return Function.define((tf, in) -> Map.of("y", tf.math.add(tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)),
        tf.constant(1f))), FunctionOptions.defaults().withName(name));
  }

  private static void call(MapFunction f, TFloat32 x) {
    try (Outputs out = f.call(Map.of("x", x))) {
      if (out.size() != 1) {
        throw new IllegalStateException("expected one output, got " + out.names());
      }
    }
  }

  /** Runs {@code n} cycles after a warm-up of n / 10; prints the workload's JSON line. */
  private static boolean measure(String name, int n, Cycle cycle, double maxGrowth) throws Exception {
    int warmup = Math.max(1, n / 10);
    long start = System.nanoTime();
    for (int i = 0; i < warmup; i++) {
      cycle.run(i);
    }
    long before = settledRssKb();
    List<String> samples = new ArrayList<>();
    int step = Math.max(1, n / 10);
    for (int i = 1; i <= n; i++) {
      cycle.run(warmup + i);
      if (i % GC_EVERY == 0) {
        // Some native memory is freed only when its Java owner is collected (a closed function's
        // small Rust object, TensorFlow Java's eager op outputs): a collection now and then
        // stands for the ones a real heap makes, which this small, idle heap rarely needs.
        System.gc();
      }
      if (i % step == 0) {
        samples.add("[" + i + ", " + rssKb() + "]");
      }
    }
    long after = settledRssKb();
    double growth = 100.0 * (after - before) / before;
    double perCycle = 1024.0 * (after - before) / n;
    boolean ok = growth < maxGrowth;
    System.out.printf(Locale.ROOT,
        "{\"workload\": \"%s\", \"cycles\": %d, \"warmup_cycles\": %d, \"rss_before_kb\": %d, \"rss_after_kb\": %d, "
            + "\"growth_pct\": %.3f, \"bytes_per_cycle\": %.0f, \"max_growth_pct\": %.1f, \"ok\": %b, \"seconds\": %.1f, "
            + "\"samples_cycles_rss_kb\": [%s]}%n",
        name, n, warmup, before, after, growth, perCycle, maxGrowth, ok, (System.nanoTime() - start) / 1e9,
        String.join(", ", samples));
    return ok;
  }

  /** RSS after garbage collection has freed what only the collector frees (forgotten tensors). */
  private static long settledRssKb() throws Exception {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return rssKb();
  }

  private static long rssKb() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }

  private static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
