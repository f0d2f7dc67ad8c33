package dev.polyfn.internal.saved;

import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Every file Polyfn reads, read with a size limit: a link to {@code /dev/zero} or a multi-GiB
 * sparse file put where a SavedModel, metadata, cache entry or profile belongs must be refused
 * naming the file, not fill the heap ({@link OutOfMemoryError}). Only regular files are read (a
 * device or pipe has no size to check beforehand). The limits are in the guide ("Errors", docs/errors.md).
 */
public final class BoundedFiles {
  private BoundedFiles() {}

  /** {@code saved_model.pb}: TensorFlow's own protocol buffers stop at 2 GiB. */
  public static final long SAVED_MODEL = 1L << 30;
  /** {@code assets.extra/polyfn.json}. */
  public static final long METADATA = 64L << 20;
  /** One trace cache entry. */
  public static final long CACHE_ENTRY = 256L << 20;
  /** A signature profile. */
  public static final long PROFILE = 64L << 20;
  /**
   * A checkpoint's index ({@code variables.index}): the names, dtypes, shapes and places of its
   * tensors, some 100 bytes a tensor, read whole before TensorFlow reads the checkpoint ({@link
   * CheckpointIndex}).
   */
  public static final long CHECKPOINT_INDEX = 32L << 20;
  /** An asset file of a Python SavedModel (a vocabulary), which TensorFlow reads into a table. */
  public static final long ASSET = 256L << 20;

  /**
   * The bytes of {@code file}, at most {@code limit} of them.
   *
   * @throws NoSuchFileException when it does not exist
   * @throws IOException when it cannot be read, is not a regular file or is larger than {@code
   *     limit}; the message says which (the caller names the file)
   */
  public static byte[] read(Path file, long limit) throws IOException {
    if (!Files.exists(file)) {
      throw new NoSuchFileException(file.toString());
    }
    if (!Files.isRegularFile(file)) {
      throw new IOException("not a regular file (a device, pipe or directory is never read)");
    }
    long size = Files.size(file);
    if (size > limit) {
      throw new IOException(tooLarge(size, limit));
    }
    try (InputStream in = open(file)) {
      // A file growing while it is read stops at the limit too.
      byte[] bytes = in.readNBytes((int) Math.min(limit, Math.max(size, 0)) + 1);
      if (bytes.length > limit) {
        throw new IOException(tooLarge(bytes.length, limit));
      }
      return bytes.length == size + 1 ? extend(in, bytes, limit) : bytes;
    } catch (OutOfMemoryError e) {
      // One large array allocation failed: nothing else is half-done, so this is recoverable.
      throw new IOException(size + " bytes do not fit in this JVM's heap");
    }
  }

  /**
   * java.io's stream, not {@code Files.newInputStream}: the JVM loads its classes at start, while
   * the channel classes behind the other cost a warm start or a load some 2 ms on first use. A
   * file deleted since the checks is a NoSuchFileException, as Files would throw.
   */
  private static InputStream open(Path file) throws IOException {
    try {
      return new FileInputStream(file.toFile());
    } catch (FileNotFoundException e) {
      throw Files.exists(file) ? e : new NoSuchFileException(file.toString());
    }
  }

  /** Reads on after the size the file had when it was opened, up to the limit. */
  private static byte[] extend(InputStream in, byte[] first, long limit) throws IOException {
    byte[] rest = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, limit - first.length + 1));
    if (first.length + (long) rest.length > limit) {
      throw new IOException(tooLarge(first.length + (long) rest.length, limit));
    }
    byte[] all = java.util.Arrays.copyOf(first, first.length + rest.length);
    System.arraycopy(rest, 0, all, first.length, rest.length);
    return all;
  }

  /** {@link #read} as UTF-8 text; malformed UTF-8 is an IOException. */
  public static String readText(Path file, long limit) throws IOException {
    return utf8(read(file, limit));
  }

  /** {@code bytes} as UTF-8 text; malformed UTF-8 is an IOException ("not UTF-8 text"). */
  public static String utf8(byte[] bytes) throws IOException {
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new IOException("not UTF-8 text");
    }
  }

  private static String tooLarge(long size, long limit) {
    return "larger than Polyfn reads (" + size + " bytes; the limit for this file is " + limit + " bytes)";
  }
}
