package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.internal.Wire;
import dev.polyfn.Outputs;
import dev.polyfn.SignatureSuggestion;
import dev.polyfn.TensorSpec;
import dev.polyfn.TraceEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TFloating;
import org.tensorflow.types.family.TNumber;

/** Signatures inferred from example inputs and from recorded calls (profiles). */
class SignatureInferenceTest {

  /** y = sum of x; x declared without a shape, so each shape would trace on its own. */
  private static MapFunction rowSum(FunctionOptions options) {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("s", tf.sum(x, tf.constant(new int[] {0, 1})));
    }, options);
  }

  private static Map<String, ?> spec(long... dims) {
    return Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(dims)));
  }

  private static float call(MapFunction f, long rows, long cols) {
    try (TFloat32 x = TFloat32.tensorOf(Shape.of(rows, cols), d -> d.scalars().forEach(s -> s.setFloat(1f)));
         Outputs out = f.call(Map.of("x", x))) {
      return out.get("s", TFloat32.class).getFloat();
    }
  }

  private static List<String> traced(MapFunction f) {
    return f.concreteFunctions().stream().map(c -> c.functionType().toString()).collect(Collectors.toList());
  }

  @Test
  void examplesCoalesceIntoOneTraceAheadOfTheFirstCall() {
    try (MapFunction f = rowSum(FunctionOptions.defaults().withExampleInputs(spec(2, 3), spec(5, 3), spec(1, 3)))) {
      assertEquals(1, f.traceCount(), "traced when defined");
      assertEquals(List.of("(x: TensorSpec(FLOAT, [-1, 3]))"), traced(f));
      assertEquals(List.of("x: TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples)"), f.inferenceReport());
      for (int rows = 1; rows <= 20; rows++) {
        assertEquals(rows * 3f, call(f, rows, 3));
      }
      assertEquals(1, f.traceCount(), "every batch size hits the inferred trace");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> call(f, 2, 4));
      assertEquals("argument 'x': expected TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples), got TensorSpec(FLOAT, [2, 4])",
          e.getMessage());
      assertEquals(6f, call(f, 2, 3), "the function stays usable");
    }
  }

  @Test
  void exampleTensorsAreTypedNotRunAndDtypesCoalesceToTheirFamily() {
    try (TFloat32 a = TFloat32.tensorOf(Shape.of(4));
         TFloat64 b = TFloat64.tensorOf(Shape.of(7));
         MapFunction f = Function.define((tf, in) -> {
           Operand<TNumber> x = in.input("x", TNumber.class);
           return Map.of("n", tf.size(x));
         }, FunctionOptions.defaults().withExampleInputs(Map.of("x", a), Map.of("x", b)))) {
      assertEquals(List.of("x: TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1]) (inferred from 2 examples)"),
          f.inferenceReport());
      assertEquals("(x: TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1]))", f.functionType().toString());
      assertEquals(2, f.traceCount(), "one trace per example dtype, each of any length");
      try (TInt32 i = TInt32.vectorOf(1, 2)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", i)));
        assertTrue(e.getMessage().contains("(inferred from 2 examples)"), e.getMessage());
      }
      try (TFloat16 h = TFloat16.vectorOf(1f, 2f, 3f); Outputs out = f.call(Map.of("x", h))) {
        assertEquals(3, out.get("n", TInt32.class).getInt());
      }
      List<TraceEvent> history = f.traceHistory();
      String why = history.get(history.size() - 1).reason();
      assertTrue(why.endsWith("; x is constrained to TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1]) (inferred from 2 examples)"),
          why);
    }
  }

  @Test
  void aDeclarationThatConflictsWithTheExamplesFailsNamingBoth() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.define((tf, in) -> {
      Operand<TFloating> x = in.input("x", TFloating.class, Shape.of(-1, 4));
      return Map.of("y", x);
    }, FunctionOptions.defaults().withExampleInputs(spec(2, 3), spec(5, 3))));
    assertEquals("parameter 'x': the declared TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1, 4]) conflicts with "
        + "TensorSpec(FLOAT, [-1, 3]) (inferred from 2 examples)", e.getMessage());
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> FunctionOptions.defaults().withExampleInputs(List.of()));
    assertTrue(none.getMessage().contains("at least one example"), none.getMessage());
  }

  @Test
  void javaValuesAndListLengthsKeepOneTraceEachAndTheReportSaysSo() {
    try (MapFunction f = Function.define((tf, in) -> {
      List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
      int k = in.javaInput("k", Integer.class);
      return Map.of("y", tf.math.mul(tf.math.addN(xs), tf.constant((float) k)));
    }, FunctionOptions.defaults().withExampleInputs(
        Map.of("xs", List.of(TensorSpec.of(TFloat32.class, Shape.of(2))), "k", 1),
        Map.of("xs", List.of(TensorSpec.of(TFloat32.class, Shape.of(3))), "k", 2)))) {
      assertEquals(List.of("xs: List[TensorSpec(FLOAT, [-1])] (inferred from 2 examples)",
          "k: Java values 1, 2 are traced one per value; pass k as a tensor to share one trace"), f.inferenceReport());
      assertEquals(2, f.traceCount(), "one trace per Java value, each with a generic list element");
      try (TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f, 4f); Outputs out = f.call(Map.of("xs", List.of(x), "k", 2))) {
        assertEquals(8f, out.get("y", TFloat32.class).getFloat(3));
      }
      assertEquals(2, f.traceCount());
    }
  }

  @Test
  void javaValuesAreListedOncePerDistinctValueQuotedAsJavaWritesThem() {
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      String k = in.javaInput("k", String.class);
      return Map.of("y", tf.math.mul(tf.sum(x, tf.constant(0)), tf.constant((float) k.length())));
    }, FunctionOptions.defaults().withExampleInputs(
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(2)), "k", "a"),
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3)), "k", "b, c"),
        Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(4)), "k", "a")))) {
      assertEquals("k: Java values \"a\", \"b, c\" are traced one per value; pass k as a tensor to share one trace",
          f.inferenceReport().get(1));
      for (int n = 1; n <= 4; n++) {
        for (String k : List.of("a", "b, c")) {
          try (TFloat32 x = TFloat32.tensorOf(Shape.of(n)); Outputs out = f.call(Map.of("x", x, "k", k))) {
            assertNotNull(out);
          }
        }
      }
      // Eight recorded call types, two Java values: each value once, in the order of the calls.
      assertEquals(List.of("k: Java values \"a\", \"b, c\" are traced one per value; pass k as a tensor to share one trace"),
          f.suggestedSignature().notes());
    }
  }

  @Test
  void aProfileOfRealCallsSuggestsTheSignatureAndALaterRunTracesItAtStart(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("rowsum.json");
    try (MapFunction f = rowSum(FunctionOptions.defaults().withName("rowsum"))) {
      for (int i = 0; i < 60; i++) {
        call(f, 1 + i % 6, 3);
      }
      assertEquals(6, f.traceCount());
      SignatureSuggestion s = f.suggestedSignature();
      assertNotNull(s);
      assertEquals(6, s.tracesBefore());
      assertEquals(1, s.tracesAfter());
      assertEquals(List.of("Operand<TFloat32> x = in.input(\"x\", TFloat32.class, Shape.of(-1, 3));"), s.javaLines());
      assertEquals(List.of("val x = inputs.input<TFloat32>(\"x\", Shape.of(-1, 3))"), s.kotlinLines());
      assertTrue(s.calls() >= 59, "every call but the very first is recorded: " + s.calls());
      f.writeSignatureProfile(file);
    }
    String json = Files.readString(file);
    assertTrue(json.contains("\"format\": \"polyfn-signature-profile\""), json);
    assertTrue(json.contains("\"x\": {\"dtype\": \"FLOAT\", \"shape\": [4, 3]}"), json);
    try (MapFunction later = rowSum(FunctionOptions.defaults().withSignatureProfile(file))) {
      assertEquals(1, later.traceCount(), "traced at definition");
      assertTrue(later.inferenceReport().get(0).startsWith("x: TensorSpec(FLOAT, [-1, 3]) (inferred from a profile of "),
          later.inferenceReport().toString());
      for (int rows = 1; rows <= 9; rows++) {
        assertEquals(rows * 3f, call(later, rows, 3));
      }
      assertEquals(1, later.traceCount(), "the first production calls never trace");
    }
  }

  @Test
  void aBadProfileFailsNamingTheFile(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, "{\"format\": \"something-else\"}");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> rowSum(FunctionOptions.defaults().withSignatureProfile(bad)));
    assertTrue(e.getMessage().startsWith("signature profile " + bad + ": not a Polyfn signature profile"), e.getMessage());
    Path missing = dir.resolve("missing.json");
    e = assertThrows(IllegalArgumentException.class, () -> rowSum(FunctionOptions.defaults().withSignatureProfile(missing)));
    assertTrue(e.getMessage().startsWith("signature profile " + missing + ": cannot be read"), e.getMessage());
    // Nested deeper than any profile is: refused with the file named, not a StackOverflowError.
    Path deep = dir.resolve("deep.json");
    Files.writeString(deep, "[".repeat(100_000));
    e = assertThrows(IllegalArgumentException.class, () -> rowSum(FunctionOptions.defaults().withSignatureProfile(deep)));
    assertTrue(e.getMessage().startsWith("signature profile " + deep + ": "), e.getMessage());
    assertTrue(e.getMessage().contains("nested deeper than " + Wire.JSON_MAX_DEPTH + " levels"), e.getMessage());
  }
}
