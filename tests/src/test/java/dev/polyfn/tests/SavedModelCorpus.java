package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.SessionFunction;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.FloatNdArray;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.types.TBfloat16;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint16;
import org.tensorflow.types.TUint8;

/**
 * A corpus of SavedModels a Python script wrote, with the inputs it fed them and what its restored
 * models returned (the protocol of {@code tests/python/make_keras_models_more.py}'s docstring, and
 * {@code signature_output} lines of {@code make_op_zoo.py}), and the check both corpus tests make
 * of each model: {@code Function.load}'s answers against Python's and against TensorFlow Java's
 * {@code SavedModelBundle}'s.
 */
final class SavedModelCorpus {
  private static final int CALLS = 3;
  final Map<String, String> functions = new LinkedHashMap<>();
  final Map<String, String> signatures = new LinkedHashMap<>();
  /** Models whose calls assign their variables: only their first call is compared. */
  final Set<String> stateful = new HashSet<>();
  /** model → input lines' fields: position[/key], signature key, dtype, dims, values. */
  final Map<String, List<String[]>> inputs = new LinkedHashMap<>();
  /** model → output name → Python's value. */
  final Map<String, Map<String, Value>> outputs = new LinkedHashMap<>();
  /** model → output name → its key in the signature, where the two differ (a nested output). */
  final Map<String, Map<String, String>> signatureOutputs = new LinkedHashMap<>();

  /** The corpus {@code script} prints. */
  static SavedModelCorpus parse(String out) {
    SavedModelCorpus c = new SavedModelCorpus();
    for (String line : out.strip().split("\n")) {
      String[] parts = line.trim().split(" ", 3);
      switch (parts[0]) {
        case "function" -> { // function name, signature name
          c.functions.put(parts[1], parts[2].split(" ")[0]);
          c.signatures.put(parts[1], parts[2].split(" ")[1]);
        }
        case "stateful" -> c.stateful.add(parts[1]);
        case "input" -> c.inputs.computeIfAbsent(parts[1], k -> new ArrayList<>()).add(parts[2].split(" ", 5));
        case "signature_output" -> { // output name, signature key
          String[] o = parts[2].split(" ");
          c.signatureOutputs.computeIfAbsent(parts[1], k -> new LinkedHashMap<>()).put(o[0], o[1]);
        }
        case "output" -> {
          String[] o = parts[2].split(" ", 4); // name, dtype, dims, values
          c.outputs.computeIfAbsent(parts[1], k -> new LinkedHashMap<>()).put(o[0], Value.parse(o[1], o[2], o.length > 3 ? o[3] : ""));
        }
        default -> { } // TensorFlow's own lines, if any reach standard output
      }
    }
    return c;
  }

  /** Model {@code model}'s {@code i}th input line as a tensor. */
  Tensor input(String model, int i) {
    String[] in = inputs.get(model).get(i);
    return Value.parse(in[2], in[3], in.length > 4 ? in[4] : "").tensor();
  }

  /** The arguments of a call of {@code f} with Python's inputs: tensors, and maps of them for dict arguments. */
  Map<String, Object> arguments(String model, MapFunction f) {
    List<String> params = f.concreteFunctions().get(0).functionType().parameters().stream().map(p -> p.name()).toList();
    Map<String, Object> args = new LinkedHashMap<>();
    List<String[]> lines = inputs.getOrDefault(model, List.of());
    for (int i = 0; i < lines.size(); i++) {
      String[] path = lines.get(i)[0].split("/");
      Tensor t = input(model, i);
      String param = params.get(Integer.parseInt(path[0]));
      if (path.length == 1) {
        args.put(param, t);
      } else {
        @SuppressWarnings("unchecked")
        Map<String, Tensor> m = (Map<String, Tensor>) args.computeIfAbsent(param, k -> new LinkedHashMap<String, Tensor>());
        m.put(path[1], t);
      }
    }
    return args;
  }

