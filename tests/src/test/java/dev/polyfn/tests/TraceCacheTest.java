package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.MapBody;
import dev.polyfn.internal.PolyfnVersions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TFloat32;

/**
 * Warm start ({@link FunctionOptions#withTraceCache}): a JVM that calls signatures an earlier JVM
 * traced runs them without tracing, unless the body's class changed or the entries are damaged.
 * Each run is a fresh child JVM, as a restarted application is.
 */
class TraceCacheTest {
  private static final AtomicInteger BODY_RUNS = new AtomicInteger();

  /**
   * Child JVM: args = cache dir, which body ("here" or "other"), optionally the Polyfn version to
   * play. Prints counts and results.
   */
  public static void main(String[] args) throws Exception {
    if (args.length > 2) {
      PolyfnVersions.pretend(args[2]);
    }
    MapBody body = args[1].equals("here")
        ? (tf, in) -> {
          BODY_RUNS.incrementAndGet();
          return Map.of("y", tf.math.add(tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)), tf.constant(1f)));
        }
        : OtherBody.BODY;
    try (MapFunction f = Function.define(body, FunctionOptions.defaults().withName("warm")
        .withTraceCache(Path.of(args[0]), "v1"))) {
      float[][] inputs = {{1f, 2f, 3f}, {4f, 5f}};
      for (float[] values : inputs) {
        try (TFloat32 x = TFloat32.vectorOf(values); var out = f.call(Map.of("x", x))) {
          float[] y = StdArrays.array1dCopyOf(out.get("y", TFloat32.class));
          System.out.println("result " + java.util.Arrays.toString(y));
        }
      }
      try (TFloat32 x = TFloat32.tensorOf(Shape.of(2, 2)); var out = f.call(Map.of("x", x))) {
        System.out.println("result shape " + out.get("y").shape());
      }
      System.out.println("traceCount " + f.traceCount());
      System.out.println("bodyRuns " + BODY_RUNS.get());
    }
  }

  /** The same computation in another class: its class file differs, so the key does. */
  static final class OtherBody {
    static final MapBody BODY = (tf, in) -> {
      BODY_RUNS.incrementAndGet();
      return Map.of("y", tf.math.add(tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f)), tf.constant(1f)));
    };
  }

  private static String run(Path dir, String body) throws Exception {
    return ChildJvm.run(TraceCacheTest.class, dir.toString(), body);
  }

  private static String runAs(Path dir, String polyfnVersion) throws Exception {
    return ChildJvm.run(TraceCacheTest.class, dir.toString(), "here", polyfnVersion);
  }

  private static String results(String out) {
    return out.lines().filter(l -> l.startsWith("result")).collect(Collectors.joining("\n"));
  }

  private static List<Path> entries(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".polyfn-trace")).sorted().toList();
    }
  }

  @Test
  void aRestartedJvmCallsKnownSignaturesWithoutTracing(@TempDir Path dir) throws Exception {
    String first = run(dir, "here");
    assertTrue(first.contains("traceCount 3"), first); // shapes [3], [2] and [2, 2]: one trace each
    assertTrue(first.contains("bodyRuns 3"), first);
    assertEquals(3, entries(dir).size(), first);
    String second = run(dir, "here");
    assertTrue(second.contains("traceCount 0"), second);
    assertTrue(second.contains("bodyRuns 0"), second);
    assertEquals(results(first), results(second));
    assertTrue(results(first).contains("result [3.0, 5.0, 7.0]"), first);
  }

  @Test
  void aBodyInAnotherClassRetraces(@TempDir Path dir) throws Exception {
    run(dir, "here");
    String other = run(dir, "other");
    assertTrue(other.contains("traceCount 3"), other);
    assertTrue(other.contains("bodyRuns 3"), other);
  }

  @Test
  void aCorruptEntryIsIgnoredWithAWarning(@TempDir Path dir) throws Exception {
    String first = run(dir, "here");
    List<Path> files = entries(dir);
    assertEquals(3, files.size(), first);
    byte[] bytes = Files.readAllBytes(files.get(0));
    Files.write(files.get(0), java.util.Arrays.copyOf(bytes, bytes.length / 2)); // truncated
    Files.write(files.get(1), "not an entry".getBytes(StandardCharsets.UTF_8)); // foreign
    String second = run(dir, "here");
    assertTrue(second.contains("ignoring trace cache entry " + files.get(0)), second);
    assertTrue(second.contains("ignoring trace cache entry " + files.get(1) + ": not a Polyfn trace cache entry"), second);
    assertTrue(second.contains("traceCount 2"), second); // the third entry was restored
    assertEquals(results(first), results(second));
  }

  @Test
  void entriesOfAnotherPolyfnVersionAreNotRestored(@TempDir Path dir) throws Exception {
    String older = runAs(dir, "0.1.0 native=0123456789abcdef-10");
    assertTrue(older.contains("traceCount 3"), older);
    // Used to restore the older build's entries: another wire format or tracing would be served.
    String newer = runAs(dir, "0.2.0 native=0123456789abcdef-10");
    assertTrue(newer.contains("traceCount 3"), newer);
    assertEquals(results(older), results(newer));
    String rebuilt = runAs(dir, "0.1.0 native=fedcba9876543210-10"); // same version, another native library
    assertTrue(rebuilt.contains("traceCount 3"), rebuilt);
    String again = runAs(dir, "0.1.0 native=0123456789abcdef-10");
    assertTrue(again.contains("traceCount 0"), again); // each build keeps its own entries
  }

  @Test
  void aCacheDirectoryOthersMayWriteIsNotUsed(@TempDir Path parent) throws Exception {
    Path dir = parent.resolve("cache");
    String first = run(dir, "here");
    assertTrue(first.contains("traceCount 3"), first);
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)), "made private");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    String shared = run(dir, "here");
    // Used to restore whatever was there: another user could have planted an entry.
    assertTrue(shared.contains("traceCount 3"), shared);
    assertTrue(shared.contains("trace cache " + dir + " is not used: it is writable by group or others (mode 777)"),
        shared);
    assertEquals(results(first), results(shared));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwxrwxr-x"));
    String above = run(dir, "here");
    assertTrue(above.contains("traceCount 3"), above);
    assertTrue(above.contains("is not used: " + parent + " (above it) is writable by group or others"), above);
    Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwx------"));
    String again = run(dir, "here");
    assertTrue(again.contains("traceCount 0"), again); // private again: the first run's entries restore
  }

  @Test
  void anEntryOthersMayWriteIsNotRead(@TempDir Path dir) throws Exception {
    String first = run(dir, "here");
    List<Path> files = entries(dir);
    assertEquals(3, files.size(), first);
    Files.setPosixFilePermissions(files.get(0), PosixFilePermissions.fromString("rw-rw-rw-"));
    String second = run(dir, "here");
    assertTrue(second.contains("ignoring trace cache entry " + files.get(0)
        + ": it is writable by group or others (mode 666)"), second);
    assertTrue(second.contains("traceCount 1"), second); // the other two were restored
    assertEquals(results(first), results(second));
    String third = run(dir, "here");
    assertTrue(third.contains("traceCount 0"), third); // the retrace rewrote that entry, private
  }

  /** A record holding a Java value: its trace would be typed by this JVM's id of that value. */
  record Scaled(TFloat32 x, int n) {}

  @Test
  void bodiesWithCapturedValuesJavaParametersVariablesOrNestsAreNotCached(@TempDir Path dir) throws Exception {
    float scale = 3f; // a captured value: not in any class file, so not in the key
    FunctionOptions options = FunctionOptions.defaults().withTraceCache(dir);
    try (MapFunction captures = Function.define(
            (tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(scale))),
            options.withName("captures"));
        // A Java value of a class without a text form (a number, boolean or string is cached: TraceCacheJavaValuesTest).
        MapFunction javaValue = Function.define(
            (tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class),
                tf.constant((float) ((Number) in.javaInput("n", Object.class)).intValue()))),
            options.withName("javaValue"));
        MapFunction variable = Function.define(
            (tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class),
                in.variable("v", TFloat32.scalarOf(2f)).read(tf))),
            options.withName("variable"));
        MapFunction record = Function.define((tf, in) -> {
              dev.polyfn.RecordInput<Scaled> r = in.record("r", Scaled.class);
              return Map.of("y", tf.math.mul(r.get(Scaled::x), tf.constant((float) r.value(Scaled::n))));
            }, options.withName("record"));
        MapFunction plain = Function.define(
            (tf, in) -> Map.of("y", tf.math.neg(in.input("x", TFloat32.class))), options.withName("plain"));
        TFloat32 x = TFloat32.vectorOf(1f)) {
      captures.call(Map.of("x", x)).close();
      javaValue.call(Map.of("x", x, "n", 4)).close();
      variable.call(Map.of("x", x)).close();
      record.call(Map.of("r", new Scaled(x, 3))).close();
      plain.call(Map.of("x", x)).close();
      // Entries are written in trace order by one thread: once plain's is there, the others' would be.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (entries(dir).isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertEquals(1, entries(dir).size(), "only the plain function is cached");
    }
  }

  /**
   * An output name of 64 KiB or more does not fit an entry: the trace is not cached, and the call
   * succeeds (the entry's writer failed the call: "UTFDataFormatException: encoded string ... too
   * long"; found by a read-only review).
   */
  @Test
  void aNameTooLongForAnEntryFailsNoCall(@TempDir Path dir) throws Exception {
    String name = "k".repeat(70_000);
    try (MapFunction f = Function.define((tf, in) -> Map.of(name, tf.math.add(in.input("x", TFloat32.class),
            tf.constant(1f))), FunctionOptions.defaults().withName("long_names").withTraceCache(dir));
         TFloat32 x = TFloat32.scalarOf(2f);
         var out = f.call(Map.of("x", x))) {
      assertEquals(3f, ((TFloat32) out.get(name)).getFloat());
    }
  }
}
