package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.SessionFunction;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.ndarray.FloatNdArray;
import org.tensorflow.types.TBfloat16;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint8;

/**
 * More real models, which Polyfn was not written for, built and saved by Python during the test
 * ({@code tests/python/make_keras_models_more.py}): Keras 3 layers and applications exported with
 * {@code model.export} (1-D, separable, depthwise and transposed convolutions, pooling, padding and
 * cropping, SimpleRNN, GRU with {@code reset_after=False}, stacked and masked LSTMs, a masking
 * Embedding before a GRU, ConvLSTM1D, dot-product and additive attention, group and unit
 * normalization, mixed precision, an int8-quantized model, the preprocessing layers
 * Normalization, Discretization, Hashing, CategoryEncoding, Rescaling, Resizing, CenterCrop,
 * TextVectorization (TF-IDF) and StringLookup (one-hot), a model with a dict of two inputs and two
 * outputs, one with a list of outputs, EfficientNetB0, DenseNet121, a Keras ExportArchive's second
 * endpoint) and {@code tf.Module}s saved with {@code tf.saved_model.save} (a TensorArray in a while
 * loop, switch_case and einsum, sorting, segment sums and scatters, string ops, FFTs, float64
 * linear algebra, stateless and generator random ops, image ops, int, uint8, bool, float16 and
 * bfloat16 dtypes, a tuple of outputs, no inputs, XLA, captured constants, an asset file, a
 * checkpoint in five data files, variables the call assigns, variables of int8, int16, uint32,
 * complex64 and of unknown shape).
 *
 * <p>{@code Function.load} runs each on Python's input, three times (the first run's execution
 * moves a function to its session path after two calls), and returns, for every output, what
 * Python's restored model returned and what TensorFlow Java's {@code SavedModelBundle} returns in
 * this JVM: the same dtype and shape, floats within 1e-5 (relative for large values: Python's
 * TensorFlow is 2.21, TensorFlow Java's 2.18), integers, bools and strings exactly. An output
 * neither can hand to Java and a {@code tf.py_function} are refused by Polyfn's load and by
 * {@code SavedModelBundle}'s call.
 */
class KerasModelCorpusMoreTest {
  @TempDir static Path dir;
  private static final int CALLS = 3;
  private static final Map<String, String> functions = new LinkedHashMap<>();
  private static final Map<String, String> signatures = new LinkedHashMap<>();
  /** Models whose calls assign their variables: only their first call is compared. */
  private static final java.util.Set<String> stateful = new java.util.HashSet<>();
  /** model → input lines' fields: position[/key], signature key, dtype, dims, values. */
  private static final Map<String, List<String[]>> inputs = new LinkedHashMap<>();
  /** model → output name → Python's value. */
  private static final Map<String, Map<String, Value>> outputs = new LinkedHashMap<>();

  @BeforeAll
  static void writeModels() throws Exception {
    String out = PythonScripts.run("make_keras_models_more.py", 600, dir.toString());
    for (String line : out.strip().split("\n")) {
      String[] parts = line.trim().split(" ", 3);
      switch (parts[0]) {
        case "function" -> { // function name, signature name
          functions.put(parts[1], parts[2].split(" ")[0]);
          signatures.put(parts[1], parts[2].split(" ")[1]);
        }
        case "stateful" -> stateful.add(parts[1]);
        case "input" -> inputs.computeIfAbsent(parts[1], k -> new ArrayList<>()).add(parts[2].split(" ", 5));
        case "output" -> {
          String[] o = parts[2].split(" ", 4); // name, dtype, dims, values
          outputs.computeIfAbsent(parts[1], k -> new LinkedHashMap<>()).put(o[0], Value.parse(o[1], o[2], o.length > 3 ? o[3] : ""));
        }
        default -> { } // TensorFlow's own lines, if any reach standard output
      }
    }
  }

