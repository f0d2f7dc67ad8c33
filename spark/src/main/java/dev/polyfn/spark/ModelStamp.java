package dev.polyfn.spark;

import dev.polyfn.Function;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Which SavedModel a directory holds: the version subdirectory {@code Function.load} reads, and a
 * stamp of its content, so that the driver and every executor score with one model.
 *
 * <p>The stamp is a digest of the files that define the model ({@code saved_model.pb}, the
 * variables' index, whose entries hold each tensor's checksum, and Polyfn's metadata), not of
 * their modification times: a shipped copy ({@code SparkFiles}) has its own times but the same
 * content. Digests are cached by file, size, modification time and file key, so a model is read
 * again only when it changed.
 */
final class ModelStamp {
  /** The files whose content identifies a model, relative to its directory. */
  private static final List<String> FILES =
      List.of("saved_model.pb", "variables/variables.index", "assets.extra/polyfn.json");
  private static final int CACHED = 64;
  /** Digests by file attributes; a small LRU (one entry per file of each model read). */
  private static final Map<String, byte[]> DIGESTS = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, byte[]> eldest) {
      return size() > CACHED;
    }
  };

  private ModelStamp() {}

  /**
   * The numeric version subdirectory that {@code Function.load(dir)} reads (TensorFlow Serving's
   * layout: the highest number holding a {@code saved_model.pb}), or null when {@code dir} holds
   * the SavedModel itself. Same rule as Polyfn's loader.
   *
   * @throws IllegalArgumentException naming {@code dir} when it holds neither
   */
  static String version(Path dir) {
    Path read = Function.savedModelDirectory(dir);
    if (!Files.isRegularFile(read.resolve("saved_model.pb"))) {
      throw new IllegalArgumentException("savedModel: " + dir + " holds no saved_model.pb, neither itself nor in a "
          + "numeric version subdirectory (TensorFlow Serving's layout: " + dir + "/1/saved_model.pb)");
    }
    return read.equals(dir) ? null : read.getFileName().toString();
  }

  /**
   * The stamp of the model in {@code dir} (a SavedModel directory itself, not a version parent):
   * the first 16 hex digits of a SHA-256 over its defining files.
   *
   * @throws IllegalArgumentException naming the file when {@code saved_model.pb} is missing or a
   *     file cannot be read
   */
  static String of(Path dir) {
    MessageDigest all = sha256();
    for (String name : FILES) {
      Path file = dir.resolve(name);
      byte[] digest;
      try {
        digest = digest(file);
      } catch (NoSuchFileException e) {
        if (name.equals("saved_model.pb")) {
          throw new IllegalArgumentException(file + ": missing; expected a SavedModel directory");
        }
        digest = new byte[0]; // optional: a model without variables or not written by Polyfn
      } catch (IOException e) {
        throw new IllegalArgumentException(file + ": cannot be read: " + e, e);
      }
      all.update(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      all.update((byte) 0);
      all.update(digest);
    }
    return HexFormat.of().formatHex(all.digest(), 0, 8);
  }

  private static byte[] digest(Path file) throws IOException {
    BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
    String key = file.toAbsolutePath() + "|" + a.size() + "|" + a.lastModifiedTime() + "|" + a.fileKey();
    synchronized (DIGESTS) {
      byte[] cached = DIGESTS.get(key);
      if (cached != null) {
        return cached;
      }
    }
    MessageDigest d = sha256();
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        d.update(buffer, 0, n);
      }
    }
    byte[] digest = d.digest();
    BasicFileAttributes after = Files.readAttributes(file, BasicFileAttributes.class);
    if (after.size() == a.size() && after.lastModifiedTime().equals(a.lastModifiedTime())) {
      synchronized (DIGESTS) {
        DIGESTS.put(key, digest); // not cached if the file changed while it was read
      }
    }
    return digest;
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
