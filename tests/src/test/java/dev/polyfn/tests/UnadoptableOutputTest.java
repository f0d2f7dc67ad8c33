package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bytedeco.javacpp.PointerScope;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.types.TFloat32;

/**
 * A loaded function with an output TensorFlow Java has no tensor class for (complex64, from a
 * Python SavedModel) fails its call with an exception, frees each output once and stays usable.
 * The output that could not be wrapped was deleted by Polyfn and again by JavaCPP (registered
 * with it before the wrap failed): a double free when the caller's PointerScope closed or the
 * garbage collector ran. Run in a child JVM, so that a crash fails the test.
 */
class UnadoptableOutputTest {

  /** Loads the SavedModel at args[0], calls it in and out of a PointerScope; prints "ok". */
  public static void main(String[] args) throws Exception {
    try (MapFunction f = (MapFunction) Function.load(Path.of(args[0]));
        TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      for (int i = 0; i < 50; i++) {
        try (PointerScope scope = new PointerScope()) {
          RuntimeException e = assertThrows(RuntimeException.class, () -> f.call(Map.of("x", x)).close());
          assertTrue(String.valueOf(e.getMessage()).contains("output 'z'"), String.valueOf(e.getMessage()));
        }
        assertThrows(RuntimeException.class, () -> f.call(Map.of("x", x)).close());
        System.gc();
      }
      Thread.sleep(500); // JavaCPP's deallocator thread frees what the collector found
      System.gc();
      Thread.sleep(500);
    }
    System.out.println("ok");
  }

  @Test
  void anOutputWithoutATensorClassFailsTheCallAndIsFreedOnce(@TempDir Path dir) throws Exception {
    String python = System.getProperty("polyfn.python", "python3");
    Path script = dir.resolve("make_complex.py");
    java.nio.file.Files.writeString(script, String.join("\n",
        "import sys, tensorflow as tf",
        "class M(tf.Module):",
        "    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])",
        "    def __call__(self, x):",
        "        return {'a': x + 1.0, 'z': tf.complex(x, x), 'b': x * 2.0}",
        "m = M()",
        "tf.saved_model.save(m, sys.argv[1], signatures=m.__call__)", ""));
    Process p = new ProcessBuilder(python, script.toString(), dir.resolve("complex").toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out);
    String child = ChildJvm.run(UnadoptableOutputTest.class, dir.resolve("complex").toString());
    assertTrue(child.strip().endsWith("ok"), child);
  }
}
