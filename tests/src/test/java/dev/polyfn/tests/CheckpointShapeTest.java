package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A SavedModel whose checkpoint holds a variable of another shape than the SavedModel declares
 * (TensorFlow's RestoreV2 checks only the dtype) is refused at load naming the variable, the
 * checkpoint's index and both shapes; before, it loaded and then refused every call ("no saved
 * signature": a variable's shape is part of dispatch) or, with a body, retraced with the wrong weights.
 */
class CheckpointShapeTest {

  /** Saves SavedModelTest's scale function with a variable of {@code values} (one signature, x of the same length). */
  private static void saveScale(Path dir, float... values) {
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(values)); MapFunction f = SavedModelTest.scale(w)) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(values.length))));
      f.save(dir);
    }
  }

  /** Replaces the files of {@code to}'s variables/ directory with those of {@code from}'s. */
  private static void copyCheckpoint(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.list(from.resolve("variables"))) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.copy(f, to.resolve("variables").resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  @Test
  void polyfnsOwnSavedModelWithACheckpointOfAnotherShapeIsRefusedAtLoad(@TempDir Path dir) throws Exception {
    Path three = dir.resolve("three");
    Path four = dir.resolve("four");
    saveScale(three, 1f, 2f, 3f);
    saveScale(four, 1f, 2f, 3f, 4f);
    try (PolymorphicFunction g = Function.load(three); TFloat32 x = TFloat32.vectorOf(1f, 1f, 2f)) {
      assertArrayEquals(new float[] {2f, 3f, 7f}, SavedModelTest.call(g, Map.of("x", x), "y"), "the good one loads");
    }
    copyCheckpoint(four, three);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(three));
    assertEquals(three.resolve("variables").resolve("variables.index") + ": variable 'v0/.ATTRIBUTES/VARIABLE_VALUE'"
        + " has shape [4] in the checkpoint, but the SavedModel declares [3]", e.getMessage());
  }

  @Test
  void aPythonSavedModelWithACheckpointOfAnotherShapeIsRefusedAtLoad(@TempDir Path dir) throws Exception {
    PythonScripts.run("make_saved.py", 300, dir.toString());
    Path function = dir.resolve("function");
    try (MapFunction f = Function.load(function, "scale")) {
      assertEquals(2, f.concreteFunctions().size(), "the good one loads");
    }
    // The same module with w of four elements: the same objects, so the same checkpoint keys.
    Path wide = dir.resolve("wide");
    String script = String.join("\n",
        "import sys, tensorflow as tf",
        "class Scale(tf.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        "        self.w = tf.Variable([1.0, 2.0, 3.0, 4.0])",
        "    @tf.function",
        "    def scale(self, x):",
        "        return {'y': x * self.w[0] + 1.0}",
        "m = Scale()",
        "m.scale.get_concrete_function(tf.TensorSpec([None], tf.float32))",
        "tf.saved_model.save(m, sys.argv[1])");
    Process p = new ProcessBuilder(System.getProperty("polyfn.python", "python3"), "-c", script, wide.toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out);
    copyCheckpoint(wide, function);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(function, "scale"));
    String index = function.resolve("variables").resolve("variables.index").toString();
    assertTrue(e.getMessage().endsWith(index + ": variable 'w' (checkpoint key 'w/.ATTRIBUTES/VARIABLE_VALUE')"
        + " has shape [4] in the checkpoint, but the SavedModel declares [3]"), e.getMessage());
  }
}
