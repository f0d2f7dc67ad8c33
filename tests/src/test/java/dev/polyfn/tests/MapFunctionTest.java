package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TNumber;

/** Defining and calling map functions with tensors: results, tracing and introspection. */
class MapFunctionTest {

  private static MapFunction addTwo(AtomicInteger bodyRuns) {
    return Function.define((tf, in) -> {
      bodyRuns.incrementAndGet();
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.add(x, tf.constant(2f)));
    });
  }

  @Test
  void addsTwoToAScalar() {
    try (MapFunction f = addTwo(new AtomicInteger());
        TFloat32 x = TFloat32.scalarOf(40f);
        Outputs out = f.call(Map.of("x", x))) {
      assertEquals(42f, out.get("y", TFloat32.class).getFloat(), 0f);
      assertEquals(List.of("y"), out.names());
    }
  }

  @Test
  void sameSignatureReusesTheTraceAndTheBodyRunsOnlyWhileTracing() {
    AtomicInteger bodyRuns = new AtomicInteger();
    try (MapFunction f = addTwo(bodyRuns)) {
      for (int i = 0; i < 5; i++) {
        try (TFloat32 x = TFloat32.vectorOf(i, 2 * i); Outputs out = f.call(Map.of("x", x))) {
          TFloat32 y = out.get("y", TFloat32.class);
          assertEquals(i + 2f, y.getFloat(0), 0f);
          assertEquals(2 * i + 2f, y.getFloat(1), 0f);
        }
      }
      assertEquals(1, f.traceCount());
      assertEquals(1, bodyRuns.get());
    }
  }

  @Test
  void newShapeRetracesAndOldShapesStayCached() {
    AtomicInteger bodyRuns = new AtomicInteger();
    try (MapFunction f = addTwo(bodyRuns);
        TFloat32 s = TFloat32.scalarOf(1f);
        TFloat32 v2 = TFloat32.vectorOf(1f, 2f);
        TFloat32 v3 = TFloat32.vectorOf(1f, 2f, 3f);
        TFloat32 m = TFloat32.tensorOf(Shape.of(2, 3))) {
      for (TFloat32 x : List.of(s, v2, v3, m, s, v2, v3, m)) {
        try (Outputs out = f.call(Map.of("x", x))) {
          assertEquals(x.shape(), out.get("y").shape());
        }
      }
      assertEquals(4, f.traceCount());
      assertEquals(4, bodyRuns.get());
      List<String> traced = f.concreteFunctions().stream()
          .map(c -> c.functionType().toString()).collect(java.util.stream.Collectors.toList());
      assertEquals(List.of("(x: TensorSpec(FLOAT, []))", "(x: TensorSpec(FLOAT, [2]))",
          "(x: TensorSpec(FLOAT, [3]))", "(x: TensorSpec(FLOAT, [2, 3]))"), traced);
    }
  }

  @Test
  void resultsAreCorrectForSeveralDtypesAndShapes() {
    try (MapFunction square = Function.define((tf, in) -> {
      Operand<TNumber> x = in.input("x", TNumber.class);
      return Map.of("y", tf.math.mul(x, x), "n", tf.size(x));
    })) {
      try (TInt32 x = TInt32.vectorOf(-3, 4); Outputs out = square.call(Map.of("x", x))) {
        TInt32 y = out.get("y", TInt32.class);
        assertEquals(9, y.getInt(0));
        assertEquals(16, y.getInt(1));
        assertEquals(2, out.get("n", TInt32.class).getInt());
      }
      try (TInt64 x = TInt64.scalarOf(1L << 20); Outputs out = square.call(Map.of("x", x))) {
        assertEquals(1L << 40, out.get("y", TInt64.class).getLong());
      }
      try (TFloat64 x = TFloat64.tensorOf(Shape.of(2, 2), d -> d.setDouble(0.5, 0, 0).setDouble(-1.5, 1, 1));
          Outputs out = square.call(Map.of("x", x))) {
        TFloat64 y = out.get("y", TFloat64.class);
        assertEquals(Shape.of(2, 2), y.shape());
        assertEquals(0.25, y.getDouble(0, 0), 0);
        assertEquals(2.25, y.getDouble(1, 1), 0);
        assertEquals(4, out.get("n", TInt32.class).getInt());
      }
      assertEquals(3, square.traceCount());
    }
  }

  @Test
  void aFamilyTypeTracesOncePerDtype() {
    AtomicInteger bodyRuns = new AtomicInteger();
    try (MapFunction half = Function.define((tf, in) -> {
          bodyRuns.incrementAndGet();
          Operand<org.tensorflow.types.family.TFloating> x =
              in.input("x", org.tensorflow.types.family.TFloating.class, Shape.of(-1));
          return Map.of("y", tf.math.div(x, tf.dtypes.cast(tf.constant(2f), x.type())));
        });
        TFloat32 f1 = TFloat32.vectorOf(1f, 2f);
        TFloat32 f2 = TFloat32.vectorOf(4f, 6f, 8f);
        TFloat64 d1 = TFloat64.vectorOf(1.0);
        TFloat64 d2 = TFloat64.vectorOf(3.0, 5.0)) {
      try (Outputs out = half.call(Map.of("x", f2))) {
        assertEquals(4f, out.get("y", TFloat32.class).getFloat(2), 0f);
      }
      try (Outputs out = half.call(Map.of("x", d2))) {
        assertEquals(2.5, out.get("y", TFloat64.class).getDouble(1), 0);
      }
      half.call(Map.of("x", f1)).close();
      half.call(Map.of("x", d1)).close();
      assertEquals(2, half.traceCount());
      assertEquals(2, bodyRuns.get());
    }
  }

  @Test
  void aShapeConstraintSharesOneTraceAndRejectsWhatDoesNotFit() {
    try (MapFunction sum = Function.define((tf, in) -> {
          Operand<TFloat32> v = in.input("v", TFloat32.class, Shape.of(-1));
          return Map.of("sum", tf.sum(v, tf.constant(0)));
        });
        TFloat32 v2 = TFloat32.vectorOf(1f, 2f);
        TFloat32 v5 = TFloat32.vectorOf(1f, 2f, 3f, 4f, 5f);
        TFloat32 matrix = TFloat32.tensorOf(Shape.of(2, 2));
        TInt32 ints = TInt32.vectorOf(1, 2)) {
      try (Outputs out = sum.call(Map.of("v", v2))) {
        assertEquals(3f, out.get("sum", TFloat32.class).getFloat(), 0f);
      }
      try (Outputs out = sum.call(Map.of("v", v5))) {
        assertEquals(15f, out.get("sum", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(1, sum.traceCount());
      assertEquals("(v: TensorSpec(FLOAT, [-1]))",
          sum.concreteFunctions().get(0).functionType().toString());

      IllegalArgumentException wrongRank =
          assertThrows(IllegalArgumentException.class, () -> sum.call(Map.of("v", matrix)));
      assertTrue(wrongRank.getMessage().contains("'v'"), wrongRank.getMessage());
      assertTrue(wrongRank.getMessage().contains("[-1]"), wrongRank.getMessage());
      IllegalArgumentException wrongDtype =
          assertThrows(IllegalArgumentException.class, () -> sum.call(Map.of("v", ints)));
      assertTrue(wrongDtype.getMessage().contains("'v'"), wrongDtype.getMessage());
      assertTrue(wrongDtype.getMessage().contains("INT32"), wrongDtype.getMessage());
      assertEquals(1, sum.traceCount());
    }
  }

  @Test
  void introspectionShowsTheSignatureAndTheConcreteFunctions() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return Map.of("y", tf.math.neg(x));
        }, FunctionOptions.defaults().withName("negate"));
        TFloat32 x = TFloat32.tensorOf(Shape.of(2, 3))) {
      assertEquals("()", f.functionType().toString());
      f.call(Map.of("x", x)).close();
      assertEquals("negate", f.name());
      assertEquals(1, f.functionType().parameters().size());
      assertEquals("x", f.functionType().parameters().get(0).name());
      assertEquals("tensor", f.functionType().parameters().get(0).kind());
      List<ConcreteFunctionInfo> concrete = f.concreteFunctions();
      assertEquals(1, concrete.size());
      assertEquals("(x: TensorSpec(FLOAT, [2, 3]))", concrete.get(0).functionType().toString());
      assertEquals(List.of("y"), concrete.get(0).outputNames());
      assertTrue(concrete.get(0).name().startsWith("polyfn_negate_"), concrete.get(0).name());
    }
  }

  @Test
  void closeReleasesConcreteFunctionsAndLaterCallsFail() {
    MapFunction f = addTwo(new AtomicInteger());
    try (TFloat32 x = TFloat32.scalarOf(1f)) {
      f.call(Map.of("x", x)).close();
      f.close();
      f.close(); // idempotent
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", x)));
      assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }
  }

  @Test
  void outputsRejectUnknownNamesWrongTypesAndUseAfterClose() {
    try (MapFunction f = addTwo(new AtomicInteger()); TFloat32 x = TFloat32.scalarOf(1f)) {
      Outputs out = f.call(Map.of("x", x));
      IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> out.get("z"));
      assertTrue(unknown.getMessage().contains("'z'") && unknown.getMessage().contains("[y]"), unknown.getMessage());
      IllegalArgumentException type = assertThrows(IllegalArgumentException.class, () -> out.get("y", TInt32.class));
      assertTrue(type.getMessage().contains("TFloat32"), type.getMessage());
      out.close();
      out.close();
      assertThrows(IllegalStateException.class, () -> out.get("y"));
    }
  }

  @Test
  void theOutputOfAnIdentityIsTheInputBufferNotACopy() {
    try (MapFunction identity = Function.define((tf, in) -> Map.of("y", in.input("x", TFloat32.class)));
        TFloat32 x = TFloat32.tensorOf(Shape.of(1 << 20));
        Outputs out = identity.call(Map.of("x", x))) {
      TFloat32 y = out.get("y", TFloat32.class);
      x.setFloat(7f, 123);
      // The output tensor shares the input's memory: a write through x is visible through y.
      assertEquals(7f, y.getFloat(123), 0f);
      assertSame(y, out.get("y"));
      assertArrayEquals(x.shape().asArray(), y.shape().asArray());
    }
  }
}
