package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Cache-hit cost with {@code signatures} concrete functions cached: {@code y = x + 2} over a float
 * vector, traced for the shapes [1], [2], ..., [signatures]; then calls with shape [1] (the first
 * signature traced) are timed.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class HitBench {
  @Param({"1", "10000"})
  public int signatures;

  MapFunction fn;
  Map<String, TFloat32> args;

  @Setup(Level.Trial)
  public void setUp() {
    fn = Function.define((tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(2f))));
    long start = System.nanoTime();
    long blockStart = start;
    StringBuilder blocks = new StringBuilder();
    int block = Math.max(1, signatures / 10);
    for (int n = 1; n <= signatures; n++) {
      try (TFloat32 x = TFloat32.tensorOf(Shape.of(n));
          Outputs out = fn.call(Map.of("x", x))) {
        // traces shape [n]
      }
      if (n % block == 0) {
        long now = System.nanoTime();
        blocks.append(String.format(" %.2f", (now - blockStart) / 1e6 / block));
        blockStart = now;
      }
    }
    if (fn.traceCount() != signatures) {
      throw new IllegalStateException("expected " + signatures + " traces, got " + fn.traceCount());
    }
    System.out.printf("[hit] traced %d signatures in %.1f s; ms per trace, by tenths:%s%n",
        signatures, (System.nanoTime() - start) / 1e9, blocks);
    args = Map.of("x", TFloat32.vectorOf(1f));
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    fn.close();
    args.get("x").close();
  }

  @Benchmark
  public void polyfnHit(Blackhole bh) {
    try (Outputs out = fn.call(args)) {
      bh.consume(out.get("y"));
    }
  }
}
