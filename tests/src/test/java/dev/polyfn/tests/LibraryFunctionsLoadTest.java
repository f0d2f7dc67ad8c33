package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.RaggedTensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.SparseTensor;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/**
 * SavedModels whose functions call other functions of their library, written now by Python
 * ({@code tests/python/make_library_models.py}): {@code tf.cond}, {@code tf.while_loop}, {@code
 * tf.switch_case}, {@code tf.map_fn}, a nested {@code tf.function} (Keras models, whose RNN loops
 * are library functions too, are in {@link KerasModelCorpusTest}), and parameters that are nested
 * structures, keyword-only arguments, namedtuples or extension types. {@code Function.load} restores each with the library functions it
 * reaches and returns what Python's own restored functions returned for the same inputs.
 */
class LibraryFunctionsLoadTest {
  private static final float[][] X = {{1f, -2f, 3f}, {0.5f, 0.25f, -1f}};

  @TempDir static Path dir;
  private static final Map<String, float[]> expected = new LinkedHashMap<>();

  @BeforeAll
  static void writeModels() throws Exception {
    expected.putAll(PythonScripts.namedValues(PythonScripts.run("make_library_models.py", 300, dir.toString())));
  }


  private static void assertClose(String name, Tensor actual) {
    assertClose(name, SavedModelTest.floats(actual));
  }

  private static void assertClose(String name, float[] got) {
    float[] want = expected.get(name);
    assertEquals(want.length, got.length, name);
    for (int i = 0; i < want.length; i++) {
      // Python's TensorFlow (2.21) and TensorFlow Java's (2.18) may round an LSTM's sums apart.
      assertEquals(want[i], got[i], 1e-5f * Math.max(1f, Math.abs(want[i])), name + "[" + i + "]");
    }
  }

  /** Output y of {@code f} for {@code args}. */
  private static float[] call(MapFunction f, Map<String, ?> args) {
    try (Outputs o = f.call(args)) {
      return SavedModelTest.floats(o.get("y"));
    }
  }

