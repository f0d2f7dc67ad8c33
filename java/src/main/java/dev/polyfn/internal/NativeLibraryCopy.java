package dev.polyfn.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Loads Polyfn's native library from the jar's copy, when no cached file could be loaded without
 * it ({@link NativeCache#find}): the first start, a jar that ships no fingerprint, a damaged or
 * untrusted file. The library is written to the cache (to a temporary file renamed into place, so
 * a reader sees a whole file or none, and never rewritten while another JVM maps it: the reason
 * for not using {@code Loader.cacheResource}, which rewrites a cached file in place when the
 * jar's entry changes). When the cache is not usable (not writable, or writable by other users),
 * the library is copied to a fresh, uniquely named file, loaded, and the file deleted; candidate
 * directories are tried in order: {@code -Dpolyfn.native.dir}, {@code java.io.tmpdir}, {@code
 * ~/.cache/polyfn}, the working directory, each only if no other user can swap the file. A failure
 * names every place tried and why.
 */
final class NativeLibraryCopy {
  private NativeLibraryCopy() {}

  static void load(String platform, String library, String resource, Path cache) {
    byte[] bytes;
    try (InputStream in = NativeLibrary.open(resource)) {
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
    try {
      System.load(cached(cache, library, bytes).toString());
      return;
    } catch (IOException | SecurityException | UnsatisfiedLinkError e) {
      failures.add(cache + " (the cache): " + e);
    }
    for (Path dir : candidateDirectories()) {
      Path file = null;
      try {
        PrivateFiles.createPrivateDirectories(dir);
        // The file is made in, and loaded from, the real directory that was checked: through the
        // path as given, a link on the way could be repointed between the check and the load.
        Path real = dir.toAbsolutePath();
        if (PrivateFiles.hasUnixPermissions()) {
          real = PrivateFiles.trustedDirectory(dir);
          if (real == null) {
            throw new IOException("other users may write to it or a directory above it");
          }
        }
        int dot = library.lastIndexOf('.');
        file = Files.createTempFile(real, library.substring(0, dot) + "-", library.substring(dot));
        Files.write(file, bytes);
        System.load(file.toString());
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

  /**
   * The library's file in the cache, {@code <cache>/<fingerprint>/<library>}, written once, by a
   * rename into place, so that no JVM ever maps a half-written file or one another JVM rewrites;
   * returned as the real path that was checked. A file there that is damaged, or not trusted
   * while its directory is (a link, a file others may write), is replaced; a directory others
   * may write to is not used (IOException).
   */
  static Path cached(Path cache, String library, byte[] bytes) throws IOException {
    Path dir = cache.resolve(NativeCache.fingerprint(bytes));
    PrivateFiles.createPrivateDirectories(dir);
    boolean modes = PrivateFiles.hasUnixPermissions();
    if (modes && PrivateFiles.trustedDirectory(dir) == null) {
      throw new IOException(dir + " is not private: other users may write to it or to a directory above it");
    }
    Path file = dir.resolve(library);
    Path found = usable(file, bytes, modes);
    if (found != null) {
      return found;
    }
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
      found = usable(file, bytes, modes);
      if (found != null) {
        return found;
      }
      throw e;
    } finally {
      Files.deleteIfExists(tmp);
    }
    found = modes ? PrivateFiles.trusted(file) : file;
    if (found == null) {
      throw new IOException(file + " was replaced after it was written");
    }
    return found;
  }

  /** The file's checked path when it is trusted (where modes exist) and holds exactly {@code bytes}, else null. */
  private static Path usable(Path file, byte[] bytes, boolean modes) throws IOException {
    Path checked;
    try {
      checked = modes ? PrivateFiles.trusted(file) : file;
    } catch (NoSuchFileException e) {
      return null;
    }
    // Read back (a few milliseconds): a damaged or truncated file in the cache is replaced.
    boolean same = checked != null && Files.isRegularFile(checked) && Files.size(checked) == bytes.length
        && Arrays.equals(Files.readAllBytes(checked), bytes);
    return same ? checked : null;
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
}
