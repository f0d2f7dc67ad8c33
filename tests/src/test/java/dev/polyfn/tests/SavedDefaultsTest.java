package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;

/**
 * Parameters with default tensors save as Python saves a {@code tf.function}'s default argument
 * values: the serving signature takes every input, the defaults are kept ({@code polyfn.json},
 * and the FunctionSpec of Python's object graph), so both {@code Function.load} and Python's
 * restored function take a call that omits the defaulted argument. And the reverse: a Python
 * {@code tf.function} with a literal or tensor default loads with its default usable from Java.
 */
class SavedDefaultsTest {
  /** y = x * factor + 1, factor optional. */
  private static MapFunction scaled(TFloat32 factor) {
    MapBody body = (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> s = in.input("factor", TFloat32.class, factor);
      return Map.of("y", tf.math.add(tf.math.mul(x, s), tf.constant(1f)));
    };
    return Function.define(body, FunctionOptions.defaults().withName("scaled"));
  }

  @Test
  void defaultTensorsSaveAndBothLoadersUseThem(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("scaled");
    PythonCases cases = new PythonCases();
    String sig = "scaled__float32_2__float32_scalar";
    float[] byDefault;
    float[] byThree;
    try (TFloat32 two = TFloat32.scalarOf(2f);
         TFloat32 three = TFloat32.scalarOf(3f);
         TFloat32 x = TFloat32.vectorOf(1f, -4f);
         MapFunction f = scaled(two)) {
      // Python's m.scaled(x=x) omits the factor: its FunctionSpec's default applies.
      cases.record(f, sig, Map.of("x", x, "factor", two), Map.of("x", x), Map.of("x", x));
      cases.record(f, sig, Map.of("x", x, "factor", three), Map.of("x", x, "factor", three));
      byDefault = SavedModelTest.call(f, Map.of("x", x), "y");
      byThree = SavedModelTest.call(f, Map.of("x", x, "factor", three), "y");
      f.save(saved);
      String json = Files.readString(saved.resolve("assets.extra/polyfn.json"));
      assertTrue(json.contains("\"default\":\""), json);
      try (MapFunction loaded = (MapFunction) Function.load(saved)) {
        assertArrayEquals(byDefault, SavedModelTest.call(loaded, Map.of("x", x), "y"));
        assertArrayEquals(byThree, SavedModelTest.call(loaded, Map.of("x", x, "factor", three), "y"));
        assertEquals(1, loaded.traceCount());
        assertTrue(loaded.functionType().parameters().get(1).optional(), loaded.functionType().toString());
      }
    }
    assertArrayEquals(new float[] {3f, -7f}, byDefault);
    assertTrue(cases.check(saved, List.of(sig), "scaled").contains("OK 2"));
  }

