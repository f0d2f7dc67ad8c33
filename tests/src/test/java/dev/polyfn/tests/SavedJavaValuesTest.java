package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Java-value parameters ({@code in.javaInput}) save as Python saves a {@code tf.function} traced
 * with literal arguments: each traced value its own concrete function, whose signature takes the
 * tensors only (the value is a constant of its graph); {@code Function.load}, in any JVM,
 * dispatches by the value again (the file holds each value's text, not this JVM's interning id);
 * Python's {@code m.<name>(x, True, 2, ...)} picks the concrete function traced with those
 * literals; Java values inside a nest likewise. Values without a text form another JVM reads
 * back (an enum, a record, a parameter declared {@code Object}) are refused at save, naming the
 * parameter.
 */
class SavedJavaValuesTest {
  enum Mode { FAST, SLOW }

  /** y = x * scale + mode (+ 100 when training), then relu or negated by {@code act}. */
  private static final MapBody BODY = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
    int mode = in.javaInput("mode", Integer.class);
    double scale = in.javaInput("scale", double.class);
    String act = in.javaInput("act", String.class);
    boolean training = in.javaInput("training", Boolean.class, false);
    if (act.equals("boom")) {
      throw new IllegalArgumentException("the body refuses act boom");
    }
    Operand<TFloat32> y = tf.math.add(tf.math.mul(x, tf.constant((float) scale)), tf.constant(mode + (training ? 100f : 0f)));
    return Map.of("y", act.equals("relu") ? tf.nn.relu(y) : tf.math.neg(y));
  };

  /** Child JVM: loads the SavedModel at args[0] and prints y for call 1 of the test (mode 2, "neg", the default). */
  public static void main(String[] args) {
    try (TFloat32 x = TFloat32.vectorOf(1f, -2f, 3f); MapFunction g = (MapFunction) Function.load(Path.of(args[0]))) {
      System.out.println("y " + java.util.Arrays.toString(y(g, args(x, 2, 2.0, "neg", null))) + " traces " + g.traceCount());
    }
  }

  private static MapFunction define() {
    return Function.define(BODY, FunctionOptions.defaults().withName("lit"));
  }

  private static Map<String, Object> args(TFloat32 x, Object mode, Object scale, Object act, Object training) {
    Map<String, Object> a = new HashMap<>(Map.of("x", x, "mode", mode, "scale", scale, "act", act));
    if (training != null) {
      a.put("training", training);
    }
    return a;
  }

  private static float[] y(MapFunction f, Map<String, Object> args) {
    try (Outputs out = f.call(args)) {
      return SavedModelTest.floats((TFloat32) out.get("y"));
    }
  }

  @Test
  void javaValueParametersSaveLoadAndDispatchByValue(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("lit");
    Path resaved = dir.resolve("lit-resaved");
    try (TFloat32 x = TFloat32.vectorOf(1f, -2f, 3f)) {
      List<Map<String, Object>> calls = List.of(args(x, 1, 0.5, "relu", true), args(x, 2, 2.0, "neg", null),
          args(x, 2, 2.0, "neg", false), args(x, -3, 1.5, "relu", null));
      List<float[]> want = new ArrayList<>();
      PythonCases cases = new PythonCases();
      List<String> signatures = List.of("lit__float32_N", "lit__float32_N_2", "lit__float32_N_2", "lit__float32_N_3");
      try (MapFunction f = define()) {
        // A value the body refuses is interned, and traces nothing: the save's ids are not the load's.
        assertThrows(IllegalArgumentException.class, () -> f.call(args(x, 9, 9.0, "boom", true)));
        for (int i = 0; i < calls.size(); i++) {
          want.add(y(f, calls.get(i)));
          cases.record(f, signatures.get(i), Map.of("x", x), calls.get(i));
        }
        assertEquals(3, f.traceCount(), "calls 2 and 3 differ only by a default left out or passed");
        f.save(saved);
      }
      String meta = Files.readString(saved.resolve("assets.extra/polyfn.json"));
      assertFalse(meta.contains("\"id\":"), "polyfn.json names a Java value by this JVM's interning id: " + meta);
      assertTrue(meta.contains("\"value\":\"\\\"relu\\\"\""), meta);

      try (MapFunction g = (MapFunction) Function.load(saved)) {
        assertEquals(3, g.traceCount());
        for (int i = 0; i < calls.size(); i++) {
          assertArrayEquals(want.get(i), y(g, calls.get(i)), "call " + i);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> y(g, args(x, 7, 0.5, "relu", true)));
        assertTrue(e.getMessage().contains("mode") && e.getMessage().contains("traced: 1, 2, -3"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> y(g, args(x, 1L, 0.5, "relu", true)));
        assertArrayEquals(want.get(0), y(g, calls.get(0)), "a good call after the refused ones");
        assertEquals(3, g.traceCount());
        g.save(resaved);
      }
      // Another JVM interns the values anew, in its own order: the same answer.
      String child = ChildJvm.run(SavedJavaValuesTest.class, saved.toString());
      assertTrue(child.contains("y " + java.util.Arrays.toString(want.get(1)) + " traces 3"), child);
      try (MapFunction h = (MapFunction) Function.load(resaved)) {
        for (int i = 0; i < calls.size(); i++) {
          assertArrayEquals(want.get(i), y(h, calls.get(i)), "call " + i + " after a second save");
        }
      }
      // Python: m.lit(x=..., mode=1, scale=0.5, act="relu", training=True) dispatches by the literals.
      String out = cases.check(saved, List.of("lit__float32_N", "lit__float32_N_2", "lit__float32_N_3"), "lit");
      assertTrue(out.contains("OK 4"), out);
    }
  }

  /** y = x * k * rate, negated unless the first option is "relu", from a nest holding Java values. */
  private static MapFunction nested() {
    return Function.define((tf, in) -> {
      dev.polyfn.Nest n = in.nest("n");
      float factor = n.get("k").value(Integer.class) * n.get("rate").value(Float.class);
      Operand<TFloat32> y = tf.math.mul(n.get("x").operand(TFloat32.class), tf.constant(factor));
      return Map.of("y", n.get("opts").get(0).value(String.class).equals("relu") ? y : tf.math.neg(y));
    }, FunctionOptions.defaults().withName("nested"));
  }

  @Test
  void javaValuesInsideNestsSaveToo(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("nested");
    try (TFloat32 x = TFloat32.vectorOf(1f, -2f, 3f)) {
      // A Float is Python's literal as Java writes it: 0.1f is 0.1 for Python, not 0.10000000149011612.
      List<Map<String, Object>> calls = List.of(Map.of("n", Map.of("x", x, "k", 3, "rate", 0.1f, "opts", List.of("relu"))),
          Map.of("n", Map.of("x", x, "k", 2, "rate", 1.5f, "opts", List.of("neg"))));
      List<float[]> want = new ArrayList<>();
      PythonCases cases = new PythonCases();
      try (MapFunction f = nested()) {
        for (int i = 0; i < calls.size(); i++) {
          want.add(y(f, calls.get(i)));
          cases.record(f, i == 0 ? "nested__float32_3" : "nested__float32_3_2", Map.of("n_x", x), calls.get(i));
        }
        f.save(saved);
      }
      try (MapFunction g = (MapFunction) Function.load(saved)) {
        for (int i = 0; i < calls.size(); i++) {
          assertArrayEquals(want.get(i), y(g, calls.get(i)), "call " + i);
        }
        assertThrows(IllegalArgumentException.class,
            () -> y(g, Map.of("n", Map.of("x", x, "k", 5, "rate", 0.1f, "opts", List.of("relu")))));
        assertEquals(2, g.traceCount());
      }
      // Python: m.nested(n={"x": x, "k": 3, "opts": ["relu"]}) matches the literals inside the dict.
      String out = cases.check(saved, List.of("nested__float32_3", "nested__float32_3_2"), "nested");
      assertTrue(out.contains("OK 2"), out);
    }
  }

  @Test
  void valuesAnotherJvmCannotRebuildAreRefusedAtSave(@TempDir Path dir) throws Exception {
    try (TFloat32 x = TFloat32.vectorOf(1f)) {
      try (MapFunction f = Function.define((tf, in) -> {
            Mode m = in.javaInput("m", Mode.class);
            return Map.of("y", m == Mode.FAST ? in.input("x", TFloat32.class) : tf.math.neg(in.input("x", TFloat32.class)));
          })) {
        f.call(Map.of("x", x, "m", Mode.FAST)).close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir.resolve("enum")));
        assertTrue(e.getMessage().contains("parameter 'm' takes a " + Mode.class.getName())
            && e.getMessage().contains("numbers, booleans or strings"), e.getMessage());
        assertEquals(1, f.traceCount());
        f.call(Map.of("x", x, "m", Mode.SLOW)).close(); // still usable
      }
      try (MapFunction f = Function.define((tf, in) -> {
            Object o = in.javaInput("o", Object.class);
            return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(o.hashCode() % 7 * 1f)));
          })) {
        f.call(Map.of("x", x, "o", 3)).close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir.resolve("object")));
        assertTrue(e.getMessage().contains("parameter 'o' takes a java.lang.Object"), e.getMessage());
      }
      try (MapFunction f = Function.define((tf, in) -> {
            dev.polyfn.Nest n = in.nest("n");
            Object k = n.get("k").unwrap();
            return Map.of("y", k == Mode.FAST ? n.get("x").operand(TFloat32.class) : tf.math.neg(n.get("x").operand(TFloat32.class)));
          })) {
        f.call(Map.of("n", Map.of("x", x, "k", Mode.FAST))).close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir.resolve("nest")));
        assertTrue(e.getMessage().contains("parameter 'n' was traced with FAST, a " + Mode.class.getName()), e.getMessage());
        assertFalse(Files.exists(dir.resolve("nest/saved_model.pb")));
      }
    }
  }

  @Test
  void malformedJavaValuesInPolyfnJsonAreRefusedNamingThem(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("lit");
    try (TFloat32 x = TFloat32.vectorOf(1f); MapFunction f = define()) {
      f.call(args(x, 1, 0.5, "relu", true)).close();
      f.save(saved);
    }
    Path meta = saved.resolve("assets.extra/polyfn.json");
    String good = Files.readString(meta);
    List<Map.Entry<String, String>> edits = List.of(
        Map.entry("\"value\":\"1\"", "\"value\":\"one\""),
        Map.entry("\"value\":\"1\"", "\"value\":\"+1\""), // parses as 1, but no save writes it
        Map.entry("\"java_class\":\"java.lang.Integer\"", "\"java_class\":\"java.util.List\""),
        Map.entry("\"value\":\"true\"", "\"value\":\"true\",\"id\":0"),
        Map.entry("\"java_default\":\"false\"", "\"java_default\":null"),
        Map.entry("\"java_default\":\"false\"", "\"java_default\":\"False\""));
    List<String> messages = new ArrayList<>();
    for (Map.Entry<String, String> edit : edits) {
      assertTrue(good.contains(edit.getKey()), edit.getKey() + " not in " + good);
      Files.writeString(meta, good.replace(edit.getKey(), edit.getValue()));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved), edit.getValue());
      assertTrue(e.getMessage().contains("polyfn.json"), e.getMessage());
      messages.add(e.getMessage());
    }
    assertTrue(messages.stream().anyMatch(m -> m.contains("one is no java.lang.Integer value")), messages.toString());
    assertTrue(messages.stream().anyMatch(m -> m.contains("+1 is no java.lang.Integer value as a save writes one")),
        messages.toString());
    assertTrue(messages.stream().anyMatch(m -> m.contains("java_default: parameter 'training': False is no")),
        messages.toString());
    assertTrue(messages.stream().anyMatch(m -> m.contains("expected a number, boolean or string class")), messages.toString());
    assertTrue(messages.stream().anyMatch(m -> m.contains("missing for an optional Java-value parameter")), messages.toString());
    Files.writeString(meta, good);
    try (TFloat32 x = TFloat32.vectorOf(1f); MapFunction g = (MapFunction) Function.load(saved)) {
      assertEquals(1, g.traceCount());
      y(g, args(x, 1, 0.5, "relu", true));
    }
  }
}
