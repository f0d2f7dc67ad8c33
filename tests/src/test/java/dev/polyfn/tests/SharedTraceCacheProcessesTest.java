package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Several JVMs, each with several threads, sharing one trace cache directory, as workers on one
 * shared disk do: functions bounded to 3 concrete functions called with 10 signatures each, so
 * each definition restores from files other JVMs are writing, overwriting and deleting (a bounded
 * function deletes its entries beyond its bound). Every result is checked against the value
 * computed here in Java (integer-valued floats: exact); outcomes are counted: wrong results and
 * crashed JVMs must be none. The four JVMs start on an empty native library cache, which they
 * all fill at once. And a JVM killed while it writes entries leaves none that a later JVM serves
 * wrongly.
 */
class SharedTraceCacheProcessesTest {
  /** Serializable lambdas: keyed by their method, so every JVM and thread reads the others' entries. */
  private static final MapBody AFFINE = (MapBody & Serializable) (tf, in) ->
      Map.of("y", tf.math.add(tf.math.mul(in.input("x", TFloat32.class), tf.constant(3f)), tf.constant(1f)));
  private static final MapBody SQUARE = (MapBody & Serializable) (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    return Map.of("y", tf.math.sub(tf.math.mul(x, x), tf.constant(2f)));
  };
  private static final MapBody PAIR = (MapBody & Serializable) (tf, in) -> {
    var xs = in.list("xs", TFloat32.class);
    return Map.of("y", tf.math.sub(tf.math.mul(xs.get(0), tf.constant(2f)), xs.get(xs.size() - 1)));
  };
  private static final String[] NAMES = {"shared_affine", "shared_square", "shared_pair"};
  private static final MapBody[] BODIES = {AFFINE, SQUARE, PAIR};

  /** What function {@code f} returns for an element {@code a} (and {@code b}, the last list element). */
  private static float expected(int f, float a, float b) {
    return switch (f) {
      case 0 -> a * 3f + 1f;
      case 1 -> a * a - 2f;
      default -> a * 2f - b;
    };
  }

