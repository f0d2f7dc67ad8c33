package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * SavedModels whose functions call other functions of their library, written now by Python
 * ({@code tests/python/make_library_models.py}): {@code tf.cond}, {@code tf.while_loop}, {@code
 * tf.switch_case}, {@code tf.map_fn}, a nested {@code tf.function}, and Keras 3 LSTM and GRU
 * models exported for serving. {@code Function.load} restores each with the library functions it
 * reaches and returns what Python's own restored functions returned for the same inputs.
 */
class LibraryFunctionsLoadTest {
  private static final float[][] X = {{1f, -2f, 3f}, {0.5f, 0.25f, -1f}};

  @TempDir static Path dir;
  private static final Map<String, float[]> expected = new LinkedHashMap<>();

  @BeforeAll
  static void writeModels() throws Exception {
    String python = System.getProperty("polyfn.python", "python3");
    Process p = new ProcessBuilder(python, Path.of("python", "make_library_models.py").toString(), dir.toString())
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out);
    for (String line : out.strip().split("\n")) {
      String[] parts = line.trim().split(" ");
      float[] v = new float[parts.length - 1];
      for (int i = 1; i < parts.length; i++) {
        v[i - 1] = Float.parseFloat(parts[i]);
      }
      expected.put(parts[0], v);
    }
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

  @Test
  void kerasRecurrentModelsLoadAndAnswerLikePython() {
    float[][][] seq = new float[2][5][3];
    for (int i = 0; i < 30; i++) {
      seq[i / 15][(i / 3) % 5][i % 3] = (float) (-1.0 + 2.0 * i / 29.0); // np.linspace(-1, 1, 30)
    }
    for (String model : new String[] {"lstm", "gru"}) {
      try (MapFunction f = Function.load(dir.resolve(model), "serve");
           TFloat32 in = TFloat32.tensorOf(StdArrays.ndCopyOf(seq))) {
        String param = f.concreteFunctions().get(0).functionType().parameters().get(0).name();
        try (Outputs o = f.call(Map.of(param, in))) {
          assertClose(model, o.get("output_0"));
        }
      }
    }
  }
}
