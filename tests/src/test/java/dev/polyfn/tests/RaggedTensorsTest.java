package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.RaggedOperand;
import dev.polyfn.RaggedTensor;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.ndarray.index.Indices;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint8;

/**
 * Polyfn's built-in RaggedTensor both ways with Python (TensorFlow 2.21, {@code
 * tests/python/ragged_models.py}): Python's tf.functions taking {@code tf.RaggedTensorSpec}
 * arguments load and return Python's numbers; a Polyfn function with a ragged parameter saves and
 * Python's {@code m.<name>(tf.ragged.constant(...))} dispatches to it; bad row splits are refused
 * before TensorFlow sees them, naming the argument.
 */
class RaggedTensorsTest {
  @TempDir static Path dir;
  private static final Map<String, float[]> expected = new HashMap<>();

  @BeforeAll
  static void writeModels() throws Exception {
    expected.putAll(PythonScripts.namedValues(PythonScripts.run("ragged_models.py", 300, "write", dir.toString())));
  }

  private static void assertClose(float[] want, Tensor actual, String name) {
    float[] got = SavedModelTest.floats(actual);
    assertEquals(want.length, got.length, name);
    for (int i = 0; i < want.length; i++) {
      assertEquals(want[i], got[i], 1e-5f * Math.max(1f, Math.abs(want[i])), name + "[" + i + "]");
    }
  }

  private static void assertClose(String name, Tensor actual) {
    assertClose(expected.get(name), actual, name);
  }

  /** Each row's sum of a ragged rank 1 tensor: the running sum read at the row splits, differenced. */
  static Operand<TFloat32> rowSums(Ops tf, RaggedOperand<TFloat32> r) {
    Operand<TFloat32> running = tf.concat(List.of(tf.constant(new float[] {0f}),
        tf.math.cumsum(r.flatValues(), tf.constant(0))), tf.constant(0));
    Operand<TFloat32> at = tf.gather(running, r.rowSplits(), tf.constant(0));
    return tf.math.sub(tf.stridedSlice(at, Indices.sliceFrom(1)), tf.stridedSlice(at, Indices.sliceTo(-1)));
  }

