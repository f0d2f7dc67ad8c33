package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files that once crashed, hung or exhausted the JVM that loaded them, each loaded in a child
 * JVM with a timeout: a constant whose value lies about its shape or dtype (TensorFlow aborted
 * the process), a function library with a cycle (the first call spun in native code, growing by
 * gigabytes a second), a file that is a link to /dev/zero or a huge sparse file
 * (OutOfMemoryError, even out of Function.define). Now each is refused naming the file, or, for a
 * trace cache entry, skipped with a WARNING and traced anew.
 */
class LoadCrashTest {
  private static final List<String> SMALL_HEAP = List.of("-Xmx256m");

  /** A child JVM, its address space bounded: a regression that grows without bound fails in it, not the machine. */
  private static ChildJvm.Outcome child(List<String> jvm, String... args) throws Exception {
    List<String> options = new java.util.ArrayList<>(List.of("-Xmx512m"));
    options.addAll(jvm); // a later -Xmx wins
    return ChildJvm.outcome(90, 6L << 30, options, FileFixtures.class, args);
  }

  /** The child ended normally, saying {@code expected}. */
  private static void endsWith(ChildJvm.Outcome o, String... expected) {
    assertFalse(o.timedOut(), "the child JVM hung:\n" + o.output());
    assertEquals(0, o.exit(), "the child JVM crashed:\n" + o.output());
    for (String e : expected) {
      assertTrue(o.output().contains(e), "expected \"" + e + "\" in:\n" + o.output());
    }
  }

  private static void refusedNaming(Path file, String why, List<String> jvm, String... args) throws Exception {
    endsWith(child(jvm, args), "refused: " + file + ": ", why);
  }

  /** Cache {@code cache}'s directory name is the body's ("plus", "nested"). */
  private static void skippedAndTraced(Path cache, Path entry, String why, List<String> jvm) throws Exception {
    endsWith(child(jvm, "define", cache.toString(), cache.getFileName().toString()),
        "ignoring trace cache entry " + entry, why, FileFixtures.ANSWER, "traceCount 1");
  }

  @Test
  void aConstantWhoseValueLiesIsRefusedInASavedModelAndSkippedInACacheEntry(@TempDir Path dir) throws Exception {
    Path shape = FileFixtures.save(dir.resolve("shape"), "plus");
    FileFixtures.editSavedModel(shape, FileFixtures.consts(FileFixtures::negativeDimension));
    refusedNaming(shape.resolve("saved_model.pb"), "dimension -3", List.of(), "load", shape.toString());
    Path dtype = FileFixtures.save(dir.resolve("dtype"), "plus");
    FileFixtures.editSavedModel(dtype, FileFixtures.consts(FileFixtures::int32InFloat));
    refusedNaming(dtype.resolve("saved_model.pb"), "declared of dtype 1 whose value has dtype 3", List.of(), "load", dtype.toString());

    Path cache = dir.resolve("plus");
    Path entry = FileFixtures.cache(cache, "plus");
    byte[] intact = Files.readAllBytes(entry);
    FileFixtures.editEntry(entry, FileFixtures.consts(FileFixtures::negativeDimension));
    skippedAndTraced(cache, entry, "dimension -3", List.of());
    Files.write(entry, intact);
    FileFixtures.editEntry(entry, FileFixtures.consts(FileFixtures::int32InFloat));
    skippedAndTraced(cache, entry, "whose value has dtype 3", List.of());
  }

  @Test
  void aFunctionLibraryWithACycleIsRefusedAtLoadAndRestore(@TempDir Path dir) throws Exception {
    Path saved = FileFixtures.save(dir.resolve("m"), "nested");
    FileFixtures.editSavedModel(saved, FileFixtures::cycle);
    refusedNaming(saved.resolve("saved_model.pb"), "call one another in a cycle", List.of("-Xmx1g"), "load", saved.toString());

    Path cache = dir.resolve("nested");
    Path entry = FileFixtures.cache(cache, "nested");
    FileFixtures.editEntry(entry, FileFixtures::cycle);
    skippedAndTraced(cache, entry, "call one another in a cycle", List.of("-Xmx1g"));
  }

  /** Makes {@code file} a link to /dev/zero. */
  private static void zero(Path file) throws Exception {
    Files.deleteIfExists(file);
    Files.createSymbolicLink(file, Path.of("/dev/zero"));
  }

  /** Makes {@code file} a sparse file of {@code bytes}. */
  private static void sparse(Path file, long bytes) throws Exception {
    Files.deleteIfExists(file);
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(bytes);
    }
  }

  @Test
  void linksToDevZeroAndHugeSparseFilesAreRefusedNamingTheFile(@TempDir Path dir) throws Exception {
    Path saved = FileFixtures.save(dir.resolve("m"), "plus");
    Path pb = saved.resolve("saved_model.pb");
    Path json = saved.resolve("assets.extra").resolve("polyfn.json");
    byte[] intactPb = Files.readAllBytes(pb);
    zero(pb);
    refusedNaming(pb, "not a regular file", SMALL_HEAP, "load", saved.toString());
    sparse(pb, 3L << 30);
    refusedNaming(pb, "larger than Polyfn reads", SMALL_HEAP, "load", saved.toString());
    Files.delete(pb);
    Files.write(pb, intactPb);
    zero(json);
    refusedNaming(json, "not a regular file", SMALL_HEAP, "load", saved.toString());
    sparse(json, 1L << 30);
    refusedNaming(json, "larger than Polyfn reads", SMALL_HEAP, "load", saved.toString());

    Path profile = dir.resolve("profile.json");
    zero(profile);
    endsWith(child(SMALL_HEAP, "profile", profile.toString()), "refused: signature profile " + profile + ": ", "not a regular file");

    Path cache = dir.resolve("plus");
    Path entry = FileFixtures.cache(cache, "plus");
    zero(entry);
    skippedAndTraced(cache, entry, "not a regular file", SMALL_HEAP);
    sparse(entry, 3L << 30);
    skippedAndTraced(cache, entry, "larger than Polyfn reads", SMALL_HEAP);
  }
}
