package dev.polyfn.internal.saved;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * TensorFlow's table format ({@code tensorflow/core/lib/io}: table, block and format, a LevelDB
 * SSTable), read from a file's bytes with every offset, size and varint checked, so that a
 * malformed file is an IllegalArgumentException, never an index out of bounds, a hang or a large
 * allocation: a 48-byte footer (the metaindex and index blocks' handles, varint64 offset and size,
 * padding and a magic number), blocks of prefix-compressed entries with restart points, each
 * followed by a compression type and a masked CRC32C. TensorFlow's bundle writer never compresses
 * (its table options say {@code kNoCompression}), so a compressed block is refused. The checks
 * are those TensorFlow's reader relies on: blocks inside the file and their checksums right,
 * restart points at entries' starts, keys strictly increasing.
 */
final class CheckpointTable {
  private static final long MAGIC = 0xdb4775248b80fb57L;
  private static final int FOOTER = 48;
  /** A block's compression type and CRC. */
  private static final int TRAILER = 5;
  private static final int CRC_MASK_DELTA = 0xa282ead8;
  /**
   * The most entries an index may hold. Each costs the reader about 40 times its bytes in the
   * heap (key, value, map node), so a 32 MB index of 4-byte entries would need a gigabyte; real
   * checkpoints hold tens of thousands (a large Keras model with its optimizer's slots).
   */
  static final int MAX_ENTRIES = 1_000_000;

  private CheckpointTable() {}

  /**
   * Every entry of the table in {@code file}: each key's bytes as ISO-8859-1 (one char a byte, so
   * any key maps back) to its value.
   *
   * @throws IllegalArgumentException saying what is malformed (the caller names the file)
   */
  static Map<String, byte[]> entries(byte[] file) {
    return new Table(file).entries();
  }

  /** TensorFlow's table format, read from the file's bytes with every offset and size checked. */
  private static final class Table {
    private final byte[] file;
    /** Where blocks may lie: before the footer. */
    private final long end;
    /**
     * The bytes of keys, each written out whole, left to decode: prefix compression lets a small
     * file hold keys whose whole bytes are quadratic in its size. Real indexes' keys, written out
     * whole, are about the file's size (0.8 to 1 times, for Keras checkpoints with optimizer slots).
     */
    private long keyBudget;

    Table(byte[] file) {
      this.file = file;
      this.end = file.length - FOOTER;
      this.keyBudget = 4L * file.length + (1 << 20);
    }

    /** Every entry of the data blocks, keys strictly increasing across them (TensorFlow seeks by that order). */
    Map<String, byte[]> entries() {
      if (file.length < FOOTER) {
        throw new IllegalArgumentException("it has " + file.length + " bytes, fewer than a table's footer (" + FOOTER + ")");
      }
      if (fixed64(file.length - 8) != MAGIC) {
        throw new IllegalArgumentException("it is not a TensorFlow table (bad magic number)");
      }
      Cursor footer = new Cursor(file, (int) end, file.length - 8, "the footer");
      long metaOffset = footer.varint64();
      long metaSize = footer.varint64();
      long indexOffset = footer.varint64();
      long indexSize = footer.varint64();
      block(metaOffset, metaSize, "the metaindex block");
      Map<String, byte[]> out = new HashMap<>();
      byte[] last = null;
      long next = 0;
      for (Entry i : block(indexOffset, indexSize, "the index block")) {
        Cursor h = new Cursor(i.value, 0, i.value.length, "a block handle of the index block");
        long offset = h.varint64();
        long size = h.varint64();
        // Data blocks in file order, none read twice: the work is bounded by the file's size.
        if (offset < next) {
          throw new IllegalArgumentException("the data block at " + Long.toUnsignedString(offset)
              + " overlaps the one before it");
        }
        String what = "the data block at " + offset;
        for (Entry d : block(offset, size, what)) {
          if (last != null && Arrays.compareUnsigned(last, d.key) >= 0) {
            throw new IllegalArgumentException(what + " has a key out of order");
          }
          if (Arrays.compareUnsigned(d.key, i.key) > 0) {
            throw new IllegalArgumentException(what + " has a key past its index entry's");
          }
          last = d.key;
          out.put(new String(d.key, StandardCharsets.ISO_8859_1), d.value);
          if (out.size() > MAX_ENTRIES) {
            throw new IllegalArgumentException("it holds more than " + MAX_ENTRIES + " entries");
          }
        }
        next = offset + size + TRAILER;
      }
      return out;
    }

