package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TIntegral;

/**
 * {@code Flow.loop().maximumIterations(tensor)}: the bound of a loop as a tensor of the body, as
 * Python's {@code tf.while_loop(..., maximum_iterations=n)} takes one. Expected values are Python's
 * (TensorFlow 2.21, {@code tf.function}; the program is in each test's comment): one trace serves
 * every bound, a bound of 0 or less runs no iteration, the condition still stops the loop first,
 * gradients flow through it, and it runs the same eagerly, from a SavedModel, and with an INT64
 * bound (which Python's while_v2 refuses). A bound that is not a scalar integer of the body is
 * refused naming {@code maximumIterations}, and the function stays usable.
 */
class LoopBoundTensorTest {
  /**
   * Python: {@code tf.while_loop(lambda v: v < 1000., lambda v: v * 2., [x], maximum_iterations=n)[0]};
   * for x = 1: n = 0 → 1, 3 → 8, -2 → 1, 20 → 1024, one trace.
   */
  static final MapBody DOUBLING = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.scalar());
    Operand<TIntegral> n = in.input("n", TIntegral.class, Shape.scalar());
    return Map.of("y", Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(n),
        v -> tf.math.less((Operand<TFloat32>) v.get(0), tf.constant(1000f)),
        v -> List.of(tf.math.mul((Operand<TFloat32>) v.get(0), tf.constant(2f)))).get(0));
  };

  private static final int[] BOUNDS = {0, 3, -2, 20};
  private static final float[] PYTHON = {1f, 8f, 1f, 1024f};

  private static float doubling(MapFunction f, Object n) {
    try (TFloat32 x = TFloat32.scalarOf(1f); Outputs o = f.call(Map.of("x", x, "n", n))) {
      return o.get("y", TFloat32.class).getFloat();
    }
  }

  private static void assertPythonResults(MapFunction f) {
    for (int i = 0; i < BOUNDS.length; i++) {
      try (TInt32 n = TInt32.scalarOf(BOUNDS[i])) {
        assertEquals(PYTHON[i], doubling(f, n), "n = " + BOUNDS[i]);
      }
    }
  }

  @Test
  void oneTraceServesEveryBoundWithPythonsResults() {
    try (MapFunction f = Function.define(DOUBLING)) {
      assertPythonResults(f);
      assertEquals(1, f.traceCount());
      try (TInt64 n = TInt64.scalarOf(3)) {
        assertEquals(8f, doubling(f, n), "an INT64 bound: its own trace, the same answer");
      }
    }
  }

  @Test
  void eagerlyAndFromASavedModelTheSame(@TempDir Path dir) {
    try (MapFunction eager = Function.define(DOUBLING, FunctionOptions.defaults().withRunEagerly(true))) {
      assertPythonResults(eager);
    }
    try (MapFunction f = Function.define(DOUBLING)) {
      assertPythonResults(f);
      f.save(dir.resolve("m"));
    }
    try (MapFunction loaded = (MapFunction) Function.load(dir.resolve("m"))) {
      assertPythonResults(loaded);
      assertEquals(1, loaded.traceCount());
    }
  }

  /**
   * Python: {@code y = tf.while_loop(lambda v: True, lambda v: v * x, [x], maximum_iterations=n)[0]}
   * and its gradient by {@code x} (x^(n+1), (n+1) x^n): x = 1.5, n = 0 → 1.5, 1; n = 3 → 5.0625, 13.5.
   */
  @Test
  void gradientsFlowThroughALoopBoundByATensor() {
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.scalar());
      Operand<TInt32> n = in.input("n", TInt32.class, Shape.scalar());
      Operand<TFloat32> y = (Operand<TFloat32>) Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(n),
          v -> tf.constant(true), v -> List.of(tf.math.mul((Operand<TFloat32>) v.get(0), x))).get(0);
      return Map.of("y", y, "d", Flow.gradients(tf, y, List.of(x)).get(0));
    })) {
      float[][] python = {{0, 1.5f, 1f}, {3, 5.0625f, 13.5f}};
      for (float[] p : python) {
        try (TFloat32 x = TFloat32.scalarOf(1.5f); TInt32 n = TInt32.scalarOf((int) p[0]);
             Outputs o = f.call(Map.of("x", x, "n", n))) {
          assertEquals(p[1], o.get("y", TFloat32.class).getFloat(), 1e-5, "y for n = " + p[0]);
          assertEquals(p[2], o.get("d", TFloat32.class).getFloat(), 1e-5, "dy/dx for n = " + p[0]);
        }
      }
      assertEquals(1, f.traceCount());
    }
  }

  /** Python: the loop's sum of x[i] for i < tf.shape(x)[0], the bound computed in the body: 10 for [1, 2, 3, 4]. */
  @Test
  void aBoundComputedInTheBody() {
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
      Operand<TInt32> len = tf.squeeze(tf.shape(x));
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f)), Flow.loop().maximumIterations(len),
          v -> tf.constant(true), v -> List.of(tf.math.add((Operand<TInt32>) v.get(0), tf.constant(1)),
              tf.math.add((Operand<TFloat32>) v.get(1), tf.gather(x, (Operand<TInt32>) v.get(0), tf.constant(0)))));
      return Map.of("y", out.get(1));
    }); TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f, 4f); Outputs o = f.call(Map.of("x", x))) {
      assertEquals(10f, o.get("y", TFloat32.class).getFloat());
    }
  }

  @Test
  void aBoundThatIsNoScalarIntegerOfTheBodyIsRefusedAndTheFunctionStaysUsable() {
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.scalar());
      String kind = in.javaInput("kind", String.class);
      Operand<? extends TIntegral> n = switch (kind) {
        case "vector" -> tf.constant(new int[] {1, 2});
        case "eager" -> org.tensorflow.op.Ops.create().constant(2);
        case "uint8" -> tf.dtypes.cast(tf.constant(2), org.tensorflow.types.TUint8.class);
        default -> tf.constant(2);
      };
      return Map.of("y", Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(n), v -> tf.constant(true),
          v -> List.of(tf.math.mul((Operand<TFloat32>) v.get(0), tf.constant(2f)))).get(0));
    })) {
      for (String[] bad : new String[][] {{"vector", "maximumIterations must be a scalar INT32 or INT64, got shape [2]"},
          {"eager", "maximumIterations belongs to another graph or is eager"},
          {"uint8", "maximumIterations must be a scalar INT32 or INT64, got dtype UINT8"}}) {
        try (TFloat32 x = TFloat32.scalarOf(1f)) {
          IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", x, "kind", bad[0])));
          assertTrue(e.getMessage().contains(bad[1]), e.getMessage());
        }
      }
      try (TFloat32 x = TFloat32.scalarOf(1f); Outputs o = f.call(Map.of("x", x, "kind", "good"))) {
        assertEquals(4f, o.get("y", TFloat32.class).getFloat(), "after the refusals, a good call");
      }
    }
  }
}
