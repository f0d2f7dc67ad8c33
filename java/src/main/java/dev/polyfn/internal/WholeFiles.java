package dev.polyfn.internal;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.regex.Pattern;

/** Files written whole: a reader, in this process or another, sees the old file or the new one, never part of one. */
public final class WholeFiles {
  private WholeFiles() {}

  /**
   * How long a temporary file must have been left unchanged before a later write deletes it: far
   * longer than any write takes from creating it to renaming it, so only a file a process killed
   * mid-write left behind is that old.
   */
  public static final Duration STALE = Duration.ofHours(1);

  /**
   * Writes {@code bytes} to {@code temp} (a new file beside {@code target}, created with the
   * default permissions: {@code Files.createTempFile}'s would be owner-only) and renames it over
   * {@code target}, atomically where the file system allows; {@code temp} is gone afterwards,
   * whether the write succeeded or not.
   */
  public static void write(Path target, Path temp, byte[] bytes) throws IOException {
    try {
      Files.write(temp, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException | RuntimeException | Error e) {
      try {
        Files.deleteIfExists(temp);
      } catch (IOException ignored) {
        // the write's failure is the one to report
      }
      throw e;
    }
  }

  /**
   * Deletes the regular files directly in {@code dir} whose whole names match {@code temps} (the
   * temporary names a writer of {@code dir} gives) and that were last changed more than {@link
   * #STALE} ago: what a process killed between writing and renaming left. Best effort: a file
   * another process deleted or changed meanwhile, or one that cannot be deleted, stays.
   */
  public static void deleteStale(Path dir, Pattern temps) {
    long before = System.currentTimeMillis() - STALE.toMillis();
    try (DirectoryStream<Path> list = Files.newDirectoryStream(dir)) {
      for (Path p : list) {
        if (!temps.matcher(p.getFileName().toString()).matches()) {
          continue;
        }
        try {
          BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
          if (a.isRegularFile() && a.lastModifiedTime().toMillis() < before) {
            Files.deleteIfExists(p);
          }
        } catch (IOException e) {
          // gone meanwhile, or not ours to delete: left as it is
        }
      }
    } catch (IOException | RuntimeException e) {
      // the directory cannot be listed: nothing to clean, and the write itself succeeded
    }
  }
}
