package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Closed functions, evicted signatures and closed variables give their native memory back: RSS
 * stays flat over many cycles after a warm-up. Each concrete function kept about 45 KB of the
 * eager context's kernel cache after it was released, and each variable its own cached kernels
 * (see {@code polyfn_tf::kernel_cache}). A short version of {@code bench/leak.sh}, in a child JVM
 * with a fixed, pre-touched heap; the bound (20 KB a cycle) is far above the noise and far below
 * the leak.
 */
class NativeMemoryLeakTest {
  private static final long MAX_BYTES_PER_CYCLE = 20_000;

  private interface Cycle {
    void run(int i);
  }

  /** Child JVM: prints "growth <workload> <bytes per cycle>" for each workload. */
  public static void main(String[] args) throws Exception {
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f);
         MapFunction evicting = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f))),
             FunctionOptions.defaults().withName("evicting").withMaxConcreteFunctions(4))) {
      measure("define", 1000, i -> {
        try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(1f))));
             Outputs out = f.call(Map.of("x", x))) {
          check(out);
        }
      });
      measure("evict", 600, i -> {
        // A new shape each call: with 4 kept, every call traces and evicts one.
        try (TFloat32 v = TFloat32.tensorOf(Shape.of(1 + i % 500)); Outputs out = evicting.call(Map.of("x", v))) {
          check(out);
        }
      });
      // One initial value: TensorFlow Java caches an eager Const kernel per distinct constant (its
      // own behaviour for any eager constant, which Polyfn leaves alone), not part of the variable.
      measure("variable", 1500, i -> {
        try (TFloat32 init = TFloat32.scalarOf(7f); Variable<TFloat32> v = Variable.create(init)) {
          if (v.shape().numDimensions() != 0) {
            throw new IllegalStateException("a variable of another shape");
          }
        }
      });
    }
  }

  private static void check(Outputs out) {
    if (out.size() != 1) {
      throw new IllegalStateException("expected one output, got " + out.names());
    }
  }

  /** Runs a warm-up of n / 3 cycles, then n measured ones. */
  private static void measure(String name, int n, Cycle cycle) throws Exception {
    for (int i = 0; i < n / 3; i++) {
      cycle.run(i);
    }
    long before = settledRssKb();
    for (int i = 0; i < n; i++) {
      cycle.run(n + i);
      if (i % 200 == 199) {
        System.gc(); // what a busier heap does: frees what only collection frees (see bench/leak.sh)
      }
    }
    long after = settledRssKb();
    System.out.println("growth " + name + " " + (after - before) * 1024 / n);
  }

  private static long settledRssKb() throws Exception {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS");
  }

  @Test
  void closedFunctionsEvictedSignaturesAndClosedVariablesKeepNoNativeMemory() throws Exception {
    String out = ChildJvm.runWith(List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"), NativeMemoryLeakTest.class);
    List<String> growth = out.lines().filter(l -> l.startsWith("growth ")).toList();
    assertEquals(3, growth.size(), out);
    for (String line : growth) {
      long perCycle = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
      assertTrue(perCycle < MAX_BYTES_PER_CYCLE, line + " bytes a cycle, expected under " + MAX_BYTES_PER_CYCLE + "\n" + out);
    }
  }
}
