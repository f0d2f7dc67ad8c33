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
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * What keeps a trace cache directory bounded. Without it every trace ever written stays: a
 * function bounded to {@code n} concrete functions read and registered all its entries at each
 * start (and kept an arbitrary {@code n}), so its definition slowed down with every signature it
 * had ever seen, and the entries of every older key (each new build of the body's class has
 * one) stayed on disk for good.
 *
 * <ul>
 *   <li>A bounded function ({@code withMaxConcreteFunctions(n)}) restores its {@code n} entries
 *       used last and deletes its older ones. An entry's modification time says when it was last
 *       used: its write; its restore, if older than {@link #REFRESH}; and, when the function is
 *       closed, the use of the concrete functions it still holds and ran (its in-process LRU's
 *       survivors), which a hit alone would not show on disk.
 *   <li>An entry, of any key, not modified for {@link #EXPIRY} is deleted, as are temporary
 *       files a crash left behind.
 * </ul>
 *
 * Deleting and marking are the writer thread's work, so a definition never waits for them. Only
 * files named exactly as the cache names them, that the cache would trust to read ({@link
 * PrivateFiles}: regular files, not links, of this user or root), are deleted or marked; anything
 * else in the directory is left alone.
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
  /** An entry's name (key hash, type hash) and a temporary file's ({@code Files.createTempFile}'s digits). */
  private static final Pattern ENTRY = Pattern.compile("[0-9a-f]{24}-[0-9a-f]{16}" + Pattern.quote(TraceCache.SUFFIX));
  private static final Pattern TEMP = Pattern.compile(Pattern.quote(TEMP_PREFIX) + "[0-9]+" + Pattern.quote(TEMP_SUFFIX));

  /** Directories swept in this JVM, as the writes named them: each once, by the first write there. */
  private static final Set<Path> SWEPT = ConcurrentHashMap.newKeySet();

  /** One of a function's entry files and when it was last used (its modification time). */
  record Listed(Path file, FileTime modified) {}

  /** Which of a function's entries to restore (oldest first) and which to delete. */
  record Selection(List<Listed> restore, List<Listed> delete) {}

  /**
   * Of a function's entries, the {@code bound} used last (all of them when {@code bound} is 0,
   * unbounded) to restore, oldest first so the newest end as the most recently used; the rest to
   * delete. Ties in time are broken by name, so every JVM chooses alike.
   */
  static Selection select(List<Listed> entries, int bound) {
    List<Listed> sorted = new ArrayList<>(entries);
    sorted.sort(new OldestFirst());
    int keepFrom = bound <= 0 ? 0 : Math.max(0, sorted.size() - bound);
    return new Selection(List.copyOf(sorted.subList(keepFrom, sorted.size())), List.copyOf(sorted.subList(0, keepFrom)));
  }

  /**
   * Oldest first, ties by name. A class rather than {@code Comparator.comparing(...).thenComparing(...)}:
   * their lambdas' first bootstrap cost every warm start some 2.5 ms.
   */
  private static final class OldestFirst implements Comparator<Listed> {
    @Override
    public int compare(Listed a, Listed b) {
      int byTime = a.modified().compareTo(b.modified());
      return byTime != 0 ? byTime : a.file().getFileName().toString().compareTo(b.file().getFileName().toString());
    }
  }

  /**
   * The entry's modification time (not following a link), no later than {@code nowMillis} (a
   * time ahead of this clock, another machine's, would rank it newest for good); null when it is
   * gone or cannot be read, then it is not restored.
   */
  static FileTime modified(Path file, long nowMillis) {
    try {
      FileTime t = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).lastModifiedTime();
      return t.toMillis() > nowMillis ? FileTime.fromMillis(nowMillis) : t;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Whether a restored entry last used at {@code modified} should be marked used now. */
  static boolean needsRefresh(FileTime modified, long nowMillis) {
    return modified.toMillis() < nowMillis - REFRESH.toMillis();
  }

  /**
   * Writer thread: deletes a bounded function's entries beyond its bound, each only if it is
   * still as listed: an entry written again since (the same signature traced anew, here or in
   * another JVM sharing the directory) is used, not stale.
   */
  static void deleteUnlessChanged(List<Listed> entries) {
    for (Listed l : entries) {
      FileTime now = modified(l.file(), Long.MAX_VALUE);
      if (now != null && now.equals(l.modified())) {
        deleteIfOurs(l.file(), "trace cache entry beyond the function's bound");
      }
    }
  }

  /** Writer thread: marks entries used now, so that selection and expiry count this use. */
  static void markUsed(List<Path> files, long nowMillis) {
    FileTime now = FileTime.fromMillis(nowMillis);
    for (Path file : files) {
      try {
        if (ours(file)) {
          Files.getFileAttributeView(file, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).setTimes(now, null, null);
        }
      } catch (IOException | RuntimeException e) {
        NativeLog.logger().log(Level.DEBUG, "trace cache entry " + file + " could not be marked used: " + e);
      }
    }
  }

  /**
   * Writer thread, after a write to {@code dir}: deletes, once per directory in this JVM, every
   * entry file and leftover temporary file there not modified for {@link #EXPIRY}, of any key.
   * Only in a directory nobody but this user could have written (where the file system has Unix
   * permissions), as reading it requires.
   */
  static void sweepOnce(Path dir, long nowMillis) {
    if (!SWEPT.add(dir)) {
      return;
    }
    Path realDir;
    try {
      realDir = dir.toRealPath();
      if (PrivateFiles.hasUnixPermissions() && PrivateFiles.whyNotTrustedDirectory(realDir) != null) {
        return;
      }
    } catch (IOException | RuntimeException e) {
      NativeLog.logger().log(Level.DEBUG, "trace cache " + dir + " could not be swept: " + e);
      return;
    }
    long before = nowMillis - EXPIRY.toMillis();
    int deleted = 0;
    try (DirectoryStream<Path> list = Files.newDirectoryStream(realDir)) {
      for (Path p : list) {
        String name = p.getFileName().toString();
        if (!ENTRY.matcher(name).matches() && !TEMP.matcher(name).matches()) {
          continue;
        }
        FileTime modified = modified(p, Long.MAX_VALUE);
        if (modified != null && modified.toMillis() < before && deleteIfOurs(p, "expired trace cache file")) {
          deleted++;
        }
      }
    } catch (IOException | RuntimeException e) {
      NativeLog.logger().log(Level.DEBUG, "trace cache " + realDir + " could not be swept: " + e);
    }
    if (deleted > 0) {
      NativeLog.logger().log(Level.DEBUG, "trace cache " + realDir + ": deleted " + deleted
          + " file(s) not written or used for " + EXPIRY.toDays() + " days");
    }
  }

  /**
   * Whether {@code file} is one the cache would read: named as it names entries (or temporary
   * files) and, where there are Unix permissions, a regular file, not a link, of this user or root.
   */
  private static boolean ours(Path file) throws IOException {
    String name = file.getFileName().toString();
    if (!ENTRY.matcher(name).matches() && !TEMP.matcher(name).matches()) {
      return false;
    }
    return PrivateFiles.hasUnixPermissions()
        ? PrivateFiles.whyNotTrustedFile(file) == null
        : Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS);
  }

  private static boolean deleteIfOurs(Path file, String what) {
    try {
      return ours(file) && Files.deleteIfExists(file);
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException | RuntimeException e) {
      NativeLog.logger().log(Level.DEBUG, what + " " + file + " could not be deleted: " + e);
      return false;
    }
  }
}