  /** A tensor's dtype, shape and values: doubles for floats, longs for integers and bools, bytes for strings. */
  record Value(String dtype, long[] shape, double[] floats, long[] ints, byte[][] strings) {
    static Value parse(String dtype, String dims, String values) {
      long[] shape = dims.equals("-") ? new long[0] : Arrays.stream(dims.split(",")).mapToLong(Long::parseLong).toArray();
      String[] v = values.isEmpty() ? new String[0] : values.split(" ");
      return switch (dtype) {
        case "float32", "float64", "float16", "bfloat16" -> new Value(dtype, shape, Arrays.stream(v).mapToDouble(Double::parseDouble).toArray(), null, null);
        case "string" -> new Value(dtype, shape, null, null,
            Arrays.stream(v).map(s -> HexFormat.of().parseHex(s.substring(1))).toArray(byte[][]::new));
        default -> new Value(dtype, shape, null, Arrays.stream(v).mapToLong(Long::parseLong).toArray(), null);
      };
    }

    static Value of(Tensor t) {
      long[] shape = t.shape().asArray();
      int n = (int) t.shape().size();
      if (t instanceof TFloat32 || t instanceof TFloat16 || t instanceof TBfloat16) {
        float[] v = new float[n];
        ((FloatNdArray) t).copyTo(DataBuffers.of(v, false, false));
        double[] d = new double[n];
        for (int i = 0; i < n; i++) {
          d[i] = v[i];
        }
        return new Value(t instanceof TFloat32 ? "float32" : t instanceof TFloat16 ? "float16" : "bfloat16", shape, d, null, null);
      }
      if (t instanceof TFloat64 f) {
        double[] v = new double[n];
        f.copyTo(DataBuffers.of(v, false, false));
        return new Value("float64", shape, v, null, null);
      }
      if (t instanceof TString s) {
        List<byte[]> v = new ArrayList<>();
        s.asBytes().scalars().forEach(b -> v.add(b.getObject()));
        return new Value("string", shape, null, null, v.toArray(byte[][]::new));
      }
      long[] v = new long[n];
      String dtype;
      if (t instanceof TInt32 x) {
        dtype = "int32";
        int[] a = new int[n];
        x.copyTo(DataBuffers.of(a, false, false));
        Arrays.setAll(v, i -> a[i]);
      } else if (t instanceof TInt64 x) {
        dtype = "int64";
        x.copyTo(DataBuffers.of(v, false, false));
      } else if (t instanceof TBool x) {
        dtype = "bool";
        boolean[] a = new boolean[n];
        x.copyTo(DataBuffers.of(a, false, false));
        Arrays.setAll(v, i -> a[i] ? 1 : 0);
      } else if (t instanceof TUint8 x) {
        dtype = "uint8";
        byte[] a = new byte[n];
        x.copyTo(DataBuffers.of(a, false, false));
        Arrays.setAll(v, i -> a[i] & 0xff);
      } else {
        throw new AssertionError("no comparison for " + t.dataType());
      }
      return new Value(dtype, shape, null, v, null);
    }

    /** This value as a tensor of its dtype. */
    Tensor tensor() {
      Shape s = Shape.of(shape);
      int n = (int) s.size();
      float[] f = floats == null ? null : new float[n];
      for (int i = 0; f != null && i < n; i++) {
        f[i] = (float) floats[i];
      }
      return switch (dtype) {
        case "float32" -> TFloat32.tensorOf(s, DataBuffers.of(f, true, false));
        case "float16" -> TFloat16.tensorOf(s, DataBuffers.of(f, true, false));
        case "bfloat16" -> TBfloat16.tensorOf(s, DataBuffers.of(f, true, false));
        case "float64" -> TFloat64.tensorOf(s, DataBuffers.of(floats, true, false));
        case "int32" -> TInt32.tensorOf(s, DataBuffers.of(Arrays.stream(ints).mapToInt(Math::toIntExact).toArray(), true, false));
        case "int64" -> TInt64.tensorOf(s, DataBuffers.of(ints, true, false));
        case "bool" -> {
          boolean[] v = new boolean[n];
          for (int i = 0; i < n; i++) {
            v[i] = ints[i] != 0;
          }
          yield TBool.tensorOf(s, DataBuffers.of(v, true, false));
        }
        case "uint8" -> {
          byte[] v = new byte[n];
          for (int i = 0; i < n; i++) {
            v[i] = (byte) ints[i];
          }
          yield TUint8.tensorOf(s, DataBuffers.of(v, true, false));
        }
        case "string" -> TString.tensorOfBytes(s, DataBuffers.ofObjects(strings));
        default -> throw new AssertionError("no tensor for " + dtype);
      };
    }

