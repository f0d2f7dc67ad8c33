package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.bytedeco.javacpp.PointerScope;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.types.TFloat32;

/**
 * A Python SavedModel whose only concrete function has an output TensorFlow Java has no tensor
 * class for (complex64) is refused by {@code Function.load}, naming the output, again and again
 * in one JVM, under PointerScopes and the garbage collector: the half-loaded function is freed
 * once each time. (Until the load refused it, such a function loaded and failed every call; the
 * output that could not be wrapped was then deleted by Polyfn and again by JavaCPP, a double free
 * this test caught. That path stays guarded in the call's code.) Run in a child JVM, so that a
 * crash fails the test.
 */
class UnadoptableOutputTest {

  /** Loads the SavedModel at args[0], in and out of a PointerScope; prints "ok". */
  public static void main(String[] args) throws Exception {
    for (int i = 0; i < 50; i++) {
      try (PointerScope scope = new PointerScope()) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Function.load(Path.of(args[0])).close());
        assertTrue(String.valueOf(e.getMessage()).contains("output 'z'")
            && e.getMessage().contains("DT_COMPLEX64"), String.valueOf(e.getMessage()));
      }
      assertThrows(IllegalArgumentException.class, () -> Function.load(Path.of(args[0])).close());
      System.gc();
    }
    Thread.sleep(500); // JavaCPP's deallocator thread frees what the collector found
    System.gc();
    Thread.sleep(500);
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      System.out.println(x.getFloat(1) == 2f ? "ok" : "wrong");
    }
  }

  @Test
  void anOutputWithoutATensorClassIsRefusedAtLoadAndNothingIsFreedTwice(@TempDir Path dir) throws Exception {
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
