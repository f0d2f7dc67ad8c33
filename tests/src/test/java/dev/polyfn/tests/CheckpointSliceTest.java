package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import dev.polyfn.internal.saved.CheckpointSliceKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.BundleEntryProto;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.proto.TensorSliceProto;
import org.tensorflow.types.TFloat32;

/**
 * Tensors a checkpoint saved in slices (a TF1 partitioned variable, or a variable Python's
 * MaxShardSizePolicy cut across data files: KerasModelCorpusMoreTest loads a real one), checked as
 * TensorFlow's RestoreV2 will read them (see {@link CheckpointIndexTest} for whole tensors).
 */
class CheckpointSliceTest {
  private static TensorShapeProto shape(long... dims) {
    return CheckpointIndexTest.shape(dims);
  }

  /**
   * A tensor saved in slices (a Python variable cut by MaxShardSizePolicy: KerasModelCorpusMoreTest
   * loads one) has each slice's entry checked as a whole tensor's is, before TensorFlow reads it.
   */
  @Test
  void aSliceEntryIsCheckedAsAWholeTensorsIs(@TempDir Path dir) throws Exception {
    Path prefix = CheckpointIndexTest.save(dir);
    Path index = Path.of(prefix + ".index");
    byte[] good = Files.readAllBytes(index);
    Map<String, BundleEntryProto> entries = CheckpointIndexWriter.entries(prefix);
    String key = CheckpointIndexTest.key(entries, DataType.DT_FLOAT);
    BundleEntryProto whole = entries.get(key);
    // TensorFlow's slice key: ordered codes of 0, the tensor's key, the rank, each extent's start and length.
    String sliceKey = CheckpointSliceKeys.of(key, new long[] {0}, new long[] {3});
    Map<UnaryOperator<BundleEntryProto>, String> cases = Map.of(
        e -> e.toBuilder().setSize(8).build(), "(slice 0) has shape [3] of DT_FLOAT (12 bytes), but holds 8 bytes",
        e -> e.toBuilder().setDtype(DataType.DT_INT32).build(), "(slice 0) is DT_INT32, but the tensor is DT_FLOAT",
        e -> e.toBuilder().setShape(shape(4)).setSize(16).build(), "(slice 0) has shape [4], but its extent in [3] is [3]",
        e -> e.toBuilder().setShape(shape(2)).setSize(8).build(), "(slice 0) has shape [2], but its extent in [3] is [3]");
    for (var c : cases.entrySet()) {
      Map<String, BundleEntryProto> edited = new java.util.TreeMap<>(entries);
      edited.put(key, whole.toBuilder().clearShardId().clearOffset().clearSize().clearCrc32C()
          .addSlices(TensorSliceProto.newBuilder().addExtent(TensorSliceProto.Extent.newBuilder().setStart(0).setLength(3)))
          .build());
      edited.put(sliceKey, c.getKey().apply(whole));
      CheckpointIndexWriter.write(prefix, edited);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir));
      assertTrue(e.getMessage().startsWith(index + ": '" + key + "'") && e.getMessage().contains(c.getValue()),
          e.getMessage());
    }
    // Two extents, [0, 1) and [1, 3), whose entries' shapes are swapped: the sizes add up and fit, but
    // RestoreV2 would copy 2 elements out of the first slice's 1-element buffer.
    Map<String, BundleEntryProto> edited = new java.util.TreeMap<>(entries);
    TensorSliceProto.Builder first = TensorSliceProto.newBuilder().addExtent(TensorSliceProto.Extent.newBuilder().setStart(0).setLength(1));
    TensorSliceProto.Builder rest = TensorSliceProto.newBuilder().addExtent(TensorSliceProto.Extent.newBuilder().setStart(1).setLength(2));
    edited.put(key, whole.toBuilder().clearShardId().clearOffset().clearSize().clearCrc32C().addSlices(first).addSlices(rest).build());
    edited.put(CheckpointSliceKeys.of(key, new long[] {0}, new long[] {1}), whole.toBuilder().setShape(shape(2)).setSize(8).build());
    edited.put(CheckpointSliceKeys.of(key, new long[] {1}, new long[] {2}),
        whole.toBuilder().setShape(shape(1)).setSize(4).setOffset(whole.getOffset() + 8).build());
    CheckpointIndexWriter.write(prefix, edited);
    String swapped = assertThrows(IllegalArgumentException.class, () -> Function.load(dir)).getMessage();
    assertTrue(swapped.contains("(slice 0) has shape [2], but its extent in [3] is [1]"), swapped);
    // An extent past the tensor's end.
    edited.put(key, whole.toBuilder().clearShardId().clearOffset().clearSize().clearCrc32C()
        .addSlices(TensorSliceProto.newBuilder().addExtent(TensorSliceProto.Extent.newBuilder().setStart(2).setLength(3))).build());
    CheckpointIndexWriter.write(prefix, edited);
    String past = assertThrows(IllegalArgumentException.class, () -> Function.load(dir)).getMessage();
    assertTrue(past.contains("(slice 0) starts at 2 and spans 3 in dimension 0, beyond the tensor's shape [3]"), past);
    // A slice that is the whole tensor: TensorFlow would read the tensor's own entry, unchecked.
    edited.put(key, whole.toBuilder().clearShardId().clearOffset().clearSize().clearCrc32C()
        .addSlices(TensorSliceProto.newBuilder().addExtent(TensorSliceProto.Extent.newBuilder())).build());
    edited.put(CheckpointSliceKeys.of(key, new long[] {0}, new long[] {-1}), whole); // checked, but never read
    CheckpointIndexWriter.write(prefix, edited);
    String full = assertThrows(IllegalArgumentException.class, () -> Function.load(dir)).getMessage();
    assertTrue(full.contains("(slice 0) is the whole tensor"), full);
    // One slice listed three times, backed by one entry's bytes: the elements add up.
    TensorSliceProto.Builder one = TensorSliceProto.newBuilder().addExtent(TensorSliceProto.Extent.newBuilder().setStart(0).setLength(1));
    edited.put(key, whole.toBuilder().clearShardId().clearOffset().clearSize().clearCrc32C()
        .addSlices(one).addSlices(one).addSlices(one).build());
    edited.put(CheckpointSliceKeys.of(key, new long[] {0}, new long[] {1}), whole.toBuilder().setShape(shape(1)).setSize(4).build());
    CheckpointIndexWriter.write(prefix, edited);
    String repeated = assertThrows(IllegalArgumentException.class, () -> Function.load(dir)).getMessage();
    assertTrue(repeated.contains("(slice 1) repeats an earlier slice"), repeated);
    Files.write(index, good);
    CheckpointIndexTest.loadsAndAnswers(dir);
  }

  /** A tensor of rank 9 in slices: TensorFlow's copy of a slice aborts past rank 8 (a CHECK). */
  @Test
  void aSlicedTensorOfRankNineIsRefused(@TempDir Path dir) throws Exception {
    Shape nine = Shape.of(2, 1, 1, 1, 1, 1, 1, 1, 1);
    try (Variable<TFloat32> w = Variable.create(TFloat32.tensorOf(nine));
         MapFunction f = Function.define((tf, in) -> Map.of("y",
             tf.math.add(in.input("x", TFloat32.class), tf.reshape(w.read(tf), tf.constant(new long[] {2})))))) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(2))));
      f.save(dir);
    }
    Path prefix = dir.resolve("variables").resolve("variables");
    Map<String, BundleEntryProto> entries = CheckpointIndexWriter.entries(prefix);
    String key = CheckpointIndexTest.key(entries, DataType.DT_FLOAT);
    BundleEntryProto whole = entries.get(key);
    long[] lengthOne = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    TensorSliceProto.Builder first = TensorSliceProto.newBuilder();
    TensorSliceProto.Builder second = TensorSliceProto.newBuilder();
    for (int d = 0; d < 9; d++) {
      first.addExtent(TensorSliceProto.Extent.newBuilder().setStart(0).setLength(1));
      second.addExtent(TensorSliceProto.Extent.newBuilder().setStart(d == 0 ? 1 : 0).setLength(1));
    }
    Map<String, BundleEntryProto> edited = new TreeMap<>(entries);
    edited.put(key, whole.toBuilder().clearShardId().clearOffset().clearSize().clearCrc32C().addSlices(first).addSlices(second)
        .build());
    TensorShapeProto.Builder ones = TensorShapeProto.newBuilder();
    for (int d = 0; d < 9; d++) {
      ones.addDim(TensorShapeProto.Dim.newBuilder().setSize(1));
    }
    edited.put(CheckpointSliceKeys.of(key, new long[9], lengthOne), whole.toBuilder().setShape(ones).setSize(4).build());
    long[] secondStarts = new long[9];
    secondStarts[0] = 1;
    edited.put(CheckpointSliceKeys.of(key, secondStarts, lengthOne),
        whole.toBuilder().setShape(ones).setSize(4).setOffset(whole.getOffset() + 4).build());
    CheckpointIndexWriter.write(prefix, edited);
    String why = assertThrows(IllegalArgumentException.class, () -> Function.load(dir)).getMessage();
    assertTrue(why.contains("is saved in slices at rank 9"), why);
  }

  /** TensorFlow's own encodings of signed numbers (ordered_code.cc's examples) and of a slice key. */
  @Test
  void sliceKeysAreEncodedAsTensorFlowEncodesThem() {
    assertEquals("\0\0\1\1\1\u0080\u0080", CheckpointSliceKeys.of("", new long[] {0}, new long[] {0}));
    assertEquals("\0a\0\u00ff\u00ff\0\0\1\1\1\u007f\u00bf",
        CheckpointSliceKeys.of("a\0\u00ff", new long[] {-1}, new long[] {63}));
    // 0x424242 -> f0 42 42 42 and -0x800 -> 38 00 (ordered_code.cc's examples); 64 -> c0 40.
    assertEquals("\0\0\1\1\1\u00f0\u0042\u0042\u0042\u0038\0",
        CheckpointSliceKeys.of("", new long[] {0x424242}, new long[] {-0x800}));
    assertEquals("\0\0\1\1\1\u00c0\u0040\u0040", CheckpointSliceKeys.of("", new long[] {64}, new long[] {-64}));
  }

}
