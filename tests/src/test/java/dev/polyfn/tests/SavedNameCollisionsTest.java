package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.SingleFunction;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.types.TFloat32;

/**
 * Names that Polyfn's save writes and that would collide once TensorFlow reads them: signature
 * inputs Python's loader turns into the same parameter name ({@code _b} is {@code arg__b}) or a
 * keyword, a function named as another attribute of the saved object ({@code signatures}, a
 * variable's {@code v0}), and graph nodes of one name (outputs {@code a-b} and {@code a_b}). A
 * name Python would refuse is refused at save, naming both sides; graph node names are made unique.
 */
class SavedNameCollisionsTest {
  private static IllegalArgumentException refused(PolymorphicFunction f, Path dir) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.save(dir));
    assertFalse(Files.exists(dir.resolve("saved_model.pb")), "nothing is written");
    return e;
  }

  @Test
  void inputsPythonWouldNameAlikeAreRefusedNamingBoth(@TempDir Path dir) {
    try (TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f);
         SingleFunction f = Function.defineSingle((tf, in) -> tf.math.sub(in.input("_b", TFloat32.class),
             tf.math.mul(tf.constant(10f), in.input("arg__b", TFloat32.class))), FunctionOptions.defaults().withName("clash"))) {
      try (TFloat32 y = (TFloat32) f.call(Map.of("_b", a, "arg__b", b))) {
        assertArrayEquals(new float[] {-29f, -38f}, SavedModelTest.floats(y));
      }
      IllegalArgumentException e = refused(f, dir.resolve("clash"));
      assertTrue(e.getMessage().contains("'_b' and 'arg__b'") && e.getMessage().contains("parameter 'arg__b'")
          && e.getMessage().contains("clash"), e.getMessage());
      // Nested: key "b" of map parameter _m is input _m_b, which Python names arg__m_b.
      try (MapFunction g = Function.define((tf, in) -> Map.of("y", tf.math.add(
              in.map("_m", TFloat32.class).get("b"), in.input("arg__m_b", TFloat32.class))),
          FunctionOptions.defaults().withName("nested"));
           Outputs o = g.call(Map.of("_m", Map.of("b", a), "arg__m_b", b))) {
        e = refused(g, dir.resolve("nested"));
        assertTrue(e.getMessage().contains("_m[\"b\"] and arg__m_b") && e.getMessage().contains("'_m_b' and 'arg__m_b'")
            && e.getMessage().contains("parameter 'arg__m_b'"), e.getMessage());
      }
      // The function stays usable.
      try (TFloat32 y = (TFloat32) f.call(Map.of("_b", b, "arg__b", a))) {
        assertArrayEquals(new float[] {-7f, -16f}, SavedModelTest.floats(y));
      }
    }
  }

  @Test
  void aPythonKeywordAsInputIsRefused(@TempDir Path dir) {
    try (TFloat32 a = TFloat32.vectorOf(1f, 2f);
         SingleFunction f = Function.defineSingle((tf, in) -> tf.math.neg(in.input("lambda", TFloat32.class)));
         TFloat32 y = (TFloat32) f.call(Map.of("lambda", a))) {
      IllegalArgumentException e = refused(f, dir);
      assertTrue(e.getMessage().contains("'lambda', a Python keyword"), e.getMessage());
    }
  }

  @Test
  void aFunctionNamedAsAnotherAttributeIsRefused(@TempDir Path dir) {
    try (TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 two = TFloat32.scalarOf(2f);
         Variable<TFloat32> v = Variable.create(two);
         SingleFunction sigs = Function.defineSingle((tf, in) -> tf.math.neg(in.input("x", TFloat32.class)),
             FunctionOptions.defaults().withName("signatures"));
         SingleFunction v0 = Function.defineSingle((tf, in) -> tf.math.mul(in.input("x", TFloat32.class), v.read(tf)),
             FunctionOptions.defaults().withName("v0"));
         TFloat32 y = (TFloat32) sigs.call(Map.of("x", a));
         TFloat32 z = (TFloat32) v0.call(Map.of("x", a))) {
      IllegalArgumentException e = refused(sigs, dir.resolve("sigs"));
      assertTrue(e.getMessage().contains("signature map 'signatures'") && e.getMessage().contains("withName"), e.getMessage());
      e = refused(v0, dir.resolve("v0"));
      assertTrue(e.getMessage().contains("variable 'v0'"), e.getMessage());
    }
  }

  @Test
  void outputsAndInputsOfOneGraphNodeNameLoadEverywhere(@TempDir Path dir) throws Exception {
    // Outputs a-b and a_b, an input named call and one named output_x next to an output x: each
    // would be the same node of the signature's graph as another.
    try (TFloat32 a = TFloat32.vectorOf(1f, -2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f);
         MapFunction f = Function.define((tf, in) -> {
           Operand<TFloat32> c = in.input("call", TFloat32.class);
           Operand<TFloat32> o = in.input("output_x", TFloat32.class);
           return Map.of("a-b", tf.math.neg(c), "a_b", tf.math.abs(c), "x", tf.math.add(c, o));
         }, FunctionOptions.defaults().withName("nodes"));
         Outputs out = f.call(Map.of("call", a, "output_x", b))) {
      f.save(dir);
      String sig = "nodes__float32_2__float32_2";
      try (SavedModelBundle bundle = SavedModelBundle.load(dir.toString(), "serve");
           Result r = bundle.function(sig).call(Map.of("call", a, "output_x", b))) {
        for (String n : List.of("a-b", "a_b", "x")) {
          assertArrayEquals(SavedModelTest.floats((TFloat32) out.get(n)), SavedModelTest.floats((TFloat32) r.get(n).orElseThrow()), n);
        }
      }
      try (MapFunction g = Function.load(dir, (tf, in) -> {
             throw new AssertionError("the saved signature serves this call, no trace");
           });
           Outputs r = g.call(Map.of("call", a, "output_x", b))) {
        assertArrayEquals(SavedModelTest.floats((TFloat32) out.get("a-b")), SavedModelTest.floats((TFloat32) r.get("a-b")));
      }
    }
  }
}
