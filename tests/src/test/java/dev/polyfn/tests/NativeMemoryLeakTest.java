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
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Op;
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

  /** Child JVM: prints "growth <workload> <bytes per cycle>" for each workload ("given back <kB>" with "variable"). */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("variable")) {
      closedVariableInALiveFunction();
      return;
    }
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

  /**
   * A 512 MiB variable passed to a function that stays alive, then closed and dropped: prints how
   * much of it RSS gave back. Calls keep a tensor handle for each resource input across calls (a
   * loaded model passes its hundreds of variables at every call); a handle kept for a released
   * variable held its memory until the function was closed.
   */
  private static void closedVariableInALiveFunction() throws Exception {
    // Fills the variable with ones (a new buffer, touched, so RSS counts it) and sums it.
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<?> handle = in.variableInput("v", TFloat32.class);
      Op fill = tf.assignVariableOp(handle, tf.fill(tf.constant(new long[] {128L << 20}), tf.constant(1f)));
      return Map.of("y", tf.withControlDependencies(List.of(fill)).sum(tf.readVariableOp(handle, TFloat32.class), tf.constant(0)));
    })) {
      long x0 = settledRssKb();
      long x1 = plainVariable();
      System.out.println("stage plain before " + x0 + " filled " + x1 + " after " + settledRssKb());
      long filled = useAndCloseAVariable(f);
      // TensorFlow Java's eager handle of the variable goes when the Variable object is collected.
      System.out.println("given back " + (filled - settledRssKb()));
    }
  }

  private static long plainVariable() throws Exception {
    try (TFloat32 init = TFloat32.tensorOf(Shape.of(128L << 20)); Variable<TFloat32> v = Variable.create(init)) {
      try (TFloat32 ones = TFloat32.tensorOf(Shape.of(128L << 20), d -> { for (long i = 0; i < (128L << 20); i++) d.setFloat(1f, i); })) {
        v.assign(ones);
      }
      return settledRssKb();
    }
  }

  /** RSS (kB) after f filled a new variable, which is then closed and no longer referenced. */
  private static long useAndCloseAVariable(MapFunction f) throws Exception {
    try (TFloat32 init = TFloat32.tensorOf(Shape.of(128L << 20)); Variable<TFloat32> v = Variable.create(init)) {
      for (int i = 0; i < 3; i++) {
        f.call(Map.of("v", v)).close();
      }
      return settledRssKb();
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
  void aClosedVariableGivesItsMemoryBackWhileAFunctionThatTookItLives() throws Exception {
    String out = ChildJvm.runWith(List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"), NativeMemoryLeakTest.class, "variable");
    String line = out.lines().filter(l -> l.startsWith("given back ")).findFirst().orElseThrow(() -> new AssertionError(out));
    long kb = Long.parseLong(line.substring("given back ".length()));
    assertTrue(kb > 400 * 1024, "closing a 512 MiB variable gave back " + kb + " kB of RSS\n" + out);
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
