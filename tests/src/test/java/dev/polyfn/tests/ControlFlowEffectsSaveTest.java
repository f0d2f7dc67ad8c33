package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.Variable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TString;

/**
 * Effects in control flow survive what a function goes through after its trace: saved and loaded
 * by Function.load in a fresh JVM, by TensorFlow Java and by Python, and restored from a trace
 * cache, the writes in taken branches and loop bodies still run (and untaken ones still do not).
 */
class ControlFlowEffectsSaveTest {
  /**
   * A loop whose even iterations add i to v and odd ones add 1 to w, then a cond that adds x to v
   * and reads it back when x > 0. Outputs: y and both variables, read after the control flow.
   */
  static MapBody body(Variable<TFloat32> v, Variable<TFloat32> w) {
    return (tf, in) -> {
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Flow.whileLoop(tf, List.of(tf.constant(0)), vars -> tf.math.less(i(vars.get(0)), n), vars -> {
        Operand<TInt32> it = i(vars.get(0));
        return List.of(Flow.cond(tf, tf.math.equal(tf.math.mod(it, tf.constant(2)), tf.constant(0)), () -> {
          ControlFlowEffectsTest.assignAdd(tf, v, tf.dtypes.cast(it, TFloat32.class));
          return tf.math.add(it, tf.constant(1));
        }, () -> {
          ControlFlowEffectsTest.assignAdd(tf, w, tf.constant(1f));
          return tf.math.add(it, tf.constant(1));
        }));
      });
      Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)), () -> {
        v.assign(tf, tf.math.add(v.read(tf), x));
        return tf.math.mul(v.read(tf), tf.constant(10f));
      }, () -> tf.math.neg(x));
      return Map.of("y", y, "v", v.read(tf), "w", w.read(tf));
    };
  }

  /** The calls (n, x) and, worked out by hand from v = w = 0, the outputs (y, v, w) after each. */
  static final int[] N = {5, 2, 3};
  static final float[] X = {1f, -3f, 2f};
  static final float[][] EXPECTED = {{70f, 7f, 2f}, {3f, 7f, 3f}, {110f, 11f, 4f}};

  static float[] call(PolymorphicFunction f, int k) {
    try (TInt32 n = TInt32.scalarOf(N[k]); TFloat32 x = TFloat32.scalarOf(X[k]);
         Outputs out = ((MapFunction) f).call(Map.of("n", n, "x", x))) {
      return new float[] {out.get("y", TFloat32.class).getFloat(), out.get("v", TFloat32.class).getFloat(),
          out.get("w", TFloat32.class).getFloat()};
    }
  }

  /** Child JVM: args = mode (save, load, cache), directory[, output directory]. Prints results. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    if (args[0].equals("cache")) {
      cache(dir, Path.of(args[2]));
      return;
    }
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(0f));
         Variable<TFloat32> w = Variable.create(TFloat32.scalarOf(0f));
         PolymorphicFunction f = args[0].equals("load") ? Function.load(dir)
             : Function.define(body(v, w), FunctionOptions.defaults().withName("effects"))) {
      for (int k = 0; k < N.length; k++) {
        System.out.println("result " + java.util.Arrays.toString(call(f, k)));
      }
      if (args[0].equals("save")) {
        v.assign(TFloat32.scalarOf(0f)); // saved as at the start, so a loaded copy repeats the calls
        w.assign(TFloat32.scalarOf(0f));
        f.save(dir);
      }
      System.out.println("traceCount " + f.traceCount());
    }
  }

  private static String results(String out) {
    return out.lines().filter(l -> l.startsWith("result")).collect(Collectors.joining("\n"));
  }

  @Test
  void savedEffectsRunInAFreshJvmAfterFunctionLoad(@TempDir Path dir) throws Exception {
    String saved = ChildJvm.run(ControlFlowEffectsSaveTest.class, "save", dir.toString());
    assertTrue(saved.contains("result [70.0, 7.0, 2.0]\nresult [3.0, 7.0, 3.0]\nresult [110.0, 11.0, 4.0]"), saved);
    String loaded = ChildJvm.run(ControlFlowEffectsSaveTest.class, "load", dir.toString());
    assertEquals(results(saved), results(loaded));
    assertTrue(loaded.contains("traceCount 1"), loaded); // the saved concrete function, no new trace
  }

  @Test
  void tensorFlowJavaAndPythonRunTheSavedEffects(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("effects");
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(0f));
         Variable<TFloat32> w = Variable.create(TFloat32.scalarOf(0f));
         MapFunction f = Function.define(body(v, w), FunctionOptions.defaults().withName("effects"))) {
      for (int k = 0; k < N.length; k++) {
        assertArrayEquals(EXPECTED[k], call(f, k));
      }
      v.assign(TFloat32.scalarOf(0f));
      w.assign(TFloat32.scalarOf(0f));
      f.save(saved);
    }
    String signature;
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve")) {
      signature = bundle.metaGraphDef().getSignatureDefMap().keySet().iterator().next();
      for (int k = 0; k < N.length; k++) {
        try (TInt32 n = TInt32.scalarOf(N[k]); TFloat32 x = TFloat32.scalarOf(X[k]);
             Result r = bundle.function(signature).call(Map.of("n", n, "x", x))) {
          float[] got = {((TFloat32) r.get("y").orElseThrow()).getFloat(), ((TFloat32) r.get("v").orElseThrow()).getFloat(),
              ((TFloat32) r.get("w").orElseThrow()).getFloat()};
          assertArrayEquals(EXPECTED[k], got, "TensorFlow Java, call " + k);
        }
      }
    }
    List<String> cases = new ArrayList<>();
    for (int k = 0; k < N.length; k++) {
      cases.add("{\"signature\": \"" + signature + "\", \"inputs\": {\"n\": {\"dtype\": \"int32\", \"shape\": [], "
          + "\"values\": [" + N[k] + "]}, \"x\": {\"dtype\": \"float32\", \"shape\": [], \"values\": [" + X[k] + "]}}, "
          + "\"outputs\": {\"y\": " + scalar(EXPECTED[k][0]) + ", \"v\": " + scalar(EXPECTED[k][1]) + ", \"w\": "
          + scalar(EXPECTED[k][2]) + "}}");
    }
    Path spec = dir.resolve("cases.json");
    Files.writeString(spec, "{\"signatures\": [\"" + signature + "\"], \"cases\": [" + String.join(",\n", cases) + "]}");
    String python = System.getProperty("polyfn.python", "python3");
    Process p = new ProcessBuilder(python, Path.of("python", "check_saved.py").toString(), saved.toString(),
        spec.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("OK 3"), out);
  }

  private static String scalar(float f) {
    return "{\"shape\": [], \"values\": [" + f + "]}";
  }

  /**
   * Writes files as effects (a trace cache takes no variables): "then" or "else" by the sign of x,
   * and "loop<i>" for each of n iterations, under the directory given as a string tensor.
   */
  static final MapBody FILES = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class);
    Operand<TInt32> n = in.input("n", TInt32.class);
    Operand<TString> dir = in.input("dir", TString.class);
    Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)), () -> {
      tf.io.writeFile(tf.strings.join(List.of(dir, tf.constant("/then"))), tf.constant("t"));
      return x;
    }, () -> {
      tf.io.writeFile(tf.strings.join(List.of(dir, tf.constant("/else"))), tf.constant("e"));
      return tf.math.neg(x);
    });
    Flow.whileLoop(tf, List.of(tf.constant(0)), v -> tf.math.less(i(v.get(0)), n), v -> {
      tf.io.writeFile(tf.strings.join(List.of(dir, tf.constant("/loop"), tf.dtypes.asString(v.get(0)))),
          tf.constant("l"));
      return List.of(tf.math.add(i(v.get(0)), tf.constant(1)));
    });
    return Map.of("y", y);
  };

  private static void cache(Path cacheDir, Path out) throws Exception {
    try (MapFunction f = Function.define(FILES, FunctionOptions.defaults().withName("files")
        .withTraceCache(cacheDir, "v1"))) {
      float[] xs = {1f, -1f};
      int[] ns = {3, 1};
      for (int k = 0; k < xs.length; k++) {
        Path target = out.resolve("call" + k);
        Files.createDirectories(target);
        try (TFloat32 x = TFloat32.scalarOf(xs[k]); TInt32 n = TInt32.scalarOf(ns[k]);
             TString d = TString.scalarOf(target.toString());
             Outputs o = f.call(Map.of("x", x, "n", n, "dir", d))) {
          try (Stream<Path> files = Files.list(target)) {
            System.out.println("result y " + o.get("y", TFloat32.class).getFloat() + " files "
                + files.map(p -> p.getFileName().toString()).sorted().toList());
          }
        }
      }
      System.out.println("traceCount " + f.traceCount());
    }
  }

  @Test
  void aTraceCacheRestoresEffectsInControlFlow(@TempDir Path dir) throws Exception {
    Path cacheDir = dir.resolve("cache");
    String first = ChildJvm.run(ControlFlowEffectsSaveTest.class, "cache", cacheDir.toString(),
        dir.resolve("first").toString());
    String expected = "result y 1.0 files [loop0, loop1, loop2, then]\nresult y 1.0 files [else, loop0]";
    assertEquals(expected, results(first), first);
    assertTrue(first.contains("traceCount 1"), first);
    String second = ChildJvm.run(ControlFlowEffectsSaveTest.class, "cache", cacheDir.toString(),
        dir.resolve("second").toString());
    assertEquals(expected, results(second), second);
    assertTrue(second.contains("traceCount 0"), second); // restored from the cache, not traced
  }
}
