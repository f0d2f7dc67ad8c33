package dev.polyfn.bench;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.SessionFunction;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.types.TFloat32;

/**
 * Per-call time of a real Keras model (written by {@code bench/python/make_bench_models.py})
 * through Polyfn's {@code Function.load(dir, "serve")} and through TensorFlow Java's {@code
 * SavedModelBundle} (its {@code serving_default} signature), in one JVM: both load the model,
 * their results are compared with each other and with Python's (max abs diff) before anything is
 * timed, both warm up, then they alternate for {@code rounds} rounds (the order flips every
 * round), each round one sample per contender: a batch of calls lasting about {@code sampleMs}
 * (at least one call), whose time per call is the sample. Reported: the median sample of each,
 * and the median of the rounds' ratios. Prints one JSON object.
 *
 * <p>Usage: {@code ModelBench DIR ROW [rounds] [sampleMs] [warmupMs]}: DIR holds {@code rows.txt},
 * the SavedModels and each row's {@code .in} and {@code .out} files.
 */
public final class ModelBench {
  /**
   * Calls a warm-up makes at least, however long they take: past Polyfn's session-path promotion
   * (64) and its trial (16), so that no timed round holds them (at batch 32 a time bound alone
   * ended MobileNetV2's warm-up after about 35 calls).
   */
  static final int WARMUP_CALLS = 96;

  /** One row of rows.txt: its name, model directory and input dims. */
  record Row(String name, Path model, long[] dims) {
    static Row find(Path dir, String name) throws IOException {
      for (String line : Files.readAllLines(dir.resolve("rows.txt"))) {
        String[] p = line.trim().split(" ");
        if (p.length == 3 && p[0].equals(name)) {
          return new Row(name, dir.resolve(p[1]), Arrays.stream(p[2].split(",")).mapToLong(Long::parseLong).toArray());
        }
      }
      throw new IllegalArgumentException(dir.resolve("rows.txt") + ": no row " + name);
    }

    int batch() {
      return (int) dims[0];
    }
  }

  /** A contender: one call on the input, whose output is closed; {@link #result} keeps one. */
  interface Contender extends AutoCloseable {
    void call();

    float[] result();

    @Override
    void close();
  }

