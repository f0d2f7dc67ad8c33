package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A trace cache directory stays bounded: a function bounded to n concrete functions restores its n
 * newest entries and deletes the older ones (it read and registered every entry it had ever
 * written, kept an arbitrary n, and its definition slowed down with each signature it had seen);
 * files nobody wrote or restored for 30 days are deleted, whatever function wrote them; a restore
 * counts as use. Each run is a fresh child JVM, as a restarted application is.
 */
class TraceCacheRetentionTest {
  private static final MapBody BODY = (tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(1f)));

  /**
   * Child JVM: args = cache dir, the bound (0: none), the lengths of x to call with (comma
   * separated). Prints the restored signatures, then the trace count after the calls.
   */
  public static void main(String[] args) throws Exception {
    int bound = Integer.parseInt(args[1]);
    FunctionOptions options = FunctionOptions.defaults().withName("kept").withTraceCache(Path.of(args[0]));
    try (MapFunction f = Function.define(BODY, bound > 0 ? options.withMaxConcreteFunctions(bound) : options)) {
      System.out.println("restored " + f.concreteFunctions().stream().map(ConcreteFunctionInfo::functionType)
          .map(Object::toString).sorted().collect(Collectors.joining(" | ")));
      for (String n : args[2].split(",")) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(Long.parseLong(n))); var out = f.call(Map.of("x", x))) {
          // Apart in time, so that each entry's modification time tells the order they were written in.
          Thread.sleep(40);
        }
      }
      System.out.println("traceCount " + f.traceCount());
    }
  }

  private static String run(Path dir, int bound, String lengths) throws Exception {
    return ChildJvm.run(TraceCacheRetentionTest.class, dir.toString(), String.valueOf(bound), lengths);
  }

  private static List<Path> entries(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".polyfn-trace") && Files.isRegularFile(p)).sorted().toList();
    }
  }

  private static String restored(String out) {
    return out.lines().filter(l -> l.startsWith("restored")).findFirst().orElseThrow();
  }

  @Test
  void aBoundedFunctionRestoresItsNewestEntriesAndDeletesTheRest(@TempDir Path dir) throws Exception {
    String first = run(dir, 3, "1,2,3,4,5,6");
    assertTrue(first.contains("traceCount 6"), first);
    assertEquals(6, entries(dir).size(), first); // each trace is written, evicted or not
    String second = run(dir, 3, "4,5,6,1");
    String restored = restored(second);
    for (int n : new int[] {4, 5, 6}) {
      assertTrue(restored.contains("TensorSpec(FLOAT, [" + n + "])"), "the newest three are restored: " + second);
    }
    assertEquals(3, restored.split(" \\| ").length, second);
    assertTrue(second.contains("traceCount 1"), second); // [1] was among the older three: deleted, traced again
    // The three kept and [1] written again: the older three were deleted, not read at every start.
    assertEquals(4, entries(dir).size(), second);
  }

  @Test
  void anUnboundedFunctionRestoresEveryEntry(@TempDir Path dir) throws Exception {
    run(dir, 0, "1,2,3,4");
    String second = run(dir, 0, "1,2,3,4");
    assertTrue(second.contains("traceCount 0"), second);
    assertEquals(4, restored(second).split(" \\| ").length, second);
    assertEquals(4, entries(dir).size());
  }

  @Test
  void filesUnusedFor30DaysAreDeletedWhateverFunctionWroteThem(@TempDir Path dir) throws Exception {
    FileTime old = FileTime.from(Instant.now().minus(Duration.ofDays(40)));
    FileTime recent = FileTime.from(Instant.now().minus(Duration.ofDays(2)));
    Path staleEntry = Files.writeString(dir.resolve("0123456789abcdef01234567-0123456789abcdef.polyfn-trace"), "x");
    Path recentEntry = Files.writeString(dir.resolve("fedcba9876543210fedcba98-fedcba9876543210.polyfn-trace"), "x");
    Path leftover = Files.writeString(dir.resolve(".tmp-4711.polyfn-trace.part"), "x");
    Path notOurs = Files.writeString(dir.resolve("notes.polyfn-trace.txt"), "x");
    Path folder = Files.createDirectory(dir.resolve("kept.polyfn-trace"));
    for (Path p : List.of(staleEntry, leftover, notOurs, folder)) {
      Files.setLastModifiedTime(p, old);
    }
    Files.setLastModifiedTime(recentEntry, recent);
    String out = run(dir, 0, "2"); // a trace: its write sweeps the directory
    assertTrue(out.contains("traceCount 1"), out);
    assertFalse(Files.exists(staleEntry), "an entry unused for 40 days stays: " + out);
    assertFalse(Files.exists(leftover), "a temporary file left 40 days ago stays: " + out);
    assertTrue(Files.exists(recentEntry) && Files.exists(notOurs) && Files.isDirectory(folder), out);
    assertEquals(2, entries(dir).size(), out); // the recent foreign entry and the new one
  }

  @Test
  void aRestoreCountsAsUse(@TempDir Path dir) throws Exception {
    run(dir, 0, "2");
    Path entry = entries(dir).get(0);
    Files.setLastModifiedTime(entry, FileTime.from(Instant.now().minus(Duration.ofDays(29))));
    String second = run(dir, 0, "2");
    assertTrue(second.contains("traceCount 0"), second);
    Instant marked = Files.getLastModifiedTime(entry).toInstant();
    assertTrue(marked.isAfter(Instant.now().minus(Duration.ofMinutes(10))),
        "a restored entry keeps its old time and would expire while in use: " + marked);
  }
}
