package dev.polyfn.bench;

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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorflow.ConcreteFunction;
import org.tensorflow.Result;
import org.tensorflow.Tensor;

/**
 * First call of a new signature (trace + build the TensorFlow function + first execution), in
 * milliseconds, single shot: each invocation is a fresh function's first call of {@code add2}.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 20, batchSize = 1)
@Measurement(iterations = 50, batchSize = 1)
@Fork(2)
public class FirstCallBench {

  @State(Scope.Thread)
  public static class Inputs {
    Workload w;
    Map<String, Tensor> args;
    MapFunction fn;

    @Setup(Level.Trial)
    public void setUp() {
      w = Workload.get("add2");
      args = w.newInputs();
    }

    @Setup(Level.Invocation)
    public void newFunction() {
      fn = w.polyfn();
    }

    @TearDown(Level.Invocation)
    public void closeFunction() {
      fn.close();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      args.values().forEach(Tensor::close);
    }
  }

  /** A new Polyfn function's first call: trace, convert and register, execute. */
  @Benchmark
  public void polyfnFirstCall(Inputs s, Blackhole bh) {
    try (Outputs out = s.fn.call(s.args)) {
      bh.consume(out.get("y"));
    }
  }

  /** TensorFlow Java: ConcreteFunction.create (builds the graph and function) + first call. */
  @Benchmark
  public void tfjavaConcreteFirstCall(Inputs s, Blackhole bh) {
    try (ConcreteFunction cf = s.w.concrete();
        Result r = cf.call(s.args)) {
      bh.consume(r.get(0));
    }
  }
}
