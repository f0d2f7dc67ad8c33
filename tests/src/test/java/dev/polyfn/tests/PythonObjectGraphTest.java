package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.SingleFunction;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * The object graph Polyfn's save writes for Python, over the function kinds and output forms
 * that {@link PythonInteropTest} does not cover: no inputs, one output (a single function), a
 * list of outputs, output names that are no Python identifiers, outputs whose order is not
 * sorted. Python's {@code tf.saved_model.load} must load each, and both {@code m.<name>(...)} and
 * {@code m.signatures[...]} must return Polyfn's numbers ({@code tests/python/check_saved.py}).
 */
class PythonObjectGraphTest {
  private static String tensor(TFloat32 t) {
    List<String> values = new ArrayList<>();
    for (float f : SavedModelTest.floats(t)) {
      values.add(Float.toString(f));
    }
    List<String> dims = new ArrayList<>();
    for (long d : t.shape().asArray()) {
      dims.add(Long.toString(d));
    }
    return "{\"dtype\": \"float32\", \"shape\": [" + String.join(",", dims) + "], \"values\": [" + String.join(",", values) + "]}";
  }

  /** Runs check_saved.py on {@code saved}: its one signature and the function {@code name} on {@code x}. */
  private static void check(Path saved, String name, String signature, Map<String, TFloat32> args, Map<String, TFloat32> outputs)
      throws Exception {
    check(saved, name, signature, args, outputs, "");
  }