  /**
   * A default that claims far more than it carries (one float for a shape of 4e9, one 1 MiB
   * string for 1e8 elements) is refused before TensorFlow parses it: TensorFlow fills the whole
   * shape, which can take the loading JVM's process down. Loaded in a child JVM, whose memory is
   * bounded; each refusal must be Polyfn's check, not TensorFlow's failed allocation.
   */
  @Test
  void aDefaultClaimingGigabytesIsRefusedBeforeTensorFlowReadsIt(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("scaled");
    try (TFloat32 two = TFloat32.scalarOf(2f); TFloat32 x = TFloat32.vectorOf(1f); MapFunction f = scaled(two)) {
      f.call(Map.of("x", x)).close();
      f.save(saved);
    }
    String json = Files.readString(saved.resolve("assets.extra/polyfn.json"), StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("\"default\":\"([^\"]+)\"").matcher(json);
    assertTrue(m.find(), json);
    List<TensorProto> hostile = List.of(
        TensorProto.newBuilder().setDtype(DataType.DT_FLOAT).setTensorShape(dims(4_000_000_000L)).addFloatVal(1f).build(),
        TensorProto.newBuilder().setDtype(DataType.DT_STRING).setTensorShape(dims(100_000_000L))
            .addStringVal(com.google.protobuf.ByteString.copyFrom(new byte[1 << 20])).build(),
        TensorProto.newBuilder().setDtype(DataType.DT_FLOAT).setTensorShape(dims(-5)).addFloatVal(1f).build(),
        TensorProto.newBuilder().setDtype(DataType.DT_FLOAT).setTensorShape(dims(2))
            .setTensorContent(com.google.protobuf.ByteString.copyFrom(new byte[3])).build());
    List<String> dirs = new java.util.ArrayList<>();
    for (int i = 0; i < hostile.size(); i++) {
      Path copy = dir.resolve("hostile-" + i);
      FileFuzzer.copy(saved, copy);
      Files.writeString(copy.resolve("assets.extra/polyfn.json"), json.replace(m.group(1),
          Base64.getEncoder().encodeToString(hostile.get(i).toByteArray())), StandardCharsets.UTF_8);
      dirs.add(copy.toString());
    }
    dirs.add(saved.toString());
    ChildJvm.Outcome out = ChildJvm.outcome(120, 8L << 30, List.of(), LoadEach.class, dirs.toArray(new String[0]));
    assertEquals(0, out.exit(), out.output());
    // Refused by Polyfn's own check, before any allocation: under the child's memory limit
    // TensorFlow's failed allocation also refused, but without one it fills 16 GB.
    List<String> why = List.of("would take over 16777216 bytes", "would take over 16777216 bytes",
        "with dimension 0 of size -5", "elements with 3 bytes of content, not 8");
    for (int i = 0; i < hostile.size(); i++) {
      String line = out.output().lines().filter(l -> l.startsWith("hostile-")).toList().get(i);
      assertTrue(line.startsWith("hostile-" + i + ": refused: ") && line.contains("parameters[1].default")
          && line.contains(why.get(i)), out.output());
    }
    assertTrue(out.output().contains("scaled: loaded"), "a good load after the refusals: " + out.output());
  }

  private static TensorShapeProto dims(long... sizes) {
    TensorShapeProto.Builder b = TensorShapeProto.newBuilder();
    for (long n : sizes) {
      b.addDim(TensorShapeProto.Dim.newBuilder().setSize(n));
    }
    return b.build();
  }

  /** Child JVM: loads each SavedModel given, printing "<folder>: loaded" or "<folder>: refused: <why>". */
  static final class LoadEach {
    public static void main(String[] dirs) {
      for (String d : dirs) {
        Path p = Path.of(d);
        try (var f = Function.load(p)) {
          System.out.println(p.getFileName() + ": loaded");
        } catch (IllegalArgumentException e) {
          System.out.println(p.getFileName() + ": refused: " + e.getMessage());
        }
      }
    }
  }

  /**
   * A defaulted parameter before one without a default: Python has no such signature, so Python's
   * FunctionSpec keeps no default (a misaligned one would make {@code x} optional there) and Python
   * passes both; Java may still omit it.
   */
  @Test
  void aDefaultBeforeARequiredParameterIsRequiredInPythonOnly(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("lead");
    PythonCases cases = new PythonCases();
    String sig = "lead__float32_scalar__float32_2";
    try (TFloat32 two = TFloat32.scalarOf(2f);
         TFloat32 x = TFloat32.vectorOf(1f, -4f);
         MapFunction f = Function.define((tf, in) -> {
           Operand<TFloat32> s = in.input("factor", TFloat32.class, two);
           return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), s));
         }, FunctionOptions.defaults().withName("lead"))) {
      cases.record(f, sig, Map.of("factor", two, "x", x), Map.of("x", x), Map.of("factor", two, "x", x));
      f.save(saved);
      try (MapFunction loaded = (MapFunction) Function.load(saved)) {
        assertArrayEquals(new float[] {2f, -8f}, SavedModelTest.call(loaded, Map.of("x", x), "y"));
      }
    }
    assertTrue(cases.check(saved, List.of(sig), "lead").contains("OK 1"));
    var graph = SavedModel.parseFrom(Files.readAllBytes(saved.resolve("saved_model.pb"))).getMetaGraphs(0).getObjectGraphDef();
    var spec = graph.getNodesList().stream().filter(n -> n.hasFunction()).findFirst().orElseThrow()
        .getFunction().getFunctionSpec().getFullargspec().getNamedTupleValue().getValuesList();
    assertTrue(spec.stream().anyMatch(p -> p.getKey().equals("defaults") && p.getValue().hasNoneValue()), spec.toString());
  }

  /** A default the caller closed cannot be saved: refused naming the parameter, nothing written. */
  @Test
  void aClosedDefaultIsRefusedAtSave(@TempDir Path dir) {
    TFloat32 two = TFloat32.scalarOf(2f);
    try (TFloat32 x = TFloat32.vectorOf(1f); MapFunction f = scaled(two)) {
      f.call(Map.of("x", x)).close();
      two.close();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir.resolve("closed")));
      assertTrue(e.getMessage().contains("the default tensor of parameter 'factor' is closed"), e.getMessage());
      assertTrue(Files.notExists(dir.resolve("closed")));
    }
  }

  /** A default that does not fit its parameter, or is no TensorProto, is refused at load naming it. */
  @Test
  void aDamagedDefaultIsRefusedAtLoadNamingIt(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("scaled");
    try (TFloat32 two = TFloat32.scalarOf(2f); TFloat32 x = TFloat32.vectorOf(1f); MapFunction f = scaled(two)) {
      f.call(Map.of("x", x)).close();
      f.save(saved);
    }
    Path meta = saved.resolve("assets.extra/polyfn.json");
    String json = Files.readString(meta, StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("\"default\":\"([^\"]+)\"").matcher(json);
    assertTrue(m.find(), json);
    String int64 = Base64.getEncoder().encodeToString(TensorProto.newBuilder().setDtype(DataType.DT_INT64)
        .setTensorShape(TensorShapeProto.getDefaultInstance()).addInt64Val(2).build().toByteArray());
    Files.writeString(meta, json.replace(m.group(1), int64), StandardCharsets.UTF_8);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved).close());
    assertTrue(e.getMessage().startsWith(meta + ": ") && e.getMessage().contains("parameters[1].default")
        && e.getMessage().contains("DT_INT64"), e.getMessage());
    Files.writeString(meta, json.replace(m.group(1), "not*base64"), StandardCharsets.UTF_8);
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved).close());
    assertTrue(e.getMessage().contains("parameters[1].default: not a base64 TensorProto"), e.getMessage());
    Files.writeString(meta, json.replace("\"default\":\"" + m.group(1) + "\"", "\"default\":null"), StandardCharsets.UTF_8);
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved).close());
    assertTrue(e.getMessage().contains("parameters[1].default: missing for an optional tensor"), e.getMessage());
  }

  /**
   * Python's {@code scale(x, factor=2.0)} (a literal: a Java {@code Double} parameter with
   * default 2.0) and {@code scale(x, factor=tf.constant(2.0))} (a tensor default) load with the
   * default usable: a Java call without {@code factor} returns what Python's restored function does.
   */
  @Test
  void pythonDefaultsAreUsableFromJava(@TempDir Path dir) throws Exception {
    Map<String, float[]> expected = PythonScripts.namedValues(PythonScripts.run("make_defaults.py", 300, dir.toString()));
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f);
         TFloat32 three = TFloat32.scalarOf(3f);
         MapFunction literal = (MapFunction) Function.load(dir.resolve("literal"));
         MapFunction tensor = (MapFunction) Function.load(dir.resolve("tensor"))) {
      assertArrayEquals(expected.get("literal_default"), SavedModelTest.call(literal, Map.of("x", x), "y"));
      assertArrayEquals(expected.get("literal_three"), SavedModelTest.call(literal, Map.of("x", x, "factor", 3.0), "y"));
      assertArrayEquals(expected.get("tensor_default"), SavedModelTest.call(tensor, Map.of("x", x), "y"));
      assertArrayEquals(expected.get("tensor_three"), SavedModelTest.call(tensor, Map.of("x", x, "factor", three), "y"));
      assertTrue(tensor.functionType().parameters().get(1).optional(), tensor.functionType().toString());
      // The default is a float32 scalar: a float64 factor is another type, which Python did not trace either.
      try (TFloat64 d = TFloat64.scalarOf(3.0)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> tensor.call(Map.of("x", x, "factor", d)).close());
        assertTrue(e.getMessage().contains("matches no saved signature"), e.getMessage());
      }
      // Saved again: the literal default and the literal 3.0 are Python's again (m.scale(x) and
      // m.scale(x, factor=3.0)), and Function.load of that save takes them as before.
      Path again = dir.resolve("literal-again");
      literal.save(again);
      PythonCases cases = new PythonCases();
      List<String> signatures = List.of("scale__float32_N", "scale__float32_N_2");
      int byDefault = literal.concreteFunctions().get(0).functionType().toString().contains("2.0") ? 0 : 1;
      cases.record(literal, signatures.get(byDefault), Map.of("x", x), Map.of("x", x));
      cases.record(literal, signatures.get(1 - byDefault), Map.of("x", x), Map.of("x", x, "factor", 3.0));
      String out = cases.check(again, signatures, "scale");
      assertTrue(out.contains("OK 2"), out);
      try (MapFunction loaded = (MapFunction) Function.load(again)) {
        assertArrayEquals(expected.get("literal_default"), SavedModelTest.call(loaded, Map.of("x", x), "y"));
        assertArrayEquals(expected.get("literal_three"), SavedModelTest.call(loaded, Map.of("x", x, "factor", 3.0), "y"));
      }
    }
  }
}
