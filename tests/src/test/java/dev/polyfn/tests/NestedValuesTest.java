package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Nest;
import dev.polyfn.NestBody;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/** Nested parameters and outputs: lists of maps, maps of lists, to any depth. */
class NestedValuesTest {

  /** Sums every tensor leaf of a nest (scalars of any shape, reduced), plus integer Java leaves. */
  private static Operand<TFloat32> sum(Ops tf, Nest n) {
    if (n.isOperand()) {
      Operand<TFloat32> x = n.operand(TFloat32.class);
      return tf.sum(x, tf.range(tf.constant(0), tf.rank(x), tf.constant(1)));
    }
    if (n.isValue()) {
      return tf.constant((float) n.value(Integer.class));
    }
    Operand<TFloat32> total = tf.constant(0f);
    for (Nest e : n.isList() ? n.elements() : new ArrayList<>(n.entries().values())) {
      total = tf.math.add(total, sum(tf, e));
    }
    return total;
  }

  private static MapFunction summer(FunctionOptions options) {
    return Function.define((tf, in) -> Map.of("s", sum(tf, in.nest("xs"))), options);
  }

  private static float call(MapFunction f, Object xs) {
    try (Outputs out = f.call(Map.of("xs", xs))) {
      return out.get("s", TFloat32.class).getFloat();
    }
  }

  @Test
  void aListOfMapsOfListsIsOneParameterAndTheSameStructureReusesTheTrace() {
    try (MapFunction f = summer(FunctionOptions.defaults());
        TFloat32 a = TFloat32.vectorOf(1, 2);
        TFloat32 b = TFloat32.scalarOf(10);
        TFloat32 c = TFloat32.vectorOf(3, 4);
        TFloat32 d = TFloat32.scalarOf(20)) {
      assertEquals(26f, call(f, List.of(Map.of("k", List.of(a, b)), Map.of("k", List.of(b), "n", 3))), 0f);
      assertEquals(1, f.traceCount());
      assertEquals(50f, call(f, List.of(Map.of("k", List.of(c, d)), Map.of("k", List.of(d), "n", 3))), 0f);
      assertEquals(1, f.traceCount(), "same structure and leaf types: no retrace");
      // A new Java value, a new key set, a new length: each a new signature.
      call(f, List.of(Map.of("k", List.of(c, d)), Map.of("k", List.of(d), "n", 4)));
      call(f, List.of(Map.of("k", List.of(c, d)), Map.of("j", List.of(d), "n", 3)));
      call(f, List.of(Map.of("k", List.of(c, d, d)), Map.of("k", List.of(d), "n", 3)));
      assertEquals(4, f.traceCount());
      assertEquals("(xs: List[Map{'k': List[TensorSpec(FLOAT, [2]), TensorSpec(FLOAT, [])]}, "
          + "Map{'k': List[TensorSpec(FLOAT, [])], 'n': Literal(3)}])",
          f.concreteFunctions().get(0).functionType().toString());
    }
  }

  @Test
  void reduceRetracingGeneralizesLeafByLeafWithinOneStructureAndExplainsTheInnermostDifference() {
    try (MapFunction f = summer(FunctionOptions.defaults().withReduceRetracing(true));
        TFloat32 two = TFloat32.vectorOf(1, 2);
        TFloat32 three = TFloat32.vectorOf(1, 2, 3);
        TFloat32 four = TFloat32.vectorOf(1, 2, 3, 4);
        TFloat32 s = TFloat32.scalarOf(5)) {
      call(f, List.of(Map.of("k", s), Map.of("k", two)));
      assertEquals(11f, call(f, List.of(Map.of("k", s), Map.of("k", three))), 0f);
      assertEquals(2, f.traceCount());
      String reason = f.traceHistory().get(1).reason();
      assertTrue(reason.startsWith("xs[1]['k']: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2])"), reason);
      assertEquals("(xs: List[Map{'k': TensorSpec(FLOAT, [])}, Map{'k': TensorSpec(FLOAT, [-1])}])",
          f.concreteFunctions().get(f.concreteFunctions().size() - 1).functionType().toString());
      assertEquals(15f, call(f, List.of(Map.of("k", s), Map.of("k", four))), 0f);
      assertEquals(2, f.traceCount(), "the generalized trace serves a third length");
    }
  }

