package dev.polyfn.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
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
 * Java's runtime is extracted too), under {@code polyfn/<checksums and length of the library>/}
 * ({@link NativeCache}; {@code -Dpolyfn.native.cache=DIR} moves it): a later start finds the file
 * by the fingerprint the jar ships and loads it once its owner, modes and checksums show that
 * nobody else wrote it and it is whole, without reading the jar's copy. The first start, or one
 * that finds no usable file, copies the library from the jar ({@link NativeLibraryCopy}): into the
 * cache, else to fresh temporary files. Set {@code
 * -Dpolyfn.library.path=/path/libpolyfn_jni.so} to load a library from disk instead.
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
          tensorFlowVersion = Native.init(TensorFlowInternals.defaultContextAddress());
          NativeLog.makeInBackground();
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
    String resource = resource();
    Path cache = cacheDirectory();
    // A later start finds its file by the fingerprint the jar ships, without reading the jar's copy.
    Path found = NativeCache.find(cache, resource, library);
    if (found != null) {
      try {
        System.load(found.toString());
        return;
      } catch (UnsatisfiedLinkError | SecurityException e) {
        // The copy below tries the cache again, then fresh files, and names every failure.
      }
    }
    NativeLibraryCopy.load(platform, library, resource, cache);
  }

  /** The library's resource for this platform: {@code dev/polyfn/native/<platform>/<library>}. */
  static String resource() {
    return "dev/polyfn/native/" + platform() + "/" + System.mapLibraryName("polyfn_jni");
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

  /** Through the class loader: the platform directory need not be in Polyfn's own jar or module. */
  static InputStream open(String resource) {
    ClassLoader loader = NativeLibrary.class.getClassLoader();
    InputStream in = loader == null ? null : loader.getResourceAsStream(resource);
    return in != null ? in : NativeLibrary.class.getResourceAsStream("/" + resource);
  }

  /** The resource's URL, found as {@link #open} finds it, or null. */
  static URL url(String resource) {
    ClassLoader loader = NativeLibrary.class.getClassLoader();
    URL url = loader == null ? null : loader.getResource(resource);
    return url != null ? url : NativeLibrary.class.getResource("/" + resource);
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
