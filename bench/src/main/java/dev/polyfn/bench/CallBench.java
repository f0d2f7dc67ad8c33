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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorflow.ConcreteFunction;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.Tensor;

/**
 * Per-call cost of a cached call, for each JVM contender and workload. bench/run.sh overrides the
 * iteration counts (quick/full); the annotations are the full-mode defaults.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class CallBench {

  /** Polyfn {@code MapFunction.call}: one JNI call, zero copy. */
  @State(Scope.Thread)
  public static class PolyfnState {
    @Param({"add2", "mlp", "matmul512", "args16", "list100", "map10", "shape_4B", "shape_64MiB"})
    public String workload;

    MapFunction fn;
    Map<String, Tensor> args;
    /** The same tensors in Polyfn's form for the workload (a list or map argument where it takes one). */
    Map<String, ?> callArgs;

    @Setup(Level.Trial)
    public void setUp() {
      Workload w = Workload.get(workload);
      fn = w.polyfn();
      args = w.newInputs();
      callArgs = w.polyfnArgs(args);
      try (Outputs out = fn.call(callArgs)) {
        // traced once here
      }
      if (fn.traceCount() != 1) {
        throw new IllegalStateException("expected one trace, got " + fn.traceCount());
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      fn.close();
      args.values().forEach(Tensor::close);
    }
  }

  /** TensorFlow Java {@code ConcreteFunction.call(Map)} of the same graph. */
  @State(Scope.Thread)
  public static class ConcreteState {
    @Param({"add2", "mlp", "matmul512", "args16", "list100", "map10", "shape_4B", "shape_64MiB"})
    public String workload;

    ConcreteFunction fn;
    Map<String, Tensor> args;

    @Setup(Level.Trial)
    public void setUp() {
      Workload w = Workload.get(workload);
      fn = w.concrete();
      args = w.newInputs();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      fn.close();
      args.values().forEach(Tensor::close);
    }
  }

  /** TensorFlow Java {@code Session.runner()} on the same graph. */
  @State(Scope.Thread)
  public static class SessionState {
    @Param({"add2", "mlp", "matmul512", "args16", "list100", "map10", "shape_4B", "shape_64MiB"})
    public String workload;

    Workload.SessionGraph g;
    Tensor[] inputs;

    @Setup(Level.Trial)
    public void setUp() {
      Workload w = Workload.get(workload);
      g = new Workload.SessionGraph(w);
      inputs = w.newInputs().values().toArray(new Tensor[0]);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      g.close();
      for (Tensor t : inputs) {
        t.close();
      }
    }
  }

  @Benchmark
  public void polyfn(PolyfnState s, Blackhole bh) {
    try (Outputs out = s.fn.call(s.callArgs)) {
      bh.consume(out.get("y"));
    }
  }

  @Benchmark
  public void tfjavaConcrete(ConcreteState s, Blackhole bh) {
    try (Result r = s.fn.call(s.args)) {
      bh.consume(r.get(0));
    }
  }

  @Benchmark
  public void tfjavaSession(SessionState s, Blackhole bh) {
    Session.Runner runner = s.g.session.runner();
    for (int i = 0; i < s.inputs.length; i++) {
      runner.feed(s.g.xs.get(i), s.inputs[i]);
    }
    try (Result r = runner.fetch(s.g.y).run()) {
      bh.consume(r.get(0));
    }
  }
}
