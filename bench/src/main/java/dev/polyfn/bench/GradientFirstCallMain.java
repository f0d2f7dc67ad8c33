package dev.polyfn.bench;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TFloat32;

/**
 * The trace and first call of a function returning {@code Flow.gradients} of a long body, as
 * {@code bench/python/bench_gradients.py} measures Python's {@code tf.function} on the same
 * programs: {@code chain} (y = x·c·...·c, 1,000 multiplications by a scalar constant, x of shape
 * [4]; dy/dx) and {@code mlp} (100 layers h = tanh(h·W + b), x of shape [8, 8]; the gradient of
 * sum(h)). Times {@code getConcreteFunction} (the trace), then the first call (TensorFlow's
 * instantiation, Grappler, kernels, the run) and a second one, each in the order given, in one
 * process without a warm-up (the first program's trace includes TensorFlow's start-up).
 *
 * <p>Usage: {@code GradientFirstCallMain chain|mlp...}.
 */
public final class GradientFirstCallMain {
  private GradientFirstCallMain() {}

  public static void main(String[] args) {
    for (String what : args) {
      switch (what) {
        case "chain" -> measure("chain1000 [4]", chain(1000), Shape.of(4), TFloat32.vectorOf(1f, 2f, 3f, 4f));
        case "mlp" -> measure("mlp100 [8,8]", mlp(100), Shape.of(8, 8),
            TFloat32.tensorOf(Shape.of(8, 8), d -> d.scalars().forEach(s -> s.setFloat(1f))));
        default -> throw new IllegalArgumentException("chain or mlp, not " + what);
      }
    }
  }

  private static MapBody chain(int n) {
    return (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(4));
      Operand<TFloat32> h = x;
      Operand<TFloat32> c = tf.constant(1.0001f);
      for (int i = 0; i < n; i++) {
        h = tf.math.mul(h, c);
      }
      return Map.of("g", Flow.gradients(tf, h, List.of(x)).get(0));
    };
  }

  private static MapBody mlp(int layers) {
    Random random = new Random(0);
    float[][] w = new float[8][8];
    float[][] b = new float[8][8];
    for (int i = 0; i < 8; i++) {
      for (int j = 0; j < 8; j++) {
        w[i][j] = (float) (random.nextGaussian() * 0.4);
        b[i][j] = (float) (random.nextGaussian() * 0.1);
      }
    }
    return (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(8, 8));
      Operand<TFloat32> wc = tf.constant(StdArrays.ndCopyOf(w));
      Operand<TFloat32> bc = tf.constant(StdArrays.ndCopyOf(b));
      Operand<TFloat32> h = x;
      for (int i = 0; i < layers; i++) {
        h = tf.math.tanh(tf.math.add(tf.linalg.matMul(h, wc), bc));
      }
      return Map.of("g", Flow.gradients(tf, tf.sum(h, tf.constant(new int[] {0, 1})), List.of(x)).get(0));
    };
  }

  private static void measure(String name, MapBody body, Shape shape, TFloat32 x) {
    try (MapFunction f = Function.define(body); x) {
      long t0 = System.nanoTime();
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, shape)));
      long t1 = System.nanoTime();
      try (Outputs out = f.call(Map.of("x", x))) {
        out.get("g", TFloat32.class);
      }
      long t2 = System.nanoTime();
      try (Outputs out = f.call(Map.of("x", x))) {
        out.get("g", TFloat32.class);
      }
      long t3 = System.nanoTime();
      System.out.printf("%s: trace %.3f s, first call %.3f s, second %.2f ms%n", name, (t1 - t0) / 1e9,
          (t2 - t1) / 1e9, (t3 - t2) / 1e6);
    }
  }
}
