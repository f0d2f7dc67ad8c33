package dev.polyfn.internal.saved;

import dev.polyfn.internal.DataTypes;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.tensorflow.proto.BundleEntryProto;
import org.tensorflow.proto.BundleHeaderProto;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.proto.TensorSliceProto;

/**
 * A TensorFlow checkpoint's index ({@code <prefix>.index}), read and checked in Java before any
 * RestoreV2 reads the checkpoint. It exists because TensorFlow trusts the index: RestoreV2
 * allocates each tensor with the shape its entry states before it compares the entry's size with
 * the data (an index of a few hundred bytes declaring a string variable of shape [1000000000]
 * makes it construct 10^9 strings, 24 GB), its table reader allocates a block by the size a
 * handle states, and its string reader each string by the length the data file states. Here the
 * whole table is parsed and its checksums verified, and each entry about to be restored is
 * checked against the SavedModel and the data files ({@link #check}), so that what TensorFlow
 * allocates is bounded by the files on disk.
 *
 * <p>The index is TensorFlow's table format ({@link CheckpointTable}): key {@code ""} holds a
 * {@code BundleHeaderProto}, every other key a tensor's {@code BundleEntryProto}.
 */
public final class CheckpointIndex {
  private final Path index;
  private final Path prefix;
  private final int shards;
  /** Each key's encoded entry, the key's bytes as ISO-8859-1 (one char a byte, so any key maps back). */
  private final Map<String, byte[]> entries;
  /**
   * The bytes of each data file that the entries checked so far read, by start: TensorFlow's
   * writer never lets two tensors share bytes, and entries that did would let a small file make
   * TensorFlow allocate as many tensors of it as a load restores. One load's, never shared.
   */
  private final Map<Integer, TreeMap<Long, Range>> claimed = new HashMap<>();

  /** TensorFlow's kTensorSliceMaxRank: the highest rank of a tensor it reads in slices. */
  private static final int MAX_SLICED_RANK = 8;

  /** The bytes {@code [start, end)} of a data file that checkpoint key {@code key} reads. */
  private record Range(long end, String key) {}

  private CheckpointIndex(Path index, Path prefix, int shards, Map<String, byte[]> entries) {
    this.index = index;
    this.prefix = prefix;
    this.shards = shards;
    this.entries = entries;
  }

  /**
   * Reads and checks the index of the checkpoint {@code prefix} (at most {@link
   * BoundedFiles#CHECKPOINT_INDEX} bytes).
   *
   * @throws IllegalArgumentException naming the index file when it is missing, unreadable or not
   *     a well-formed tensor bundle index
   */
  public static CheckpointIndex read(Path prefix) {
    Path index = Path.of(prefix + ".index");
    byte[] bytes;
    try {
      bytes = BoundedFiles.read(index, BoundedFiles.CHECKPOINT_INDEX);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(index + ": the checkpoint's index does not exist");
    } catch (IOException e) {
      throw new IllegalArgumentException(index + ": the checkpoint's index cannot be read: " + e.getMessage(), e);
    }
    Map<String, byte[]> entries;
    try {
      entries = CheckpointTable.entries(bytes);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(index + ": not a well-formed checkpoint index: " + e.getMessage());
    }
    byte[] head = entries.get("");
    if (head == null) {
      throw new IllegalArgumentException(index + ": the checkpoint's index has no header entry");
    }
    BundleHeaderProto header;
    try {
      header = BundleHeaderProto.parseFrom(head);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(index + ": the checkpoint's header cannot be read: " + e.getMessage());
    }
    if (header.getNumShards() < 1) {
      throw new IllegalArgumentException(index + ": the checkpoint's header says " + header.getNumShards()
          + " data files");
    }
    return new CheckpointIndex(index, prefix, header.getNumShards(), entries);
  }

  /** The index file, for messages. */
  public Path file() {
    return index;
  }

  /** The checkpoint's tensor keys (the header's, {@code ""}, left out), in no order. */
  public Set<String> keys() {
    Set<String> keys = new HashSet<>();
    entries.keySet().stream().filter(k -> !k.isEmpty())
        .forEach(k -> keys.add(new String(k.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8)));
    return keys;
  }

