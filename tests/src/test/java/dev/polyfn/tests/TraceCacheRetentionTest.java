package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A trace cache directory stays bounded: a function bounded to n concrete functions restores its n
 * entries used last (written, restored, or kept and run until it was closed) and deletes the
 * older ones (it read and registered every entry it had ever written, kept an arbitrary n, and its
 * definition slowed down with each signature it had seen); cache files nobody wrote or used for 30
 * days are deleted, whatever function wrote them, and nothing else; a restore counts as use. Each run is a fresh child JVM, as a restarted application is.
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

  /**
   * Sets each entry's modification time to {@code base} plus as many minutes as its x has
   * elements (the traced type in the entry says), so "newest" does not hang on the file system's
   * timestamp granularity.
   */
  private static void stampBySignature(Path dir, Instant base) throws Exception {
    for (Path entry : entries(dir)) {
      Matcher m = Pattern.compile("\"shape\":\\[(\\d+)\\]").matcher(Files.readString(entry, StandardCharsets.ISO_8859_1));
      assertTrue(m.find(), "no traced shape in " + entry);
      Files.setLastModifiedTime(entry, FileTime.from(base.plus(Duration.ofMinutes(Long.parseLong(m.group(1))))));
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
    stampBySignature(dir, Instant.now().minus(Duration.ofHours(1)));
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
  void theSignaturesABoundedFunctionKeptAndUsedAreRestoredNotOnesItEvicted(@TempDir Path dir) throws Exception {
    run(dir, 2, "1,2");
    // [1] and [2] restored; [1] used, then [3] traced: the function evicts [2], the least recently used.
    String second = run(dir, 2, "1,1,1,3");
    assertTrue(second.contains("traceCount 1"), second);
    String third = run(dir, 2, "1,3");
    assertTrue(restored(third).contains("TensorSpec(FLOAT, [1])") && restored(third).contains("TensorSpec(FLOAT, [3])"),
        "the hot signature [1] must be restored, not the evicted [2]: " + third);
    assertTrue(third.contains("traceCount 0"), third);
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
    Path userFile = Files.writeString(dir.resolve("mydata.polyfn-trace"), "x"); // named unlike an entry
    Path folder = Files.createDirectory(dir.resolve("0123456789abcdef01234567-00000000000000ff.polyfn-trace"));
    Path target = Files.writeString(dir.resolve("target.txt"), "x");
    Path link = Files.createSymbolicLink(dir.resolve("0123456789abcdef01234567-00000000000000aa.polyfn-trace"), target);
    for (Path p : List.of(staleEntry, leftover, notOurs, userFile, folder, target)) {
      Files.setLastModifiedTime(p, old);
    }
    Files.getFileAttributeView(link, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).setTimes(old, null, null);
    Files.setLastModifiedTime(recentEntry, recent);
    String out = run(dir, 0, "2"); // a trace: its write sweeps the directory
    assertTrue(out.contains("traceCount 1"), out);
    assertFalse(Files.exists(staleEntry), "an entry unused for 40 days stays: " + out);
    assertFalse(Files.exists(leftover), "a temporary file left 40 days ago stays: " + out);
    assertTrue(Files.exists(recentEntry) && Files.exists(notOurs) && Files.exists(userFile), out);
    assertTrue(Files.isDirectory(folder) && Files.isSymbolicLink(link) && Files.exists(target), out);
    List<Path> written = entries(dir).stream().filter(p -> !List.of(recentEntry, userFile, link).contains(p)).toList();
    assertEquals(1, written.size(), "the new entry: " + written);
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
