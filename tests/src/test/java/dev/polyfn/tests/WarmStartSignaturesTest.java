package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TNumber;

/**
 * A warm start restores every signature a function traced, whatever its parameters declare: a
 * dtype family with a shape of unknown rows ({@code TNumber}, {@code [-1, 3]}), an unknown rank,
 * a shape inferred from example inputs, a Java value beside a shaped tensor. One JVM makes three
 * calls of each (three signatures, but one for the inferred declaration); the next calls them in the reverse order and must trace none, answer the
 * same, and log no ignored entry. (The trace cache's own tests had one signature per shaped
 * function: a second entry of a parameter declared {@code [-1]} was ignored, as TensorFlow Java's
 * {@code Shape.equals} is false for two such shapes.)
 */
class WarmStartSignaturesTest {
  // Each body a constant lambda of its own that captures nothing: a capturing lambda is not cached.
  /** y = x * x for x of any numeric dtype and shape [n, 3]. */
  static final MapBody FAMILY = (tf, in) -> Map.of("y", square(tf, in.input("x", TNumber.class, Shape.of(-1, 3))));
  /** y = x * x for x of any numeric dtype, declared of unknown rank. */
  static final MapBody ANY_RANK = (tf, in) -> Map.of("y", square(tf, in.input("x", TNumber.class, Shape.unknown())));
  /** y = x * x, its declaration inferred from the examples. */
  static final MapBody INFERRED = (tf, in) -> Map.of("y", square(tf, in.input("x", TNumber.class)));
  /** y = x + mode for a float vector x of any length. */
  static final MapBody JAVA = (tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class, Shape.of(-1)),
      tf.constant((float) in.javaInput("mode", Integer.class))));

  static org.tensorflow.Operand<TNumber> square(org.tensorflow.op.Ops tf, org.tensorflow.Operand<TNumber> x) {
    return tf.math.mul(x, x);
  }

  static MapBody body(String name) {
    return switch (name) {
      case "family" -> FAMILY;
      case "anyRank" -> ANY_RANK;
      case "inferred" -> INFERRED;
      default -> JAVA;
    };
  }

  static final List<String> NAMES = List.of("family", "anyRank", "inferred", "java");

  static FunctionOptions options(String name, Path dir) {
    FunctionOptions o = FunctionOptions.defaults().withName(name).withTraceCache(dir.resolve(name));
    // Examples of two lengths: the declaration inferred is a vector of unknown length.
    return name.equals("inferred") ? o.withExampleInputs(List.of(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(2))),
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(5))))) : o;
  }

  /** The three calls of function {@code name}: (x, mode) pairs of other dtypes, shapes or values. */
  static List<Object[]> calls(String name) {
    return switch (name) {
      case "family" -> List.of(new Object[] {TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1, 2, 3}})), 0},
          new Object[] {TFloat64.tensorOf(StdArrays.ndCopyOf(new double[][] {{1, 2, 3}, {4, 5, 6}})), 0},
          new Object[] {TInt32.tensorOf(StdArrays.ndCopyOf(new int[][] {{7, 8, 9}})), 0});
      case "anyRank" -> List.of(new Object[] {TFloat32.scalarOf(3f), 0}, new Object[] {TFloat32.vectorOf(1f, 2f), 0},
          new Object[] {TInt32.tensorOf(StdArrays.ndCopyOf(new int[][] {{1, 2}, {3, 4}})), 0});
      // The inferred declaration (float vectors) serves all three with the examples' one trace.
      case "inferred" -> List.of(new Object[] {TFloat32.vectorOf(1f, 2f, 3f), 0}, new Object[] {TFloat32.vectorOf(2f), 0},
          new Object[] {TFloat32.vectorOf(4f, 5f), 0});
      default -> List.of(new Object[] {TFloat32.vectorOf(1f, 2f), 1}, new Object[] {TFloat32.vectorOf(3f), 2},
          new Object[] {TFloat32.vectorOf(4f, 5f, 6f), 3});
    };
  }

  /** Child JVM: args = cache dir, "forward" or "reverse". Prints each result and each function's trace count. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    for (String name : NAMES) {
      List<Object[]> calls = new ArrayList<>(calls(name));
      if (args[1].equals("reverse")) {
        Collections.reverse(calls);
      }
      try (MapFunction f = Function.define(body(name), options(name, dir))) {
        for (Object[] c : calls) {
          try (Tensor x = (Tensor) c[0]; Outputs out = f.call(name.equals("java") ? Map.of("x", x, "mode", c[1]) : Map.of("x", x))) {
            Tensor y = out.get("y");
            System.out.println("result " + name + " " + y.dataType() + y.shape() + " " + text(y));
          }
        }
        System.out.println(name + " traces " + f.traceCount());
      }
    }
  }

  private static String text(Tensor y) {
    StringBuilder b = new StringBuilder();
    ((org.tensorflow.ndarray.NdArray<?>) y).scalars().forEach(s -> b.append(s.getObject()).append(' '));
    return b.toString().trim();
  }

  @Test
  void everySignatureOfEachDeclarationRestores(@TempDir Path dir) throws Exception {
    String first = ChildJvm.run(WarmStartSignaturesTest.class, dir.toString(), "forward");
    for (String name : NAMES) {
      int entries = FileFixtures.entries(dir.resolve(name)).size();
      assertTrue(entries >= (name.equals("inferred") ? 1 : 2), name + " wrote " + entries + " entries:\n" + first);
    }
    String second = ChildJvm.run(WarmStartSignaturesTest.class, dir.toString(), "reverse");
    for (String name : NAMES) {
      assertTrue(second.contains(name + " traces 0"), name + " traced again:\n" + second);
    }
    assertFalse(second.contains("ignoring trace cache entry"), second);
    assertEquals(sorted(first), sorted(second));
  }

  private static List<String> sorted(String out) {
    return out.lines().filter(l -> l.startsWith("result ")).sorted().toList();
  }
}
