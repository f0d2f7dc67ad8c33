package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Op;
import org.tensorflow.op.Ops;
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

  /** Child JVM: prints "growth <workload> <bytes per cycle>" for each workload (see {@link #closedVariables} for "variable"). */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("variable")) {
      closedVariables();
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

  /** Elements of the probe's variables: 256 MiB of floats. */
  private static final long BIG = 64L << 20;

  private interface Filling {
    /** Fills a new variable (touching its memory) and returns what closes it. */
    AutoCloseable fill() throws Exception;
  }

  /**
   * Child JVM, "variable": a 256 MiB variable, filled, then closed in four ways; prints "given back
   * <case> <kB>", the RSS the close gave back. The closed variables stay referenced (TensorFlow
   * Java's eager handle of each with them) and the functions that took them stay alive: an
   * anonymous variable lives as long as any tensor holding its handle, which kept its memory.
   */
  private static void closedVariables() throws Exception {
    List<Object> kept = new ArrayList<>();
    try (TFloat32 zeros = TFloat32.tensorOf(Shape.of(BIG));
         TFloat32 one = TFloat32.scalarOf(1f);
         MapFunction passed = Function.define((tf, in) -> fillAndSum(tf, in, in.variableInput("v", TFloat32.class)))) {
      givenBack("plain", () -> {
        Variable<TFloat32> v = Variable.create(zeros);
        kept.add(v);
        try (TFloat32 ones = TFloat32.tensorOf(Shape.of(BIG), d -> { for (long i = 0; i < BIG; i++) d.setFloat(1f, i); })) {
          v.assign(ones);
        }
        return v;
      });
      givenBack("passed", () -> {
        Variable<TFloat32> v = Variable.create(zeros);
        kept.add(v);
        for (int i = 0; i < 3; i++) {
          passed.call(Map.of("v", v, "one", one)).close();
        }
        return v;
      });
      Variable<TFloat32> captured = Variable.create(zeros);
      kept.add(captured);
      try (MapFunction capturing = Function.define((tf, in) -> fillAndSum(tf, in, captured.handle(tf)))) {
        givenBack("captured", () -> {
          for (int i = 0; i < 3; i++) {
            capturing.call(Map.of("one", one)).close();
          }
          return captured;
        });
      }
      givenBack("owned", () -> {
        MapFunction owning = Function.define((tf, in) -> fillAndSum(tf, in, in.variable("w", zeros).handle(tf)));
        kept.add(owning);
        for (int i = 0; i < 3; i++) {
          owning.call(Map.of("one", one)).close();
        }
        return owning;
      });
    }
    System.out.println("kept " + kept.size());
  }

  /**
   * Assigns the variable ones (a new buffer, touched, so RSS counts it) and sums it. The ones come
   * from an input: Grappler would fold a fill of constants into a constant the function keeps.
   */
  private static Map<String, Operand<?>> fillAndSum(Ops tf, Inputs in, Operand<?> handle) {
    Op fill = tf.assignVariableOp(handle, tf.fill(tf.constant(new long[] {BIG}), in.input("one", TFloat32.class)));
    return Map.of("y", tf.withControlDependencies(List.of(fill)).sum(tf.readVariableOp(handle, TFloat32.class), tf.constant(0)));
  }

  private static void givenBack(String name, Filling filling) throws Exception {
    AutoCloseable closer = filling.fill();
    long filled = settledRssKb();
    closer.close();
    System.out.println("given back " + name + " " + (filled - settledRssKb()));
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
  void closingAVariableGivesItsMemoryBackWhileItsHandleAndTheFunctionsThatTookItLive() throws Exception {
    // No JavaCPP cap on physical memory (4 x the heap): a variable that stays allocated must show
    // in the result, not as an OutOfMemoryError of the next eager op.
    // oneDNN's allocator (on by default) keeps large freed blocks for reuse, never giving them
    // back to the system: RSS shows what is freed only with TensorFlow's plain allocator.
    String out = ChildJvm.runWith(Map.of("TF_ENABLE_ONEDNN_OPTS", "0"),
        List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", "-Dorg.bytedeco.javacpp.maxPhysicalBytes=0"),
        NativeMemoryLeakTest.class, "variable");
    for (String c : List.of("plain", "passed", "captured", "owned")) {
      String line = out.lines().filter(l -> l.startsWith("given back " + c + " ")).findFirst()
          .orElseThrow(() -> new AssertionError("no line for " + c + "\n" + out));
      long kb = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
      assertTrue(kb > 200 * 1024, "closing a 256 MiB variable (" + c + ") gave back " + kb + " kB of RSS\n" + out);
    }
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