  /**
   * Loads {@code dir/model} with {@code Function.load}, calls it three times with Python's input
   * (the first run's execution moves a function to its session path after two calls), and fails
   * unless every output is what Python's restored model returned and what {@code SavedModelBundle}
   * returns on the signature, and later calls what the first did (of a model that assigns nothing)
   * or what Python's later calls returned (where the script wrote them: {@code <model>#2}, {@code #3}).
   */
  void check(Path dir, String model) {
    Path saved = dir.resolve(model);
    Map<String, Value> python = outputs.get(model);
    assertTrue(python != null, model + ": the script wrote no such model");
    Map<String, Value> polyfn = new LinkedHashMap<>();
    try (MapFunction f = Function.load(saved, functions.get(model))) {
      Map<String, Object> args = arguments(model, f);
      int traced = f.traceCount();
      try {
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
              } else if (outputs.containsKey(model + "#" + (call + 1))) { // what Python's later calls returned
                assertSame(model + " " + name + " call " + (call + 1) + " against Python",
                    outputs.get(model + "#" + (call + 1)).get(name), v);
              }
            }
          }
        }
      } finally {
        close(args);
      }
      assertEquals(traced, f.traceCount(), "restored, not traced");
    }
    for (String name : python.keySet()) {
      assertSame(model + " " + name + " against Python", python.get(name), polyfn.get(name));
    }
    Map<String, Value> bundled = bundle(saved, model);
    for (String name : python.keySet()) {
      assertSame(model + " " + name + " against SavedModelBundle", bundled.get(name), polyfn.get(name));
    }
  }

  /**
   * Loads {@code dir/model} and calls its function with {@code model}'s input twice (a function
   * moves to its session path after two calls), then with each of {@code others}' inputs (models
   * saving the same function, fed inputs of other shapes), then with {@code model}'s again; fails
   * unless every call returns what Python's restored function returned for that input.
   */
  void checkCalls(Path dir, String model, List<String> others) {
    List<String> sequence = new ArrayList<>(List.of(model, model));
    sequence.addAll(others);
    sequence.add(model);
    try (MapFunction f = Function.load(dir.resolve(model), functions.get(model))) {
      for (String input : sequence) {
        Map<String, Object> args = arguments(input, f);
        try (Outputs o = f.call(args)) {
          Map<String, Value> python = outputs.get(input);
          assertEquals(python.keySet().stream().sorted().toList(), o.names().stream().sorted().toList(), input + " output names");
          for (String name : python.keySet()) {
            assertSame(model + " called with " + input + "'s input: " + name, python.get(name), Value.of(o.get(name)));
          }
        } finally {
          close(args);
        }
      }
    }
  }

  /** What {@code SavedModelBundle} returns for Python's input on the model's signature, by Polyfn's output names. */
  Map<String, Value> bundle(Path saved, String model) {
    Map<String, Value> bundled = new LinkedHashMap<>();
    Map<String, String> keys = signatureOutputs.getOrDefault(model, Map.of());
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve")) {
      SessionFunction serving = bundle.function(signatures.get(model));
      Map<String, Tensor> feed = new LinkedHashMap<>();
      List<String[]> lines = inputs.getOrDefault(model, List.of());
      for (int i = 0; i < lines.size(); i++) {
        feed.put(lines.get(i)[1], input(model, i));
      }
      try (Result r = serving.call(feed)) {
        for (String name : outputs.get(model).keySet()) {
          String key = keys.getOrDefault(name, name);
          bundled.put(name, Value.of(r.get(key).orElseThrow(() -> new AssertionError(model + ": no output " + key))));
        }
      } finally {
        feed.values().forEach(Tensor::close);
      }
    }
    return bundled;
  }

  /** A tensor's dtype, shape and values: doubles for floats, longs for integers and bools, bytes for strings. */
  record Value(String dtype, long[] shape, double[] floats, long[] ints, byte[][] strings) {
    static Value parse(String dtype, String dims, String values) {
      long[] shape = dims.equals("-") ? new long[0] : Arrays.stream(dims.split(",")).mapToLong(Long::parseLong).toArray();
      String[] v = values.isEmpty() ? new String[0] : values.split(" ");
      return switch (dtype) {
        case "float32", "float64", "float16", "bfloat16" -> new Value(dtype, shape, Arrays.stream(v).mapToDouble(Value::number).toArray(), null, null);
        case "string" -> new Value(dtype, shape, null, null,
            Arrays.stream(v).map(s -> HexFormat.of().parseHex(s.substring(1))).toArray(byte[][]::new));
        default -> new Value(dtype, shape, null, Arrays.stream(v).mapToLong(Long::parseLong).toArray(), null);
      };
    }

    /** A float as Python's repr writes it ({@code inf}, {@code -inf} and {@code nan} included). */
    private static double number(String s) {
      return switch (s) {
        case "inf" -> Double.POSITIVE_INFINITY;
        case "-inf" -> Double.NEGATIVE_INFINITY;
        case "nan" -> Double.NaN;
        default -> Double.parseDouble(s);
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
      } else if (t instanceof TUint16 x) {
        dtype = "uint16";
        short[] a = new short[n];
        x.copyTo(DataBuffers.of(a, false, false));
        Arrays.setAll(v, i -> a[i] & 0xffff);
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
        case "uint16" -> {
          short[] v = new short[n];
          for (int i = 0; i < n; i++) {
            v[i] = (short) ints[i];
          }
          yield TUint16.tensorOf(s, DataBuffers.of(v, true, false));
        }
        case "string" -> TString.tensorOfBytes(s, DataBuffers.ofObjects(strings));
        default -> throw new AssertionError("no tensor for " + dtype);
      };
    }

    @Override
    public String toString() {
      String v = floats != null ? Arrays.toString(floats) : ints != null ? Arrays.toString(ints)
          : Arrays.stream(strings).map(b -> new String(b, StandardCharsets.UTF_8)).toList().toString();
      return dtype + Arrays.toString(shape) + " " + (v.length() > 400 ? v.substring(0, 400) + "..." : v);
    }
  }

  /**
   * Fails unless {@code got} has {@code want}'s dtype, shape and values: finite floats within 1e-5
   * (relative when large: Python's TensorFlow is 2.21, TensorFlow Java's 2.18), infinities and NaN
   * exactly, integers, bools and strings exactly.
   */
  static void assertSame(String what, Value want, Value got) {
    String all = what + ": want " + want + ", got " + got;
    assertEquals(want.dtype(), got.dtype(), all);
    assertArrayEquals(want.shape(), got.shape(), all);
    if (want.floats() != null) {
      for (int i = 0; i < want.floats().length; i++) {
        double w = want.floats()[i];
        double g = got.floats()[i];
        if (Double.isFinite(w)) {
          assertEquals(w, g, 1e-5 * Math.max(1.0, Math.abs(w)), all + " [" + i + "]");
        } else { // JUnit's delta would take -inf for inf
          assertTrue(Double.isNaN(w) ? Double.isNaN(g) : w == g, all + " [" + i + "]");
        }
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
  static void close(Map<String, Object> args) {
    for (Object v : args.values()) {
      if (v instanceof Map<?, ?> m) {
        m.values().forEach(t -> ((Tensor) t).close());
      } else {
        ((Tensor) v).close();
      }
    }
  }
}