  /** As above; {@code outputSpecs}: the case's {@code "output_specs"} JSON entry with a leading comma, or "". */
  private static void check(Path saved, String name, String signature, Map<String, TFloat32> args, Map<String, TFloat32> outputs,
      String outputSpecs) throws Exception {
    String in = args.entrySet().stream().map(e -> "\"" + e.getKey() + "\": " + tensor(e.getValue())).collect(Collectors.joining(", "));
    String out = outputs.entrySet().stream().map(e -> "\"" + e.getKey() + "\": " + tensor(e.getValue()))
        .collect(Collectors.joining(", "));
    Path spec = saved.resolveSibling(saved.getFileName() + "-cases.json");
    Files.writeString(spec, "{\"function\": \"" + name + "\", \"signatures\": [\"" + signature + "\"], \"cases\": [{\"signature\": \""
        + signature + "\", \"inputs\": {" + in + "}, \"args\": {" + in + "}, \"outputs\": {" + out + "}" + outputSpecs + "}]}");
    Process p = new ProcessBuilder(System.getProperty("polyfn.python", "python3"), Path.of("python", "check_saved.py").toString(),
        saved.toString(), spec.toString()).redirectErrorStream(true).start();
    String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), log);
    assertTrue(log.contains("OK 1"), log);
  }

  private static String only(PolymorphicFunction f, int i) {
    return f.concreteFunctions().get(0).outputNames().get(i);
  }

  @Test
  void everyFunctionKindLoadsInPythonAndAnswersAlike(@TempDir Path dir) throws Exception {
    try (TFloat32 x = TFloat32.vectorOf(1.5f, -2f)) {
      // No inputs, and output names Python cannot use as identifiers, in unsorted order.
      try (MapFunction f = Function.define((tf, in) -> Map.of("z/last", tf.constant(new float[] {3f, 4f}),
          "a-first", tf.constant(new float[] {-1f})), FunctionOptions.defaults().withName("noin"));
           Outputs o = f.call(Map.of())) {
        f.save(dir.resolve("noin"));
        Map<String, TFloat32> outs = new LinkedHashMap<>();
        for (String n : o.names()) {
          outs.put(n, (TFloat32) o.get(n));
        }
        check(dir.resolve("noin"), "noin", "noin__noinputs", Map.of(), outs);
      }
      try (SingleFunction f = Function.defineSingle((tf, in) -> tf.math.square(in.input("x", TFloat32.class)),
          FunctionOptions.defaults().withName("single"));
           TFloat32 y = (TFloat32) f.call(Map.of("x", x))) {
        f.save(dir.resolve("single"));
        check(dir.resolve("single"), "single", "single__float32_2", Map.of("x", x), Map.of(only(f, 0), y));
      }
      try (ListFunction f = Function.defineList((tf, in) -> {
            Operand<TFloat32> v = in.input("x", TFloat32.class);
            return List.of(tf.math.neg(v), tf.math.mul(v, tf.constant(2f)), tf.math.abs(v));
          }, FunctionOptions.defaults().withName("lst"));
           ListOutputs o = f.call(Map.of("x", x))) {
        f.save(dir.resolve("lst"));
        Map<String, TFloat32> outs = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
          outs.put(only(f, i), (TFloat32) o.get(i));
        }
        check(dir.resolve("lst"), "lst", "lst__float32_2", Map.of("x", x), outs);
      }
    }
  }

  @Test
  void signatureInputsNotStartingWithALetterKeepTheirValuesInPython(@TempDir Path dir) throws Exception {
    // Python names a signature key that does not start with a letter arg_<key> and passes the
    // flat inputs sorted by those names: a, arg__1x, arg__b (not _1x, _b, a).
    try (TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f);
         TFloat32 c = TFloat32.vectorOf(5f, 6f);
         SingleFunction f = Function.defineSingle((tf, in) -> tf.math.add(tf.math.sub(in.input("a", TFloat32.class),
             tf.math.mul(tf.constant(10f), in.input("_b", TFloat32.class))),
             tf.math.mul(tf.constant(100f), in.input("_1x", TFloat32.class))), FunctionOptions.defaults().withName("mixed"));
         TFloat32 y = (TFloat32) f.call(Map.of("a", a, "_b", b, "_1x", c))) {
      assertEquals(List.of(471f, 562f), List.of(SavedModelTest.floats(y)[0], SavedModelTest.floats(y)[1]));
      f.save(dir.resolve("mixed"));
      check(dir.resolve("mixed"), "mixed", "mixed__float32_2__float32_2__float32_2", Map.of("a", a, "_b", b, "_1x", c),
          Map.of(only(f, 0), y));
    }
  }

  @Test
  void outputNamesSortInPythonsCodePointOrder(@TempDir Path dir) throws Exception {
    // Python sorts U+FA0E before U+20000; Java's String order (UTF-16 units) the other way round.
    try (TFloat32 x = TFloat32.vectorOf(1.5f, -2f);
         MapFunction f = Function.define((tf, in) -> {
           Operand<TFloat32> v = in.input("x", TFloat32.class);
           return Map.of("\uFA0E", tf.math.mul(v, tf.constant(2f)), "\uD840\uDC00", tf.math.mul(v, tf.constant(3f)));
         }, FunctionOptions.defaults().withName("wide"));
         Outputs o = f.call(Map.of("x", x))) {
      f.save(dir.resolve("wide"));
      check(dir.resolve("wide"), "wide", "wide__float32_2", Map.of("x", x),
          Map.of("\uFA0E", (TFloat32) o.get("\uFA0E"), "\uD840\uDC00", (TFloat32) o.get("\uD840\uDC00")));
    }
  }

  /**
   * Each output keeps, for Python, the dtype and static shape its trace inferred, as a saved
   * Python tf.function's do: {@code m.signatures[...].structured_outputs} and the restored
   * function's concrete functions give {@code [None, 3]} for {@code x * 2} traced for {@code [-1,
   * 3]}, a scalar for a sum, {@code [2]} for a variable's value (all were of unknown rank). So
   * does the save of its {@code Function.load} (the shapes are kept in polyfn.json).
   */
  @Test
  void outputsKeepTheirStaticShapesForPython(@TempDir Path dir) throws Exception {
    try (TFloat32 init = TFloat32.vectorOf(1f, 2f);
         Variable<TFloat32> w = Variable.create(init);
         TFloat32 x = TFloat32.tensorOf(org.tensorflow.ndarray.Shape.of(2, 3), d -> d.scalars().forEach(s -> s.setFloat(1.5f)));
         MapFunction f = Function.define((tf, in) -> {
           Operand<TFloat32> v = in.input("x", TFloat32.class);
           return Map.of("y", tf.math.mul(v, tf.constant(2f)), "total", tf.sum(v, tf.constant(new int[] {0, 1})), "w", w.read(tf));
         }, FunctionOptions.defaults().withName("shaped"))) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, org.tensorflow.ndarray.Shape.of(-1, 3))));
      Map<String, TFloat32> outs = new LinkedHashMap<>();
      try (Outputs o = f.call(Map.of("x", x))) {
        for (String n : o.names()) {
          outs.put(n, TFloat32.tensorOf(o.get(n, TFloat32.class).shape(), d -> o.get(n, TFloat32.class).copyTo(d)));
        }
      }
      f.save(dir.resolve("shaped"));
      try (PolymorphicFunction loaded = Function.load(dir.resolve("shaped"))) {
        loaded.save(dir.resolve("again"));
      }
      try {
        for (String saved : List.of("shaped", "again")) {
          check(dir.resolve(saved), "shaped", "shaped__float32_N_3", Map.of("x", x), outs, ", \"output_specs\": {"
              + "\"y\": {\"dtype\": \"float32\", \"shape\": [null, 3]}, \"total\": {\"dtype\": \"float32\", \"shape\": []},"
              + " \"w\": {\"dtype\": \"float32\", \"shape\": [2]}}");
        }
      } finally {
        outs.values().forEach(TFloat32::close);
      }
    }
  }
}