  /**
   * The entry of tensor {@code key}, unchecked ({@link #check} checks it).
   *
   * @throws IllegalArgumentException naming the index file when there is none or it cannot be parsed
   */
  public BundleEntryProto entry(String key) {
    String at = index + ": '" + key + "'";
    byte[] raw = key.isEmpty() ? null : entries.get(latin1(key));
    if (raw == null) {
      throw new IllegalArgumentException(at + " is not in the checkpoint");
    }
    return parse(raw, at);
  }

  private static BundleEntryProto parse(byte[] raw, String at) {
    try {
      return BundleEntryProto.parseFrom(raw);
    } catch (com.google.protobuf.InvalidProtocolBufferException x) {
      throw new IllegalArgumentException(at + ": its entry cannot be read: " + x.getMessage());
    }
  }

  /**
   * Checks the entry of checkpoint key {@code key}, which a RestoreV2 is about to read as {@code
   * dtype}, before it does: the key exists; its dtype is {@code dtype}; its shape is a valid one
   * and agrees with {@code declared} (null: unknown; {@link RestoreChecks#variableShape}, which
   * names it {@code variable}); its data (or that of each slice it was saved in) lies within an
   * existing data file; and it holds exactly the bytes its shape needs (a string tensor: the
   * lengths and bytes its strings need, the lengths read from the data file).
   *
   * @throws IllegalArgumentException naming the index file (and the data file, if that is wrong)
   */
  public void check(String key, DataType dtype, TensorShapeProto declared, String variable) {
    String at = index + ": '" + key + "'";
    BundleEntryProto e = entry(key);
    if (e.getDtype() != dtype) {
      throw new IllegalArgumentException(at + " is " + e.getDtype() + " in the checkpoint, but the SavedModel reads it as "
          + dtype);
    }
    long[] dims = dims(e.getShape(), at);
    long elements = 1;
    try {
      for (long d : dims) {
        elements = Math.multiplyExact(elements, d);
      }
    } catch (ArithmeticException x) {
      throw new IllegalArgumentException(at + " has shape " + Arrays.toString(dims) + ", more elements than a tensor holds");
    }
    if (declared != null) {
      try {
        RestoreChecks.variableShape(variable, declared, dims);
      } catch (IllegalArgumentException x) {
        throw new IllegalArgumentException(index + ": " + x.getMessage(), x);
      }
    }
    if (e.getSlicesCount() > 0) {
      slices(key, e, dtype, dims, elements, at);
    } else {
      data(key, e, dtype, elements, dims, at);
    }
  }

  /**
   * Checks that the data of entry {@code e} (a whole tensor, or a slice of one) of {@code elements}
   * elements of {@code dtype} lies within an existing data file, reads no other entry's bytes, and
   * is exactly the bytes its shape needs.
   */
  private void data(String key, BundleEntryProto e, DataType dtype, long elements, long[] dims, String at) {
    if (e.getShardId() < 0 || e.getShardId() >= shards) {
      throw new IllegalArgumentException(at + " is in data file " + e.getShardId() + ", but the checkpoint has " + shards);
    }
    Path data = Path.of(prefix + String.format(Locale.ROOT, ".data-%05d-of-%05d", e.getShardId(), shards));
    long length;
    try {
      if (!Files.isRegularFile(data)) {
        throw new IllegalArgumentException(at + " is in " + data + ", which " + (Files.exists(data)
            ? "is not a regular file" : "does not exist"));
      }
      length = Files.size(data);
    } catch (IOException x) {
      throw new IllegalArgumentException(at + " is in " + data + ", which cannot be read: " + x.getMessage(), x);
    }
    if (e.getOffset() < 0 || e.getSize() < 0 || e.getOffset() > length - e.getSize()) {
      throw new IllegalArgumentException(at + " lies at bytes " + Long.toUnsignedString(e.getOffset()) + " to "
          + Long.toUnsignedString(e.getOffset() + e.getSize()) + " of " + data + ", which has " + length + " bytes");
    }
    claim(key, e, data, at);
    int width;
    try {
      width = DataTypes.byteSize(dtype);
    } catch (IllegalArgumentException x) {
      throw new IllegalArgumentException(at + " is " + dtype + ", which TensorFlow Java has no tensor class for", x);
    }
    if (width > 0) {
      long need;
      try {
        need = Math.multiplyExact(elements, width);
      } catch (ArithmeticException x) {
        need = -1;
      }
      if (need != e.getSize()) {
        throw new IllegalArgumentException(at + " has shape " + Arrays.toString(dims) + " of " + dtype + " ("
            + (need < 0 ? "more than 2^63" : need) + " bytes), but holds " + e.getSize() + " bytes in " + data);
      }
    } else if (dtype == DataType.DT_STRING) {
      strings(e, elements, data, at, dims);
    } else {
      throw new IllegalArgumentException(at + " is " + dtype + ", whose size Polyfn cannot check before restoring it");
    }
  }

