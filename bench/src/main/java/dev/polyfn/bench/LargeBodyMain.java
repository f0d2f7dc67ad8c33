package dev.polyfn.bench;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * A large body's trace and first call, as {@code bench/python/bench_large.py} measures Python's
 * {@code tf.function} on the same program: a chain of {@code n} ops on a small tensor, either
 * element-wise ({@code ew}: multiply, add, tanh, subtract in turn, on x of shape [4]) or with
 * matmuls ({@code matmul}: x·W, add, tanh in turn, on x of shape [8, 8]). Each op with a constant
 * operand gets its own constant, as Python's {@code x * 0.999} does.
 *
 * <p>After a warm-up (a small function traced and called, so TensorFlow's and the JVM's start-up
 * are not counted), it times {@code getConcreteFunction} (the trace: the body run, the graph
 * turned into a registered function) and then the first call (TensorFlow's instantiation,
 * Grappler, kernels, and the run). Prints one JSON object.
 *
 * <p>Usage: {@code LargeBodyMain ew|matmul N}.
 */
public final class LargeBodyMain {
  private LargeBodyMain() {}

  /** The chain's body. */
  static MapBody body(String kind, int n) {
    return (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      for (int i = 0; i < n; i++) {
        x = kind.equals("matmul") ? matmulStep(tf, x, i) : elementwiseStep(tf, x, i);
      }
      return Map.of("y", x);
    };
  }

  static Operand<TFloat32> elementwiseStep(Ops tf, Operand<TFloat32> x, int i) {
    switch (i % 4) {
      case 0:
        return tf.math.mul(x, tf.constant(0.999f));
      case 1:
        return tf.math.add(x, tf.constant(0.001f));
      case 2:
        return tf.math.tanh(x);
      default:
        return tf.math.sub(x, tf.constant(0.0005f));
    }
  }

  static Operand<TFloat32> matmulStep(Ops tf, Operand<TFloat32> x, int i) {
    switch (i % 3) {
      case 0: {
        float[] w = new float[64];
        for (int k = 0; k < w.length; k++) {
          w[k] = ((k * 7 + i) % 13 - 6) / 50f;
        }
        return tf.linalg.matMul(x, tf.constant(Shape.of(8, 8), DataBuffers.of(w, true, false)));
      }
      case 1:
        return tf.math.add(x, tf.constant(0.01f));
      default:
        return tf.math.tanh(x);
    }
  }

  static Shape shape(String kind) {
    return kind.equals("matmul") ? Shape.of(8, 8) : Shape.of(4);
  }

  /** Traces and calls {@code kind} with {@code n} ops; returns {trace ms, first call ms, first run ms}. */
  static double[] run(String kind, int n) {
    Shape shape = shape(kind);
    float[] ones = new float[(int) shape.size()];
    java.util.Arrays.fill(ones, 0.5f);
    try (MapFunction f = Function.define(body(kind, n));
        TFloat32 x = TFloat32.tensorOf(shape, DataBuffers.of(ones, true, false))) {
      long t0 = System.nanoTime();
      ConcreteFunctionInfo c = f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, shape)));
      long t1 = System.nanoTime();
      float y;
      try (Outputs out = f.call(Map.of("x", x))) {
        y = ((TFloat32) out.get("y")).getFloat(new long[shape.numDimensions()]);
      }
      long t2 = System.nanoTime();
      if (!Float.isFinite(y) || f.traceCount() != 1) {
        throw new IllegalStateException("unexpected result " + y + " or trace count " + f.traceCount());
      }
      double firstRun = f.concreteFunctions().get(0).firstRunTime().map(d -> d.toNanos() / 1e6).orElse(-1.0);
      return new double[] {(t1 - t0) / 1e6, (t2 - t1) / 1e6, firstRun, c.preparationTime().toNanos() / 1e6};
    }
  }

  public static void main(String[] args) {
    String kind = args[0];
    int n = Integer.parseInt(args[1]);
    run(kind, 10); // warm-up: TensorFlow's and the JVM's start-up
    double[] t = run(kind, n);
    System.out.println(String.format(
        "{\"contender\": \"polyfn\", \"kind\": \"%s\", \"ops\": %d, \"trace_ms\": %.1f, \"first_call_ms\": %.1f, "
            + "\"first_result_ms\": %.1f, \"first_run_ms\": %.1f, \"preparation_ms\": %.1f}",
        kind, n, t[0], t[1], t[0] + t[1], t[2], t[3]));
  }
}