  /**
   * Child JVM. {@code stress dir seed threads rounds}: threads define, call and close the three
   * functions; prints the outcome line. {@code write dir}: traces one signature after another
   * until killed. {@code verify dir n}: calls every function at the first n signatures.
   */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    SharedFilesHarness.Counts counts = new SharedFilesHarness.Counts();
    long[] restoredAndTraced = new long[2];
    switch (args[0]) {
      case "stress" -> {
        long seed = Long.parseLong(args[2]);
        int rounds = Integer.parseInt(args[4]);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < Integer.parseInt(args[3]); t++) {
          Random random = new Random(seed * 31 + t);
          threads.add(new Thread(() -> {
            for (int r = 0; r < rounds; r++) {
              int f = random.nextInt(BODIES.length);
              int[] sizes = new int[8];
              for (int i = 0; i < sizes.length; i++) {
                sizes[i] = 1 + random.nextInt(10); // 10 signatures per function, 3 kept
              }
              round(dir, f, 3, sizes, random, counts, restoredAndTraced);
            }
          }, "stress-" + t));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
          t.join();
        }
      }
      case "write" -> {
        // Unbounded: every entry stays, so the kill can land in any write.
        try (MapFunction f = Function.define(AFFINE, options(dir, 0, 0))) {
          for (int n = 1; ; n++) {
            try (TFloat32 x = TFloat32.tensorOf(Shape.of(n)); Outputs out = f.call(Map.of("x", x))) {
              System.out.println("traced " + n);
            }
          }
        }
      }
      default -> {
        int n = Integer.parseInt(args[2]);
        int[] sizes = new int[n];
        for (int i = 0; i < n; i++) {
          sizes[i] = i + 1;
        }
        round(dir, 0, 0, sizes, new Random(1), counts, restoredAndTraced);
      }
    }
    System.out.println(counts.line("restored=" + restoredAndTraced[0] + " traced=" + restoredAndTraced[1]));
  }

  private static FunctionOptions options(Path dir, int f, int bound) {
    FunctionOptions o = FunctionOptions.defaults().withName(NAMES[f]).withTraceCache(dir);
    return bound > 0 ? o.withMaxConcreteFunctions(bound) : o;
  }

  /** Defines function {@code f}, calls it once per size (vectors of that length), checks each result, closes it. */
  private static void round(Path dir, int f, int bound, int[] sizes, Random random, SharedFilesHarness.Counts counts,
      long[] restoredAndTraced) {
    try (MapFunction fn = Function.define(BODIES[f], options(dir, f, bound))) {
      synchronized (restoredAndTraced) {
        restoredAndTraced[0] += fn.concreteFunctions().size();
      }
      for (int n : sizes) {
        float[] a = new float[n];
        float[] b = new float[n];
        for (int i = 0; i < n; i++) {
          a[i] = random.nextInt(41) - 20;
          b[i] = random.nextInt(41) - 20;
        }
        call(fn, f, a, b, counts);
      }
      synchronized (restoredAndTraced) {
        restoredAndTraced[1] += fn.traceCount();
      }
    } catch (RuntimeException e) {
      counts.error(e);
    }
  }

  private static void call(MapFunction fn, int f, float[] a, float[] b, SharedFilesHarness.Counts counts) {
    try (TFloat32 x = TFloat32.vectorOf(a); TFloat32 last = TFloat32.vectorOf(b);
         Outputs out = f == 2 ? fn.call(Map.of("xs", List.of(x, last))) : fn.call(Map.of("x", x))) {
      TFloat32 y = out.get("y", TFloat32.class);
      if (!y.shape().equals(Shape.of(a.length))) {
        counts.wrong(NAMES[f] + ": shape " + y.shape() + " for a vector of " + a.length);
        return;
      }
      for (int i = 0; i < a.length; i++) {
        float want = expected(f, a[i], b[i]);
        if (y.getFloat(i) != want) {
          counts.wrong(NAMES[f] + "[" + a.length + "] element " + i + ": " + y.getFloat(i) + ", expected " + want);
          return;
        }
      }
      counts.right.incrementAndGet();
    } catch (RuntimeException e) {
      counts.error(e);
    }
  }

  private static List<Path> files(Path dir, String suffix) throws Exception {
    try (Stream<Path> list = Files.list(dir)) {
      return list.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
    }
  }

  @Test
  void fourJvmsOfThreeThreadsShareOneBoundedCache(@TempDir Path dir, @TempDir Path logs) throws Exception {
    Path cache = dir.resolve("cache");
    List<String[]> args = new ArrayList<>();
    for (int child = 0; child < 4; child++) {
      args.add(new String[] {"stress", cache.toString(), String.valueOf(4711 + child), "3", "8"});
    }
    // An empty native library cache too: the four JVMs extract Polyfn's library into it at once.
    Path nativeCache = dir.resolve("native");
    List<String> out = SharedFilesHarness.runAll(logs, List.of("-Dpolyfn.native.cache=" + nativeCache),
        SharedTraceCacheProcessesTest.class, args);
    SharedFilesHarness.Counts total = SharedFilesHarness.sum(out);
    String all = String.join("\n----\n", out);
    // 4 JVMs x 3 threads x 8 rounds x 8 calls.
    assertEquals(768, total.right.get() + total.errors.get() + total.wrong.get(), all);
    assertEquals(0, total.wrong.get(), "wrong results:\n" + all);
    assertEquals(0, total.errors.get(), "a call or definition failed:\n" + all);
    assertEquals(0, SharedFilesHarness.linesWith(out, "ignoring trace cache entry"), "an entry was read half-written or damaged:\n" + all);
    assertEquals(0, SharedFilesHarness.linesWith(out, "could not be written"), all);
    long restored = out.stream().mapToLong(o -> Long.parseLong(o.replaceAll("(?s).*restored=(\\d+).*", "$1"))).sum();
    assertTrue(restored > 0, "no definition restored an entry another JVM or thread wrote:\n" + all);
    assertEquals(List.of(), files(cache, ".part"), "temporary files left by JVMs that exited normally");
    try (Stream<Path> copies = Files.walk(nativeCache)) {
      List<String> names = copies.filter(Files::isRegularFile).map(p -> p.getFileName().toString()).toList();
      assertEquals(List.of("libpolyfn_jni.so"), names, "one library, no temporary file left: " + names);
    }
  }

  @Test
  void aJvmKilledWhileWritingLeavesNothingServedWrongly(@TempDir Path dir, @TempDir Path logs) throws Exception {
    Path cache = dir.resolve("cache");
    int[] killAfter = {15, 40, 70};
    for (int i = 0; i < killAfter.length; i++) {
      Path log = logs.resolve("writer-" + i + ".log");
      Process writer = ChildJvm.start(log, List.of(), SharedTraceCacheProcessesTest.class, "write", cache.toString());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (!Files.readString(log, StandardCharsets.ISO_8859_1).contains("traced " + killAfter[i] + "\n")) {
        assertTrue(writer.isAlive() && System.nanoTime() < deadline, Files.readString(log, StandardCharsets.ISO_8859_1));
        Thread.sleep(5);
      }
      writer.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // in the middle of its next traces' writes
    }
    // Never read (not named as entries); deleted by the sweep after 30 days.
    System.out.println("entries " + files(cache, ".polyfn-trace").size() + ", temporary files left by the kills: "
        + files(cache, ".part").size());
    // A later JVM restores whatever the killed ones left and must serve each signature right.
    List<String> out = SharedFilesHarness.runAll(logs, SharedTraceCacheProcessesTest.class,
        List.<String[]>of(new String[] {"verify", cache.toString(), "80"}));
    SharedFilesHarness.Counts total = SharedFilesHarness.sum(out);
    assertEquals(80, total.right.get(), out.get(0));
    assertEquals(0, total.wrong.get() + total.errors.get(), out.get(0));
    assertTrue(out.get(0).matches("(?s).*restored=([1-9]\\d).*"), "the killed JVMs' entries were restored:\n" + out.get(0));
  }
}