    @Override
    public String toString() {
      String v = floats != null ? Arrays.toString(floats) : ints != null ? Arrays.toString(ints)
          : Arrays.stream(strings).map(b -> new String(b, java.nio.charset.StandardCharsets.UTF_8)).toList().toString();
      return dtype + Arrays.toString(shape) + " " + (v.length() > 400 ? v.substring(0, 400) + "..." : v);
    }
  }

  /** Fails unless {@code got} has {@code want}'s dtype, shape and values (floats within 1e-5, relative when large). */
  private static void assertSame(String what, Value want, Value got) {
    String all = what + ": want " + want + ", got " + got;
    assertEquals(want.dtype(), got.dtype(), all);
    assertArrayEquals(want.shape(), got.shape(), all);
    if (want.floats() != null) {
      for (int i = 0; i < want.floats().length; i++) {
        assertEquals(want.floats()[i], got.floats()[i], 1e-5 * Math.max(1.0, Math.abs(want.floats()[i])), all + " [" + i + "]");
      }
    } else if (want.ints() != null) {
      assertArrayEquals(want.ints(), got.ints(), all);
    } else {
      assertEquals(want.strings().length, got.strings().length, all);
      for (int i = 0; i < want.strings().length; i++) {
        assertArrayEquals(want.strings()[i], got.strings()[i], all + " [" + i + "]");
      }
    }
  }

  /** Closes every tensor of {@code args} (tensors, and maps of tensors). */
  private static void close(Map<String, Object> args) {
    for (Object v : args.values()) {
      if (v instanceof Map<?, ?> m) {
        m.values().forEach(t -> ((Tensor) t).close());
      } else {
        ((Tensor) v).close();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"conv1d", "separable", "transpose", "pooling", "simple_rnn", "gru_reset_before", "stacked_lstm",
      "masking_lstm", "embedding_mask_gru", "conv_lstm", "attention", "group_norm", "normalization", "discretization",
      "hashing", "hashing_salted", "category_encoding", "image_preprocessing", "two_inputs_two_outputs", "list_outputs",
      "quantized_int8", "mixed_precision", "time_distributed", "text_tf_idf", "string_one_hot",
      "efficientnet_b0", "densenet121", "tensor_array_loop", "switch_einsum_0", "switch_einsum_2", "sorting", "segments",
      "strings", "spectral", "linear_algebra", "stateless_random", "ints_and_bools", "tuple_outputs", "stateful", "narrow_variables", "half_and_string_variables", "unknown_shape_variable", "captured", "reads_asset", "no_inputs", "compiled", "half",
      "random_generator", "images", "counting", "sharded_checkpoint", "export_archive"})
  void loadsAndAnswersLikePythonAndSavedModelBundle(String model) {
    Path saved = dir.resolve(model);
    Map<String, Value> python = outputs.get(model);
    Map<String, Value> polyfn = new LinkedHashMap<>();
    try (MapFunction f = Function.load(saved, functions.get(model))) {
      List<String> params = f.concreteFunctions().get(0).functionType().parameters().stream().map(p -> p.name()).toList();
      Map<String, Object> args = new LinkedHashMap<>();
      for (String[] in : inputs.getOrDefault(model, List.of())) { // position[/key], signature key, dtype, dims, values
        String[] path = in[0].split("/");
        Tensor t = Value.parse(in[2], in[3], in.length > 4 ? in[4] : "").tensor();
        String param = params.get(Integer.parseInt(path[0]));
        if (path.length == 1) {
          args.put(param, t);
        } else {
          @SuppressWarnings("unchecked")
          Map<String, Tensor> m = (Map<String, Tensor>) args.computeIfAbsent(param, k -> new LinkedHashMap<String, Tensor>());
          m.put(path[1], t);
        }
      }
      int traced = f.traceCount();
      try {
        // Three calls: the first run's execution moves a function to its session path after two.
        for (int call = 0; call < CALLS; call++) {
          try (Outputs o = f.call(args)) {
            assertEquals(python.keySet().stream().sorted().toList(), o.names().stream().sorted().toList(),
                model + " output names");
            for (String name : o.names()) {
              Value v = Value.of(o.get(name));
              if (call == 0) {
                polyfn.put(name, v);
              } else if (!stateful.contains(model)) { // a stateful model's later calls see its assignments
                assertSame(model + " " + name + " call " + (call + 1) + " against call 1", polyfn.get(name), v);
              }
            }
          }
        }
      } finally {
        close(args);
      }
      assertEquals(traced, f.traceCount(), "restored, not traced");
    }
    Map<String, Value> bundled = new LinkedHashMap<>();
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve")) {
      SessionFunction serving = bundle.function(signatures.get(model));
      Map<String, Tensor> feed = new LinkedHashMap<>();
      for (String[] in : inputs.getOrDefault(model, List.of())) {
        feed.put(in[1], Value.parse(in[2], in[3], in.length > 4 ? in[4] : "").tensor());
      }
      try (Result r = serving.call(feed)) {
        for (String name : python.keySet()) {
          bundled.put(name, Value.of(r.get(name).orElseThrow(() -> new AssertionError(model + ": no output " + name))));
        }
      } finally {
        feed.values().forEach(Tensor::close);
      }
    }
    for (String name : python.keySet()) {
      assertSame(model + " " + name + " against Python", python.get(name), polyfn.get(name));
      assertSame(model + " " + name + " against SavedModelBundle", bundled.get(name), polyfn.get(name));
    }
  }

