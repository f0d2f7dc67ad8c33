package dev.polyfn.internal.trace;

import dev.polyfn.internal.NativeLog;
import dev.polyfn.internal.PrivateFiles;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What keeps a trace cache directory bounded. Without it every trace ever written stays: a
 * function bounded to {@code n} concrete functions read and registered all its entries at each
 * start (and kept an arbitrary {@code n}), so its definition slowed down with every signature it
 * had ever seen, and the entries of every older key (each new build of the body's class has
 * one) stayed on disk for good.
 *
 * <ul>
 *   <li>A bounded function ({@code withMaxConcreteFunctions(n)}) restores its {@code n} newest
 *       entries (written or restored last) and deletes its older ones: they could only ever be
 *       evicted again.
 *   <li>An entry, of any key, that was neither written nor restored for {@link #EXPIRY} is
 *       deleted, as are temporary files a crash left behind. A restore counts as use: a restored
 *       entry older than {@link #REFRESH} gets its modification time set to now.
 * </ul>
 *
 * Deleting and refreshing are the writer thread's work, so a definition never waits for them.
 * Only files named as the cache names them, in a directory only this user can write, are touched.
 */
final class TraceCacheRetention {
  private TraceCacheRetention() {}

  /** How long an entry nobody wrote or restored stays. */
  static final Duration EXPIRY = Duration.ofDays(30);
  /** A restored entry at least this old is marked used again (at most once a day per entry). */
  static final Duration REFRESH = Duration.ofDays(1);
  /** Prefix and suffix of the temporary files an entry is written to before its rename. */
  static final String TEMP_PREFIX = ".tmp-";
  static final String TEMP_SUFFIX = TraceCache.SUFFIX + ".part";

  /** Directories swept in this JVM (real paths): each once, by the first write there. */
  private static final Set<Path> SWEPT = ConcurrentHashMap.newKeySet();

  /** One of a function's entry files and when it was last written or restored. */
  record Listed(Path file, FileTime modified) {}

  /** Which of a function's entries to restore (oldest first) and which to delete. */
  record Selection(List<Listed> restore, List<Path> delete) {}

  /**
   * Of a function's entries, the {@code bound} newest (all of them when {@code bound} is 0,
   * unbounded) to restore, oldest first so the newest end as the most recently used; the rest to
   * delete. Ties in time are broken by name, so every JVM chooses alike.
   */
  static Selection select(List<Listed> entries, int bound) {
    List<Listed> sorted = new ArrayList<>(entries);
    sorted.sort(Comparator.comparing(Listed::modified).thenComparing(l -> l.file().getFileName().toString()));
    int keepFrom = bound <= 0 ? 0 : Math.max(0, sorted.size() - bound);
    return new Selection(List.copyOf(sorted.subList(keepFrom, sorted.size())),
        sorted.subList(0, keepFrom).stream().map(Listed::file).toList());
  }

  /** The entry's modification time (not following a link), or null when it is gone. */
  static FileTime modified(Path file) throws IOException {
    try {
      return Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).lastModifiedTime();
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  /** Whether a restored entry last written or restored at {@code modified} should be marked used. */
  static boolean needsRefresh(FileTime modified, long nowMillis) {
    return modified.toMillis() < nowMillis - REFRESH.toMillis();
  }

  /** Writer thread: deletes {@code files} (those gone already are fine); {@code what} names them in a failure. */
  static void delete(List<Path> files, String what) {
    for (Path p : files) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException | RuntimeException e) {
        NativeLog.logger().log(Level.DEBUG, what + " " + p + " could not be deleted: " + e);
      }
    }
  }

  /** Writer thread: marks restored entries used now, so that expiry does not take them. */
  static void refresh(List<Path> files, long nowMillis) {
    for (Path file : files) {
      try {
        Files.setLastModifiedTime(file, FileTime.fromMillis(nowMillis));
      } catch (IOException | RuntimeException e) {
        NativeLog.logger().log(Level.DEBUG, "trace cache entry " + file + " could not be marked used: " + e);
      }
    }
  }

  /**
   * Writer thread, after a write to {@code dir}: deletes, once per directory in this JVM, every
   * entry file and leftover temporary file there not modified for {@link #EXPIRY}. Only regular
   * files named as the cache names them are considered, and only in a directory nobody but this
   * user could have written (where the file system has Unix permissions); anything else is left.
   */
  static void sweepOnce(Path dir, long nowMillis) {
    Path realDir;
    try {
      realDir = dir.toRealPath();
      if (!SWEPT.add(realDir)
          || (PrivateFiles.hasUnixPermissions() && PrivateFiles.whyNotTrustedDirectory(realDir) != null)) {
        return;
      }
    } catch (IOException | RuntimeException e) {
      NativeLog.logger().log(Level.DEBUG, "trace cache " + dir + " could not be swept: " + e);
      return;
    }
    long before = nowMillis - EXPIRY.toMillis();
    List<Path> expired = new ArrayList<>();
    try (DirectoryStream<Path> list = Files.newDirectoryStream(realDir)) {
      for (Path p : list) {
        String name = p.getFileName().toString();
        boolean ours = name.endsWith(TraceCache.SUFFIX) || (name.startsWith(TEMP_PREFIX) && name.endsWith(TEMP_SUFFIX));
        if (!ours) {
          continue;
        }
        BasicFileAttributes a;
        try {
          a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
          continue;
        }
        if (a.isRegularFile() && a.lastModifiedTime().toMillis() < before) {
          expired.add(p);
        }
      }
    } catch (IOException | RuntimeException e) {
      NativeLog.logger().log(Level.DEBUG, "trace cache " + realDir + " could not be swept: " + e);
      return;
    }
    delete(expired, "expired trace cache file");
    if (!expired.isEmpty()) {
      NativeLog.logger().log(Level.DEBUG, "trace cache " + realDir + ": deleted " + expired.size()
          + " file(s) not written or restored for " + EXPIRY.toDays() + " days");
    }
  }
}