    /** The entries of the block at {@code offset} of {@code size} bytes, its trailer's type and CRC checked. */
    private List<Entry> block(long offset, long size, String what) {
      if (offset < 0 || size < 0 || offset > end - TRAILER || size > end - TRAILER - offset) {
        throw new IllegalArgumentException(what + " (" + Long.toUnsignedString(size) + " bytes at "
            + Long.toUnsignedString(offset) + ") lies outside the " + end + " bytes before the footer");
      }
      int start = (int) offset;
      int n = (int) size;
      CRC32C crc = new CRC32C();
      crc.update(file, start, n + 1);
      int rot = (int) fixed32(start + n + 1) - CRC_MASK_DELTA;
      if ((int) crc.getValue() != ((rot >>> 17) | (rot << 15))) {
        throw new IllegalArgumentException(what + " fails its checksum");
      }
      if (file[start + n] != 0) {
        throw new IllegalArgumentException(what + " is compressed (type " + file[start + n]
            + "), which TensorFlow's checkpoints never are");
      }
      if (n < 4) {
        throw new IllegalArgumentException(what + " has " + n + " bytes, fewer than its restart count");
      }
      long restarts = fixed32(start + n - 4);
      if (restarts < 1 || restarts > (n - 4) / 4) {
        throw new IllegalArgumentException(what + " has " + restarts + " restart points, which its " + n
            + " bytes cannot hold");
      }
      int limit = start + n - 4 - 4 * (int) restarts;
      Cursor c = new Cursor(file, start, limit, what);
      List<Entry> out = new ArrayList<>();
      byte[] key = new byte[0];
      int restart = 0;
      while (c.pos < limit) {
        boolean atRestart = restart < restarts && c.pos == start + fixed32(limit + 4 * restart);
        if (c.pos == start && !atRestart) {
          // TensorFlow's reader starts at a restart point: entries before the first are invisible
          // to it, and its seek would find another entry than this reader does.
          throw new IllegalArgumentException(what + " has its first restart point after its first entry");
        }
        long shared = c.varint32();
        long own = c.varint32();
        long valueLength = c.varint32();
        if (atRestart && shared != 0) {
          throw new IllegalArgumentException(what + " shares a key prefix at restart point " + restart);
        }
        restart += atRestart ? 1 : 0;
        if (shared > key.length || own > limit - c.pos || valueLength > limit - c.pos - own) {
          throw new IllegalArgumentException(what + " has an entry (" + shared + " bytes shared, " + own
              + " own, a value of "
              + valueLength + ") longer than its key before it or the bytes left (" + (limit - c.pos) + ")");
        }
        keyBudget -= shared + own;
        if (keyBudget < 0) {
          throw new IllegalArgumentException("its keys, written out whole, are more than four times its size");
        }
        byte[] k = Arrays.copyOf(key, (int) (shared + own));
        System.arraycopy(file, c.pos, k, (int) shared, (int) own);
        byte[] value = Arrays.copyOfRange(file, c.pos + (int) own, c.pos + (int) (own + valueLength));
        c.pos += (int) (own + valueLength);
        if (!out.isEmpty() && Arrays.compareUnsigned(key, k) >= 0) {
          throw new IllegalArgumentException(what + " has a key out of order");
        }
        key = k;
        out.add(new Entry(k, value));
        if (out.size() > MAX_ENTRIES) {
          throw new IllegalArgumentException(what + " holds more than " + MAX_ENTRIES + " entries");
        }
      }
      // Every restart point is an entry's start (an empty block's are all 0), as TensorFlow's binary search needs.
      for (; restart < restarts && out.isEmpty(); restart++) {
        if (fixed32(limit + 4 * restart) != 0) {
          break;
        }
      }
      if (restart != restarts) {
        throw new IllegalArgumentException(what + " has a restart point at no entry's start");
      }
      return out;
    }

    private long fixed32(int at) {
      return (file[at] & 0xffL) | (file[at + 1] & 0xffL) << 8 | (file[at + 2] & 0xffL) << 16 | (file[at + 3] & 0xffL) << 24;
    }

    private long fixed64(int at) {
      return fixed32(at) | fixed32(at + 4) << 32;
    }
  }

  /** A key and its value. */
  private record Entry(byte[] key, byte[] value) {}

  /** Reads varints from {@code [pos, limit)} of an array, never past the limit. */
  private static final class Cursor {
    private final byte[] bytes;
    private final int limit;
    private final String what;
    int pos;

    Cursor(byte[] bytes, int pos, int limit, String what) {
      this.bytes = bytes;
      this.pos = pos;
      this.limit = limit;
      this.what = what;
    }

    long varint64() {
      return varint(10);
    }

    long varint32() {
      long v = varint(5);
      if (v > 0xffffffffL) {
        throw new IllegalArgumentException(what + " has a malformed varint");
      }
      return v;
    }

    private long varint(int maxBytes) {
      long v = 0;
      for (int i = 0; i < maxBytes && pos < limit; i++) {
        int b = bytes[pos++];
        v |= (long) (b & 0x7f) << (7 * i);
        if (b >= 0) {
          return v;
        }
      }
      throw new IllegalArgumentException(what + " has a malformed or truncated varint");
    }
  }
}
