package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.SaveOptions;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * Saving to a SavedModel and loading it back: TensorFlow Java's own loader runs every signature,
 * {@code Function.load} restores the saved dispatch (no trace, saved variable values), a miss is
 * refused with the saved signatures, and bad directories fail cleanly.
 */
class SavedModelTest {
  static final AtomicInteger BODY_RUNS = new AtomicInteger();

  /** y = x * w + 1 and the sum of x: two outputs, one captured variable. */
  static MapFunction scale(Variable<TFloat32> w) {
    return Function.define((tf, in) -> {
      BODY_RUNS.incrementAndGet();
      var x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.add(tf.math.mul(x, w.read(tf)), tf.constant(1f)), "total", tf.sum(tf.reshape(x, tf.constant(new int[] {-1})), tf.constant(0)));
    }, dev.polyfn.FunctionOptions.defaults().withName("scale"));
  }

  static final MapBody COMBO = (tf, in) -> {
    BODY_RUNS.incrementAndGet();
    var xs = in.list("xs", TFloat32.class);
    var feats = in.map("feats", TFloat32.class);
    return Map.of("z", tf.math.add(tf.math.add(xs.get(0), xs.get(xs.size() - 1)), tf.math.mul(feats.get("a"), feats.get("b"))));
  };

  static float[] floats(Tensor t) {
    TFloat32 f = (TFloat32) t;
    float[] out = new float[(int) f.shape().size()];
    f.copyTo(org.tensorflow.ndarray.buffer.DataBuffers.of(out, false, false));
    return out;
  }

  static float[] call(PolymorphicFunction f, Map<String, ?> args, String output) {
    try (Outputs out = ((MapFunction) f).call(args)) {
      return floats(out.get(output));
    }
  }

  @Test
  void savedModelRunsInTensorFlowJavaAndLoadsWithItsDispatch(@TempDir Path dir) throws Exception {
    float[] y3;
    float[] y23;
    String type;
    Set<String> signatures;
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f));
         MapFunction f = scale(w);
         TFloat32 x3 = TFloat32.vectorOf(1f, 1f, 2f);
         TFloat32 x23 = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f, 3f}, {4f, 5f, 6f}}))) {
      y3 = call(f, Map.of("x", x3), "y");
      y23 = call(f, Map.of("x", x23), "y");
      f.save(dir);
      type = f.functionType().toString();
      w.assign(TFloat32.vectorOf(0f, 0f, 0f)); // after the save: the saved values stay [1, 2, 3]
      signatures = new TreeSet<>(List.of("scale__float32_3", "scale__float32_2_3"));
    }
    assertArrayEquals(new float[] {2f, 3f, 7f}, y3);
    assertTrue(Files.isRegularFile(dir.resolve("assets.extra/polyfn.json")));

    // TensorFlow Java's loader: every signature is there and computes the same numbers.
    try (SavedModelBundle bundle = SavedModelBundle.load(dir.toString(), "serve")) {
      assertEquals(signatures, new TreeSet<>(bundle.metaGraphDef().getSignatureDefMap().keySet()));
      try (TFloat32 x3 = TFloat32.vectorOf(1f, 1f, 2f); Result r = bundle.function("scale__float32_3").call(Map.of("x", x3))) {
        assertArrayEquals(y3, floats(r.get("y").orElseThrow()));
        assertArrayEquals(new float[] {4f}, floats(r.get("total").orElseThrow()));
      }
      try (TFloat32 x23 = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f, 3f}, {4f, 5f, 6f}}));
           Result r = bundle.function("scale__float32_2_3").call(Map.of("x", x23))) {
        assertArrayEquals(y23, floats(r.get("y").orElseThrow()));
      }
    }

    // Function.load: the saved dispatch, no trace, the saved variable values.
    int runs = BODY_RUNS.get();
    try (PolymorphicFunction g = Function.load(dir)) {
      assertTrue(g instanceof MapFunction);
      assertEquals(type, g.functionType().toString());
      assertEquals(2, g.concreteFunctions().size());
      try (TFloat32 x3 = TFloat32.vectorOf(1f, 1f, 2f)) {
        assertArrayEquals(y3, call(g, Map.of("x", x3), "y"));
      }
      assertEquals(2, g.traceCount()); // the saved concrete functions; the call traced nothing
      assertEquals(runs, BODY_RUNS.get());
      try (TFloat32 x5 = TFloat32.vectorOf(1f, 2f, 3f, 4f, 5f)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> call(g, Map.of("x", x5), "y"));
        assertTrue(e.getMessage().contains("matches no saved signature of 'scale'"), e.getMessage());
        assertTrue(e.getMessage().contains("closest mismatch: x:"), e.getMessage());
        assertTrue(e.getMessage().contains("TensorSpec(FLOAT, [2, 3])"), e.getMessage());
      }
      assertEquals(2, g.traceCount());
    }
  }

  @Test
  void listsMapsServingVersionsRenamesAndWarmStart(@TempDir Path dir) throws Exception {
    float[] z;
    try (MapFunction f = Function.define(COMBO, dev.polyfn.FunctionOptions.defaults().withName("combo"));
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f)) {
      z = call(f, Map.of("xs", List.of(a, b, a), "feats", Map.of("a", a, "b", b)), "z");
      f.save(dir, SaveOptions.defaults().withServingVersion(7)
          .withSignatureNames(Map.of("combo__float32_2__float32_2__float32_2__float32_2__float32_2", "serving_default")));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.save(dir.resolve("other"), SaveOptions.defaults().withSignatureNames(Map.of("nope", "x"))));
      assertTrue(e.getMessage().contains("no signature is named 'nope'"), e.getMessage());
    }
    assertArrayEquals(new float[] {5f, 12f}, z);
    assertTrue(Files.isRegularFile(dir.resolve("7/saved_model.pb")));
    try (SavedModelBundle bundle = SavedModelBundle.load(dir.resolve("7").toString(), "serve");
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f);
         Result r = bundle.function("serving_default").call(Map.of("xs_0", a, "xs_1", b, "xs_2", a, "feats_a", a, "feats_b", b))) {
      assertArrayEquals(z, floats(r.get("z").orElseThrow()));
    }
    // Warm start: the saved signature runs without a trace, a new one traces with the body.
    int runs = BODY_RUNS.get();
    try (MapFunction g = Function.load(dir, COMBO);
         TFloat32 a = TFloat32.vectorOf(1f, 2f);
         TFloat32 b = TFloat32.vectorOf(3f, 4f)) {
      assertArrayEquals(z, call(g, Map.of("xs", List.of(a, b, a), "feats", Map.of("a", a, "b", b)), "z"));
      assertEquals(1, g.traceCount());
      assertEquals(runs, BODY_RUNS.get());
      assertArrayEquals(new float[] {5f, 10f}, call(g, Map.of("xs", List.of(b, a), "feats", Map.of("a", a, "b", a)), "z"));
      assertEquals(2, g.traceCount());
      assertEquals(runs + 1, BODY_RUNS.get());
    }
  }

  @Test
  void whatCannotBeSavedFailsClearly(@TempDir Path dir) {
    try (MapFunction f = Function.define(COMBO)) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir));
      assertTrue(e.getMessage().contains("no concrete function"), e.getMessage());
    }
    try (TFloat32 c = TFloat32.scalarOf(2f);
         MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), in.capture("c", () -> c))));
         TFloat32 x = TFloat32.scalarOf(1f)) {
      f.call(Map.of("x", x)).close();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir));
      assertTrue(e.getMessage().contains("captures 'c' by reference"), e.getMessage());
    }
    // A Variable parameter (a Java-value one saves: SavedJavaValuesTest).
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TInt32.class),
            tf.readVariableOp(in.variableInput("n", TInt32.class), TInt32.class))));
         TInt32 x = TInt32.scalarOf(1);
         TInt32 three = TInt32.scalarOf(3);
         Variable<TInt32> n = Variable.create(three)) {
      f.call(Map.of("x", x, "n", n)).close();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir));
      assertTrue(e.getMessage().contains("parameter 'n' takes a Variable"), e.getMessage());
    }
  }

  @Test
  void corruptTruncatedOrForeignDirectoriesFailNamingTheFile(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("m");
    try (MapFunction f = Function.define(COMBO, dev.polyfn.FunctionOptions.defaults().withName("combo"));
         TFloat32 a = TFloat32.vectorOf(1f)) {
      f.call(Map.of("xs", List.of(a), "feats", Map.of("a", a, "b", a))).close();
      f.save(saved);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("none")));
    assertTrue(e.getMessage().contains("saved_model.pb: missing"), e.getMessage());

    Path meta = saved.resolve("assets.extra/polyfn.json");
    String good = Files.readString(meta);
    Files.writeString(meta, good.substring(0, good.length() / 2));
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().contains("polyfn.json: malformed JSON"), e.getMessage());
    Files.writeString(meta, good.replace("\"version\":1", "\"version\":99"));
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().contains("version: expected 1, got 99"), e.getMessage());
    Files.writeString(meta, good.replace("\"shape\":[1]", "\"shape\":[-7]"));
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().contains("polyfn.json"), e.getMessage());
    Files.writeString(meta, good);

    Path pb = saved.resolve("saved_model.pb");
    byte[] bytes = Files.readAllBytes(pb);
    Files.write(pb, java.util.Arrays.copyOf(bytes, bytes.length / 3));
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().contains("saved_model.pb"), e.getMessage());
    Files.write(pb, bytes);

    Files.delete(meta);
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().contains("polyfn.json: missing"), e.getMessage());
    Files.writeString(meta, good);
    try (PolymorphicFunction ok = Function.load(saved)) {
      assertEquals(1, ok.concreteFunctions().size());
    }
    assertThrows(IllegalArgumentException.class, () -> Function.loadList(saved, (tf, in) -> List.of()));
  }

  /**
   * The loader reads saved_model.pb's FunctionDefs and variable nodes from the wire format without
   * parsing the whole SavedModel: a FunctionDef whose signature disagrees with the saved type, or
   * a variable node of another op, must still be refused, naming the file.
   */
  @Test
  void signaturesAndVariableNodesAreCheckedFromTheWireFormat(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("m");
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f)); MapFunction f = scale(w);
         TFloat32 x = TFloat32.vectorOf(1f, 1f, 2f)) {
      f.call(Map.of("x", x)).close();
      f.save(saved);
    }
    Path pb = saved.resolve("saved_model.pb");
    byte[] good = Files.readAllBytes(pb);
    var model = org.tensorflow.proto.SavedModel.parseFrom(good).toBuilder();
    var library = model.getMetaGraphsBuilder(0).getGraphDefBuilder().getLibraryBuilder();
    var sig = library.getFunctionBuilder(0).getSignatureBuilder();
    sig.addInputArg(sig.getInputArg(0).toBuilder().setName("extra"));
    Files.write(pb, model.build().toByteArray());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().contains("saved_model.pb") && e.getMessage().contains("takes 3 inputs"), e.getMessage());

    model = org.tensorflow.proto.SavedModel.parseFrom(good).toBuilder();
    var graph = model.getMetaGraphsBuilder(0).getGraphDefBuilder();
    for (var n : graph.getNodeBuilderList()) {
      if (n.getName().equals("variables/0")) {
        n.setOp("Const");
      }
    }
    Files.write(pb, model.build().toByteArray());
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().contains("no variable node variables/0"), e.getMessage());

    Files.write(pb, good);
    try (PolymorphicFunction ok = Function.load(saved)) {
      assertEquals(1, ok.concreteFunctions().size());
    }
  }

  /** Child JVM: args = "save" or "load", dir. Prints the results and counts. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f))) {
      PolymorphicFunction f = args[0].equals("save") ? scale(w) : Function.load(dir);
      try (f; TFloat32 x3 = TFloat32.vectorOf(1f, 1f, 2f); TFloat32 x2 = TFloat32.tensorOf(StdArrays.ndCopyOf(new float[][] {{1f, 2f, 3f}, {4f, 5f, 6f}}))) {
        System.out.println("result " + java.util.Arrays.toString(call(f, Map.of("x", x3), "y")));
        System.out.println("result " + java.util.Arrays.toString(call(f, Map.of("x", x2), "total")));
        System.out.println("type " + f.functionType());
        if (args[0].equals("save")) {
          f.save(dir);
        }
        System.out.println("traceCount " + f.traceCount());
      }
    }
  }

  @Test
  void roundTripInAFreshJvm(@TempDir Path dir) throws Exception {
    String saved = ChildJvm.run(SavedModelTest.class, "save", dir.toString());
    String loaded = ChildJvm.run(SavedModelTest.class, "load", dir.toString());
    assertEquals(lines(saved, "result"), lines(loaded, "result"));
    assertEquals(lines(saved, "type"), lines(loaded, "type"));
    assertTrue(saved.contains("traceCount 2"), saved);
    assertTrue(loaded.contains("traceCount 2"), loaded); // the saved ones: loading and calling traced nothing
  }

  static String lines(String out, String prefix) {
    return String.join("\n", out.lines().filter(l -> l.startsWith(prefix)).toList());
  }
}
