package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.SessionFunction;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;

/**
 * Real Keras 3 models, built and exported by Python during the test ({@code
 * tests/python/make_keras_models.py}): an MLP, a CNN with BatchNorm and Dropout, MobileNetV2, LSTM,
 * GRU, a Bidirectional LSTM, a Transformer encoder block, and TextVectorization, StringLookup and
 * IntegerLookup (lookup tables) before an Embedding. {@code Function.load} runs each and
 * returns what Python's restored model returned for the same input, and what TensorFlow Java's
 * {@code SavedModelBundle} returns in this JVM (max difference 1e-5, relative for large values:
 * Python's TensorFlow is 2.21, TensorFlow Java's 2.18).
 */
class KerasModelCorpusTest {
  @TempDir static Path dir;
  private static final Map<String, String[]> inputs = new LinkedHashMap<>();
  private static final Map<String, float[]> outputs = new LinkedHashMap<>();

  @BeforeAll
  static void writeModels() throws Exception {
    String out = PythonScripts.run("make_keras_models.py", 600, dir.toString());
    for (String line : out.strip().split("\n")) {
      String[] parts = line.trim().split(" ", 3);
      if (parts[0].equals("input")) {
        inputs.put(parts[1], parts[2].split(" ", 3)); // dtype, dims, values
      } else if (parts[0].equals("output")) {
        outputs.put(parts[1], floats(parts[2].split(" ")));
      }
    }
  }

  private static float[] floats(String[] values) {
    float[] v = new float[values.length];
    for (int i = 0; i < v.length; i++) {
      v[i] = Float.parseFloat(values[i]);
    }
    return v;
  }

  /** The model's input as Python fed it. */
  private static Tensor input(String model) {
    String[] in = inputs.get(model);
    Shape shape = Shape.of(Arrays.stream(in[1].split(",")).mapToLong(Long::parseLong).toArray());
    if (in[0].equals("string")) {
      return TString.tensorOf(shape, DataBuffers.ofObjects(in[2].split("\\|")));
    }
    if (in[0].equals("int64")) {
      return TInt64.tensorOf(shape, DataBuffers.of(Arrays.stream(in[2].split(" ")).mapToLong(Long::parseLong).toArray(),
          true, false));
    }
    return TFloat32.tensorOf(shape, DataBuffers.of(floats(in[2].split(" ")), true, false));
  }

  private static void assertClose(String what, float[] want, float[] got) {
    assertEquals(want.length, got.length, what);
    for (int i = 0; i < want.length; i++) {
      assertEquals(want[i], got[i], 1e-5f * Math.max(1f, Math.abs(want[i])), what + "[" + i + "]");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"mlp", "cnn", "mobilenet_v2", "lstm", "gru", "bilstm", "transformer", "text", "string_lookup",
      "integer_lookup"})
  void loadsAndAnswersLikePythonAndSavedModelBundle(String model) {
    Path saved = dir.resolve(model);
    float[] polyfn;
    try (MapFunction f = Function.load(saved, "serve"); Tensor x = input(model)) {
      String param = f.concreteFunctions().get(0).functionType().parameters().get(0).name();
      try (Outputs o = f.call(Map.of(param, x))) {
        polyfn = SavedModelTest.floats(o.get("output_0"));
      }
      assertEquals(1, f.traceCount(), "restored, not traced");
    }
    float[] bundled;
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve"); Tensor x = input(model)) {
      SessionFunction serving = bundle.function("serving_default");
      String in = serving.signature().inputNames().iterator().next();
      String out = serving.signature().outputNames().iterator().next();
      try (Result r = serving.call(Map.of(in, x))) {
        bundled = SavedModelTest.floats(r.get(out).orElseThrow());
      }
    }
    String all = " (Python " + Arrays.toString(outputs.get(model)) + ", SavedModelBundle " + Arrays.toString(bundled)
        + ", Polyfn " + Arrays.toString(polyfn) + ")";
    assertClose(model + " against Python" + all, outputs.get(model), polyfn);
    assertClose(model + " against SavedModelBundle" + all, bundled, polyfn);
  }
}
