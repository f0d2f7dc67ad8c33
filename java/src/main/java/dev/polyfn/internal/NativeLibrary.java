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
import org.bytedeco.javacpp.Pointer;
import org.tensorflow.TensorFlow;

/**
 * Loads Polyfn's JNI library once per JVM, after TensorFlow Java's runtime.
 *
 * <p>The library ships in the jar under {@code dev/polyfn/native/<platform>/}, where platform is
 * named as TensorFlow Java's native classifiers are ({@code linux-x86_64}, {@code linux-arm64},
 * {@code macosx-arm64}, {@code windows-x86_64}); it is looked up through the class loader, so a
 * separate jar holding another platform's directory works too. It is copied to a
 * fresh, uniquely named file (so concurrent JVMs never share or overwrite one), loaded, and the file
 * deleted. Candidate directories are tried in order: {@code -Dpolyfn.native.dir}, {@code
 * java.io.tmpdir}, {@code ~/.cache/polyfn}, the working directory; read-only ones are skipped. Set
 * {@code -Dpolyfn.library.path=/path/libpolyfn_jni.so} to load a library from disk instead. A
 * failure names every place tried and why.
 */
public final class NativeLibrary {
  private static volatile String tensorFlowVersion;
  /** True while this thread loads the library (guarded by the class lock). */
  private static boolean loading;

  /** The package Polyfn reads TensorFlow Java's native handles from, by deep reflection. */
  private static final String OPENED = "org.tensorflow";
  /** JavaCPP's package, whose reference counts Polyfn reads by deep reflection. */
  private static final String JAVACPP = "org.bytedeco.javacpp";
  /** A package of TensorFlow Java that its module does not export and Polyfn uses. */
  private static final String EXPORTED = "org.tensorflow.internal.types.registry";

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
        String flags = missingModuleFlags();
        if (!flags.isEmpty()) {
          throw new IllegalStateException("TensorFlow Java is on the module path and Polyfn reaches "
              + "its native handles, type registry and JavaCPP's reference counts: start the JVM with " + flags);
        }
        loading = true;
        try {
          loadTensorFlow();
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

  /**
   * The JVM flags Polyfn still needs, or "" when it needs none (TensorFlow Java on the class path,
   * or the flags given). Polyfn's module is {@code dev.polyfn} on the module path, ALL-UNNAMED on
   * the class path.
   */
  public static String missingModuleFlags() {
    Module tensorFlow = TensorFlow.class.getModule();
    if (!tensorFlow.isNamed()) {
      return "";
    }
    Module polyfn = NativeLibrary.class.getModule();
    String target = polyfn.isNamed() ? polyfn.getName() : "ALL-UNNAMED";
    List<String> flags = new ArrayList<>();
    if (!tensorFlow.isOpen(OPENED, polyfn)) {
      flags.add("--add-opens " + tensorFlow.getName() + "/" + OPENED + "=" + target);
    }
    if (!tensorFlow.isExported(EXPORTED, polyfn)) {
      flags.add("--add-exports " + tensorFlow.getName() + "/" + EXPORTED + "=" + target);
    }
    // Polyfn holds its own reference on argument tensors through JavaCPP's reference counts.
    Module javacpp = Pointer.class.getModule();
    if (javacpp.isNamed() && !javacpp.isOpen(JAVACPP, polyfn)) {
      flags.add("--add-opens " + javacpp.getName() + "/" + JAVACPP + "=" + target);
    }
    return String.join(" ", flags);
  }

  /**
   * Loads TensorFlow Java's runtime (its static initializer loads libtensorflow_cc, which Polyfn
   * binds to by name, whichever native build, CPU or GPU, provided it).
   */
  private static void loadTensorFlow() {
    try {
      TensorFlow.version();
    } catch (LinkageError e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError(
          "TensorFlow Java's native runtime did not load, so Polyfn cannot run. Put a native build "
              + "of TensorFlow Java " + TensorFlowInternals.BUILT_AGAINST + " for this platform ("
              + platformOrUnknown() + ") on the class path: org.tensorflow:tensorflow-core-native "
              + "with classifier linux-x86_64 (CPU) or linux-x86_64-gpu (CUDA). Cause: " + e);
      error.initCause(e);
      throw error;
    }
  }

  private static void load() {
    String explicit = System.getProperty("polyfn.library.path");
    if (explicit != null) {
      System.load(Paths.get(explicit).toAbsolutePath().toString());
      return;
    }
    String platform = platform();
    String library = System.mapLibraryName("polyfn_jni");
    String resource = "dev/polyfn/native/" + platform + "/" + library;
    List<String> failures = new ArrayList<>();
    for (Path dir : candidateDirectories()) {
      Path file = null;
      try (InputStream in = open(resource)) {
        if (in == null) {
          throw new UnsatisfiedLinkError("Polyfn's native library for " + platform
              + " is not in the jar (" + resource + "). Polyfn's jar ships linux-x86_64; for "
              + "another platform, build the library (README, \"Platforms and TensorFlow builds\") "
              + "and set -Dpolyfn.library.path=/path/to/" + library);
        }
        Files.createDirectories(dir);
        int dot = library.lastIndexOf('.');
        file = Files.createTempFile(dir, library.substring(0, dot) + "-", library.substring(dot));
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

  /** Through the class loader: the platform directory need not be in Polyfn's own jar or module. */
  private static InputStream open(String resource) {
    ClassLoader loader = NativeLibrary.class.getClassLoader();
    InputStream in = loader == null ? null : loader.getResourceAsStream(resource);
    return in != null ? in : NativeLibrary.class.getResourceAsStream("/" + resource);
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

  /**
   * This JVM's platform, named as TensorFlow Java's native classifiers name it (and JavaCPP's
   * {@code Loader.getPlatform()}): {@code <os>-<arch>}.
   */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String osName = os.startsWith("linux") ? "linux"
        : os.startsWith("mac") || os.startsWith("darwin") ? "macosx"
        : os.startsWith("windows") ? "windows"
        : null;
    String archName = arch.equals("amd64") || arch.equals("x86_64") || arch.equals("x86-64") ? "x86_64"
        : arch.equals("aarch64") || arch.equals("arm64") ? "arm64"
        : null;
    if (osName == null || archName == null) {
      throw new UnsatisfiedLinkError("Polyfn has no native library for " + os + "/" + arch
          + "; TensorFlow Java runs on linux-x86_64, linux-arm64, macosx-arm64 and windows-x86_64");
    }
    return osName + "-" + archName;
  }

  private static String platformOrUnknown() {
    try {
      return platform();
    } catch (UnsatisfiedLinkError e) {
      return System.getProperty("os.name") + "/" + System.getProperty("os.arch");
    }
  }
}
