package dev.polyfn.bench;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Diagnostics;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.TensorSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * Time to first result in a fresh JVM for a function with 10 signatures (x of shape [k, 16], k =
 * 1..10): from the process's start (as the kernel recorded it, so JVM start-up, class loading
 * and TensorFlow's initialization count) until the first call returned, and until all 10 did;
 * also the part spent in {@code main} (TensorFlow's initialization, definition or load, calls).
 *
 * <p>Usage: {@code StartupMain prepare|cold|warm|load DIR}. {@code prepare} traces the 10
 * signatures, filling {@code DIR/cache} (trace cache) and saving {@code DIR/saved} (SavedModel);
 * {@code cold} defines the function and traces each signature; {@code warm} defines it with the
 * trace cache; {@code load} uses {@code Function.load(DIR/saved)}. Prints one JSON object.
 *
 * <p>The object also breaks the time down (ms): {@code jvm_ms} from the process's start to {@code
 * main}; {@code tf_init_ms}, TensorFlow's start-up (its library, the eager context, a first op);
 * {@code polyfn_init_ms}, Polyfn's (its native library loaded and bound); {@code define_ms},
 * {@code Function.define} or {@code Function.load} (for warm start and load: reading and checking
 * the files, and restoring the functions); {@code prepare_ms}, Polyfn's preparation of the 10
 * concrete functions summed ({@link ConcreteFunctionInfo#preparationTime}: tracing and
 * registering for cold, registering the saved definition for warm and load); {@code
 * first_runs_ms}, their first runs summed ({@link ConcreteFunctionInfo#firstRunTime}:
 * TensorFlow's instantiation, Grappler, kernels, the run); {@code calls_ms}, the 10 calls; {@code
 * each_ms}, each concrete function's preparation and first run.
 */
public final class StartupMain {
  static final int SIGNATURES = 10;
  static final int WIDTH = 16;

  /** A small dense layer with a nonlinearity and a reduction: a few ops, like a scoring function. */
  static final MapBody BODY = (tf, in) -> {
    var x = in.input("x", TFloat32.class);
    var w = tf.constant(weights());
    var h = tf.nn.relu(tf.math.add(tf.linalg.matMul(x, w), tf.constant(0.5f)));
    return Map.of("score", tf.math.tanh(tf.sum(h, tf.constant(1))));
  };

  static float[][] weights() {
    float[][] w = new float[WIDTH][WIDTH];
    for (int i = 0; i < WIDTH; i++) {
      for (int j = 0; j < WIDTH; j++) {
        w[i][j] = ((i * 31 + j * 17) % 13 - 6) / 10f;
      }
    }
    return w;
  }

  public static void main(String[] a) throws Exception {
    long mainStart = System.nanoTime();
    Instant mainInstant = Instant.now();
    // Read here, not in the timed part: the process's start as the kernel recorded it.
    Instant start = ProcessHandle.current().info().startInstant().orElseThrow();
    String mode = a[0];
    Path dir = Path.of(a[1]);
    FunctionOptions options = FunctionOptions.defaults().withName("startup");
    if (mode.equals("prepare")) {
      try (MapFunction f = Function.define(BODY, options.withTraceCache(dir.resolve("cache")))) {
        for (int k = 1; k <= SIGNATURES; k++) {
          f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(k, WIDTH))));
        }
        f.save(dir.resolve("saved"));
      }
      return;
    }
    // TensorFlow's own start-up (loading the library, the eager context), the same for every
    // contender: done first, so "after_init_ms" is what defining or loading and the calls cost.
    Ops eager = Ops.create();
    eager.math.add(eager.constant(1f), eager.constant(1f)).asTensor();
    long initDone = System.nanoTime();
    // Polyfn's own start-up, the same for every Java contender: its native library found, loaded
    // and bound (the first use of Polyfn would do it), timed apart from the definition or load.
    Diagnostics.liveConcreteFunctions();
    long polyfnReady = System.nanoTime();
    PolymorphicFunction f = switch (mode) {
      case "cold" -> Function.define(BODY, options);
      case "warm" -> Function.define(BODY, options.withTraceCache(dir.resolve("cache")));
      case "load" -> Function.load(dir.resolve("saved"));
      default -> throw new IllegalArgumentException("mode: expected prepare, cold, warm or load, got " + mode);
    };
    long defined = System.nanoTime();
    double first = 0;
    double checksum = 0;
    try (f) {
      for (int k = 1; k <= SIGNATURES; k++) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(k, WIDTH), d -> d.scalars().forEach(s -> s.setFloat(0.25f)));
             Outputs out = ((MapFunction) f).call(Map.of("x", x))) {
          checksum += out.get("score", TFloat32.class).getFloat(0);
        }
        if (k == 1) {
          first = Duration.between(start, Instant.now()).toNanos() / 1e6;
        }
      }
      long called = System.nanoTime();
      double all = Duration.between(start, Instant.now()).toNanos() / 1e6;
      double inMain = (called - mainStart) / 1e6;
      double afterInit = (called - initDone) / 1e6;
      double prepare = 0;
      double firstRuns = 0;
      StringBuilder each = new StringBuilder();
      for (ConcreteFunctionInfo c : f.concreteFunctions()) {
        double p = c.preparationTime().toNanos() / 1e6;
        double r = c.firstRunTime().map(Duration::toNanos).orElse(0L) / 1e6;
        prepare += p;
        firstRuns += r;
        each.append(each.length() == 0 ? "" : ", ").append(String.format(java.util.Locale.ROOT, "[%.2f, %.2f]", p, r));
      }
      System.out.printf(java.util.Locale.ROOT, "{\"mode\": \"%s\", \"first_ms\": %.1f, \"all_ms\": %.1f, \"in_main_ms\": %.1f,"
          + " \"after_init_ms\": %.1f, \"traces\": %d, \"checksum\": %.6f, \"jvm_ms\": %.1f, \"tf_init_ms\": %.1f,"
          + " \"polyfn_init_ms\": %.1f, \"define_ms\": %.1f, \"prepare_ms\": %.1f, \"first_runs_ms\": %.1f,"
          + " \"calls_ms\": %.1f, \"each_ms\": [%s]}%n",
          mode, first, all, inMain, afterInit, f.traceCount(), checksum,
          Duration.between(start, mainInstant).toNanos() / 1e6, (initDone - mainStart) / 1e6,
          (polyfnReady - initDone) / 1e6, (defined - polyfnReady) / 1e6, prepare, firstRuns, (called - defined) / 1e6,
          each);
    }
  }
}
