package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.ArrayList;
import java.util.List;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * The call paths and options of issue "calls at TensorFlow's floor": each workload on the default
 * path (the session path after 64 calls, else the eager caller-thread path where safe; Grappler
 * on), on the eager caller-thread path only (no session), on TensorFlow's thread pool, without
 * Grappler, and with XLA; the 20-op element-wise chain; and two threads calling one cached
 * function.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FastPathBench {

  /** 20 element-wise ops on a float vector (Mul, AddV2, Tanh, Sub, Abs, four times). */
  static Operand<TFloat32> ew20(Ops tf, Operand<TFloat32> x) {
    Operand<TFloat32> y = x;
    for (int i = 0; i < 4; i++) {
      y = tf.math.mul(y, tf.constant(0.99f));
      y = tf.math.add(y, tf.constant(0.01f));
      y = tf.math.tanh(y);
      y = tf.math.sub(y, tf.constant(0.001f));
      y = tf.math.abs(y);
    }
    return y;
  }

  static FunctionOptions options(String variant) {
    FunctionOptions o = FunctionOptions.defaults();
    switch (variant) {
      case "default":
      case "eager": // the eager caller-thread path, by the properties set around the definition
        return o;
      case "pooled":
        return o.withFastPath(false);
      case "nograppler":
        return o.withGrappler(false);
      case "xla":
        return o.withJitCompile(true);
      default:
        throw new IllegalArgumentException("unknown variant " + variant);
    }
  }

  /** A workload of {@link Workload} (or {@code ew20}: 1M floats) under one variant's options. */
  @State(Scope.Benchmark)
  public static class Call {
    @Param({"add2", "mlp", "matmul512", "args16", "list100", "ew20"})
    public String workload;

    @Param({"default", "eager", "pooled", "nograppler", "xla"})
    public String variant;

    MapFunction fn;
    Map<String, Tensor> args;
    Map<String, ?> callArgs;

    @Setup(Level.Trial)
    public void setUp() {
      // Read when a function is defined: "eager" opts into the eager caller-thread path and
      // keeps the function off the session path.
      if (variant.equals("eager")) {
        System.setProperty("dev.polyfn.sessionPathAfter", "0");
        System.setProperty("dev.polyfn.eagerOpAsFunction", "true");
      }
      try {
        define();
      } finally {
        System.clearProperty("dev.polyfn.sessionPathAfter");
        System.clearProperty("dev.polyfn.eagerOpAsFunction");
      }
      fn.call(callArgs).close();
    }

    private void define() {
      if (workload.equals("ew20")) {
        fn = Function.define((tf, in) -> Map.of("y", ew20(tf, in.input("x", TFloat32.class))), options(variant));
        float[] ones = new float[1 << 20];
        java.util.Arrays.fill(ones, 0.5f);
        args = Map.of("x", TFloat32.tensorOf(Shape.of(1 << 20), org.tensorflow.ndarray.buffer.DataBuffers.of(ones, true, false)));
        callArgs = args;
      } else {
        Workload w = Workload.get(workload);
        fn = Function.define((tf, in) -> {
          List<Operand<TFloat32>> xs = new ArrayList<>();
          if (w.form == Workload.Form.LIST) {
            xs.addAll(in.list("xs", TFloat32.class));
          } else {
            for (String n : w.inputNames) {
              xs.add(in.input(n, TFloat32.class));
            }
          }
          return Map.of("y", w.body.build(tf, xs));
        }, options(variant));
        args = w.newInputs();
        callArgs = w.polyfnArgs(args);
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      fn.close();
      args.values().forEach(Tensor::close);
    }
  }

  @Benchmark
  public void call(Call s, Blackhole bh) {
    try (Outputs out = s.fn.call(s.callArgs)) {
      bh.consume(out.get("y"));
    }
  }

  /** One cached add2 function shared by the calling threads; each thread has its own input. */
  @State(Scope.Benchmark)
  public static class Shared {
    MapFunction fn;

    @Setup(Level.Trial)
    public void setUp() {
      fn = Function.define((tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(2f))));
      try (TFloat32 x = TFloat32.scalarOf(1f)) {
        fn.call(Map.of("x", x)).close();
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      fn.close();
    }
  }

  @State(Scope.Thread)
  public static class Input {
    TFloat32 x;

    @Setup(Level.Trial)
    public void setUp() {
      x = TFloat32.scalarOf(1f);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      x.close();
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  @Threads(1)
  public void hit1Thread(Shared s, Input in, Blackhole bh) {
    try (Outputs out = s.fn.call(Map.of("x", in.x))) {
      bh.consume(out.get("y"));
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  @Threads(2)
  public void hit2Threads(Shared s, Input in, Blackhole bh) {
    try (Outputs out = s.fn.call(Map.of("x", in.x))) {
      bh.consume(out.get("y"));
    }
  }
}