  /**
   * An int16 output, which TensorFlow Java has no tensor class for: {@code SavedModelBundle} fails
   * on it at the call; Polyfn's load refuses it, naming the output and the dtype (a function that
   * loads and then fails every call would be worse than one refused with the reason).
   */
  @Test
  void refusesAnOutputOfADtypeTensorFlowJavaCannotHold() {
    Path saved = dir.resolve("int16_output");
    String[] in = inputs.get("int16_output").get(0);
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve");
         Tensor x = Value.parse(in[2], in[3], in[4]).tensor()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
        try (Result r = bundle.function("serving_default").call(Map.of(in[1], x))) {
          r.get("i16");
        }
      });
      assertTrue(e.getMessage().contains("DT_INT16"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Function.load(saved, functions.get("int16_output")).close());
    assertTrue(e.getMessage().contains("no concrete function") && e.getMessage().contains("output 'i16'")
        && e.getMessage().contains("DT_INT16"), e.getMessage());
  }

  /**
   * A {@code tf.py_function}, whose Python body no SavedModel holds (an {@code EagerPyFunc} op, for
   * which no runtime outside Python has a kernel): {@code SavedModelBundle} loads it and fails at
   * the call, with TensorFlow's message naming the op; Polyfn's load refuses it, naming the op and
   * why (a function that loads and then fails every call would be worse).
   */
  @Test
  void refusesAPythonFunctionBody() {
    Path saved = dir.resolve("py_function");
    String[] in = inputs.get("py_function").get(0);
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve");
         Tensor x = Value.parse(in[2], in[3], in[4]).tensor()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> bundle.function("serving_default").call(Map.of(in[1], x)).close());
      assertTrue(e.getMessage().contains("EagerPyFunc"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Function.load(saved, functions.get("py_function")).close());
    assertTrue(e.getMessage().contains("op EagerPyFunc has no kernel") && e.getMessage().contains("tf.py_function"),
        e.getMessage());
  }
}