  public static void main(String[] a) throws Exception {
    Path dir = Path.of(a[0]);
    Row row = Row.find(dir, a[1]);
    int rounds = a.length > 2 ? Integer.parseInt(a[2]) : 15;
    long sampleNanos = (a.length > 3 ? Long.parseLong(a[3]) : 200) * 1_000_000L;
    long warmupNanos = (a.length > 4 ? Long.parseLong(a[4]) : 4000) * 1_000_000L;
    float[] python = floats(dir.resolve(row.name() + ".out"));
    try (TFloat32 x = TFloat32.tensorOf(Shape.of(row.dims()), DataBuffers.of(floats(dir.resolve(row.name() + ".in")), true, false));
         Contender polyfn = polyfn(row.model(), x);
         Contender bundle = bundle(row.model(), x)) {
      float[] p = polyfn.result();
      float[] b = bundle.result();
      double dPB = maxAbsDiff(p, b);
      double dPPy = maxAbsDiff(p, python);
      double dBPy = maxAbsDiff(b, python);
      // Python's TensorFlow is 2.21, TensorFlow Java's 2.18: equal up to rounding, relative to the values.
      double tolerance = 1e-4 * Math.max(1, maxAbs(python));
      if (!(dPB <= tolerance && dPPy <= tolerance)) {
        throw new IllegalStateException(String.format(Locale.ROOT, "%s: results differ (max abs diff Polyfn-SavedModelBundle "
            + "%.3g, Polyfn-Python %.3g, SavedModelBundle-Python %.3g; tolerance %.3g)", row.name(), dPB, dPPy, dBPy, tolerance));
      }
      int polyfnWarmup = warmUp(polyfn, warmupNanos);
      int bundleWarmup = warmUp(bundle, warmupNanos);
      double[] ps = new double[rounds];
      double[] bs = new double[rounds];
      double[] ratios = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        if (r % 2 == 0) {
          ps[r] = sample(polyfn, sampleNanos);
          bs[r] = sample(bundle, sampleNanos);
        } else {
          bs[r] = sample(bundle, sampleNanos);
          ps[r] = sample(polyfn, sampleNanos);
        }
        ratios[r] = ps[r] / bs[r];
      }
      System.out.printf(Locale.ROOT, "{\"row\": \"%s\", \"batch\": %d, \"polyfn_us\": %.1f, \"bundle_us\": %.1f, "
              + "\"polyfn_over_bundle\": %.3f, \"rounds\": %d, \"sample_ms\": %d, \"warmup_ms\": %d, \"warmup_calls\": [%d, %d], "
              + "\"max_abs_diff\": {\"polyfn_bundle\": %.3g, \"polyfn_python\": %.3g, \"bundle_python\": %.3g}, "
              + "\"polyfn_samples_us\": %s, \"bundle_samples_us\": %s}%n",
          row.name(), row.batch(), median(ps), median(bs), median(ratios), rounds, sampleNanos / 1_000_000,
          warmupNanos / 1_000_000, polyfnWarmup, bundleWarmup, dPB, dPPy, dBPy, json(ps), json(bs));
    }
  }

  /** Polyfn: {@code Function.load(model, "serve")} called on {@code x} by its one parameter. */
  static Contender polyfn(Path model, TFloat32 x) {
    MapFunction f = Function.load(model, "serve");
    String param = f.concreteFunctions().get(0).functionType().parameters().get(0).name();
    String out = f.concreteFunctions().get(0).outputNames().get(0);
    Map<String, Tensor> args = Map.of(param, x);
    return new Contender() {
      @Override
      public void call() {
        f.call(args).close();
      }

      @Override
      public float[] result() {
        try (Outputs o = f.call(args)) {
          return floats((TFloat32) o.get(out));
        }
      }

      @Override
      public void close() {
        f.close();
      }
    };
  }

  /** TensorFlow Java: {@code SavedModelBundle.load(model, "serve")}, its {@code serving_default} signature. */
  static Contender bundle(Path model, TFloat32 x) {
    SavedModelBundle b = SavedModelBundle.load(model.toString(), "serve");
    SessionFunction serving = b.function("serving_default");
    String in = serving.signature().inputNames().iterator().next();
    String out = serving.signature().outputNames().iterator().next();
    Map<String, Tensor> args = Map.of(in, x);
    return new Contender() {
      @Override
      public void call() {
        serving.call(args).close();
      }

      @Override
      public float[] result() {
        try (Result r = serving.call(args)) {
          return floats((TFloat32) r.get(out).orElseThrow());
        }
      }

      @Override
      public void close() {
        b.close();
      }
    };
  }

  /** Calls until both {@link #WARMUP_CALLS} calls were made and {@code nanos} have passed; the count. */
  static int warmUp(Contender c, long nanos) {
    long t0 = System.nanoTime();
    int calls = 0;
    while (calls < WARMUP_CALLS || System.nanoTime() - t0 < nanos) {
      c.call();
      calls++;
    }
    return calls;
  }

  /** Microseconds per call over a batch of calls lasting about {@code nanos} (at least one). */
  static double sample(Contender c, long nanos) {
    long t0 = System.nanoTime();
    long t;
    int calls = 0;
    do {
      c.call();
      calls++;
      t = System.nanoTime() - t0;
    } while (t < nanos);
    return t / 1e3 / calls;
  }

  static float[] floats(Path file) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    float[] f = new float[b.remaining() / 4];
    b.asFloatBuffer().get(f);
    return f;
  }

  static float[] floats(TFloat32 t) {
    float[] f = new float[(int) t.size()];
    t.asRawTensor().data().asFloats().read(f);
    return f;
  }

  static double maxAbsDiff(float[] x, float[] y) {
    if (x.length != y.length) {
      return Double.POSITIVE_INFINITY;
    }
    double d = 0;
    for (int i = 0; i < x.length; i++) {
      d = Math.max(d, Math.abs((double) x[i] - y[i]));
    }
    return d;
  }

  static double maxAbs(float[] x) {
    double m = 0;
    for (float v : x) {
      m = Math.max(m, Math.abs(v));
    }
    return m;
  }

  static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  static String json(double[] xs) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < xs.length; i++) {
      b.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.1f", xs[i]));
    }
    return b.append(']').toString();
  }
}