  /**
   * Checks the slices a tensor was saved in (as a partitioned variable was, or a variable cut by
   * Python's {@code MaxShardSizePolicy}). RestoreV2 allocates the whole tensor by the whole
   * entry's shape (checked already), then, for each extent the whole entry lists, reads the entry
   * under that extent's key ({@link CheckpointSliceKeys}) into a tensor of that entry's shape and
   * copies it into the whole by the extent. So each extent must lie within the whole's shape, its
   * entry exist under exactly that key, be of {@code dtype}, of the extent's shape (else the copy
   * reads past the slice's buffer) and have its data checked as a whole tensor's; and the extents'
   * elements must add up to the whole's (TensorFlow refuses overlapping extents).
   */
  private void slices(String key, BundleEntryProto e, DataType dtype, long[] dims, long elements, String at) {
    // TensorFlow copies a slice into the whole with CHECK_LE(rank, kTensorSliceMaxRank): past 8 it aborts.
    if (dims.length > MAX_SLICED_RANK) {
      throw new IllegalArgumentException(at + " is saved in slices at rank " + dims.length + "; TensorFlow reads slices"
          + " of tensors of rank " + MAX_SLICED_RANK + " at most");
    }
    long total = 0;
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < e.getSlicesCount(); i++) {
      String sliceAt = at + " (slice " + i + ")";
      TensorSliceProto extent = e.getSlices(i);
      if (extent.getExtentCount() != dims.length) {
        throw new IllegalArgumentException(sliceAt + " has " + extent.getExtentCount() + " extents, but the tensor has rank "
            + dims.length);
      }
      // A slice of the whole tensor is not looked up by its key: TensorFlow reads the tensor's own
      // entry then, whose data nothing here checks. No writer makes one.
      if (extent.getExtentList().stream().noneMatch(TensorSliceProto.Extent::hasLength)) {
        throw new IllegalArgumentException(sliceAt + " is the whole tensor, which a checkpoint saves unsliced");
      }
      long[] starts = new long[dims.length];
      long[] lengths = new long[dims.length];
      long[] sliceDims = new long[dims.length];
      long n = 1;
      for (int d = 0; d < dims.length; d++) {
        TensorSliceProto.Extent x = extent.getExtent(d);
        starts[d] = x.getStart();
        lengths[d] = x.hasLength() ? x.getLength() : -1; // -1: the whole dimension
        long size = x.hasLength() ? x.getLength() : dims[d];
        if (starts[d] < 0 || size < 0 || (!x.hasLength() && starts[d] != 0) || starts[d] > dims[d] - size) {
          throw new IllegalArgumentException(sliceAt + " starts at " + starts[d] + " and spans " + size
              + " in dimension " + d + ", beyond the tensor's shape " + Arrays.toString(dims));
        }
        sliceDims[d] = size;
        n *= size; // at most the whole's elements, which fit in a long
      }
      String sliceKey = CheckpointSliceKeys.of(latin1(key), starts, lengths);
      // One slice listed twice would count its elements twice, backed by one entry's bytes:
      // TensorFlow refuses the overlap only after allocating the whole tensor.
      if (!seen.add(sliceKey)) {
        throw new IllegalArgumentException(sliceAt + " repeats an earlier slice");
      }
      byte[] raw = entries.get(sliceKey);
      if (raw == null) {
        throw new IllegalArgumentException(sliceAt + " is not in the checkpoint");
      }
      BundleEntryProto slice = parse(raw, sliceAt);
      if (slice.getDtype() != dtype || slice.getSlicesCount() > 0) {
        throw new IllegalArgumentException(sliceAt + " is " + slice.getDtype() + (slice.getSlicesCount() > 0
            ? " in slices itself" : "") + ", but the tensor is " + dtype);
      }
      long[] stored = dims(slice.getShape(), sliceAt);
      if (!Arrays.equals(stored, sliceDims)) {
        throw new IllegalArgumentException(sliceAt + " has shape " + Arrays.toString(stored) + ", but its extent in "
            + Arrays.toString(dims) + " is " + Arrays.toString(sliceDims));
      }
      total = Math.addExact(total, n); // each at most the whole's elements, each slice once
      data(sliceKey, slice, dtype, n, sliceDims, sliceAt);
    }
    if (total != elements) {
      throw new IllegalArgumentException(at + ": its slices hold " + total + " elements, but its shape "
          + Arrays.toString(dims) + " has " + elements);
    }
  }

  private static String latin1(String key) {
    return new String(key.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
  }

  /** The dimensions of a stored shape: a known rank and no negative dimension (TensorFlow's IsValid). */
  private static long[] dims(TensorShapeProto shape, String at) {
    if (shape.getUnknownRank()) {
      throw new IllegalArgumentException(at + " has a shape of unknown rank in the checkpoint");
    }
    long[] dims = new long[shape.getDimCount()];
    for (int i = 0; i < dims.length; i++) {
      dims[i] = shape.getDim(i).getSize();
      if (dims[i] < 0) {
        throw new IllegalArgumentException(at + " has dimension " + i + " of size " + dims[i] + " in the checkpoint");
      }
    }
    return dims;
  }

  /**
   * Records the bytes entry {@code e} of {@code key} reads, refusing bytes another key's entry
   * reads already (a key checked again claims its own bytes again).
   */
  private void claim(String key, BundleEntryProto e, Path data, String at) {
    if (e.getSize() == 0) {
      return;
    }
    TreeMap<Long, Range> shard = claimed.computeIfAbsent(e.getShardId(), s -> new TreeMap<>());
    long start = e.getOffset();
    long end = start + e.getSize();
    // The ranges claimed so far do not overlap, so the last one starting before `end` is the only
    // one that can reach past `start`.
    Map.Entry<Long, Range> last = shard.floorEntry(end - 1);
    if (last != null && last.getValue().end() > start && !last.getValue().key().equals(key)) {
      throw new IllegalArgumentException(at + " reads bytes " + start + " to " + end + " of " + data
          + ", which '" + last.getValue().key() + "' reads too (bytes " + last.getKey() + " to "
          + last.getValue().end() + "): a checkpoint's tensors never share bytes");
    }
    shard.put(start, new Range(end, key));
  }

  /**
   * A string tensor's data: a varint64 length per string, a 4-byte checksum, the strings' bytes.
   * TensorFlow reads the lengths, then sizes each string by its length before reading it: the
   * lengths are read here and their sum checked against the entry's size.
   */
  private static void strings(BundleEntryProto e, long elements, Path data, String at, long[] dims) {
    // Each string has at least a 1-byte length: this bounds the strings TensorFlow constructs.
    if (elements > e.getSize() || elements > 0 && e.getSize() < elements + 4) {
      throw new IllegalArgumentException(at + " has shape " + Arrays.toString(dims) + " of DT_STRING (" + elements
          + " strings), but holds " + e.getSize() + " bytes in " + data);
    }
    if (elements == 0) {
      return;
    }
    long used = 4;
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ)) {
      ch.position(e.getOffset());
      InputStream in = new BufferedInputStream(Channels.newInputStream(ch), 1 << 16);
      long left = e.getSize() - 4;
      for (long i = 0; i < elements; i++) {
        long length = 0;
        for (int shift = 0; ; shift += 7) {
          int b = left-- > 0 ? in.read() : -1;
          if (b < 0 || shift > 63) {
            throw new IllegalArgumentException(at + ": the length of string " + i + " in " + data + " is malformed");
          }
          length |= (long) (b & 0x7f) << shift;
          used++;
          if ((b & 0x80) == 0) {
            break;
          }
        }
        used = length < 0 || length > e.getSize() ? Long.MAX_VALUE : used + length;
        if (used > e.getSize()) {
          throw new IllegalArgumentException(at + ": its strings in " + data + " need more than the " + e.getSize()
              + " bytes the entry holds");
        }
      }
    } catch (IOException x) {
      throw new IllegalArgumentException(at + ": " + data + " cannot be read: " + x.getMessage(), x);
    }
  }
}
