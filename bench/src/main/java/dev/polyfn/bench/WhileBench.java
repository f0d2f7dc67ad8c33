package dev.polyfn.bench;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.UnaryFunction;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * 1,000 iterations of a scalar update {@code x = x * 0.999 + 0.001}: as one in-graph {@code
 * Flow.whileLoop} in a single call, and as 1,000 Polyfn calls of one step from Java. The time is
 * per 1,000 iterations; bench/python/bench_while.py times the same loop in Python's tf.function.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class WhileBench {
  static final int ITERATIONS = 1000;

  @State(Scope.Thread)
  public static class Fns {
    UnaryFunction<TFloat32, TFloat32> loop;
    UnaryFunction<TFloat32, TFloat32> step;
    TFloat32 x;

    @Setup(Level.Trial)
    public void setUp() {
      step = Function.unary(TFloat32.class, (tf, v) -> update(tf, v));
      loop = Function.unary(TFloat32.class, (tf, v) -> {
        @SuppressWarnings("unchecked")
        Operand<TFloat32> out = (Operand<TFloat32>) Flow.whileLoop(tf, List.of(v),
            Flow.loop().maximumIterations(ITERATIONS), vs -> tf.constant(true),
            vs -> {
              @SuppressWarnings("unchecked")
              Operand<TFloat32> cur = (Operand<TFloat32>) vs.get(0);
              return List.of(update(tf, cur));
            }).get(0);
        return out;
      });
      x = TFloat32.scalarOf(1f);
      float inGraph;
      try (TFloat32 y = loop.call(x)) {
        inGraph = y.getFloat();
      }
      float fromJava = stepped(step, x);
      if (Math.abs(inGraph - fromJava) > 1e-4f) {
        throw new IllegalStateException("the loop and the calls disagree: " + inGraph + " vs " + fromJava);
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      loop.close();
      step.close();
      x.close();
    }
  }

  static Operand<TFloat32> update(org.tensorflow.op.Ops tf, Operand<TFloat32> v) {
    return tf.math.add(tf.math.mul(v, tf.constant(0.999f)), tf.constant(0.001f));
  }

  static float stepped(UnaryFunction<TFloat32, TFloat32> step, TFloat32 x0) {
    TFloat32 cur = step.call(x0);
    for (int i = 1; i < ITERATIONS; i++) {
      TFloat32 next = step.call(cur);
      cur.close();
      cur = next;
    }
    float v = cur.getFloat();
    cur.close();
    return v;
  }

  /** One call running the whole loop in TensorFlow. */
  @Benchmark
  public void polyfnWhile1000(Fns s, Blackhole bh) {
    try (TFloat32 y = s.loop.call(s.x)) {
      bh.consume(y.getFloat());
    }
  }

  /** The loop driven from Java: 1,000 calls of one step. */
  @Benchmark
  public void polyfnCalls1000(Fns s, Blackhole bh) {
    bh.consume(stepped(s.step, s.x));
  }
}
