package dev.polyfn.internal;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.jar.JarEntry;
import java.util.zip.Adler32;
import java.util.zip.CRC32;

/**
 * Polyfn's native library in its persistent cache ({@link NativeLibrary}): its place there,
 * whether a file found there may be loaded, and the start that finds it without reading the jar.
 *
 * <p>A library is kept at {@code <cache>/<fingerprint>/<library>}, the fingerprint being its
 * CRC-32 and Adler-32 (8 hex digits each) and its length. The build ships it next to the library
 * ({@code <library>.fingerprint}, checked against the CRC-32 and size the jar's directory records
 * for the library), so a start that finds its file neither inflates the jar's 2.5 MB entry nor
 * compares it byte for byte (20 to 40 ms of each start): it checks the file's length and
 * checksums, natively.
 *
 * <p>A file found there is loaded only if nobody but this user (or root) could have written or
 * swapped it, between the check and the load too ({@link PrivateFiles}); directories Polyfn
 * creates there are private (0700). Where the file system has no Unix permissions (Windows), the
 * fast start is off and a file's whole content is compared with the jar's before it is loaded.
 */
final class NativeCache {
  /** The suffix of the resource that holds a library's fingerprint, next to the library. */
  static final String FINGERPRINT = ".fingerprint";

  private NativeCache() {}

  /**
   * The cached file of this build's library, when the jar ships its fingerprint and the file is
   * in the cache, trusted and intact; else null (the caller then reads the jar). Never throws.
   */
  static Path find(Path cache, String resource, String library) {
    try {
      String fingerprint = shipped(resource);
      if (fingerprint == null || !PrivateFiles.hasUnixPermissions()) {
        return null;
      }
      Path file = PrivateFiles.trusted(cache.resolve(fingerprint).resolve(library));
      return file != null && intact(file, fingerprint) ? file : null;
    } catch (IOException | RuntimeException e) {
      return null; // missing, unreadable or odd: the jar's copy decides
    }
  }

  /**
   * The fingerprint shipped with {@code resource}, or null when there is none, it is malformed, or
   * it disagrees with the CRC-32 and size the jar records for the library (a stale one).
   */
  private static String shipped(String resource) throws IOException {
    String text = shippedText(resource);
    if (text == null) {
      return null;
    }
    long crc = Long.parseLong(text.substring(0, 8), 16);
    long length = Long.parseLong(text.substring(17), 16);
    URL url = NativeLibrary.url(resource);
    if (url == null || !url.getProtocol().equals("jar")) {
      return null; // a directory on the class path (a build's classes): read and compared as it is
    }
    JarEntry entry = ((JarURLConnection) url.openConnection()).getJarEntry();
    return entry.getCrc() == crc && entry.getSize() == length ? text : null;
  }

  /**
   * The fingerprint shipped with {@code resource} as it reads, unchecked against the library, or
   * null when there is none or it is malformed.
   */
  static String shippedText(String resource) throws IOException {
    String text;
    try (InputStream in = NativeLibrary.open(resource + FINGERPRINT)) {
      if (in == null) {
        return null;
      }
      text = new String(in.readNBytes(64), StandardCharsets.US_ASCII).trim();
    }
    return wellFormed(text) ? text : null;
  }

  /** 16 lower-case hex digits, a dash, 1 to 8 more: what {@link #fingerprint} writes. */
  private static boolean wellFormed(String text) {
    if (text.length() < 18 || text.length() > 25 || text.charAt(16) != '-') {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (i != 16 && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether the file's length, CRC-32 and Adler-32 are those of {@code fingerprint}: read in
   * chunks (a 2.5 MB array to zero, fill and check cost 4 ms more).
   */
  private static boolean intact(Path file, String fingerprint) throws IOException {
    long length = Long.parseLong(fingerprint.substring(17), 16);
    CRC32 crc = new CRC32();
    Adler32 adler = new Adler32();
    long read = 0;
    // java.io's stream (see BoundedFiles.read), which would follow a link: trusted() found none,
    // in directories nobody but this user or root can write.
    try (InputStream in = new FileInputStream(file.toFile())) {
      byte[] chunk = new byte[1 << 16];
      for (int n; (n = in.read(chunk)) > 0 && read <= length; read += n) {
        crc.update(chunk, 0, n);
        adler.update(chunk, 0, n);
      }
    }
    return read == length && sum(crc, adler, length).equals(fingerprint);
  }

  /**
   * The library's CRC-32 and Adler-32 (8 hex digits each) and its length: the name of its
   * directory in the cache. Not a cryptographic digest: it tells builds apart and catches a
   * damaged file; what keeps others from planting a file is {@link PrivateFiles#trusted}. SHA-256 in Java,
   * which named it once, took 150 to 450 ms of every start on this library; these two are native.
   */
  static String fingerprint(byte[] bytes) {
    CRC32 crc = new CRC32();
    crc.update(bytes);
    Adler32 adler = new Adler32();
    adler.update(bytes);
    return sum(crc, adler, bytes.length);
  }

  private static String sum(CRC32 crc, Adler32 adler, long length) {
    HexFormat hex = HexFormat.of();
    return hex.toHexDigits((int) crc.getValue()) + hex.toHexDigits((int) adler.getValue()) + "-"
        + Long.toHexString(length);
  }
}
