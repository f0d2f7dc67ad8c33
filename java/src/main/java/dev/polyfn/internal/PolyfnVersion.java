package dev.polyfn.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * This build of Polyfn, as what it writes to disk for a later run to read (the trace cache's
 * entries) is tagged with, so that another build never reads it: the project's version, which the
 * build filters into the resource {@code polyfn-version.properties} next to this class (the same
 * on the class path, on the module path and in a build's classes directory), and the fingerprint
 * of the native library the jar ships ({@link NativeCache}), which tells apart two builds of one
 * {@code -SNAPSHOT} version whose Rust core differs.
 */
public final class PolyfnVersion {
  /** Read once: the resources cost a class loader lookup each. */
  private static volatile String current;

  private PolyfnVersion() {}

  /**
   * For example {@code 0.1.0 native=1a2b3c4d5e6f7a8b-27f3c0}; {@code unknown} in place of a part
   * that cannot be read.
   */
  public static String current() {
    String v = current;
    if (v == null) {
      v = read();
      current = v;
    }
    return v;
  }

  /**
   * Replaces {@link #current} in this JVM, so that a test can play another build writing or
   * reading entries; null goes back to this build's. Nothing but tests calls it.
   */
  static void overrideForTests(String version) {
    current = version;
  }

  private static String read() {
    String version = null;
    try (InputStream in = PolyfnVersion.class.getResourceAsStream("polyfn-version.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        version = p.getProperty("version");
      }
    } catch (IOException | RuntimeException e) {
      // unknown: entries of a build whose version cannot be read are still told apart by the library
    }
    String fingerprint = null;
    try {
      fingerprint = NativeCache.shippedText(NativeLibrary.resource());
    } catch (IOException | RuntimeException e) {
      // unknown, as for a library loaded from -Dpolyfn.library.path
    }
    return (version == null || version.isBlank() ? "unknown" : version.trim()) + " native="
        + (fingerprint == null ? "unknown" : fingerprint);
  }
}
