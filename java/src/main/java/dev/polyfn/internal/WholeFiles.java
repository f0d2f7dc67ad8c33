package dev.polyfn.internal;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** Files written whole: a reader, in this process or another, sees the old file or the new one, never part of one. */
public final class WholeFiles {
  private WholeFiles() {}

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
}