  @Test
  void nestedArgumentsNameThePathOfWhatIsWrong() {
    try (MapFunction f = summer(FunctionOptions.defaults()); TFloat32 x = TFloat32.scalarOf(1)) {
      call(f, List.of(Map.of("k", x)));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> call(f, List.of(Map.of("k", x), Map.of("k", TensorSpec.of(TFloat32.class, Shape.scalar())))));
      assertTrue(e.getMessage().startsWith("argument 'xs[1]['k']': got a TensorSpec"), e.getMessage());
      List<Object> withNull = new ArrayList<>();
      withNull.add(x);
      withNull.add(null);
      e = assertThrows(IllegalArgumentException.class, () -> call(f, List.of(withNull)));
      assertTrue(e.getMessage().startsWith("argument 'xs[0][1]': expected a tensor, a Java value or a nested"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> call(f, List.of(Map.of(1, x))));
      assertTrue(e.getMessage().startsWith("argument 'xs[0]': map keys must be strings"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> call(f, x));
      assertTrue(e.getMessage().startsWith("argument 'xs': expected a list, map, record or composite tensor"), e.getMessage());
      TFloat32 closed = TFloat32.scalarOf(2);
      closed.close();
      e = assertThrows(IllegalArgumentException.class, () -> call(f, List.of(Map.of("k", closed))));
      assertEquals("argument 'xs[0]['k']': the tensor is closed", e.getMessage());
      assertEquals(1, f.traceCount(), "nothing failed after the first trace");
    }
  }

  @Test
  void theBodysViewNamesPathsInItsErrors() {
    try (MapFunction f = Function.define((tf, in) -> {
          Nest m = in.nest("m");
          m.get("a").get(0).operand(TInt32.class);
          return Map.of();
        });
        TFloat32 x = TFloat32.scalarOf(1)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("m", Map.of("a", List.of(x)))).close());
      assertEquals("'m['a'][0]' is a tensor of TFloat32, not of TInt32", e.getMessage());
    }
  }

  @Test
  void nestedOutputsComeBackAsTheSameNestOfTensorsClosedAsOne() {
    try (NestFunction f = Function.defineNested((tf, in) -> {
          Nest xs = in.nest("xs");
          Operand<TFloat32> a = xs.get(0).operand(TFloat32.class);
          Operand<TFloat32> b = xs.get(1).get("k").operand(TFloat32.class);
          return Map.of("sum", tf.math.add(a, b), "pair", List.of(tf.math.neg(a), Map.of("twice", tf.math.mul(b, tf.constant(2f)))));
        });
        TFloat32 a = TFloat32.scalarOf(1);
        TFloat32 b = TFloat32.scalarOf(4)) {
      NestOutputs out = f.call(Map.of("xs", List.of(a, Map.of("k", b))));
      Map<String, Object> v = out.value();
      assertEquals(List.of("pair", "sum"), new ArrayList<>(v.keySet()));
      assertEquals(5f, ((TFloat32) v.get("sum")).getFloat(), 0f);
      List<?> pair = (List<?>) v.get("pair");
      assertEquals(-1f, ((TFloat32) pair.get(0)).getFloat(), 0f);
      assertEquals(8f, ((TFloat32) ((Map<?, ?>) pair.get(1)).get("twice")).getFloat(), 0f);
      assertEquals(3, out.tensors().size());
      out.close();
      assertThrows(IllegalStateException.class, out::value);
      // A second call reuses the trace and its parsed output structure.
      try (NestOutputs again = f.call(Map.of("xs", List.of(b, Map.of("k", b))))) {
        assertEquals(8f, again.<Map<String, TFloat32>>value().get("sum").getFloat(), 0f);
      }
      assertEquals(1, f.traceCount());
    }
  }

  /**
   * A nested function saves and loads back as a nested function (it was written as a unary
   * function with no input class, which no load could read), by itself or with its body.
   */
  @Test
  void aNestedFunctionSavesAndLoadsBackNested(@TempDir Path dir) {
    NestBody body = (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("pair", List.of(tf.math.neg(x), Map.of("sq", tf.math.square(x))));
    };
    try (NestFunction f = Function.defineNested(body); TFloat32 x = TFloat32.vectorOf(2f, 3f)) {
      f.call(Map.of("x", x)).close();
      f.save(dir);
      try (NestFunction bodyless = (NestFunction) Function.load(dir);
           NestFunction warm = Function.loadNested(dir, body);
           TFloat32 y = TFloat32.vectorOf(5f, 7f)) {
        for (NestFunction g : List.of(bodyless, warm)) {
          try (NestOutputs out = g.call(Map.of("x", y))) {
            List<?> pair = (List<?>) out.<Map<String, Object>>value().get("pair");
            assertEquals(-7f, ((TFloat32) pair.get(0)).getFloat(1), 0f);
            assertEquals(49f, ((TFloat32) ((Map<?, ?>) pair.get(1)).get("sq")).getFloat(1), 0f);
          }
          assertEquals(1, g.traceCount(), "the saved concrete function, not a trace");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir, (tf, in) -> Map.of()));
        assertTrue(e.getMessage().contains("is a nest function, not a map function"), e.getMessage());
      }
    }
  }

  @Test
  void outputsThatAreNotOperandsNameTheirPath() {
    try (NestFunction f = Function.defineNested((tf, in) -> List.of(in.input("x", TFloat32.class), Map.of("k", 3)));
        TFloat32 x = TFloat32.scalarOf(1)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(x).close());
      assertTrue(e.getMessage().startsWith("output $[1]['k'] of '"), e.getMessage());
      assertTrue(e.getMessage().contains("is a java.lang.Integer"), e.getMessage());
    }
  }

  @Test
  void aNestOfAHundredLeavesTracesOnceAndRuns() {
    try (MapFunction f = summer(FunctionOptions.defaults())) {
      List<TFloat32> owned = new ArrayList<>();
      List<Object> xs = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        List<TFloat32> row = new ArrayList<>();
        for (int j = 0; j < 10; j++) {
          TFloat32 t = TFloat32.scalarOf(i * 10 + j);
          owned.add(t);
          row.add(t);
        }
        xs.add(Map.of("row", row));
      }
      try {
        for (int k = 0; k < 3; k++) {
          assertEquals(4950f, call(f, xs), 0f);
        }
        assertEquals(1, f.traceCount());
      } finally {
        owned.forEach(TFloat32::close);
      }
    }
  }

  @Test
  void aNestedCallTakesANestOfOperandsInsideAnotherBody() {
    try (MapFunction inner = summer(FunctionOptions.defaults());
        MapFunction outer = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<?> s = inner.apply(tf, Map.of("xs", List.of(Map.of("k", x), Map.of("k", x, "n", 2)))).get("s");
          return Map.of("y", s);
        });
        TFloat32 x = TFloat32.scalarOf(3);
        Outputs out = outer.call(Map.of("x", x))) {
      assertEquals(8f, out.get("y", TFloat32.class).getFloat(), 0f);
      assertEquals(1, inner.traceCount());
    }
  }

  @Test
  void exampleInputsOfANestParameterCoalesceLeafByLeafIntoOneTrace() {
    TensorSpec two = TensorSpec.of(TFloat32.class, Shape.of(2));
    TensorSpec three = TensorSpec.of(TFloat32.class, Shape.of(3));
    // The examples share one structure (a list of one map with key k): its leaf coalesces to [-1].
    try (MapFunction f = summer(FunctionOptions.defaults().withExampleInputs(List.of(
            Map.of("xs", List.of(Map.of("k", two))), Map.of("xs", List.of(Map.of("k", three))))));
        TFloat32 x = TFloat32.vectorOf(1, 2, 3, 4, 5)) {
      assertEquals(1, f.traceCount());
      assertEquals(15f, call(f, List.of(Map.of("k", x))), 0f);
      assertEquals(1, f.traceCount(), "a new length is served by the coalesced trace");
    }
  }

  @Test
  void exampleInputsOfANestWithDifferentStructuresTraceOncePerStructureAndSaySo() {
    TensorSpec two = TensorSpec.of(TFloat32.class, Shape.of(2));
    TensorSpec three = TensorSpec.of(TFloat32.class, Shape.of(3));
    try (MapFunction f = summer(FunctionOptions.defaults().withExampleInputs(List.of(
            Map.of("xs", List.of(Map.of("k", two))), Map.of("xs", List.of(Map.of("k", three), Map.of("k", two))),
            Map.of("xs", List.of(Map.of("k", three))))))) {
      assertEquals(2, f.traceCount(), "one trace per list length");
      String report = String.join("\n", f.inferenceReport());
      assertTrue(report.contains("xs: lists of lengths 1, 2 are traced one per length"), report);
    }
  }
}
