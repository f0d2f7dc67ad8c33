package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import dev.polyfn.internal.saved.CheckpointIndex;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.BundleEntryProto;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.proto.TensorSliceProto;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TString;

/**
 * A checkpoint's index is read and checked in Java before TensorFlow's RestoreV2 reads the
 * checkpoint ({@link CheckpointIndex}): RestoreV2 allocates each tensor with the shape its index
 * entry states before comparing the entry's size with the data, so a crafted index of a few
 * hundred bytes declaring a string variable of 10^9 elements made it construct 10^9 strings (24
 * GB) in the host JVM before failing. Each crafted index here (written with correct CRCs by
 * {@link CheckpointIndexWriter}) is refused at load, quickly, naming the index file and the
 * variable; a good load and call work after. Real indexes, written by Polyfn and by Python's
 * TensorFlow, parse to what TensorFlow reports; any truncation or byte flip of one is an
 * IllegalArgumentException naming the file, or parses.
 */
class CheckpointIndexTest {
  /** The strings a crafted entry declares (a smaller count shows TensorFlow's allocation without the fix). */
  static final long HUGE = Long.getLong("polyfn.test.hugeElements", 1_000_000_000L);

  /** Saves a function capturing a float variable of three elements and a string variable of two. */
  static Path save(Path dir) {
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f));
         Variable<TString> s = Variable.create(TString.vectorOf("a", "bc"));
         MapFunction f = Function.define((tf, in) -> {
           var x = in.input("x", TFloat32.class);
           return Map.of("y", tf.math.add(tf.math.mul(x, w.read(tf)), tf.constant(1f)),
               "n", tf.strings.stringLength(s.read(tf)));
         }, FunctionOptions.defaults().withName("scale"))) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3))));
      f.save(dir);
    }
    return dir.resolve("variables").resolve("variables");
  }

  /** Loads {@code dir} and calls it: y = x * w + 1 and the strings' lengths. */
  static void loadsAndAnswers(Path dir) {
    try (PolymorphicFunction g = Function.load(dir); TFloat32 x = TFloat32.vectorOf(1f, 1f, 2f);
         Outputs out = ((MapFunction) g).call(Map.of("x", x))) {
      assertArrayEquals(new float[] {2f, 3f, 7f}, SavedModelTest.floats(out.get("y")));
      TInt32 n = (TInt32) out.get("n");
      assertEquals(List.of(1, 2), List.of(n.getInt(0), n.getInt(1)));
    }
  }

  /** The key of the variable of {@code dtype} in {@code entries}. */
  static String key(Map<String, BundleEntryProto> entries, DataType dtype) {
    return entries.entrySet().stream().filter(e -> e.getKey().endsWith("VARIABLE_VALUE") && e.getValue().getDtype() == dtype)
        .findFirst().orElseThrow().getKey();
  }

  static TensorShapeProto shape(long... dims) {
    TensorShapeProto.Builder b = TensorShapeProto.newBuilder();
    for (long d : dims) {
      b.addDim(TensorShapeProto.Dim.newBuilder().setSize(d));
    }
    return b.build();
  }

  /**
   * Rewrites the index of the SavedModel in {@code dir} with {@code edit} applied to the entry of
   * its variable of {@code dtype}, checks that the load is refused within 20 seconds with a
   * message naming the index, the variable and {@code expected}, then that the good index loads
   * and answers. The refusal's message.
   */
  private static String refused(Path dir, DataType dtype, UnaryOperator<BundleEntryProto> edit, String expected)
      throws Exception {
    Path prefix = dir.resolve("variables").resolve("variables");
    Path index = Path.of(prefix + ".index");
    byte[] good = Files.readAllBytes(index);
    Map<String, BundleEntryProto> entries = CheckpointIndexWriter.entries(prefix);
    String key = key(entries, dtype);
    entries.put(key, edit.apply(entries.get(key)));
    CheckpointIndexWriter.write(prefix, entries);
    long start = System.nanoTime();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    System.out.println("refused in " + ms + " ms, peak RSS " + peakRssKb() + " kB: " + e.getMessage());
    assertTrue(e.getMessage().startsWith(index.toString()) && e.getMessage().contains("'" + key + "'")
        && e.getMessage().contains(expected), e.getMessage());
    assertTrue(ms < 20_000, "refused after " + ms + " ms");
    Files.write(index, good);
    loadsAndAnswers(dir);
    return e.getMessage();
  }

  /** This JVM's peak resident memory (VmHWM), for the log: 10^9 strings would be 24 GB of it. */
  private static long peakRssKb() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  @Test
  void aHugeStringVariableIsRefusedBeforeTensorFlowAllocatesIt(@TempDir Path dir) throws Exception {
    save(dir);
    loadsAndAnswers(dir);
    String m = refused(dir, DataType.DT_STRING, e -> e.toBuilder().setShape(shape(HUGE)).build(), "[" + HUGE + "]");
    assertTrue(m.endsWith("in the checkpoint, but the SavedModel declares [2]"), m);
  }

  @Test
  void aHugeFloatVariableIsRefusedBeforeTensorFlowAllocatesIt(@TempDir Path dir) throws Exception {
    save(dir);
    String m = refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setShape(shape(HUGE)).build(), "[" + HUGE + "]");
    assertTrue(m.endsWith("in the checkpoint, but the SavedModel declares [3]"), m);
  }

  @Test
  void anEntryPastItsDataFileOrOfTheWrongSizeIsRefused(@TempDir Path dir) throws Exception {
    Path data = Path.of(save(dir) + ".data-00000-of-00001");
    String past = refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setOffset(1L << 40).build(),
        "lies at bytes 1099511627776 to 1099511627788 of " + data);
    assertTrue(past.endsWith("which has " + Files.size(data) + " bytes"), past);
    refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setSize(1L << 40).build(), "of " + data);
    refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setSize(8).build(),
        "has shape [3] of DT_FLOAT (12 bytes), but holds 8 bytes in " + data);
    refused(dir, DataType.DT_STRING, e -> e.toBuilder().setSize(1).build(), "(2 strings), but holds 1 bytes");
    refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setShardId(1).build(), "is in data file 1, but the checkpoint has 1");
  }

  @Test
  void anEntryOfAnotherDtypeOrInSlicesOrMissingIsRefused(@TempDir Path dir) throws Exception {
    save(dir);
    refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setDtype(DataType.DT_INT32).build(),
        "is DT_INT32 in the checkpoint, but the SavedModel reads it as DT_FLOAT");
    refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().addSlices(TensorSliceProto.newBuilder()
        .addExtent(TensorSliceProto.Extent.newBuilder().setStart(0).setLength(2))).build(),
        "(slice 0) is not in the checkpoint");
    refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setShape(shape(-1)).build(), "has dimension 0 of size -1");
    refused(dir, DataType.DT_FLOAT, e -> e.toBuilder().setShape(shape(1L << 40, 1L << 40)).build(),
        "more elements than a tensor holds");
    Path prefix = dir.resolve("variables").resolve("variables");
    Map<String, BundleEntryProto> entries = CheckpointIndexWriter.entries(prefix);
    String key = key(entries, DataType.DT_FLOAT);
    entries.remove(key);
    CheckpointIndexWriter.write(prefix, entries);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir));
    assertEquals(prefix + ".index: '" + key + "' is not in the checkpoint", e.getMessage());
  }

  @Test
  void stringLengthsPastTheEntryInTheDataFileAreRefused(@TempDir Path dir) throws Exception {
    Path prefix = save(dir);
    Path data = Path.of(prefix + ".data-00000-of-00001");
    Map<String, BundleEntryProto> entries = CheckpointIndexWriter.entries(prefix);
    BundleEntryProto s = entries.get(key(entries, DataType.DT_STRING));
    byte[] good = Files.readAllBytes(data);
    byte[] bad = good.clone();
    int at = (int) s.getOffset();
    bad[at + 1] = 0x7f; // the second string's length: 127 bytes, past the entry's 9
    // The lengths' checksum made right (TensorFlow's: CRC32C of each length as a uint32, masked),
    // so that only the lengths' sum against the entry's size tells.
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(new byte[] {1, 0, 0, 0, 0x7f, 0, 0, 0});
    int c = (int) crc.getValue();
    java.nio.ByteBuffer.wrap(bad, at + 2, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(((c >>> 15) | (c << 17)) + 0xa282ead8);
    Files.write(data, bad);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir));
    assertTrue(e.getMessage().startsWith(prefix + ".index: '" + key(entries, DataType.DT_STRING) + "': its strings in "
        + data + " need more than the " + s.getSize() + " bytes"), e.getMessage());
    Files.write(data, good);
    loadsAndAnswers(dir);
  }

  @Test
  void aPythonCheckpointsHugeObjectGraphIsRefusedThoughNoShapeIsDeclaredForIt(@TempDir Path dir) throws Exception {
    PythonScripts.run("make_saved.py", 300, dir.toString());
    Path function = dir.resolve("function");
    Path prefix = function.resolve("variables").resolve("variables");
    byte[] good = Files.readAllBytes(Path.of(prefix + ".index"));
    Map<String, BundleEntryProto> entries = CheckpointIndexWriter.entries(prefix);
    String key = "_CHECKPOINTABLE_OBJECT_GRAPH";
    entries.put(key, entries.get(key).toBuilder().setShape(shape(HUGE)).build());
    CheckpointIndexWriter.write(prefix, entries);
    long start = System.nanoTime();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(function, "scale"));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    System.out.println("refused in " + ms + " ms, peak RSS " + peakRssKb() + " kB: " + e.getMessage());
    assertTrue(e.getMessage().contains(prefix + ".index: '" + key + "' has shape [" + HUGE + "] of DT_STRING ("
        + HUGE + " strings), but holds " + entries.get(key).getSize() + " bytes"), e.getMessage());
    assertTrue(ms < 20_000, "refused after " + ms + " ms");
    Files.write(Path.of(prefix + ".index"), good);
    try (MapFunction f = Function.load(function, "scale"); TFloat32 x = TFloat32.vectorOf(1f, 2f);
         Outputs out = f.call(Map.of("x", x))) {
      assertArrayEquals(new float[] {2f, 3f}, SavedModelTest.floats(out.get("y")));
    }
  }

  /** What TensorFlow's Python reports of checkpoint {@code prefix}: "key dtype-enum [dims]" lines, sorted. */
  private static List<String> pythonReport(Path prefix) throws Exception {
    String script = String.join("\n",
        "import sys, tensorflow as tf",
        "r = tf.train.load_checkpoint(sys.argv[1])",
        "d = r.get_variable_to_dtype_map()",
        "s = r.get_variable_to_shape_map()",
        "for k in sorted(d):",
        "    print(k, d[k].as_datatype_enum, list(s[k]))");
    Process p = new ProcessBuilder(System.getProperty("polyfn.python", "python3"), "-c", script, prefix.toString())
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out);
    return out.lines().toList();
  }

  @Test
  void realIndexesParseToWhatTensorFlowReports(@TempDir Path dir) throws Exception {
    List<Path> prefixes = new ArrayList<>(List.of(save(dir.resolve("polyfn"))));
    PythonScripts.run("make_saved.py", 300, dir.resolve("python").toString());
    PythonScripts.run("make_table_models.py", 300, dir.resolve("tables").toString());
    for (String model : List.of("python/function", "tables/vocab", "tables/mutable", "tables/keras_text")) {
      Path prefix = dir.resolve(model).resolve("variables").resolve("variables");
      if (Files.exists(Path.of(prefix + ".index"))) {
        prefixes.add(prefix);
      }
    }
    assertTrue(prefixes.size() >= 4, prefixes.toString());
    for (Path prefix : prefixes) {
      CheckpointIndex index = CheckpointIndex.read(prefix);
      List<String> ours = new ArrayList<>();
      for (String key : index.keys().stream().sorted().toList()) {
        BundleEntryProto e = index.entry(key);
        ours.add(key + " " + e.getDtype().getNumber() + " " + Arrays.toString(e.getShape().getDimList().stream()
            .mapToLong(TensorShapeProto.Dim::getSize).toArray()));
        index.check(key, e.getDtype(), null, "'" + key + "'"); // every real entry passes every check
      }
      assertEquals(pythonReport(prefix), ours, prefix.toString());
    }
  }

  @Test
  void everyTruncationAndByteFlipOfARealIndexParsesOrIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    Path prefix = save(dir);
    Path index = Path.of(prefix + ".index");
    byte[] good = Files.readAllBytes(index);
    Map<String, Integer> outcomes = new TreeMap<>();
    List<byte[]> cases = new ArrayList<>();
    for (int n = 0; n < good.length; n++) {
      cases.add(Arrays.copyOf(good, n));
    }
    for (int i = 0; i < good.length; i++) {
      for (int bit : new int[] {0x01, 0x80, 0xff}) {
        byte[] b = good.clone();
        b[i] ^= (byte) bit;
        cases.add(b);
      }
    }
    for (byte[] c : cases) {
      Files.write(index, c);
      String outcome;
      try {
        CheckpointIndex read = CheckpointIndex.read(prefix);
        for (String key : read.keys()) {
          BundleEntryProto e = read.entry(key);
          read.check(key, e.getDtype(), null, "'" + key + "'");
        }
        outcome = "parses";
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage().startsWith(index.toString()), e.getMessage());
        String m = e.getMessage().substring(index.toString().length() + 2);
        outcome = m.replaceAll("[0-9]+", "N").replaceAll("'[^']*'", "K");
      }
      outcomes.merge(outcome.length() > 60 ? outcome.substring(0, 60) : outcome, 1, Integer::sum);
    }
    System.out.println(cases.size() + " mutated indexes of " + good.length + " bytes: " + outcomes);
    assertTrue(outcomes.getOrDefault("parses", 0) > 0 && outcomes.size() > 5, outcomes.toString());
  }

  @Test
  void malformedTablesAreRefusedNamingTheFile(@TempDir Path dir) throws Exception {
    Path prefix = dir.resolve("ckpt");
    Path index = Path.of(prefix + ".index");
    Map<byte[], byte[]> sorted = new TreeMap<>(Arrays::compareUnsigned);
    sorted.put(new byte[0], new byte[] {8, 1});
    sorted.put("a".getBytes(StandardCharsets.UTF_8), new byte[0]);
    Map<String, byte[]> files = new LinkedHashMap<>();
    files.put("compressed (type N)", CheckpointIndexWriter.table(sorted, (byte) 1));
    Map<byte[], byte[]> unsorted = new LinkedHashMap<>();
    unsorted.put(new byte[0], new byte[] {8, 1});
    unsorted.put("b".getBytes(StandardCharsets.UTF_8), new byte[0]);
    unsorted.put("a".getBytes(StandardCharsets.UTF_8), new byte[0]);
    files.put("has a key out of order", CheckpointIndexWriter.table(unsorted, (byte) 0));
    byte[] good = CheckpointIndexWriter.table(sorted, (byte) 0);
    // The index block's handle in the footer made 2^62 bytes long: TensorFlow's reader would allocate it.
    byte[] huge = good.clone();
    int footer = huge.length - 48;
    int at = footer;
    for (int varints = 0; varints < 2; at++) { // past the metaindex handle's two varints
      varints += huge[at] < 0 ? 0 : 1;
    }
    java.io.ByteArrayOutputStream f = new java.io.ByteArrayOutputStream();
    CheckpointIndexWriter.varint(f, 0);
    CheckpointIndexWriter.varint(f, 1L << 62);
    System.arraycopy(f.toByteArray(), 0, huge, at, f.size());
    files.put("lies outside the", huge);
    files.put("bad magic number", Arrays.copyOf(good, good.length - 1));
    // The header before the block's first restart point: TensorFlow's seek for "" would land on
    // the next entry and read it as the header (its dtype as the number of data files).
    files.put("has its first restart point after its first entry", CheckpointIndexWriter.table(sorted, (byte) 0, true));
    files.put("fewer than a table's footer", new byte[10]);
    files.put("has no header entry", CheckpointIndexWriter.table(Map.of("a".getBytes(StandardCharsets.UTF_8),
        new byte[0]), (byte) 0));
    for (Map.Entry<String, byte[]> c : files.entrySet()) {
      Files.write(index, c.getValue());
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointIndex.read(prefix));
      assertTrue(e.getMessage().startsWith(index + ": ") && e.getMessage().replaceAll("[0-9]+", "N")
          .contains(c.getKey()), e.getMessage());
    }
    Files.write(index, good);
    assertEquals(java.util.Set.of("a"), CheckpointIndex.read(prefix).keys());
    Files.delete(index);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointIndex.read(prefix));
    assertEquals(index + ": the checkpoint's index does not exist", e.getMessage());
  }

  @Test
  void anIndexOfMoreEntriesThanAReaderShouldHoldIsRefused(@TempDir Path dir) throws Exception {
    Path prefix = dir.resolve("ckpt");
    Map<byte[], byte[]> many = new TreeMap<>(Arrays::compareUnsigned);
    many.put(new byte[0], new byte[] {8, 1});
    for (int i = 0; i <= 1_000_000; i++) {
      many.put(new byte[] {(byte) (1 + (i >>> 24)), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i}, new byte[0]);
    }
    Files.write(Path.of(prefix + ".index"), CheckpointIndexWriter.table(many, (byte) 0));
    // 11 MB of 4-byte entries: within the file limit, but a gigabyte of heap at 32 MB of them.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointIndex.read(prefix));
    assertTrue(e.getMessage().endsWith("holds more than 1000000 entries"), e.getMessage());
  }

  @Test
  void twoEntriesReadingTheSameBytesAreRefused(@TempDir Path dir) throws Exception {
    Path prefix = save(dir);
    Map<String, BundleEntryProto> entries = CheckpointIndexWriter.entries(prefix);
    BundleEntryProto floats = entries.get(key(entries, DataType.DT_FLOAT));
    // The string variable's entry pointed into the float variable's bytes: both restored from one
    // range, as 100 entries of one 4 MB range made TensorFlow allocate 400 MB.
    String m = refused(dir, DataType.DT_STRING, e -> e.toBuilder().setOffset(floats.getOffset()).build(),
        "a checkpoint's tensors never share bytes");
    assertTrue(m.contains("'" + key(entries, DataType.DT_FLOAT) + "'"), m);
  }

  @Test
  void aCheckpointLoadsWhateverTheDefaultLocale(@TempDir Path dir) throws Exception {
    save(dir);
    Locale before = Locale.getDefault();
    try {
      // Arabic digits in a formatted shard number named a data file that does not exist.
      Locale.setDefault(Locale.forLanguageTag("ar-SA"));
      loadsAndAnswers(dir);
    } finally {
      Locale.setDefault(before);
    }
  }
}
