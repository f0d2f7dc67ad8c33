package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;

/**
 * SavedModels at the edges of what {@code Function.load} reads from Python, written now by Python
 * ({@code tests/python/make_load_edge_models.py}), compared with what Python's own restored
 * functions return: outputs in a dict holding a tuple and a None, argspecs whose first
 * argument Python's loader drops, two private tables whose create functions name their
 * nodes alike, and saved lists of concrete functions Python's loader takes in order.
 */
class PythonLoadEdgesTest {
  private static final float[] X = {1f, -2f, 3f};

  @TempDir static Path dir;
  private static final Map<String, float[]> expected = new LinkedHashMap<>();

  @BeforeAll
  static void writeModels() throws Exception {
    expected.putAll(PythonScripts.namedValues(PythonScripts.run("make_load_edge_models.py", 300, dir.toString())));
  }

  /** Each output of {@code f} called on X, by name. */
  private static Map<String, float[]> call(MapFunction f, String param) {
    Map<String, float[]> out = new LinkedHashMap<>();
    try (TFloat32 x = TFloat32.vectorOf(X); Outputs o = f.call(Map.of(param, x))) {
      for (String name : o.names()) {
        out.put(name, SavedModelTest.floats(o.get(name)));
      }
    }
    return out;
  }

  /** Python's outputs of {@code function}, by output name. */
  private static Map<String, float[]> python(String function) {
    Map<String, float[]> out = new LinkedHashMap<>();
    expected.forEach((k, v) -> {
      if (k.startsWith(function + ":")) {
        out.put(k.substring(function.length() + 1), v);
      }
    });
    return out;
  }

  private static void assertSameOutputs(Map<String, float[]> want, Map<String, float[]> got) {
    assertEquals(new TreeSet<>(want.keySet()), new TreeSet<>(got.keySet()), "output names");
    want.forEach((k, v) -> assertArrayEquals(v, got.get(k), "output " + k));
  }

  /**
   * {@code {"extras": (x+1, x+2), "logits": x*3, "state": None}}: three keys and three outputs, but
   * not one per key. Named by key only, logits took extras[1]'s value (x+2); each output is named
   * by its path, the None is none of them.
   */
  @Test
  void aDictHoldingATupleAndANoneNamesEachOutputByItsPath() {
    try (MapFunction f = Function.load(dir.resolve("outputs"), "f")) {
      Map<String, float[]> got = call(f, "x");
      assertEquals(List.of("extras[0]", "extras[1]", "logits"), List.copyOf(new TreeSet<>(got.keySet())));
      assertSameOutputs(python("f"), got);
    }
  }

  /** Another structure's tensors are output_0, output_1... in Python's order, a None skipped. */
  @Test
  void aTupleHoldingANoneAndADictNumbersItsTensorsInPythonsOrder() {
    try (MapFunction g = Function.load(dir.resolve("outputs"), "g")) {
      assertSameOutputs(python("g"), call(g, "x"));
    }
  }

  /**
   * An argspec whose first argument Python's loader drops: one saved with {@code is_method} (its
   * first argument named otherwise than self), and one whose first argument is named self without
   * {@code is_method}. Either way the function's parameter is x, as in Python.
   */
  @Test
  void theFirstArgumentIsDroppedAsPythonsLoaderDropsIt() {
    for (String model : List.of("self_method", "self_named")) {
      try (MapFunction f = Function.load(dir.resolve(model), "f")) {
        assertSameOutputs(python(model), call(f, "x"));
      }
    }
  }

  /**
   * Two private tables (no shared name, no node name sharing; both create nodes named hash_table):
   * each its own table, as in Python. Named by node name for this load, both were one table.
   */
  @Test
  void twoPrivateTablesWhoseNodesAreNamedAlikeStayTwo() {
    try (MapFunction f = Function.load(dir.resolve("private_tables"), "lookup");
         TString words = TString.vectorOf("cat", "dog", "bird", "fish");
         Outputs o = f.call(Map.of("words", words))) {
      for (String table : List.of("a", "b")) {
        TInt64 ids = (TInt64) o.get(table);
        float[] got = new float[(int) ids.size()];
        for (int i = 0; i < got.length; i++) {
          got[i] = ids.getLong(i);
        }
        assertArrayEquals(expected.get("private_tables:" + table), got, "table " + table);
      }
    }
  }

  /**
   * Python's loader calls the first concrete function, in saved order, that accepts the call: a
   * general one saved before a more specific one serves a call both accept (2x, not the specific
   * 3x), and of two with one signature the first (3x, not 4x) serves, the second left out.
   */
  @Test
  void concreteFunctionsServeCallsInSavedOrderAsInPython() {
    for (String model : List.of("any", "three")) {
      try (MapFunction f = Function.load(dir.resolve("order"), model)) {
        assertSameOutputs(python("order_" + model), call(f, "x"));
        assertEquals(model.equals("any") ? 2 : 1, f.concreteFunctions().size(), model);
      }
    }
  }
}
