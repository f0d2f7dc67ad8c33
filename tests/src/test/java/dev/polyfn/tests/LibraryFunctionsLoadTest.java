package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
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
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/**
 * SavedModels whose functions call other functions of their library, written now by Python
 * ({@code tests/python/make_library_models.py}): {@code tf.cond}, {@code tf.while_loop}, {@code
 * tf.switch_case}, {@code tf.map_fn}, a nested {@code tf.function} (Keras models, whose RNN loops
 * are library functions too, are in {@link KerasModelCorpusTest}), and parameters that are nested
 * structures, keyword-only arguments or namedtuples. {@code Function.load} restores each with the library functions it
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
    float[] want = expected.get(name);
    float[] got = SavedModelTest.floats(actual);
    assertEquals(want.length, got.length, name);
    for (int i = 0; i < want.length; i++) {
      // Python's TensorFlow (2.21) and TensorFlow Java's (2.18) may round an LSTM's sums apart.
      assertEquals(want[i], got[i], 1e-5f * Math.max(1f, Math.abs(want[i])), name + "[" + i + "]");
    }
  }

  private static float[] call(MapFunction f, Map<String, ?> args, String output) {
    try (Outputs o = f.call(args)) {
      return SavedModelTest.floats(o.get(output));
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
    // A signature Polyfn cannot represent is refused at load, saying why (not loaded to fail every call).
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("nests"), "masked"));
    assertTrue(e.getMessage().contains("no concrete function of 'masked' can be represented")
        && e.getMessage().contains("argument m is a polyfn_tests.Masked.Spec (TYPE_SPEC_VALUE)"), e.getMessage());
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
