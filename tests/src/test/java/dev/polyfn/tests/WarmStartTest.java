package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.TensorSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * The trace cache across restarts, beyond {@link TraceCacheTest}: list and map parameters, example
 * inputs served by restored entries, JVMs sharing one directory at once, and a JVM that exits at
 * once after its last trace (its entries written, its exit not delayed by the idle writer).
 */
class WarmStartTest {
  private static final AtomicInteger BODY_RUNS = new AtomicInteger();

  private static final MapBody LISTS = (tf, in) -> {
    BODY_RUNS.incrementAndGet();
    var xs = in.list("xs", TFloat32.class);
    var feats = in.map("feats", TFloat32.class);
    return Map.of("y", tf.math.add(tf.math.add(xs.get(0), xs.get(xs.size() - 1)), feats.get("w")));
  };

  private static final MapBody SCALED = (tf, in) -> {
    BODY_RUNS.incrementAndGet();
    return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(3f)));
  };

  /** Child JVM: args = mode ("lists", "examples"), cache dir. Prints results and counts. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    if (args[0].equals("lists")) {
      try (MapFunction f = Function.define(LISTS, FunctionOptions.defaults().withName("lists").withTraceCache(dir));
           TFloat32 a = TFloat32.vectorOf(1f, 2f);
           TFloat32 b = TFloat32.vectorOf(10f, 20f);
           var out = f.call(Map.of("xs", List.of(a, b), "feats", Map.of("w", a)))) {
        TFloat32 y = out.get("y", TFloat32.class);
        System.out.println("result " + y.getFloat(0) + " " + y.getFloat(1));
        System.out.println("traceCount " + f.traceCount());
      }
    } else {
      FunctionOptions options = FunctionOptions.defaults().withName("examples").withTraceCache(dir)
          .withExampleInputs(List.of(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3)))));
      try (MapFunction f = Function.define(SCALED, options);
           TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f);
           var out = f.call(Map.of("x", x))) {
        System.out.println("result " + out.get("y", TFloat32.class).getFloat(2));
        System.out.println("traceCount " + f.traceCount());
      }
    }
    System.out.println("bodyRuns " + BODY_RUNS.get());
    System.out.println("end " + System.currentTimeMillis());
  }

  private static String run(String mode, Path dir) throws Exception {
    return ChildJvm.run(WarmStartTest.class, mode, dir.toString());
  }

  private static long entries(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".polyfn-trace")).count();
    }
  }

  @Test
  void listAndMapParametersWarmStart(@TempDir Path dir) throws Exception {
    String first = run("lists", dir);
    assertTrue(first.contains("traceCount 1"), first);
    assertEquals(1, entries(dir)); // written before the JVM exited, right after the trace
    String second = run("lists", dir);
    assertTrue(second.contains("result 12.0 24.0"), second);
    assertTrue(second.contains("traceCount 0") && second.contains("bodyRuns 0"), second);
  }

  @Test
  void exampleInputsServedByRestoredEntriesAreNotTracedAgain(@TempDir Path dir) throws Exception {
    String first = run("examples", dir);
    assertTrue(first.contains("traceCount 1") && first.contains("result 9.0"), first);
    String second = run("examples", dir);
    assertTrue(second.contains("traceCount 0") && second.contains("bodyRuns 0"), second);
    assertTrue(second.contains("result 9.0"), second);
  }

  @Test
  void exitIsNotDelayedByTheIdleWriter(@TempDir Path dir) throws Exception {
    // The writer thread used to keep the JVM alive for its 2 s idle timeout after main returned.
    long start = System.currentTimeMillis();
    String out = run("lists", dir);
    long exited = System.currentTimeMillis();
    long end = out.lines().filter(l -> l.startsWith("end ")).mapToLong(l -> Long.parseLong(l.substring(4))).findFirst()
        .orElseThrow();
    assertTrue(end >= start, out);
    assertTrue(exited - end < 1500, "the JVM took " + (exited - end) + " ms to exit after main returned");
    assertEquals(1, entries(dir));
  }

  @Test
  void concurrentJvmsShareOneDirectory(@TempDir Path dir) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<String>> runs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        runs.add(pool.submit(() -> run("lists", dir)));
      }
      for (Future<String> r : runs) {
        String out = r.get();
        assertTrue(out.contains("result 12.0 24.0"), out);
      }
    } finally {
      pool.shutdown();
    }
    assertEquals(1, entries(dir)); // the same key and type: one file, replaced whole
    try (Stream<Path> files = Files.list(dir)) {
      assertFalse(files.anyMatch(p -> p.getFileName().toString().startsWith(".tmp-")), "a temporary file was left");
    }
    String after = run("lists", dir);
    assertTrue(after.contains("traceCount 0") && !after.contains("ignoring trace cache entry"), after);
  }
}