  @Test
  void controlFlowAndNestedFunctionsLoadAndAnswerLikePython() {
    Path flow = dir.resolve("flow");
    try (TFloat32 x = TFloat32.tensorOf(StdArrays.ndCopyOf(X));
         TFloat32 minusX = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{-1f, 2f, -3f}, {-0.5f, -0.25f, 1f}}));
         MapFunction cond = Function.load(flow, "cond");
         MapFunction loop = Function.load(flow, "loop");
         MapFunction switcher = Function.load(flow, "switch");
         MapFunction mapped = Function.load(flow, "mapped");
         MapFunction nested = Function.load(flow, "nested")) {
      try (Outputs o = cond.call(Map.of("x", x))) {
        assertClose("cond_pos", o.get("y"));
      }
      try (Outputs o = cond.call(Map.of("x", minusX))) {
        assertClose("cond_neg", o.get("y"));
      }
      for (int n : new int[] {0, 1, 4}) {
        try (TInt32 count = TInt32.scalarOf(n); Outputs o = loop.call(Map.of("x", x, "n", count))) {
          assertClose("loop_" + n, o.get("y"));
        }
      }
      for (int k : new int[] {0, 1, 2, 7}) {
        try (TInt32 branch = TInt32.scalarOf(k); Outputs o = switcher.call(Map.of("x", x, "k", branch))) {
          assertClose("switch_" + k, o.get("y"));
        }
      }
      try (Outputs o = mapped.call(Map.of("x", x))) {
        assertClose("mapped", o.get("y"));
      }
      try (Outputs o = nested.call(Map.of("x", x))) {
        assertClose("nested", o.get("y"));
      }
      // Restored, not traced: each function holds its one saved concrete function.
      assertEquals(5, cond.traceCount() + loop.traceCount() + switcher.traceCount() + mapped.traceCount()
          + nested.traceCount());
      // A bad call is refused and the function still answers.
      try (TFloat32 wide = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f, 3f, 4f}}))) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cond.call(Map.of("x", wide)).close());
        assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
      }
      try (Outputs o = cond.call(Map.of("x", x))) {
        assertClose("cond_pos", o.get("y"));
      }
    }
  }

  /** The same SavedModel loaded twice at once: each copy has its own library functions. */
  @Test
  void aModelLoadedTwiceKeepsWorkingWhenTheOtherCopyCloses() {
    Path flow = dir.resolve("flow");
    try (TFloat32 x = TFloat32.tensorOf(StdArrays.ndCopyOf(X)); MapFunction second = Function.load(flow, "nested")) {
      try (MapFunction first = Function.load(flow, "nested")) {
        try (Outputs o = first.call(Map.of("x", x))) {
          assertClose("nested", o.get("y"));
        }
      }
      try (Outputs o = second.call(Map.of("x", x))) {
        assertClose("nested", o.get("y"));
      }
    }
  }

  /**
   * A dict of dicts and lists and a tuple holding a list load as nest parameters: the call passes
   * the same structure of Maps and Lists, flattened in Python's order (dict keys sorted).
   */
  @Test
  void nestedStructureParametersLoadAsNests() {
    try (MapFunction f = Function.load(dir.resolve("nests"), "deep");
         TFloat32 p = TFloat32.vectorOf(1f, 2f);
         TFloat32 q = TFloat32.vectorOf(0.5f, 4f);
         TFloat32 l0 = TFloat32.vectorOf(3f, -1f);
         TFloat32 l1 = TFloat32.scalarOf(2f);
         TFloat32 t0 = TFloat32.vectorOf(0.25f, 0.5f);
         TFloat32 t1 = TFloat32.vectorOf(7f, 8f)) {
      assertEquals("nest", f.concreteFunctions().get(0).functionType().parameters().get(0).kind());
      Map<String, Object> d = Map.of("a", Map.of("p", p, "q", q), "lst", List.of(l0, l1));
      try (Outputs o = f.call(Map.of("d", d, "t", List.of(t0, List.of(t1))))) {
        assertClose("deep", o.get("y"));
      }
      // A structure that differs from the saved one is refused naming the parameter; the function still answers.
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("d", Map.of("a", Map.of("p", p), "lst", List.of(l0, l1)), "t", List.of(t0, List.of(t1)))).close());
      assertTrue(e.getMessage().contains("d['a']: map keys ['p']") && e.getMessage().contains("missing key 'q'"), e.getMessage());
      try (Outputs o = f.call(Map.of("d", d, "t", List.of(t0, List.of(t1))))) {
        assertClose("deep", o.get("y"));
      }
    }
  }

  /**
   * Dict keys in Python's order, by code point, where Java's String order differs (U+FA0E and
   * U+20000, a surrogate pair in Java): each input reaches its own FunctionDef input and each
   * output keeps its own name (before, the outputs' names were swapped).
   */
  @Test
  void dictKeysFollowPythonsCodePointOrder() {
    String fa0e = "\ufa0e";
    String cjk = new String(Character.toChars(0x20000));
    try (MapFunction f = Function.load(dir.resolve("nests"), "unicode_keys");
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(0.5f, -4f);
         Outputs o = f.call(Map.of("d", Map.of(fa0e, a, cjk, b)))) {
      assertClose("unicode_fa0e", o.get(fa0e));
      assertClose("unicode_20000", o.get(cjk));
    }
  }

  /**
   * A keyword-only argument is a parameter after the positional ones (its None default no
   * parameter); a namedtuple is a list parameter of its fields in declaration order, as Python
   * flattens it.
   */
  @Test
  void keywordOnlyArgumentsAndNamedTuplesLoad() {
    try (MapFunction keywords = Function.load(dir.resolve("nests"), "keywords");
         MapFunction pair = Function.load(dir.resolve("nests"), "pair");
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(0.5f, -4f)) {
      assertEquals(List.of("x", "y"), keywords.concreteFunctions().get(0).functionType().parameters().stream()
          .map(p -> p.name()).toList());
      try (Outputs o = keywords.call(Map.of("x", a, "y", b))) {
        assertClose("keywords", o.get("y"));
      }
      assertEquals("list", pair.concreteFunctions().get(0).functionType().parameters().get(0).kind());
      try (Outputs o = pair.call(Map.of("p", List.of(a, b)))) {
        assertClose("pair", o.get("y"));
      }
    }
  }

  /**
   * An extension type argument is a map of its fields, as Python's loader makes an unregistered
   * one a struct of them: Masked's fields (values, mask) are not in sorted order, so the loaded
   * function's inputs are reordered to the map's sorted keys. A missing field is refused naming
   * the parameter and path, and the function still answers. What no map stands for is refused at
   * load, saying why.
   */
  @Test
  void extensionTypeArgumentsLoadAsMapsOfTheirFields() {
    try (MapFunction f = Function.load(dir.resolve("nests"), "masked");
         TFloat32 values = TFloat32.vectorOf(1.5f, -2f, 4f);
         TBool mask = TBool.vectorOf(true, false, true)) {
      assertEquals("nest", f.concreteFunctions().get(0).functionType().parameters().get(0).kind());
      assertClose("masked", call(f, Map.of("m", Map.of("values", values, "mask", mask))));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("m", Map.of("values", values))).close());
      assertTrue(e.getMessage().contains("m: map keys ['values']") && e.getMessage().contains("missing key 'mask'"),
          e.getMessage());
      assertClose("masked", call(f, Map.of("m", Map.of("values", values, "mask", mask))));
    }
    // A packed one (its fields in one variant tensor) and a static TensorShape field are refused, named.
    IllegalArgumentException packed = assertThrows(IllegalArgumentException.class,
        () -> Function.load(dir.resolve("nests"), "packed"));
    assertTrue(packed.getMessage().contains("argument m is a packed polyfn_tests.Masked.Spec"), packed.getMessage());
    IllegalArgumentException shaped = assertThrows(IllegalArgumentException.class,
        () -> Function.load(dir.resolve("nests"), "shaped"));
    assertTrue(shaped.getMessage().contains("argument s['shape'] is a static field holding a TensorShape"),
        shaped.getMessage());
  }

  /**
   * Tagged's fields: a tensor, a RaggedTensor, a dict, a static int, a nested extension type and a
   * tuple, flattened by Python in that order. Its two concrete functions take mode 1 (any z) and
   * mode 2 (a z of 2 values): a z of 2 values dispatches by the Java value of the static field.
   */
  @Test
  void extensionTypesWithNestedRaggedAndStaticFieldsDispatchByTheStaticValue() {
    try (MapFunction f = Function.load(dir.resolve("nests"), "tagged");
         TFloat32 z = TFloat32.vectorOf(1f, 2f);
         TFloat32 z3 = TFloat32.vectorOf(1f, 2f, 3f);
         TFloat32 flat = TFloat32.vectorOf(1f, 2f, 3.5f);
         TInt64 splits = TInt64.vectorOf(0, 2, 2, 3);
         TFloat32 b = TFloat32.vectorOf(0.5f, 3f);
         TFloat32 c = TFloat32.scalarOf(4f);
         TFloat32 values = TFloat32.vectorOf(1.5f, -2f);
         TBool mask = TBool.vectorOf(true, false);
         TInt32 p0 = TInt32.scalarOf(3);
         TFloat32 p1 = TFloat32.scalarOf(0.25f);
         TFloat32 x = TFloat32.scalarOf(10f)) {
      assertEquals(2, f.traceCount());
      java.util.function.BiFunction<Object, TFloat32, Map<String, Object>> tagged = (mode, zs) -> Map.of("z", zs,
          "rows", RaggedTensor.of(flat, splits), "parts", Map.of("b", b, "c", c), "mode", mode,
          "inner", Map.of("values", values, "mask", mask), "pair", List.of(p0, p1));
      for (int mode : new int[] {1, 2}) {
        try (Outputs o = f.call(Map.of("t", tagged.apply(mode, z), "x", x))) {
          assertClose("tagged_" + mode + "_y", o.get("y"));
          assertClose("tagged_" + mode + "_rows", o.get("rows"));
        }
      }
      // Mode 2 was saved for a z of 2 values only; mode 3 never: both match no saved signature.
      for (Object[] bad : new Object[][] {{2, z3}, {3, z}, {1L, z}}) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> f.call(Map.of("t", tagged.apply(bad[0], (TFloat32) bad[1]), "x", x)).close());
        assertTrue(e.getMessage().contains("matches no saved signature") && e.getMessage().contains("t['mode']"), e.getMessage());
      }
      Map<String, Object> noPair = new java.util.HashMap<>(tagged.apply(1, z));
      noPair.remove("pair");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("t", noPair, "x", x)).close());
      assertTrue(e.getMessage().contains("t: map keys") && e.getMessage().contains("missing key 'pair'"), e.getMessage());
      try (Outputs o = f.call(Map.of("t", tagged.apply(1, z3), "x", x))) {
        assertEquals(3, o.get("y").shape().size());
      }
    }
  }

  /**
   * A function returning an extension type loads as a nested function whose output is a map of
   * its fields; a returned static field (a Python int) cannot be a Java output and is refused.
   */
  @Test
  void extensionTypeOutputsAreMapsOfTheirFields() {
    try (NestFunction f = Function.loadNested(dir.resolve("nests"), "make_masked");
         TFloat32 x = TFloat32.vectorOf(1f, -2f, 0.5f);
         NestOutputs o = f.call(Map.of("x", x))) {
      Map<String, Object> m = o.value();
      assertEquals(java.util.Set.of("values", "mask"), m.keySet());
      assertClose("make_masked_values", (Tensor) m.get("values"));
      TBool mask = (TBool) m.get("mask");
      float[] want = expected.get("make_masked_mask");
      for (int i = 0; i < want.length; i++) {
        assertEquals(want[i] != 0f, mask.getBoolean(i), "mask[" + i + "]");
      }
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Function.loadNested(dir.resolve("nests"), "make_counted"));
    assertTrue(e.getMessage().contains("output $['n'] is a static field of a polyfn_tests.Counted.Spec"), e.getMessage());
  }

  /**
   * A RaggedTensorSpec with a flat_values_spec: its flat values take that spec's shape ([None, 2]);
   * flat values that are themselves composite (a SparseTensorSpec) are refused, saying so.
   */
  @Test
  void raggedTensorSpecsWithAFlatValuesSpecLoad() {
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
        () -> Function.load(dir.resolve("ragged_composite"), "ragged_pairs"));
    assertTrue(refused.getMessage().contains("argument r is a RaggedTensorSpec with flat values that are themselves a"
        + " SparseTensorSpec"), refused.getMessage());
    try (MapFunction f = Function.load(dir.resolve("ragged_pairs"), "ragged_pairs");
         TFloat32 flat = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f}, {3f, 4f}, {5f, 6.5f}}));
         TFloat32 wrongWidth = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f, 3f}}));
         TInt64 splits = TInt64.vectorOf(0, 2, 2, 3);
         TInt64 one = TInt64.vectorOf(0, 1)) {
      assertClose("ragged_pairs", call(f, Map.of("r", RaggedTensor.of(flat, splits))));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("r", RaggedTensor.of(wrongWidth, one))).close());
      assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
    }
  }

  /** A RaggedTensorSpec argument loads as Polyfn's built-in RaggedTensor (more in RaggedTensorsTest). */
  @Test
  void raggedTensorSpecArgumentsLoadAsRaggedTensors() {
    try (MapFunction f = Function.load(dir.resolve("nests"), "ragged");
         TFloat32 values = TFloat32.vectorOf(1f, 2f, 3.5f);
         TInt64 splits = TInt64.vectorOf(0, 2, 2, 3);
         Outputs o = f.call(Map.of("r", RaggedTensor.of(values, splits)))) {
      assertClose("ragged", o.get("y"));
    }
  }

  /**
   * A SparseTensorSpec argument loads as Polyfn's built-in SparseTensor composite: the call passes
   * a SparseTensor (indices, values, dense shape), as Python passes a tf.sparse.SparseTensor, and
   * gets Python's numbers; a SparseTensor of another dense width matches no saved signature.
   */
  @Test
  void sparseTensorSpecArgumentsLoadAsSparseTensors() {
    try (MapFunction f = Function.load(dir.resolve("nests"), "sparse");
         TInt64 idx = TInt64.tensorOf(StdArrays.ndCopyOf(new long[][] {{0, 1}, {1, 3}, {2, 0}, {2, 2}}));
         TFloat32 vals = TFloat32.vectorOf(1.5f, -2f, 4f, 0.25f);
         TInt64 dense = TInt64.vectorOf(3, 4);
         TInt64 wide = TInt64.vectorOf(3, 5)) {
      assertEquals("nest", f.concreteFunctions().get(0).functionType().parameters().get(0).kind());
      try (Outputs o = f.call(Map.of("s", SparseTensor.of(idx, vals, dense)))) {
        assertClose("sparse", o.get("y"));
      }
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("s", SparseTensor.of(idx, vals, wide))).close());
      assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
      try (Outputs o = f.call(Map.of("s", SparseTensor.of(idx, vals, dense)))) {
        assertClose("sparse", o.get("y"));
      }
    }
  }
}
