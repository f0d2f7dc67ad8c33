package dev.polyfn.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;
import org.tensorflow.TensorFlow;

/**
 * Loads Polyfn's JNI library once per JVM, after TensorFlow Java's runtime.
 *
 * <p>The library ships in the jar under {@code dev/polyfn/native/<platform>/}, where platform is
 * JavaCPP's name for the running platform ({@code Loader.getPlatform()}, the names of TensorFlow
 * Java's native classifiers: {@code linux-x86_64}, {@code linux-arm64}, {@code macosx-arm64},
 * {@code windows-x86_64}); it is looked up through the class loader, so a separate jar holding
 * another platform's directory works too.
 *
 * <p>It is kept in JavaCPP's persistent cache ({@code Loader.getCacheDir()}, where TensorFlow
 * Java's runtime is extracted too), under {@code polyfn/<checksums and length of the library>/}:
 * the first start writes it (to a temporary file renamed into place, so a reader sees a whole file
 * or none), later starts load it without writing anything once its content is read back equal.
 * The name is the content's fingerprint, so two builds of one jar name do not share a file, and a
 * file is never rewritten while another JVM maps it (the reason for not using {@code
 * Loader.cacheResource}, which rewrites a cached file in place when the jar's entry changes). {@code -Dpolyfn.native.cache=DIR} moves that cache. When it is not
 * usable, the library is copied to a fresh, uniquely named file, loaded, and the file deleted;
 * candidate directories are tried in order: {@code -Dpolyfn.native.dir}, {@code java.io.tmpdir},
 * {@code ~/.cache/polyfn}, the working directory. Set {@code
 * -Dpolyfn.library.path=/path/libpolyfn_jni.so} to load a library from disk instead. A failure
 * names every place tried and why.
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
              + platform() + ") on the class path: org.tensorflow:tensorflow-core-native "
              + "with classifier " + classifiers(platform()) + ". Cause: " + e);
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
    byte[] bytes;
    try (InputStream in = open(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError("Polyfn's native library for this platform (" + platform
            + ") is not in the jar (" + resource + "). Polyfn's jar ships linux-x86_64; for "
            + "another platform, build the library (the guide's \"Platforms and TensorFlow builds\", "
            + "docs/platforms.md) and set -Dpolyfn.library.path=/path/to/" + library);
      }
      bytes = in.readAllBytes();
    } catch (IOException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("could not read " + resource + ": " + e);
      error.initCause(e);
      throw error;
    }
    List<String> failures = new ArrayList<>();
    Path cache = cacheDirectory();
    try {
      System.load(cached(cache, library, bytes).toString());
      return;
    } catch (IOException | SecurityException | UnsatisfiedLinkError e) {
      failures.add(cache + " (the cache): " + e);
    }
    for (Path dir : candidateDirectories()) {
      Path file = null;
      try {
        Files.createDirectories(dir);
        int dot = library.lastIndexOf('.');
        file = Files.createTempFile(dir, library.substring(0, dot) + "-", library.substring(dot));
        Files.write(file, bytes);
        System.load(file.toAbsolutePath().toString());
        return;
      } catch (IOException | SecurityException | UnsatisfiedLinkError e) {
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
        "could not load Polyfn's native library for " + platform + "; tried " + String.join("; ", failures)
            + ". Set -Dpolyfn.native.dir to a writable directory that allows executable mappings.");
  }

  /** {@code -Dpolyfn.native.cache}, else {@code polyfn/} in JavaCPP's cache directory. */
  private static Path cacheDirectory() {
    String configured = System.getProperty("polyfn.native.cache");
    if (configured != null) {
      return Paths.get(configured);
    }
    try {
      return Loader.getCacheDir().toPath().resolve("polyfn");
    } catch (IOException | RuntimeException e) {
      return Paths.get(System.getProperty("user.home"), ".javacpp", "cache", "polyfn");
    }
  }

  /**
   * The library's file in the cache, {@code <cache>/<fingerprint>/<library>}, written once, by a rename
   * into place, so that no JVM ever maps a half-written file or one another JVM rewrites.
   */
  static Path cached(Path cache, String library, byte[] bytes) throws IOException {
    Path dir = cache.resolve(fingerprint(bytes));
    Path file = dir.resolve(library);
    if (sameContent(file, bytes)) {
      return file;
    }
    Files.createDirectories(dir);
    Path tmp = Files.createTempFile(dir, library + "-", ".tmp");
    try {
      Files.write(tmp, bytes);
      try {
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      // Another JVM may have put the same file in place meanwhile (Windows refuses to replace
      // a loaded one): use it.
      if (!sameContent(file, bytes)) {
        throw e;
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
    return file;
  }

  /** Read back (a few milliseconds): a damaged or truncated file in the cache is replaced. */
  private static boolean sameContent(Path file, byte[] bytes) throws IOException {
    return Files.isRegularFile(file) && Files.size(file) == bytes.length
        && Arrays.equals(Files.readAllBytes(file), bytes);
  }

  /**
   * The library's CRC-32 and Adler-32 (8 hex digits each) and its length: the name of its
   * directory in the cache. Not a cryptographic digest: the content found there is compared
   * byte for byte before it is loaded ({@link #sameContent}), so a name two builds happened to
   * share would only cost a rewrite by rename. SHA-256, which named it before, took 150 to 450 ms
   * of every start on this library (2.5 MB hashed by the interpreter); these two are native.
   */
  static String fingerprint(byte[] bytes) {
    CRC32 crc = new CRC32();
    crc.update(bytes);
    Adler32 adler = new Adler32();
    adler.update(bytes);
    HexFormat hex = HexFormat.of();
    return hex.toHexDigits((int) crc.getValue()) + hex.toHexDigits((int) adler.getValue()) + "-"
        + Integer.toHexString(bytes.length);
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
   * This JVM's platform as JavaCPP names it ({@code Loader.getPlatform()}: {@code <os>-<arch>},
   * the names of TensorFlow Java's native classifiers; {@code -Dorg.bytedeco.javacpp.platform}
   * overrides it).
   */
  static String platform() {
    return Loader.getPlatform();
  }

  /** The classifiers of TensorFlow Java's native jar for a platform (a GPU build for Linux x86 only). */
  private static String classifiers(String platform) {
    return platform.equals("linux-x86_64") ? "linux-x86_64 (CPU) or linux-x86_64-gpu (CUDA)" : platform;
  }
}
