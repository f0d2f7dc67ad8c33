package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.types.TFloat32;

/**
 * {@code Flow.gradients} of long bodies, as a user differentiating a deep computation writes them:
 * the path from x to y was walked recursively (a chain of 800 operations overflowed a 144 KB
 * thread stack, 20,000 the default one) and differentiated one operation per call of TensorFlow's registry, each call
 * searching the graph above that operation again (a chain of 1,000 multiplications took 6 s to
 * trace, every operation's inputs routed through two Identity operations). Without control flow
 * on the path the registry now differentiates it in one call, as {@code tf.gradients} does.
 */
class GradientScaleTest {
  private static final float C = 1.0001f;

  /** y = x·c·c·...·c ({@code n} multiplications), x declared of {@code shape}; outputs dy/dx, which is c^n. */
  private static MapBody chain(int n, Shape shape) {
    return (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, shape);
      Operand<TFloat32> h = x;
      Operand<TFloat32> c = tf.constant(C);
      for (int i = 0; i < n; i++) {
        h = tf.math.mul(h, c);
      }
      return Map.of("g", Flow.gradients(tf, h, List.of(x)).get(0));
    };
  }

  private static float power(int n) {
    float p = 1f;
    for (int i = 0; i < n; i++) {
      p *= C;
    }
    return p;
  }

  @Test
  void aLongChainIsDifferentiatedOnASmallStack() throws Exception {
    int n = 800;
    Throwable[] failure = new Throwable[1];
    float[] got = new float[2];
    Thread t = new Thread(null, () -> {
      // x of unknown length: Grappler cannot fold the gradient into a constant at the first run
      // (with a static shape it can, and TensorFlow's constant folding of this chain takes minutes).
      try (MapFunction f = Function.define(chain(n, Shape.of(-1)));
           TFloat32 x = TFloat32.vectorOf(1f, 2f);
           Outputs out = f.call(Map.of("x", x))) {
        TFloat32 g = out.get("g", TFloat32.class);
        got[0] = g.getFloat(0);
        got[1] = g.getFloat(1);
      } catch (Throwable e) {
        failure[0] = e;
      }
    }, "small-stack-gradients", 144 * 1024);
    t.start();
    t.join();
    assertNull(failure[0], () -> "differentiating a chain of " + n + " operations failed: " + failure[0]);
    float want = power(n);
    assertEquals(want, got[0], 1e-3f * want);
    assertEquals(want, got[1], 1e-3f * want);
  }

  /**
   * An x the loss does not depend on (a frozen weight, another head's) gets zeros, as before and
   * as Python's None: the registry, called once for every x, refused it as "unreachable from the
   * output node(s)".
   */
  @Test
  void anXTheLossDoesNotDependOnGetsZeros() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> a = in.input("a", TFloat32.class);
          Operand<TFloat32> b = in.input("b", TFloat32.class);
          List<Operand<?>> d = Flow.gradients(tf, tf.sum(tf.math.mul(a, a), tf.constant(0)), List.of(a, b));
          return Map.of("da", d.get(0), "db", d.get(1));
        });
         TFloat32 a = TFloat32.vectorOf(1f, 2f, 3f);
         TFloat32 b = TFloat32.vectorOf(4f, 5f, 6f);
         Outputs out = f.call(Map.of("a", a, "b", b))) {
      TFloat32 da = out.get("da", TFloat32.class);
      TFloat32 db = out.get("db", TFloat32.class);
      for (int i = 0; i < 3; i++) {
        assertEquals(2f * (i + 1), da.getFloat(i));
        assertEquals(0f, db.getFloat(i));
      }
    }
  }

  @Test
  void theForwardChainIsLeftAsTheBodyBuiltIt(@TempDir Path dir) throws Exception {
    int n = 50;
    try (MapFunction f = Function.define(chain(n, Shape.of(3)))) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3))));
      try (TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f); Outputs out = f.call(Map.of("x", x))) {
        assertEquals(power(n), out.get("g", TFloat32.class).getFloat(2), 1e-5f);
      }
      f.save(dir);
    }
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(dir.resolve("saved_model.pb")));
    FunctionDef traced = model.getMetaGraphs(0).getGraphDef().getLibrary().getFunctionList().stream()
        .filter(d -> d.getNodeDefList().stream().filter(node -> node.getOp().equals("Mul")).count() >= n).findFirst()
        .orElseThrow();
    long identities = traced.getNodeDefList().stream().filter(node -> node.getOp().equals("Identity")).count();
    // One call of the registry adds none to the forward chain; one per operation added two each.
    assertTrue(identities < n, identities + " Identity operations in a function of " + n + " multiplications");
  }
}
