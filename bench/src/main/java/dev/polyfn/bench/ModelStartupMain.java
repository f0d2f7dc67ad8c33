package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * Time to first result of a real Keras model in a fresh JVM through Polyfn's {@code
 * Function.load(dir, "serve")}: from the process's start (as the kernel recorded it: JVM start-up,
 * class loading and TensorFlow's initialization count) until the first call returned; also the
 * load and the first call alone. The result is checked against Python's (the row's {@code .out}
 * file). Python's side is {@code bench/python/bench_model_startup.py}. Prints one JSON object.
 *
 * <p>Usage: {@code ModelStartupMain DIR ROW} (DIR as {@link ModelBench}'s).
 */
public final class ModelStartupMain {
  public static void main(String[] a) throws Exception {
    Path dir = Path.of(a[0]);
    ModelBench.Row row = ModelBench.Row.find(dir, a[1]);
    float[] input = ModelBench.floats(dir.resolve(row.name() + ".in"));
    // TensorFlow's own start-up (the library, the eager context), timed apart.
    long t0 = System.nanoTime();
    Ops eager = Ops.create();
    eager.math.add(eager.constant(1f), eager.constant(1f)).asTensor();
    long t1 = System.nanoTime();
    float[] got;
    long t2;
    try (MapFunction f = Function.load(row.model(), "serve")) {
      t2 = System.nanoTime();
      String param = f.concreteFunctions().get(0).functionType().parameters().get(0).name();
      String out = f.concreteFunctions().get(0).outputNames().get(0);
      try (TFloat32 x = TFloat32.tensorOf(Shape.of(row.dims()), DataBuffers.of(input, true, false));
           Outputs o = f.call(Map.of(param, x))) {
        got = ModelBench.floats((TFloat32) o.get(out));
      }
    }
    long t3 = System.nanoTime();
    Instant start = ProcessHandle.current().info().startInstant().orElseThrow();
    double first = Duration.between(start, Instant.now()).toNanos() / 1e6 - (System.nanoTime() - t3) / 1e6;
    double diff = ModelBench.maxAbsDiff(got, ModelBench.floats(dir.resolve(row.name() + ".out")));
    System.out.printf(Locale.ROOT, "{\"row\": \"%s\", \"contender\": \"polyfn\", \"first_ms\": %.1f, \"tf_init_ms\": %.1f, "
        + "\"load_ms\": %.1f, \"first_call_ms\": %.1f, \"max_abs_diff_python\": %.3g}%n",
        row.name(), first, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6, diff);
  }
}
