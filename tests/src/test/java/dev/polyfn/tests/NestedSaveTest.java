package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * A function whose body calls other Polyfn functions (one with control flow, one reading a
 * variable it captures) saves with the callees' definitions and their branch functions in its
 * library: Polyfn's load and Python's tf.saved_model.load run it with the numbers it gave. The
 * trace cache still skips it: its key sees the caller's body only, so a changed callee would be
 * served stale.
 */
class NestedSaveTest {
  static final float[][] INPUTS = {{1f, 2f, 3f}, {0.5f, -3f, 2f}};
  /** ControlFlowSaveTest.BODY's y plus x * [1, 2, 3], worked out by hand: guards the test itself. */
  static final float[][] WANT = {{8f, 15f, 24f}, {2.5f, 3f, 5f}};

  /** Runs {@code use} with an outer function calling a control-flow function and a variable-reading one. */
  private static void withOuter(FunctionOptions options, java.util.function.Consumer<MapFunction> use) {
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f));
         MapFunction flow = Function.define(ControlFlowSaveTest.BODY, FunctionOptions.defaults().withName("flow"));
         MapFunction scaled = Function.define((tf, in) -> Map.of("y",
             tf.math.mul(in.input("x", TFloat32.class), w.read(tf))), FunctionOptions.defaults().withName("scaled"));
         MapFunction outer = Function.define(outerBody(flow, scaled), options)) {
      use.accept(outer);
    }
  }

  @SuppressWarnings("unchecked")
  private static MapBody outerBody(MapFunction flow, MapFunction scaled) {
    return (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> a = (Operand<TFloat32>) flow.apply(tf, Map.of("x", x)).get("y");
      Operand<TFloat32> b = (Operand<TFloat32>) scaled.apply(tf, Map.of("x", x)).get("y");
      return Map.of("z", tf.math.add(a, b));
    };
  }

  private static float[] call(MapFunction f, float[] x) {
    try (TFloat32 t = TFloat32.vectorOf(x); Outputs out = f.call(Map.of("x", t))) {
      return SavedModelTest.floats(out.get("z"));
    }
  }

  @Test
  void aFunctionCallingOtherFunctionsSavesAndLoads(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("outer");
    withOuter(FunctionOptions.defaults().withName("outer"), outer -> {
      for (int i = 0; i < INPUTS.length; i++) {
        assertArrayEquals(WANT[i], call(outer, INPUTS[i]), "before the save");
      }
      outer.save(saved);
    });
    // The callees and their variable are closed: the SavedModel holds all it needs.
    try (MapFunction loaded = (MapFunction) Function.load(saved)) {
      for (int i = 0; i < INPUTS.length; i++) {
        assertArrayEquals(WANT[i], call(loaded, INPUTS[i]), "Polyfn's load");
      }
      assertEquals(1, loaded.traceCount(), "the saved concrete function, no tracing");
    }
    List<String> cases = new ArrayList<>();
    for (int i = 0; i < INPUTS.length; i++) {
      String x = tensor(INPUTS[i]);
      cases.add("{\"signature\": \"outer__float32_3\", \"inputs\": {\"x\": " + x + "}, \"args\": {\"x\": " + x
          + "}, \"outputs\": {\"z\": " + tensor(WANT[i]) + "}}");
    }
    Path spec = dir.resolve("cases.json");
    Files.writeString(spec, "{\"signatures\": [\"outer__float32_3\"], \"function\": \"outer\", \"cases\": ["
        + String.join(",\n", cases) + "]}");
    String out = PythonScripts.checkSaved(saved, spec);
    assertTrue(out.contains("OK 2"), out);
  }

  private static String tensor(float[] v) {
    List<String> values = new ArrayList<>();
    for (float f : v) {
      values.add(Float.toString(f));
    }
    return "{\"dtype\": \"float32\", \"shape\": [" + v.length + "], \"values\": [" + String.join(",", values) + "]}";
  }

  /** Child JVM: args = cache directory. Calls the outer function (trace-cached) and prints its trace count. */
  public static void main(String[] args) {
    withOuter(FunctionOptions.defaults().withName("outer").withTraceCache(Path.of(args[0]), "v1"), outer -> {
      for (float[] x : INPUTS) {
        System.out.println("result " + java.util.Arrays.toString(call(outer, x)));
      }
      System.out.println("traceCount " + outer.traceCount());
    });
  }

  @Test
  void theTraceCacheStillSkipsAFunctionCallingOtherFunctions(@TempDir Path dir) throws Exception {
    String first = ChildJvm.run(NestedSaveTest.class, dir.toString());
    assertTrue(first.contains("result [8.0, 15.0, 24.0]"), first);
    assertTrue(first.contains("traceCount 1"), first);
    String second = ChildJvm.run(NestedSaveTest.class, dir.toString());
    assertTrue(second.contains("traceCount 1"), "traced again, not restored: " + second);
    try (var files = Files.list(dir)) {
      assertEquals(0, files.filter(f -> f.toString().endsWith(".polyfn-trace")).count(), "no entry written");
    }
  }
}
