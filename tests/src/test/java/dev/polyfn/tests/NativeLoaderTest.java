package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.types.TFloat32;

/**
 * The native library loader, in fresh JVMs: it falls back past unwritable directories, and when
 * nothing works it names every place it tried. (Paths under /proc are unwritable even for root.)
 */
class NativeLoaderTest {

  /** Run in a child JVM: loads Polyfn and calls a function; prints the library's file as mapped. */
  public static void main(String[] args) throws Exception {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.neg(in.input("x", TFloat32.class))));
        TFloat32 x = TFloat32.scalarOf(2f);
        Outputs out = f.call(Map.of("x", x))) {
      System.out.println("result " + out.get("y", TFloat32.class).getFloat());
    }
    // The file the kernel mapped: a link's target, or a deleted temporary file's "(deleted)" name.
    for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
      int at = line.indexOf('/');
      if (line.contains("libpolyfn_jni") && at >= 0) {
        System.out.println("mapped " + line.substring(at));
        break;
      }
    }
  }

  static Process child(File workDir, String... properties) throws Exception {
    return child(workDir, List.of(), properties);
  }

  static Process child(File workDir, List<String> jvm, String... properties) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvm);
    // TensorFlow Java's own loader (JavaCPP) keeps its extracted runtime under user.home unless
    // told otherwise: reuse this JVM's, so only Polyfn's loader meets the unwritable directories.
    String javacppCache = System.getProperty("org.bytedeco.javacpp.cachedir",
        Path.of(System.getProperty("user.home"), ".javacpp", "cache").toString());
    cmd.add("-Dorg.bytedeco.javacpp.cachedir=" + javacppCache);
    for (String p : properties) {
      cmd.add("-D" + p);
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(NativeLoaderTest.class.getName());
    return new ProcessBuilder(cmd).directory(workDir).redirectErrorStream(true).start();
  }

  static String output(Process p) throws Exception {
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child JVM timed out");
    return text;
  }

  @Test
  void anUnwritableTempDirectoryFallsBackToTheNextCandidate(@TempDir Path home) throws Exception {
    Process p = child(home.toFile(), "polyfn.native.cache=/proc/polyfn-cache",
        "java.io.tmpdir=/proc/polyfn-unwritable", "user.home=" + home);
    String out = output(p);
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("result -2.0"), out);
    assertTrue(Files.isDirectory(home.resolve(".cache/polyfn")), "extracted under ~/.cache/polyfn");
    try (var files = Files.list(home.resolve(".cache/polyfn"))) {
      assertEquals(0, files.count(), "the extracted copy is deleted once loaded");
    }
  }

  @Test
  void whenNoDirectoryWorksTheErrorNamesEveryPlaceTried() throws Exception {
    Process p = child(new File("/proc"), "polyfn.native.cache=/proc/polyfn-d", "java.io.tmpdir=/proc/polyfn-a",
        "user.home=/proc/polyfn-b", "polyfn.native.dir=/proc/polyfn-c");
    String out = output(p);
    assertTrue(p.exitValue() != 0, out);
    assertTrue(out.contains("UnsatisfiedLinkError") && out.contains("could not load Polyfn's native library"), out);
    assertTrue(out.contains("native library for linux-x86_64"), out);
    for (String tried : new String[] {"/proc/polyfn-d (the cache)", "/proc/polyfn-c", "/proc/polyfn-a",
        "/proc/polyfn-b/.cache/polyfn", "/proc:"}) {
      assertTrue(out.contains(tried), "should name " + tried + ": " + out);
    }
    assertTrue(out.contains("-Dpolyfn.native.dir"), out);
  }

  @Test
  void concurrentJvmsLoadFromTheSameDirectory(@TempDir Path shared) throws Exception {
    List<Process> children = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      children.add(child(shared.toFile(), "polyfn.native.cache=/proc/polyfn-cache", "polyfn.native.dir=" + shared));
    }
    for (Process p : children) {
      String out = output(p);
      assertEquals(0, p.exitValue(), out);
      assertTrue(out.contains("result -2.0"), out);
    }
  }

  /** The files under a cache directory (relative paths), left-over temporary files included. */
  static List<String> files(Path dir) throws Exception {
    try (var s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).map(f -> dir.relativize(f).toString()).sorted().toList();
    }
  }

  @Test
  void concurrentFirstStartsShareOneCachedLibrary(@TempDir Path cache) throws Exception {
    List<Process> children = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      children.add(child(cache.toFile(), "polyfn.native.cache=" + cache));
    }
    for (Process p : children) {
      String out = output(p);
      assertEquals(0, p.exitValue(), out);
      assertTrue(out.contains("result -2.0"), out);
    }
    List<String> files = files(cache);
    assertEquals(1, files.size(), "one library, no temporary file left: " + files);
    assertTrue(files.get(0).matches("[0-9a-f]{16}-[0-9a-f]+/libpolyfn_jni\\.so"), files.toString());
  }

  @Test
  void aLaterStartLoadsTheCachedLibraryWithoutWritingIt(@TempDir Path cache) throws Exception {
    Process first = child(cache.toFile(), "polyfn.native.cache=" + cache);
    String firstOut = output(first);
    assertEquals(0, first.exitValue(), firstOut);
    Path lib = cache.resolve(files(cache).get(0));
    Object inode = Files.readAttributes(lib, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
    java.nio.file.attribute.FileTime written = Files.getLastModifiedTime(lib);
    Thread.sleep(20);
    Process second = child(cache.toFile(), "polyfn.native.cache=" + cache);
    String out = output(second);
    assertEquals(0, second.exitValue(), out);
    assertTrue(out.contains("result -2.0"), out);
    assertEquals(inode, Files.readAttributes(lib, java.nio.file.attribute.BasicFileAttributes.class).fileKey());
    assertEquals(written, Files.getLastModifiedTime(lib));
    assertEquals(List.of(cache.relativize(lib).toString()), files(cache));
  }

  @Test
  void aDamagedCachedLibraryIsReplaced(@TempDir Path cache) throws Exception {
    Process first = child(cache.toFile(), "polyfn.native.cache=" + cache);
    String firstOut = output(first);
    assertEquals(0, first.exitValue(), firstOut);
    Path lib = cache.resolve(files(cache).get(0));
    byte[] good = Files.readAllBytes(lib);
    byte[] damaged = good.clone();
    java.util.Arrays.fill(damaged, 0, 4096, (byte) 0x5a);   // same size, a broken ELF header
    Files.write(lib, damaged);
    Process second = child(cache.toFile(), "polyfn.native.cache=" + cache);
    String out = output(second);
    assertEquals(0, second.exitValue(), out);
    assertTrue(out.contains("result -2.0"), out);
    assertTrue(java.util.Arrays.equals(good, Files.readAllBytes(lib)), "the cached library was rewritten");
  }

  @Test
  void theMissingRuntimeMessageNamesTheRunningPlatform(@TempDir Path dir) throws Exception {
    // JavaCPP's platform name, overridden as on another machine: TensorFlow Java then finds no
    // runtime for it, and the message names that platform's classifier, not linux-x86_64's.
    Process p = child(dir.toFile(), "org.bytedeco.javacpp.platform=linux-arm64", "polyfn.native.cache=" + dir);
    String out = output(p);
    assertTrue(p.exitValue() != 0, out);
    assertTrue(out.contains("for this platform (linux-arm64)"), out);
    assertTrue(out.contains("with classifier linux-arm64."), out);
    assertTrue(!out.contains("linux-x86_64-gpu"), out);
  }
}
