package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Nest;
import dev.polyfn.Outputs;
import dev.polyfn.RecordInput;
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
import org.openjdk.jmh.annotations.Warmup;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * Cached calls with structured arguments, against {@code bench_struct.py}'s tf.function on the
 * same structures: {@code record3}, a record of three float scalars, summed; {@code nest100}, a
 * list of 10 maps {"a": 5 scalars, "b": 5 scalars} (100 leaves), summed. {@code args3} is
 * {@code record3}'s sum over three flat tensor parameters: the record's own cost is the difference.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class StructBench {

  /** The record of {@code record3}. */
  public record Triple(TFloat32 a, TFloat32 b, TFloat32 c) {}

  @State(Scope.Thread)
  public static class PolyfnState {
    @Param({"record3", "args3", "nest100"})
    public String workload;

    MapFunction fn;
    Map<String, ?> args;
    final List<TFloat32> owned = new ArrayList<>();

    private TFloat32 scalar() {
      TFloat32 t = TFloat32.scalarOf(1f);
      owned.add(t);
      return t;
    }

    @Setup(Level.Trial)
    public void setUp() {
      if (workload.equals("record3")) {
        fn = Function.define((Ops tf, dev.polyfn.Inputs in) -> {
          RecordInput<Triple> t = in.record("t", Triple.class);
          return Map.of("y", tf.math.add(tf.math.add(t.get(Triple::a), t.get(Triple::b)), t.get(Triple::c)));
        });
        args = Map.of("t", new Triple(scalar(), scalar(), scalar()));
      } else if (workload.equals("args3")) {
        fn = Function.define((Ops tf, dev.polyfn.Inputs in) -> Map.of("y", tf.math.add(
            tf.math.add(in.input("a", TFloat32.class), in.input("b", TFloat32.class)), in.input("c", TFloat32.class))));
        args = Map.of("a", scalar(), "b", scalar(), "c", scalar());
      } else {
        fn = Function.define((Ops tf, dev.polyfn.Inputs in) -> {
          List<Operand<TFloat32>> leaves = new ArrayList<>();
          for (Nest m : in.nest("xs").elements()) {
            for (Nest l : m.entries().values()) {
              l.elements().forEach(e -> leaves.add(e.operand(TFloat32.class)));
            }
          }
          return Map.of("y", tf.math.addN(leaves));
        });
        List<Object> xs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          List<TFloat32> a = new ArrayList<>();
          List<TFloat32> b = new ArrayList<>();
          for (int j = 0; j < 5; j++) {
            a.add(scalar());
            b.add(scalar());
          }
          xs.add(Map.of("a", a, "b", b));
        }
        args = Map.of("xs", xs);
      }
      try (Outputs out = fn.call(args)) {
        float expected = workload.equals("nest100") ? 100f : 3f;
        if (out.get("y", TFloat32.class).getFloat() != expected || fn.traceCount() != 1) {
          throw new IllegalStateException("wrong result or more than one trace");
        }
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      fn.close();
      owned.forEach(TFloat32::close);
    }
  }

  @Benchmark
  public float polyfn(PolyfnState s) {
    try (Outputs out = s.fn.call(s.args)) {
      return out.get("y", TFloat32.class).getFloat();
    }
  }
}
