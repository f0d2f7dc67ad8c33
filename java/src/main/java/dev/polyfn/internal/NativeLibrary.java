package dev.polyfn.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.tensorflow.TensorFlow;

/**
 * Loads Polyfn's JNI library once per JVM, after TensorFlow Java's runtime.
 *
 * <p>The library ships in the jar under {@code dev/polyfn/native/<platform>/}. It is copied to a
 * fresh, uniquely named file (so concurrent JVMs never share or overwrite one), loaded, and the file
 * deleted. Candidate directories are tried in order: {@code -Dpolyfn.native.dir}, {@code
 * java.io.tmpdir}, {@code ~/.cache/polyfn}, the working directory; read-only ones are skipped. Set
 * {@code -Dpolyfn.library.path=/path/libpolyfn_jni.so} to load a library from disk instead. A
 * failure names every place tried and why.
 */
public final class NativeLibrary {
  private static final String LIBRARY = "libpolyfn_jni.so";
  private static volatile String tensorFlowVersion;
  /** True while this thread loads the library (guarded by the class lock). */
  private static boolean loading;

  private NativeLibrary() {}

  /**
   * Loads the library (once), registers its methods and binds it to TensorFlow Java's runtime;
   * returns TensorFlow's version. {@link Native}'s static initializer calls this, so no native
   * method can run before it; a call made while loading (from that initializer) returns null.
   */
  public static String ensureLoaded() {
    String v = tensorFlowVersion;
    if (v != null) {
      return v;
    }
    synchronized (NativeLibrary.class) {
      if (tensorFlowVersion == null && !loading) {
        loading = true;
        try {
          // TensorFlow Java's static initializer loads libtensorflow_cc.so.2, which Polyfn binds to.
          TensorFlow.version();
          load();
          Native.registerNatives();
          tensorFlowVersion = Native.init(TensorFlowInternals.defaultContextAddress(), NativeLog.maxRustLevel());
        } finally {
          loading = false;
        }
      }
      return tensorFlowVersion;
    }
  }

  private static void load() {
    String explicit = System.getProperty("polyfn.library.path");
    if (explicit != null) {
      System.load(Paths.get(explicit).toAbsolutePath().toString());
      return;
    }
    String platform = platform();
    String resource = "/dev/polyfn/native/" + platform + "/" + LIBRARY;
    List<String> failures = new ArrayList<>();
    for (Path dir : candidateDirectories()) {
      Path file = null;
      try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
        if (in == null) {
          throw new UnsatisfiedLinkError(
              "Polyfn's native library for " + platform + " is not in the jar (" + resource + ")");
        }
        Files.createDirectories(dir);
        file = Files.createTempFile(dir, "libpolyfn_jni-", ".so");
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        System.load(file.toAbsolutePath().toString());
        return;
      } catch (IOException | SecurityException | UnsatisfiedLinkError e) {
        if (e instanceof UnsatisfiedLinkError && e.getMessage().contains("is not in the jar")) {
          throw (UnsatisfiedLinkError) e;
        }
        failures.add(dir + ": " + e);
      } finally {
        if (file != null) {
          try {
            // Linux keeps a loaded library mapped after its file is gone.
            Files.deleteIfExists(file);
          } catch (IOException ignored) {
            file.toFile().deleteOnExit();
          }
        }
      }
    }
    throw new UnsatisfiedLinkError(
        "could not load Polyfn's native library; tried " + String.join("; ", failures)
            + ". Set -Dpolyfn.native.dir to a writable directory that allows executable mappings.");
  }

  private static List<Path> candidateDirectories() {
    List<Path> dirs = new ArrayList<>();
    String configured = System.getProperty("polyfn.native.dir");
    if (configured != null) {
      dirs.add(Paths.get(configured));
    }
    dirs.add(Paths.get(System.getProperty("java.io.tmpdir")));
    dirs.add(Paths.get(System.getProperty("user.home"), ".cache", "polyfn"));
    dirs.add(Paths.get("").toAbsolutePath());
    return dirs;
  }

  private static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64"))) {
      return "linux-x86_64";
    }
    throw new UnsatisfiedLinkError(
        "Polyfn ships a native library for linux-x86_64 only; this JVM runs on " + os + "/" + arch);
  }
}