  @Test
  void pythonRaggedArgumentsLoadAndReturnPythonsNumbers() {
    Path saved = dir.resolve("ragged");
    try (MapFunction rows = Function.load(saved, "rows");
         MapFunction deep = Function.load(saved, "deep");
         MapFunction words = Function.load(saved, "words");
         MapFunction pairs = Function.load(saved, "pairs");
         TFloat32 v = TFloat32.vectorOf(1.5f, 2f, 3f, -4f, 0.5f);
         TInt64 s = TInt64.vectorOf(0, 2, 2, 5);
         TInt32 s32 = TInt32.vectorOf(0, 2, 2, 5);
         TFloat32 two = TFloat32.scalarOf(2f);
         TFloat32 deepValues = TFloat32.vectorOf(1f, 2f, 3f, 4f, 5f, 6f, 7f);
         TInt32 outer = TInt32.vectorOf(0, 2, 3, 6);
         TInt32 inner = TInt32.vectorOf(0, 2, 3, 3, 4, 6, 7);
         TString text = TString.vectorOf("ab", "cde", "f");
         TInt64 textSplits = TInt64.vectorOf(0, 2, 3, 3);
         TFloat32 pairValues = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f}, {3f, 4f}, {5f, 6f}}));
         TInt64 pairSplits = TInt64.vectorOf(0, 2, 3)) {
      assertEquals("(r: RaggedTensor(FLOAT, [-1, -1]; flat_values: [-1], row_splits_0: [-1]), scale: TensorSpec(FLOAT, []))",
          rows.concreteFunctions().get(0).functionType().toString());
      try (Outputs o = rows.call(Map.of("r", RaggedTensor.of(v, s), "scale", two))) {
        assertClose("rows_sums", o.get("sums"));
        assertClose("rows_lengths", o.get("lengths"));
      }
      // int32 row splits are another RaggedTensorSpec than the saved int64 one.
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> rows.call(Map.of("r", RaggedTensor.of(v, s32), "scale", two)).close());
      assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
      try (Outputs o = deep.call(Map.of("r", RaggedTensor.of(deepValues, outer, inner)))) {
        assertClose("deep", o.get("y"));
      }
      try (Outputs o = words.call(Map.of("r", RaggedTensor.of(text, textSplits)))) {
        assertClose("words", o.get("chars"));
      }
      try (Outputs o = pairs.call(Map.of("r", RaggedTensor.of(pairValues, pairSplits)))) {
        assertClose("pairs", o.get("y"));
      }
      assertEquals(List.of(1, 1, 1, 1), List.of(rows.traceCount(), deep.traceCount(), words.traceCount(), pairs.traceCount()),
          "the saved concrete functions served every call");
    }
  }

  /** A Keras 3 model with a ragged Input, served by a tf.function taking a RaggedTensorSpec. */
  @Test
  void aKerasModelWithARaggedInputLoads() {
    try (MapFunction f = Function.load(dir.resolve("keras"), "serve");
         TFloat32 v = TFloat32.vectorOf(1f, 2f, 3f, 4f, 5f, 6f);
         TInt64 s = TInt64.vectorOf(0, 2, 3, 6);
         Outputs o = f.call(Map.of("r", RaggedTensor.of(v, s)))) {
      assertClose("keras", o.get("y"));
    }
  }

  /** A tf.function without input signature, traced for 2 and 3 rows: the row count dispatches. */
  @Test
  void savedRaggedTracesDispatchOnTheRowCount() {
    try (MapFunction f = Function.load(dir.resolve("ragged"), "shifted");
         TFloat32 v2 = TFloat32.vectorOf(1f, 7f, 2f);
         TInt64 s2 = TInt64.vectorOf(0, 2, 3);
         TFloat32 v3 = TFloat32.vectorOf(1f, 2f, -3f, 0.5f);
         TInt64 s3 = TInt64.vectorOf(0, 1, 3, 4);
         TInt64 s4 = TInt64.vectorOf(0, 1, 2, 3, 4)) {
      assertEquals(2, f.concreteFunctions().size());
      try (Outputs o = f.call(Map.of("r", RaggedTensor.of(v2, s2)))) {
        assertClose("shifted2", o.get("y"));
      }
      try (Outputs o = f.call(Map.of("r", RaggedTensor.of(v3, s3)))) {
        assertClose("shifted3", o.get("y"));
      }
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("r", RaggedTensor.of(v3, s4))).close());
      assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
      assertEquals(2, f.traceCount());
    }
  }

  /**
   * A tf.function returning a tf.RaggedTensor (and a tf.sparse.SparseTensor) loads with
   * loadNested, which returns them as a RaggedTensor with Python's values and splits (and a
   * SparseTensor); load (named tensor outputs) refuses it, saying so.
   */
  @Test
  void aReturnedRaggedTensorComesBackAsARaggedTensor() {
    Path saved = dir.resolve("ragged");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved, "doubled"));
    assertTrue(e.getMessage().contains("returns composite tensors (output $['r'] (a RaggedTensorSpec))")
        && e.getMessage().contains("Function.loadNested(dir, name)"), e.getMessage());
    try (NestFunction f = Function.loadNested(saved, "doubled");
         TFloat32 v = TFloat32.vectorOf(1f, 2f, 3f);
         TInt64 s = TInt64.vectorOf(0, 2, 2, 3);
         NestOutputs o = f.call(Map.of("r", RaggedTensor.of(v, s)))) {
      Map<String, Object> m = o.value();
      RaggedTensor<?> r = (RaggedTensor<?>) m.get("r");
      assertClose("doubled_values", r.flatValues());
      TInt64 splits = (TInt64) r.rowSplits();
      float[] got = new float[(int) splits.size()];
      for (int i = 0; i < got.length; i++) {
        got[i] = splits.getLong(i);
      }
      assertArrayEquals(expected.get("doubled_splits"), got);
      assertEquals(3f, ((TFloat32) m.get("n")).getFloat(), 0f);
      SparseTensor<?> sparse = (SparseTensor<?>) m.get("s");
      assertClose("doubled_sparse", sparse.values());
      float[] indices = new float[(int) sparse.indices().size()];
      for (int i = 0; i < indices.length; i++) {
        indices[i] = sparse.indices().getLong(i / 2, i % 2);
      }
      assertArrayEquals(expected.get("doubled_sparse_indices"), indices);
    }
  }

  /**
   * Row splits are checked before TensorFlow sees them, for a defined function and a loaded one:
   * each bad value fails naming the argument's path and what was expected, and the function
   * stays usable.
   */
  @Test
  void badRowSplitsAreRefusedNamingTheArgument() {
    MapBody body = (tf, in) -> Map.of("sums", rowSums(tf, in.ragged("r", TFloat32.class)));
    try (MapFunction f = Function.define(body);
         NestFunction nested = Function.defineNested((tf, in) -> rowSums(tf, in.nest("xs").get(1).composite(RaggedOperand.class)));
         MapFunction deep = Function.load(dir.resolve("ragged"), "deep");
         TFloat32 v = TFloat32.vectorOf(1f, 2f, 3f);
         TInt64 good = TInt64.vectorOf(0, 1, 3);
         TInt64 notFromZero = TInt64.vectorOf(1, 1, 3);
         TInt64 decreasing = TInt64.vectorOf(0, 2, 1, 3);
         TInt64 shortEnd = TInt64.vectorOf(0, 1, 2);
         TUint8 bytes = TUint8.vectorOf((byte) 0, (byte) 3);
         TInt64 matrix = TInt64.tensorOf(StdArrays.ndCopyOf(new long[][] {{0, 3}}));
         TFloat32 scalar = TFloat32.scalarOf(1f);
         TFloat32 deepValues = TFloat32.vectorOf(1f, 2f);
         TInt32 outer = TInt32.vectorOf(0, 1);
         TInt32 outer2 = TInt32.vectorOf(0, 2);
         TInt32 innerLong = TInt32.vectorOf(0, 1, 3)) {
      float[] want = {1f, 5f};
      assertBad(f, "r", RaggedTensor.of(v, notFromZero), "argument 'r': a RaggedTensor's row_splits_0 must start at 0, got 1", want);
      assertBad(f, "r", RaggedTensor.of(v, decreasing),
          "argument 'r': a RaggedTensor's row_splits_0 must not decrease, got 2 then 1 at index 2", want);
      assertBad(f, "r", RaggedTensor.of(v, shortEnd),
          "argument 'r': a RaggedTensor's row_splits_0 must end at 3 (the number of values in flat_values), got 2", want);
      assertBad(f, "r", RaggedTensor.of(v, bytes), "argument 'r': a RaggedTensor's row_splits_0 must be an int64 or int32 tensor, got DT_UINT8", want);
      assertBad(f, "r", RaggedTensor.of(v, matrix), "argument 'r': a RaggedTensor's row_splits_0 must be a vector of at least one split (0), got shape [1, 2]", want);
      assertBad(f, "r", RaggedTensor.of(scalar, good), "argument 'r': a RaggedTensor's flat_values must have rank 1 or more", want);
      assertBad(f, "r", RaggedTensor.of(v, good, good), "argument 'r': a RaggedTensor's row_splits_0 must end at 2 (the number of rows row_splits_1 splits), got 3", want);
      TInt64 closed = TInt64.vectorOf(0, 1, 3);
      closed.close();
      assertBad(f, "r", RaggedTensor.of(v, closed), "argument 'r': component 'row_splits_0' of a RaggedTensor is closed", want);
      // In a nest, the path; the loaded function checks as well (ragged rank 2, int32 splits).
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> nested.call(Map.of("xs", List.of(v, RaggedTensor.of(v, notFromZero)))).close());
      assertTrue(e.getMessage().startsWith("argument 'xs[1]': a RaggedTensor's row_splits_0 must start at 0"), e.getMessage());
      try (NestOutputs o = nested.call(Map.of("xs", List.of(v, RaggedTensor.of(v, good))))) {
        assertArrayEquals(want, SavedModelTest.floats(o.value(TFloat32.class)));
      }
      e = assertThrows(IllegalArgumentException.class, () -> deep.call(Map.of("r", RaggedTensor.of(deepValues, outer2, innerLong))).close());
      assertTrue(e.getMessage().startsWith("argument 'r': a RaggedTensor's row_splits_1 must end at 2 (the number of values"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> deep.call(Map.of("r", RaggedTensor.of(deepValues, outer, good))).close());
      assertTrue(e.getMessage().contains("row_splits_1 is a DT_INT64 tensor, row_splits_0 a DT_INT32 one"), e.getMessage());
      try (TInt32 inner = TInt32.vectorOf(0, 2); Outputs o = deep.call(Map.of("r", RaggedTensor.of(deepValues, outer, inner)))) {
        assertEquals(5f, SavedModelTest.floats(o.get("y"))[0], 1e-6f); // 1 + 2, plus 2 values
      }
    }
  }

  private static void assertBad(MapFunction f, String name, RaggedTensor<?> bad, String message, float[] want) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of(name, bad)).close());
    assertTrue(e.getMessage().startsWith(message), e.getMessage());
    try (TFloat32 v = TFloat32.vectorOf(1f, 2f, 3f);
         TInt64 s = TInt64.vectorOf(0, 1, 3);
         Outputs o = f.call(Map.of(name, RaggedTensor.of(v, s)))) {
      assertArrayEquals(want, SavedModelTest.floats(o.get("sums")));
    }
  }

  /** A body returns a RaggedOperand; the caller gets a RaggedTensor of the same ragged rank and splits dtype. */
  @Test
  void aRaggedOutputComesBackAsARaggedTensor() {
    try (NestFunction f = Function.defineNested((tf, in) -> {
          RaggedOperand<TFloat32> r = in.ragged("r", TFloat32.class);
          return Map.of("doubled", new RaggedOperand<>(tf.math.mul(r.flatValues(), tf.constant(2f)), r.nestedRowSplits()),
              "sums", rowSums(tf, r));
        });
        TFloat32 v = TFloat32.vectorOf(1f, 2f, 3f);
        TInt32 s = TInt32.vectorOf(0, 2, 2, 3);
        NestOutputs out = f.call(Map.of("r", RaggedTensor.of(v, s)))) {
      Map<String, Object> m = out.value();
      RaggedTensor<?> doubled = (RaggedTensor<?>) m.get("doubled");
      assertArrayEquals(new float[] {2f, 4f, 6f}, SavedModelTest.floats(doubled.flatValues()));
      assertEquals(1, doubled.raggedRank());
      assertEquals(2, ((TInt32) doubled.rowSplits()).getInt(2));
      assertArrayEquals(new float[] {3f, 0f, 3f}, SavedModelTest.floats((Tensor) m.get("sums")));
    }
  }

  /**
   * A Polyfn function with ragged parameters saves: Python's {@code m.rows(tf.ragged.constant(...),
   * scale)} dispatches to the concrete function of its row splits' dtype and row count (int64 and
   * int32; ragged rank 2 string values for {@code words}) and returns Polyfn's numbers; {@code
   * Function.load} restores the parameter as ragged.
   */
  @Test
  void raggedParametersSaveAndPythonCallsThemWithRaggedTensors(@TempDir Path out) throws Exception {
    Map<String, float[]> polyfn = new HashMap<>();
    Path rowsDir = out.resolve("rows");
    Path wordsDir = out.resolve("words");
    MapBody rowsBody = (tf, in) -> {
      RaggedOperand<TFloat32> r = in.ragged("r", TFloat32.class);
      Operand<TFloat32> scale = in.input("scale", TFloat32.class);
      return Map.of("sums", tf.math.mul(rowSums(tf, r), scale), "count", tf.dtypes.cast(tf.size(r.flatValues()), TFloat32.class));
    };
    MapBody wordsBody = (tf, in) -> {
      RaggedOperand<TString> r = in.ragged("r", TString.class);
      return Map.of("lengths", tf.dtypes.cast(tf.strings.stringLength(r.flatValues()), TFloat32.class),
          "rows", tf.dtypes.cast(tf.math.sub(tf.size(r.rowSplits()), tf.constant(1)), TFloat32.class));
    };
    try (MapFunction rows = Function.define(rowsBody, FunctionOptions.defaults().withName("rows"));
         MapFunction words = Function.define(wordsBody, FunctionOptions.defaults().withName("words"));
         TFloat32 v64 = TFloat32.vectorOf(1.5f, 2f, 3f, -4f, 0.5f);
         TInt64 s64 = TInt64.vectorOf(0, 2, 2, 5);
         TFloat32 v32 = TFloat32.vectorOf(1f, 2f, 3f);
         TInt32 s32 = TInt32.vectorOf(0, 1, 3);
         TFloat32 two = TFloat32.scalarOf(2f);
         TFloat32 minusOne = TFloat32.scalarOf(-1f);
         TString text = TString.vectorOf("ab", "cde", "f", "ghij");
         TInt64 outer = TInt64.vectorOf(0, 2, 3, 4);
         TInt64 inner = TInt64.vectorOf(0, 2, 3, 3, 4)) {
      List<Map<String, Object>> rowsArgs = List.of(Map.of("r", RaggedTensor.of(v64, s64), "scale", two),
          Map.of("r", RaggedTensor.of(v32, s32), "scale", minusOne));
      Map<String, Object> wordsArgs = Map.of("r", RaggedTensor.of(text, outer, inner));
      for (int i = 0; i < 2; i++) {
        try (Outputs o = rows.call(rowsArgs.get(i))) {
          polyfn.put("rows" + (i == 0 ? "64" : "32") + "_sums", SavedModelTest.floats(o.get("sums")));
          polyfn.put("rows" + (i == 0 ? "64" : "32") + "_count", SavedModelTest.floats(o.get("count")));
        }
      }
      try (Outputs o = words.call(wordsArgs)) {
        polyfn.put("words_lengths", SavedModelTest.floats(o.get("lengths")));
        polyfn.put("words_rows", SavedModelTest.floats(o.get("rows")));
      }
      assertArrayEquals(new float[] {7f, 0f, -1f}, polyfn.get("rows64_sums"));
      rows.save(rowsDir);
      words.save(wordsDir);
      try (MapFunction loaded = (MapFunction) Function.load(rowsDir);
           MapFunction loadedWords = (MapFunction) Function.load(wordsDir)) {
        assertEquals("nest", loaded.concreteFunctions().get(0).functionType().parameters().get(0).kind());
        for (int i = 0; i < 2; i++) {
          try (Outputs o = loaded.call(rowsArgs.get(i))) {
            assertArrayEquals(polyfn.get("rows" + (i == 0 ? "64" : "32") + "_sums"), SavedModelTest.floats(o.get("sums")));
          }
        }
        try (Outputs o = loadedWords.call(wordsArgs)) {
          assertArrayEquals(polyfn.get("words_lengths"), SavedModelTest.floats(o.get("lengths")));
        }
        assertEquals(2, loaded.traceCount());
      }
    }
    Map<String, float[]> python = PythonScripts.namedValues(PythonScripts.run("ragged_models.py", 300, "call", rowsDir.toString(), "rows"));
    assertArrayEquals(new float[] {2f}, python.get("concrete"), "m.rows lists both saved concrete functions");
    python.putAll(PythonScripts.namedValues(PythonScripts.run("ragged_models.py", 300, "call", wordsDir.toString(), "words")));
    for (String k : List.of("rows64_sums", "rows64_count", "rows32_sums", "rows32_count", "words_lengths", "words_rows")) {
      assertArrayEquals(polyfn.get(k), python.get(k), k);
    }
  }
}
