package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.TensorSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A concrete function that was not traced in this JVM keeps its outputs' static shapes, so its
 * save tells Python the shapes a traced one's does: one restored from a trace cache (the entry
 * records them) and one loaded from a Python SavedModel (its output signature holds them). Before,
 * both were saved with outputs of unknown rank.
 */
class RestoredOutputShapesTest {
  /** Child JVM: args = cache dir, "trace" or "save", and for "save" the directory to save to. */
  public static void main(String[] args) {
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.mul(x, tf.constant(2f)), "total", tf.sum(x, tf.constant(new int[] {0, 1})));
    }, FunctionOptions.defaults().withName("shaped").withTraceCache(Path.of(args[0]), "v1"))) {
      if (args[1].equals("trace")) {
        f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1, 3))));
      } else {
        System.out.println("traceCount " + f.traceCount() + " concrete " + f.concreteFunctions().size());
        f.save(Path.of(args[2]));
      }
    }
  }

  private static List<String> specs(Path saved, String function) throws Exception {
    return PythonScripts.run("output_specs.py", 300, saved.toString(), function).lines().toList();
  }

  @Test
  void aFunctionRestoredFromATraceCacheSavesItsOutputShapes(@TempDir Path dir) throws Exception {
    Path cache = dir.resolve("cache");
    Path saved = dir.resolve("saved");
    ChildJvm.run(RestoredOutputShapesTest.class, cache.toString(), "trace");
    String out = ChildJvm.run(RestoredOutputShapesTest.class, cache.toString(), "save", saved.toString());
    assertTrue(out.contains("traceCount 0 concrete 1"), "the signature was not restored from the cache: " + out);
    List<String> specs = specs(saved, "shaped");
    assertEquals(List.of("signature shaped__float32_N_3 total float32 []", "signature shaped__float32_N_3 y float32 [null,3]",
        "function 0 total float32 []", "function 0 y float32 [null,3]"), specs);
  }

  @Test
  void aFunctionLoadedFromPythonSavesItsOutputShapes(@TempDir Path dir) throws Exception {
    PythonScripts.run("make_defaults.py", 300, dir.toString()); // scale(x, factor=tf.constant(2.0)), x [None]
    try (PolymorphicFunction f = Function.load(dir.resolve("tensor"))) {
      f.save(dir.resolve("again"));
    }
    List<String> specs = specs(dir.resolve("again"), "scale");
    assertEquals(List.of("signature scale__float32_N__float32_scalar y float32 [null]", "function 0 y float32 [null]"), specs);
  }
}
