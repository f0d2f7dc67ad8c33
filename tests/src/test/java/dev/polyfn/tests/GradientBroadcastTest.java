package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.TensorFlow;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;

/**
 * {@code Flow.gradients} of binary element-wise ops whose operands broadcast or not, with known or
 * unknown shapes: where static shapes show an operand was not broadcast, the C++ registry's
 * reduction back to its shape (Shape, BroadcastGradientArgs, Sum, Reshape) is left out of the
 * gradient, as Python's math_grad.py leaves it out; the values stay TensorFlow's. Expected values
 * are TensorFlow 2.21's, printed by Python for {@code tf.gradients} in a {@code tf.function}:
 * {@code mixed = reduce_sum(w * (a*b + a/b - (a+a) + b))} with {@code w = 1 + 0.1*range(n)} in
 * the broadcast shape, and {@code prod = reduce_sum(a*b)}.
 */
class GradientBroadcastTest {

  /** The gradients of mixed and prod with respect to a and b, a and b declared of the given shapes. */
  private static MapFunction gradients(Shape a, Shape b, Shape out) {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("a", TFloat32.class, a);
      Operand<TFloat32> y = in.input("b", TFloat32.class, b);
      float[] w = new float[(int) out.size()];
      for (int i = 0; i < w.length; i++) {
        w[i] = 1f + 0.1f * i;
      }
      Operand<TFloat32> sum = tf.math.add(tf.math.sub(tf.math.add(tf.math.mul(x, y), tf.math.realDiv(x, y)),
          tf.math.add(x, x)), y);
      Operand<TFloat32> mixed = all(tf, tf.math.mul(tf.constant(out, DataBuffers.of(w)), sum));
      List<Operand<?>> d = Flow.gradients(tf, mixed, List.of(x, y));
      List<Operand<?>> p = Flow.gradients(tf, all(tf, tf.math.mul(x, y)), List.of(x, y));
      return Map.of("da", d.get(0), "db", d.get(1), "pa", p.get(0), "pb", p.get(1));
    });
  }

  private static Operand<TFloat32> all(Ops tf, Operand<TFloat32> t) {
    return tf.sum(t, tf.range(tf.constant(0), tf.rank(t), tf.constant(1)));
  }

  private static void check(Shape a, Shape b, Shape out, TFloat32 av, TFloat32 bv, float[][] want) {
    try (MapFunction f = gradients(a, b, out); Outputs got = f.call(Map.of("a", av, "b", bv))) {
      String[] names = {"da", "db", "pa", "pb"};
      for (int i = 0; i < names.length; i++) {
        TFloat32 t = got.get(names[i], TFloat32.class);
        assertEquals(i % 2 == 0 ? av.shape() : bv.shape(), t.shape(), names[i]);
        float[] values = new float[(int) t.size()];
        t.asRawTensor().data().asFloats().read(values);
        assertArrayEquals(want[i], values, 1e-6f, names[i]);
      }
    } finally {
      av.close();
      bv.close();
    }
  }

  private static TFloat32 tensor(Shape shape, float... values) {
    return TFloat32.tensorOf(shape, DataBuffers.of(values));
  }

  @Test
  void operandsOfOneShape() {
    check(Shape.of(4), Shape.of(4), Shape.of(4), tensor(Shape.of(4), 1, 2, 3, 4), tensor(Shape.of(4), 0.5f, 1.5f, 2.5f, 3.5f),
        new float[][] {{0.5f, 0.1833333969116211f, 1.0799999237060547f, 2.3214282989501953f},
            {-2.0f, 2.3222224712371826f, 4.223999977111816f, 6.075510025024414f},
            {0.5f, 1.5f, 2.5f, 3.5f}, {1f, 2f, 3f, 4f}});
  }

  private static final float[][] VECTOR_AND_SCALAR = {
      {0.8999999761581421f, 0.9899999499320984f, 1.0799999237060547f, 1.1700000762939453f},
      {14.680000305175781f}, {2.5f, 2.5f, 2.5f, 2.5f}, {10f}};

  @Test
  void aVectorAndAScalar() {
    check(Shape.of(4), Shape.scalar(), Shape.of(4), tensor(Shape.of(4), 1, 2, 3, 4), TFloat32.scalarOf(2.5f),
        VECTOR_AND_SCALAR);
  }

  @Test
  void aVectorAndAScalarOfUnknownShapes() {
    check(Shape.unknown(), Shape.unknown(), Shape.of(4), tensor(Shape.of(4), 1, 2, 3, 4), TFloat32.scalarOf(2.5f),
        VECTOR_AND_SCALAR);
  }

  private static final float[][] COLUMN_AND_ROW = {{1.7633335590362549f, 2.2333335876464844f},
      {-8.5f, 4.6666669845581055f, 6.227999687194824f}, {4.5f, 4.5f}, {3f, 3f, 3f}};

  @Test
  void aColumnAndARowBroadcastBoth() {
    check(Shape.of(2, 1), Shape.of(1, 3), Shape.of(2, 3), tensor(Shape.of(2, 1), 1, 2),
        tensor(Shape.of(1, 3), 0.5f, 1.5f, 2.5f), COLUMN_AND_ROW);
  }

  @Test
  void aColumnAndARowOfUnknownShapes() {
    check(Shape.unknown(), Shape.of(-1, -1), Shape.of(2, 3), tensor(Shape.of(2, 1), 1, 2),
        tensor(Shape.of(1, 3), 0.5f, 1.5f, 2.5f), COLUMN_AND_ROW);
  }

  /**
   * The gradient of a chain of element-wise ops on operands of one known shape (and a scalar
   * factor) depends on no BroadcastGradientArgs, Sum or Reshape: TensorFlow constant-folds every
   * one of them before the first run, 7 s for a chain of 1,000 multiplications.
   */
  @Test
  void anEqualShapeChainsGradientReducesNothing() {
    Set<String> types = new TreeSet<>();
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(4));
          Operand<TFloat32> c = tf.constant(new float[] {1.5f, 0.5f, 2f, 1f});
          Operand<TFloat32> h = x;
          for (int i = 0; i < 5; i++) {
            h = tf.math.tanh(tf.math.realDiv(tf.math.sub(tf.math.add(tf.math.mul(h, c), x), c), c));
            h = tf.math.mul(h, tf.constant(1.0001f));
          }
          Operand<?> g = Flow.gradients(tf, h, List.of(x)).get(0);
          types.addAll(typesAbove((GraphOperation) g.op()));
          return Map.of("g", g);
        });
         TFloat32 x = TFloat32.vectorOf(0.1f, 0.2f, 0.3f, 0.4f);
         Outputs out = f.call(Map.of("x", x))) {
      assertEquals(Shape.of(4), out.get("g", TFloat32.class).shape());
    }
    assertTrue(types.contains("TanhGrad") && types.contains("RealDiv"), types::toString);
    for (String reduction : List.of("BroadcastGradientArgs", "Sum", "Reshape", "Shape")) {
      assertTrue(!types.contains(reduction), () -> "the gradient depends on " + reduction + ": " + types);
    }
  }

  /**
   * The traced function leaves out the gradient call's operations nothing reads: the gradient of
   * the constant factor (a Mul, Shape, BroadcastGradientArgs, Sum and Reshape per multiplication)
   * and the reductions taken out. TensorFlow's preparation of the first run took 0.5 s for those
   * of a chain of 1,000 multiplications, 0.1 s without them.
   */
  @Test
  void theGradientsUnusedOperationsAreLeftOutOfTheFunction(@TempDir Path dir) throws Exception {
    int n = 20;
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(4));
          Operand<TFloat32> h = x;
          for (int i = 0; i < n; i++) {
            h = tf.math.mul(h, tf.constant(1.5f));
          }
          return Map.of("g", Flow.gradients(tf, h, List.of(x)).get(0));
        });
         TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f, 4f);
         Outputs out = f.call(Map.of("x", x))) {
      assertEquals((float) Math.pow(1.5, n), out.get("g", TFloat32.class).getFloat(3), 1e-2f);
      f.save(dir);
    }
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(dir.resolve("saved_model.pb")));
    FunctionDef traced = model.getMetaGraphs(0).getGraphDef().getLibrary().getFunctionList().stream()
        .filter(d -> d.getNodeDefList().stream().anyMatch(node -> node.getOp().equals("Mul"))).findFirst().orElseThrow();
    Map<String, Long> counts = new TreeMap<>();
    traced.getNodeDefList().forEach(node -> counts.merge(node.getOp(), 1L, Long::sum));
    // n multiplications and the n of their gradient with respect to h; none with respect to the factor.
    assertEquals(2L * n, counts.get("Mul"), counts::toString);
    for (String unused : List.of("BroadcastGradientArgs", "Sum", "Reshape", "Shape")) {
      assertTrue(!counts.containsKey(unused), () -> "the function holds " + unused + ": " + counts);
    }
  }

  /**
   * A gradient of a gradient on the one-call path differentiates only operations the first left
   * in: y = x³ + erf(x) (whose registry gradient has control inputs), d²y/dx² = 6x − 4x·e^(−x²)/√π.
   */
  @Test
  void aSecondDerivativeOfKnownShapes() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(3));
          Operand<TFloat32> y = tf.math.add(tf.math.mul(tf.math.mul(x, x), x), tf.math.erf(x));
          Operand<?> dy = Flow.gradients(tf, y, List.of(x)).get(0);
          return Map.of("d2", Flow.gradients(tf, dy, List.of(x)).get(0));
        });
         TFloat32 x = TFloat32.vectorOf(-1f, 0.5f, 2f);
         Outputs out = f.call(Map.of("x", x))) {
      TFloat32 d2 = out.get("d2", TFloat32.class);
      for (int i = 0; i < 3; i++) {
        double v = x.getFloat(i);
        assertEquals(6 * v - 4 * v * Math.exp(-v * v) / Math.sqrt(Math.PI), d2.getFloat(i), 1e-5);
      }
    }
  }

  /**
   * A custom gradient (TensorFlow Java's, process-wide) that builds an Assert nothing reads: the
   * Assert stays in the function (it has no outputs), so what it reads must stay too. Left out,
   * the trace failed ("Input 0, 'gradients/.../ReduceAll:0', of node '.../AssertThat' ... is not
   * available").
   */
  @Test
  void aCustomGradientsUnreadAssertKeepsItsInputs() {
    String type = null;
    // An op with no registered gradient, which no other test differentiates.
    for (String t : List.of("Dawsn", "Expint", "Ndtri", "Erfinv")) {
      if (TensorFlow.registerCustomGradient(t, (tf, op, grads) -> {
        @SuppressWarnings("unchecked") Operand<TFloat32> g = (Operand<TFloat32>) grads.get(0);
        Operand<TBool> finite = tf.reduceAll(tf.math.isFinite(g), tf.constant(new int[] {0}));
        tf.assertThat(finite, List.of(tf.constant("a non-finite gradient")));
        return List.of(tf.math.mul(g, tf.constant(2f)));
      })) {
        type = t;
        break;
      }
    }
    assertNotNull(type, "no op type took the custom gradient");
    String op = type;
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(3));
          @SuppressWarnings("unchecked") Operand<TFloat32> y = (Operand<TFloat32>) (Operand<?>) ((GraphOperation) tf.scope()
              .opBuilder(op, op).addInput(x.asOutput()).build()).output(0);
          return Map.of("g", Flow.gradients(tf, all(tf, y), List.of(x)).get(0));
        });
         TFloat32 x = TFloat32.vectorOf(0.1f, 0.2f, 0.3f);
         Outputs out = f.call(Map.of("x", x))) {
      float[] g = new float[3];
      out.get("g", TFloat32.class).asRawTensor().data().asFloats().read(g);
      assertArrayEquals(new float[] {2f, 2f, 2f}, g);
    }
  }

  /**
   * Atan2's gradient in TensorFlow's C++ registry does not sum over broadcast dimensions (Python's
   * does): x of shape [3] got a gradient of shape [2, 3]. Values from TensorFlow 2.21, {@code
   * GradientTape} in a {@code tf.function}: out = reduce_sum(atan2(y, x) * [[1,2,3],[4,5,6]] +
   * atan2(y, tanh(x))), y = [[1,2,3],[-1,0.5,2]], x = [0.5,-1.5,2].
   */
  @Test
  void atan2sGradientIsSummedOverBroadcastDimensions() {
    atan2sGradient(Shape.of(2, 3), Shape.of(3));
  }

  /**
   * As {@link #atan2sGradientIsSummedOverBroadcastDimensions}, y of an unknown batch dimension
   * (fed a batch of 2): static shapes cannot show that x was broadcast, so the sum is the
   * dynamic one (over BroadcastGradientArgs' axes, none when nothing was broadcast). Summed only
   * where static shapes differed, x's gradient had shape [2, 3].
   */
  @Test
  void atan2sGradientIsSummedOverAnUnknownBatchDimension() {
    atan2sGradient(Shape.of(-1, 3), Shape.of(3));
    atan2sGradient(Shape.of(-1, 3), Shape.of(1, 3));
    atan2sGradient(Shape.of(-1, -1), Shape.of(-1));
    atan2sGradient(Shape.unknown(), Shape.unknown());
  }

  private static void atan2sGradient(Shape ys, Shape xs) {
    long[] xDims = xs.isUnknown() || xs.numDimensions() == 1 ? new long[] {3} : new long[] {1, 3};
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> y = in.input("y", TFloat32.class, ys);
          Operand<TFloat32> x = in.input("x", TFloat32.class, xs);
          Operand<TFloat32> w = tf.constant(new float[][] {{1, 2, 3}, {4, 5, 6}});
          Operand<TFloat32> out = all(tf, tf.math.add(tf.math.mul(tf.math.atan2(y, x), w), tf.math.atan2(y, tf.math.tanh(x))));
          List<Operand<?>> d = Flow.gradients(tf, out, List.of(y, x));
          return Map.of("gy", d.get(0), "gx", d.get(1));
        });
         TFloat32 y = TFloat32.tensorOf(Shape.of(2, 3), DataBuffers.of(1f, 2f, 3f, -1f, 0.5f, 2f));
         TFloat32 x = TFloat32.tensorOf(Shape.of(xDims), DataBuffers.of(0.5f, -1.5f, 2f));
         Outputs out = f.call(Map.of("y", y, "x", x))) {
      TFloat32 gx = out.get("gx", TFloat32.class);
      assertEquals(Shape.of(xDims), gx.shape(), () -> "y declared " + ys + ", x " + xs);
      float[] got = new float[3];
      gx.asRawTensor().data().asFloats().read(got);
      assertArrayEquals(new float[] {2.4000001f, -1.799491f, -2.2423191f}, got, 1e-5f);
      float[] gy = new float[6];
      out.get("gy", TFloat32.class).asRawTensor().data().asFloats().read(gy);
      assertArrayEquals(new float[] {0.7807971f, -0.6678176f, 0.5586272f, 1.980797f, -3.8464918f, 1.695569f}, gy, 1e-5f);
    }
  }

  /** The types of the operations {@code op} depends on, itself included. */
  private static Set<String> typesAbove(GraphOperation op) {
    Set<String> types = new HashSet<>();
    Set<String> seen = new HashSet<>();
    ArrayDeque<GraphOperation> todo = new ArrayDeque<>(List.of(op));
    while (!todo.isEmpty()) {
      GraphOperation o = todo.pop();
      if (seen.add(o.name())) {
        types.add(o.type());
        for (int i = 0; i < o.numInputs(); i++) {
          todo.push((GraphOperation) o.input(i).op());
        }
      }
    }
    return types;
  }
}
