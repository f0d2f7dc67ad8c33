package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TFloat32;

/**
 * Warm start of a function with Java-value parameters ({@code in.javaInput}): each traced value's
 * entry holds the value as text, and the next JVM, which interns values in another order, restores
 * them and serves each value its own trace. Before, such a function was never cached. A parameter
 * whose values have no text form (an enum) is still not cached, and its calls still run.
 */
class TraceCacheJavaValuesTest {
  enum Mode { UP, DOWN }

  /** y = x + mode, negated when neg. */
  private static final MapBody FLAGS = (tf, in) -> {
    Operand<TFloat32> y = tf.math.add(in.input("x", TFloat32.class), tf.constant((float) in.javaInput("mode", Integer.class)));
    return Map.of("y", in.javaInput("neg", boolean.class) ? tf.math.neg(y) : y);
  };

  /** FLAGS with x declared a vector of any length: a declared shape with an unknown dimension. */
  private static final MapBody SHAPED = (tf, in) -> {
    Operand<TFloat32> y = tf.math.add(in.input("x", TFloat32.class, org.tensorflow.ndarray.Shape.of(-1)),
        tf.constant((float) in.javaInput("mode", Integer.class)));
    return Map.of("y", in.javaInput("neg", boolean.class) ? tf.math.neg(y) : y);
  };

  /** y = x for UP, -x for DOWN. */
  private static final MapBody MODES = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class);
    return Map.of("y", in.javaInput("m", Mode.class) == Mode.UP ? x : tf.math.neg(x));
  };

  /** Child JVM: args = cache dir, "flags", "shaped" or "enum", then the calls' values in order. Prints results and counts. */
  public static void main(String[] args) {
    boolean flags = !args[1].equals("enum");
    MapBody body = args[1].equals("flags") ? FLAGS : args[1].equals("shaped") ? SHAPED : MODES;
    try (MapFunction f = Function.define(body,
        FunctionOptions.defaults().withName(args[1]).withTraceCache(Path.of(args[0]), "v1"))) {
      for (int i = 2; i < args.length; i++) {
        String[] v = args[i].split(",");
        Map<String, Object> call;
        try (TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
          call = flags ? Map.of("x", x, "mode", Integer.valueOf(v[0]), "neg", Boolean.valueOf(v[1]))
              : Map.of("x", x, "m", Mode.valueOf(v[0]));
          try (var out = f.call(call)) {
            System.out.println("result " + args[i] + " " + Arrays.toString(StdArrays.array1dCopyOf(out.get("y", TFloat32.class))));
          }
        }
      }
      System.out.println("traceCount " + f.traceCount());
    }
  }

  private static List<String> results(String out) {
    return out.lines().filter(l -> l.startsWith("result ")).sorted().toList();
  }

  @Test
  void javaValuesAreRestoredAndEachServedItsOwnTrace(@TempDir Path cache) throws Exception {
    String first = ChildJvm.run(TraceCacheJavaValuesTest.class, cache.toString(), "flags", "3,false", "5,true", "3,false");
    assertTrue(first.contains("traceCount 2"), first);
    assertTrue(first.contains("result 3,false [4.0, 5.0]") && first.contains("result 5,true [-6.0, -7.0]"), first);
    try (Stream<Path> entries = Files.list(cache)) {
      assertEquals(2, entries.count(), "one entry per traced value");
    }
    // The values in the other order: this JVM interns 5 first, and must still serve 5 its own trace.
    String second = ChildJvm.run(TraceCacheJavaValuesTest.class, cache.toString(), "flags", "5,true", "3,false");
    assertTrue(second.contains("traceCount 0"), "both restored, none traced: " + second);
    assertEquals(List.of("result 3,false [4.0, 5.0]", "result 5,true [-6.0, -7.0]"), results(second));
    // A value not cached traces, beside the restored ones.
    String third = ChildJvm.run(TraceCacheJavaValuesTest.class, cache.toString(), "flags", "3,true", "5,true");
    assertTrue(third.contains("traceCount 1") && third.contains("result 3,true [-4.0, -5.0]"), third);
  }

  /**
   * A parameter declared with an unknown dimension ({@code Shape.of(-1)}): every entry restores.
   * Before, TensorFlow Java's {@code Shape.equals}, false for two {@code [-1]} shapes, made each
   * entry after the first "differ from those of an earlier entry": one restored, the rest traced.
   */
  @Test
  void entriesOfAParameterDeclaredWithAnUnknownDimensionAllRestore(@TempDir Path cache) throws Exception {
    String first = ChildJvm.run(TraceCacheJavaValuesTest.class, cache.toString(), "shaped", "3,false", "5,true", "7,false");
    assertTrue(first.contains("traceCount 3"), first);
    String second = ChildJvm.run(TraceCacheJavaValuesTest.class, cache.toString(), "shaped", "7,false", "5,true", "3,false");
    assertTrue(second.contains("traceCount 0"), "all three restored, none traced: " + second);
    assertFalse(second.contains("differ from those of an earlier entry"), second);
    assertEquals(results(first), results(second));
  }

  @Test
  void valuesWithoutATextFormAreNotCachedAndStillRun(@TempDir Path cache) throws Exception {
    String first = ChildJvm.run(TraceCacheJavaValuesTest.class, cache.toString(), "enum", "UP", "DOWN");
    assertTrue(first.contains("result DOWN [-1.0, -2.0]") && first.contains("traceCount 2"), first);
    String second = ChildJvm.run(TraceCacheJavaValuesTest.class, cache.toString(), "enum", "DOWN");
    assertTrue(second.contains("result DOWN [-1.0, -2.0]") && second.contains("traceCount 1"), second);
  }
}
