package dev.polyfn.tests;

import dev.polyfn.internal.saved.CheckpointIndex;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.tensorflow.proto.BundleEntryProto;
import org.tensorflow.proto.BundleHeaderProto;
import org.tensorflow.proto.VersionDef;

/**
 * Writes a checkpoint's index as TensorFlow's table format does (one data block, an index block,
 * an empty metaindex block, the footer; CRCs right), so that tests can craft entries a real
 * SavedModel's checkpoint never has: a shape of 10^9 strings, a size or offset past the data.
 */
final class CheckpointIndexWriter {
  private CheckpointIndexWriter() {}

  static final long MAGIC = 0xdb4775248b80fb57L;

  /** The entries of checkpoint {@code prefix}'s index, by key (read with Polyfn's reader). */
  static Map<String, BundleEntryProto> entries(Path prefix) {
    CheckpointIndex index = CheckpointIndex.read(prefix);
    Map<String, BundleEntryProto> out = new TreeMap<>();
    index.keys().forEach(k -> out.put(k, index.entry(k)));
    return out;
  }

  /** Writes {@code <prefix>.index} holding {@code entries} and a header of one data file. */
  static void write(Path prefix, Map<String, BundleEntryProto> entries) throws IOException {
    Map<byte[], byte[]> table = new TreeMap<>(Arrays::compareUnsigned);
    table.put(new byte[0], BundleHeaderProto.newBuilder().setNumShards(1)
        .setVersion(VersionDef.newBuilder().setProducer(1)).build().toByteArray());
    // A slice key (CheckpointSliceKeys, starting with 0) holds one byte per char; names are UTF-8.
    entries.forEach((k, e) -> table.put(k.getBytes(k.startsWith("\0") ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8),
        e.toByteArray()));
    Files.write(Path.of(prefix + ".index"), table(table, (byte) 0));
  }

  /** A table of {@code entries} (in key order) whose blocks say compression {@code type}. */
  static byte[] table(Map<byte[], byte[]> entries, byte type) {
    return table(entries, type, false);
  }

  /**
   * {@link #table(Map, byte)}, the data block's first entry left out of its restart points when
   * {@code hideFirst} (TensorFlow's reader, which starts at a restart point, never sees it).
   */
  static byte[] table(Map<byte[], byte[]> entries, byte type, boolean hideFirst) {
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    ByteArrayOutputStream data = new ByteArrayOutputStream();
    ByteArrayOutputStream restarts = new ByteArrayOutputStream();
    int count = 0;
    byte[] last = new byte[0];
    for (Map.Entry<byte[], byte[]> e : entries.entrySet()) {
      if (!(hideFirst && count == 0)) {
        fixed32(restarts, data.size()); // every entry a restart point: no shared prefixes
      }
      varint(data, 0);
      varint(data, e.getKey().length);
      varint(data, e.getValue().length);
      data.writeBytes(e.getKey());
      data.writeBytes(e.getValue());
      last = e.getKey();
      count++;
    }
    int restartCount = restarts.size() / 4;
    if (restartCount == 0) {
      fixed32(restarts, 0);
      restartCount = 1;
    }
    data.writeBytes(restarts.toByteArray());
    fixed32(data, restartCount);
    long[] dataHandle = block(file, data.toByteArray(), type);
    ByteArrayOutputStream handle = new ByteArrayOutputStream();
    varint(handle, dataHandle[0]);
    varint(handle, dataHandle[1]);
    ByteArrayOutputStream index = new ByteArrayOutputStream();
    varint(index, 0);
    varint(index, last.length);
    varint(index, handle.size());
    index.writeBytes(last);
    index.writeBytes(handle.toByteArray());
    fixed32(index, 0);
    fixed32(index, 1);
    ByteArrayOutputStream empty = new ByteArrayOutputStream();
    fixed32(empty, 0);
    fixed32(empty, 1);
    long[] metaHandle = block(file, empty.toByteArray(), type);
    long[] indexHandle = block(file, index.toByteArray(), type);
    ByteArrayOutputStream footer = new ByteArrayOutputStream();
    varint(footer, metaHandle[0]);
    varint(footer, metaHandle[1]);
    varint(footer, indexHandle[0]);
    varint(footer, indexHandle[1]);
    footer.writeBytes(new byte[40 - footer.size()]);
    fixed32(footer, (int) MAGIC);
    fixed32(footer, (int) (MAGIC >>> 32));
    file.writeBytes(footer.toByteArray());
    return file.toByteArray();
  }

  /** Appends a block and its trailer to {@code file}; its handle (offset, size). */
  private static long[] block(ByteArrayOutputStream file, byte[] contents, byte type) {
    long offset = file.size();
    file.writeBytes(contents);
    file.write(type);
    CRC32C crc = new CRC32C();
    crc.update(contents);
    crc.update(type);
    int c = (int) crc.getValue();
    fixed32(file, ((c >>> 15) | (c << 17)) + 0xa282ead8);
    return new long[] {offset, contents.length};
  }

  static void varint(ByteArrayOutputStream out, long v) {
    while ((v & ~0x7fL) != 0) {
      out.write((int) (v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static void fixed32(ByteArrayOutputStream out, int v) {
    for (int i = 0; i < 4; i++) {
      out.write(v >>> (8 * i));
    }
  }
}
