package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.FunctionDefLibrary;
import org.tensorflow.proto.GraphDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * A function with cond, whileLoop (with a cond inside) and mapFn travels with its branch
 * functions: saved and loaded in a fresh JVM, loaded by Python's tf.saved_model.load, and
 * restored from a trace cache, it gives the numbers it gave when traced, without tracing.
 */
class ControlFlowSaveTest {
  private static final AtomicInteger BODY_RUNS = new AtomicInteger();

  @SuppressWarnings("unchecked")
  private static Operand<TFloat32> f32(Operand<?> o) {
    return (Operand<TFloat32>) o;
  }

  /** y: (sum(x) > 0 ? 2x : -x), then three steps of (even step ? +1 : *2); m: x squared element-wise. */
  @SuppressWarnings("unchecked")
  static final MapBody BODY = (tf, in) -> {
    BODY_RUNS.incrementAndGet();
    Operand<TFloat32> x = in.input("x", TFloat32.class);
    Operand<TFloat32> c = Flow.cond(tf, tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)),
        () -> tf.math.mul(x, tf.constant(2f)), () -> tf.math.neg(x));
    List<Operand<?>> loop = Flow.whileLoop(tf, List.of(tf.constant(0), c),
        v -> tf.math.less((Operand<TInt32>) v.get(0), tf.constant(3)),
        v -> {
          Operand<TInt32> i = (Operand<TInt32>) v.get(0);
          Operand<TFloat32> acc = f32(v.get(1));
          Operand<TFloat32> next = Flow.cond(tf, tf.math.equal(tf.math.mod(i, tf.constant(2)), tf.constant(0)),
              () -> tf.math.add(acc, tf.constant(1f)), () -> tf.math.mul(acc, tf.constant(2f)));
          return List.of(tf.math.add(i, tf.constant(1)), next);
        });
    Operand<TFloat32> m = Flow.mapFn(tf, x, e -> tf.math.square(e));
    return Map.of("y", f32(loop.get(1)), "m", m);
  };

  static final float[][] INPUTS = {{1f, 2f, 3f}, {-1f, -4f}, {0.5f, -3f}};

  /** Child JVM: args = mode (save, load, cache; xla-save, xla-cache with XLA), directory. Prints results and counts. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    FunctionOptions options = FunctionOptions.defaults().withName("flow").withJitCompile(args[0].startsWith("xla-"));
    PolymorphicFunction f = switch (args[0]) {
      case "load" -> Function.load(dir);
      case "cache", "xla-cache" -> Function.define(BODY, options.withTraceCache(dir, "v1"));
      default -> Function.define(BODY, options);
    };
    try (f) {
      for (float[] values : INPUTS) {
        try (TFloat32 x = TFloat32.vectorOf(values); Outputs out = ((MapFunction) f).call(Map.of("x", x))) {
          System.out.println("result y " + Arrays.toString(SavedModelTest.floats(out.get("y")))
              + " m " + Arrays.toString(SavedModelTest.floats(out.get("m"))));
        }
      }
      if (args[0].endsWith("save")) {
        f.save(dir);
      }
      System.out.println("traceCount " + f.traceCount());
      System.out.println("bodyRuns " + BODY_RUNS.get());
    }
  }

  private static String results(String out) {
    return out.lines().filter(l -> l.startsWith("result")).collect(Collectors.joining("\n"));
  }

  /** What the body computes, worked out by hand for the first input: guards the test itself. */
  private static final String FIRST = "result y [7.0, 11.0, 15.0] m [1.0, 4.0, 9.0]";

  @Test
  void savedControlFlowLoadsInAFreshJvmWithoutTracing(@TempDir Path dir) throws Exception {
    String saved = ChildJvm.run(ControlFlowSaveTest.class, "save", dir.toString());
    assertTrue(saved.contains(FIRST), saved);
    assertTrue(saved.contains("traceCount 2"), saved); // shapes [3] and [2]
    String loaded = ChildJvm.run(ControlFlowSaveTest.class, "load", dir.toString());
    assertEquals(results(saved), results(loaded));
    assertTrue(loaded.contains("traceCount 2"), loaded); // the saved ones
    assertTrue(loaded.contains("bodyRuns 0"), loaded);
  }

  @Test
  void pythonLoadsSavedControlFlowWithTheSameNumbers(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("flow");
    List<String> cases = new ArrayList<>();
    try (MapFunction f = Function.define(BODY, FunctionOptions.defaults().withName("flow"))) {
      for (float[] values : INPUTS) {
        try (TFloat32 x = TFloat32.vectorOf(values); Outputs out = f.call(Map.of("x", x))) {
          cases.add("{\"signature\": \"flow__float32_" + values.length + "\", \"inputs\": {\"x\": " + json(x)
              + "}, \"outputs\": {\"y\": " + json((TFloat32) out.get("y")) + ", \"m\": " + json((TFloat32) out.get("m"))
              + "}}");
        }
      }
      f.save(saved);
    }
    Path spec = dir.resolve("cases.json");
    Files.writeString(spec, "{\"signatures\": [\"flow__float32_3\", \"flow__float32_2\"], \"cases\": ["
        + String.join(",\n", cases) + "]}");
    String out = PythonScripts.checkSaved(saved, spec);
    assertTrue(out.contains("OK 3"), out);
  }

  private static String json(TFloat32 t) {
    float[] v = SavedModelTest.floats(t);
    List<String> values = new ArrayList<>();
    for (float f : v) {
      values.add(Float.toString(f));
    }
    return "{\"dtype\": \"float32\", \"shape\": [" + t.shape().size(0) + "], \"values\": [" + String.join(",", values) + "]}";
  }

  @Test
  void aTraceCacheRestoresControlFlowWithoutTracing(@TempDir Path dir) throws Exception {
    String first = ChildJvm.run(ControlFlowSaveTest.class, "cache", dir.toString());
    assertTrue(first.contains(FIRST), first);
    assertTrue(first.contains("traceCount 2"), first);
    String second = ChildJvm.run(ControlFlowSaveTest.class, "cache", dir.toString());
    assertEquals(results(first), results(second));
    assertTrue(second.contains("traceCount 0"), second);
    assertTrue(second.contains("bodyRuns 0"), second);
  }

  /** Compiled with XLA, the function gives the same numbers traced, restored from a trace cache, and saved then loaded. */
  @Test
  void withXlaControlFlowIsCachedSavedAndLoaded(@TempDir Path dir) throws Exception {
    Path cache = dir.resolve("cache");
    String first = ChildJvm.run(ControlFlowSaveTest.class, "xla-cache", cache.toString());
    assertTrue(first.contains(FIRST), first);
    assertTrue(first.contains("traceCount 2"), first);
    String second = ChildJvm.run(ControlFlowSaveTest.class, "xla-cache", cache.toString());
    assertEquals(results(first), results(second));
    assertTrue(second.contains("traceCount 0"), second);
    Path saved = dir.resolve("saved");
    String save = ChildJvm.run(ControlFlowSaveTest.class, "xla-save", saved.toString());
    assertEquals(results(first), results(save));
    String loaded = ChildJvm.run(ControlFlowSaveTest.class, "load", saved.toString());
    assertEquals(results(first), results(loaded));
    assertTrue(loaded.contains("traceCount 2"), loaded);
  }

  @Test
  void aCacheEntryMissingABranchFunctionIsIgnoredWithAWarning(@TempDir Path dir) throws Exception {
    String first = ChildJvm.run(ControlFlowSaveTest.class, "cache", dir.toString());
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = list.filter(p -> p.toString().endsWith(".polyfn-trace")).sorted().toList();
    }
    assertEquals(2, files.size(), first);
    dropLibrary(files.get(0));
    String second = ChildJvm.run(ControlFlowSaveTest.class, "cache", dir.toString());
    assertTrue(second.contains("ignoring trace cache entry " + files.get(0) + ": function polyfn_flow_"), second);
    assertTrue(second.contains("which the entry does not hold"), second);
    assertTrue(second.contains("traceCount 1"), second); // the damaged entry's signature traced again
    assertEquals(results(first), results(second));
  }

  /**
   * Rewrites a trace cache entry with an empty function library and a matching checksum (so only
   * the missing branch functions are wrong). Layout: magic, format, SHA-256 of the payload, its
   * length, the payload, whose last field is the library (length, bytes).
   */
  private static void dropLibrary(Path file) throws Exception {
    byte[] bytes = Files.readAllBytes(file);
    int header = "polyfn-trace-cache\n".length() + 4;
    byte[] payload = Arrays.copyOfRange(bytes, header + 32 + 4, bytes.length);
    int at = -1;
    for (int i = payload.length - 4; i >= 0 && at < 0; i--) {
      int n = ByteBuffer.wrap(payload, i, 4).getInt();
      if (n == payload.length - i - 4 && n > 0
          && !FunctionDefLibrary.parseFrom(Arrays.copyOfRange(payload, i + 4, payload.length)).getFunctionList().isEmpty()) {
        at = i;
      }
    }
    assertTrue(at > 0, "no library found in " + file);
    byte[] cut = ByteBuffer.allocate(at + 4).put(payload, 0, at).putInt(0).array();
    ByteBuffer out = ByteBuffer.allocate(header + 32 + 4 + cut.length);
    out.put(bytes, 0, header).put(MessageDigest.getInstance("SHA-256").digest(cut)).putInt(cut.length).put(cut);
    Files.write(file, out.array());
  }

  @Test
  void tensorFlowJavaRunsSavedControlFlowAndAMissingBranchIsRefusedClearly(@TempDir Path dir) throws Exception {
    float[] y;
    float[] m;
    try (MapFunction f = Function.define(BODY, FunctionOptions.defaults().withName("flow"));
         TFloat32 x = TFloat32.vectorOf(-1f, 2f);
         Outputs out = f.call(Map.of("x", x))) {
      y = SavedModelTest.floats(out.get("y"));
      m = SavedModelTest.floats(out.get("m"));
      f.save(dir);
    }
    // x = [-1, 2]: sum 1 > 0, so 2x = [-2, 4]; +1, *2, +1: [-1, 11]; m = x squared
    assertArrayEquals(new float[] {-1f, 11f}, y);
    assertArrayEquals(new float[] {1f, 4f}, m);
    try (SavedModelBundle bundle = SavedModelBundle.load(dir.toString(), "serve");
         TFloat32 x = TFloat32.vectorOf(-1f, 2f);
         Result r = bundle.function("flow__float32_2").call(Map.of("x", x))) {
      assertArrayEquals(y, SavedModelTest.floats(r.get("y").orElseThrow()));
      assertArrayEquals(m, SavedModelTest.floats(r.get("m").orElseThrow()));
    }

    Path pb = dir.resolve("saved_model.pb");
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(pb));
    MetaGraphDef meta = model.getMetaGraphs(0);
    GraphDef graph = meta.getGraphDef();
    List<FunctionDef> functions = graph.getLibrary().getFunctionList();
    assertTrue(functions.size() >= 6, "the branch functions are saved: " + functions.size());
    FunctionDef branch = functions.stream().filter(d -> d.getSignature().getName().contains("cond_else")).findFirst()
        .orElseThrow();
    List<FunctionDef> kept = functions.stream().filter(d -> d != branch).toList();
    GraphDef without = graph.toBuilder().setLibrary(graph.getLibrary().toBuilder().clearFunction().addAllFunction(kept))
        .build();
    Files.write(pb, model.toBuilder().setMetaGraphs(0, meta.toBuilder().setGraphDef(without)).build().toByteArray());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir));
    assertTrue(e.getMessage().startsWith(pb + ": signature flow__float32_2: function "), e.getMessage());
    assertTrue(e.getMessage().contains("refers to function " + branch.getSignature().getName()
        + ", which the graph's library does not hold"), e.getMessage());

    // A branch function that is there but broken (an operation TensorFlow does not know) is
    // refused at load, like a broken main definition: checked against the op registry before
    // TensorFlow (whose optimizer can abort on a malformed node) sees it.
    FunctionDef.Builder broken = branch.toBuilder();
    broken.getNodeDefBuilder(0).setOp("NoSuchPolyfnOp");
    List<FunctionDef> damaged = functions.stream().map(d -> d == branch ? broken.build() : d).toList();
    GraphDef withBroken = graph.toBuilder()
        .setLibrary(graph.getLibrary().toBuilder().clearFunction().addAllFunction(damaged)).build();
    Files.write(pb, model.toBuilder().setMetaGraphs(0, meta.toBuilder().setGraphDef(withBroken)).build().toByteArray());
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> Function.load(dir));
    assertTrue(refused.getMessage().contains("not a usable function library"), refused.getMessage());
    assertTrue(refused.getMessage().contains("op \"NoSuchPolyfnOp\" is not registered"), refused.getMessage());
  }
}
