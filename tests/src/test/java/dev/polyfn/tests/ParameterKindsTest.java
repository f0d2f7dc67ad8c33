package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;

/** Lists, maps, Java values, defaults, casts and specs: what each contributes to the signature. */
class ParameterKindsTest {

  private static float scalar(Outputs out, String name) {
    return out.get(name, TFloat32.class).getFloat();
  }

  @Test
  void aListRetracesOnANewLengthAndReusesTheSameLengthAndSpecs() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction sum = Function.define((tf, in) -> {
          traces.incrementAndGet();
          List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
          Operand<TFloat32> total = tf.constant(0f);
          for (Operand<TFloat32> x : xs) {
            total = tf.math.add(total, x);
          }
          return Map.of("sum", total);
        });
        TFloat32 a = TFloat32.scalarOf(1f);
        TFloat32 b = TFloat32.scalarOf(2f);
        TFloat32 c = TFloat32.scalarOf(4f)) {
      try (Outputs out = sum.call(Map.of("xs", List.of(a, b)))) {
        assertEquals(3f, scalar(out, "sum"), 0f);
      }
      try (Outputs out = sum.call(Map.of("xs", List.of(c, c)))) {
        assertEquals(8f, scalar(out, "sum"), 0f);
      }
      assertEquals(1, sum.traceCount());
      try (Outputs out = sum.call(Map.of("xs", List.of(a, b, c)))) {
        assertEquals(7f, scalar(out, "sum"), 0f);
      }
      assertEquals(2, sum.traceCount());
      assertEquals(2, traces.get());
      assertEquals("(xs: List[TensorSpec(FLOAT, []), TensorSpec(FLOAT, []), TensorSpec(FLOAT, [])])",
          sum.concreteFunctions().get(1).functionType().toString());
    }
  }

  @Test
  void aMapRetracesOnANewKeySetAndReusesReorderedKeys() {
    try (MapFunction weighted = Function.define((tf, in) -> {
          Map<String, Operand<TFloat32>> m = in.map("m", TFloat32.class);
          Operand<TFloat32> total = tf.constant(0f);
          float weight = 1f;
          for (Operand<TFloat32> v : m.values()) { // sorted key order
            total = tf.math.add(total, tf.math.mul(v, tf.constant(weight)));
            weight *= 10f;
          }
          return Map.of("total", total);
        });
        TFloat32 one = TFloat32.scalarOf(1f);
        TFloat32 two = TFloat32.scalarOf(2f);
        TFloat32 three = TFloat32.scalarOf(3f)) {
      Map<String, Object> ab = new LinkedHashMap<>();
      ab.put("a", one);
      ab.put("b", two);
      Map<String, Object> ba = new LinkedHashMap<>();
      ba.put("b", two);
      ba.put("a", one);
      try (Outputs out = weighted.call(Map.of("m", ab))) {
        assertEquals(21f, scalar(out, "total"), 0f); // a*1 + b*10
      }
      try (Outputs out = weighted.call(Map.of("m", ba))) {
        assertEquals(21f, scalar(out, "total"), 0f); // values follow their keys, whatever the order
      }
      assertEquals(1, weighted.traceCount());
      try (Outputs out = weighted.call(Map.of("m", Map.of("a", one, "c", three)))) {
        assertEquals(31f, scalar(out, "total"), 0f);
      }
      assertEquals(2, weighted.traceCount());
      assertEquals("(m: Map{'a': TensorSpec(FLOAT, []), 'c': TensorSpec(FLOAT, [])})",
          weighted.concreteFunctions().get(1).functionType().toString());
    }
  }

  @Test
  void aJavaValueRetracesOnANewValueOnly() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction power = Function.define((tf, in) -> {
          traces.incrementAndGet();
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          int n = in.javaInput("n", Integer.class);
          Operand<TFloat32> y = tf.constant(1f);
          for (int i = 0; i < n; i++) { // Java control flow on a Java value
            y = tf.math.mul(y, x);
          }
          return Map.of("y", y);
        });
        TFloat32 two = TFloat32.scalarOf(2f);
        TFloat32 three = TFloat32.scalarOf(3f)) {
      try (Outputs out = power.call(Map.of("x", two, "n", 3))) {
        assertEquals(8f, scalar(out, "y"), 0f);
      }
      try (Outputs out = power.call(Map.of("x", three, "n", 3))) {
        assertEquals(27f, scalar(out, "y"), 0f);
      }
      assertEquals(1, power.traceCount());
      try (Outputs out = power.call(Map.of("x", two, "n", 5))) {
        assertEquals(32f, scalar(out, "y"), 0f);
      }
      power.call(Map.of("x", two, "n", Integer.valueOf(5))).close();
      assertEquals(2, power.traceCount());
      assertEquals(2, traces.get());
      assertEquals("(x: TensorSpec(FLOAT, []), n: Literal(5))",
          power.concreteFunctions().get(1).functionType().toString());
      assertEquals("(x: TensorSpec(FLOAT, *), n: Literal<java.lang.Integer>)", power.functionType().toString());
    }
  }

  @Test
  void anOmittedJavaDefaultAndAnEqualExplicitValueShareOneTrace() {
    try (MapFunction scale = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          float factor = in.javaInput("factor", Float.class, 2f);
          return Map.of("y", tf.math.mul(x, tf.constant(factor)));
        });
        TFloat32 x = TFloat32.scalarOf(5f)) {
      try (Outputs out = scale.call(Map.of("x", x))) {
        assertEquals(10f, scalar(out, "y"), 0f);
      }
      try (Outputs out = scale.call(Map.of("x", x, "factor", 2f))) {
        assertEquals(10f, scalar(out, "y"), 0f);
      }
      assertEquals(1, scale.traceCount());
      try (Outputs out = scale.call(Map.of("x", x, "factor", 3f))) {
        assertEquals(15f, scalar(out, "y"), 0f);
      }
      assertEquals(2, scale.traceCount());
      assertTrue(scale.functionType().parameter("factor").get().optional());
    }
  }

  @Test
  void anOmittedTensorDefaultAndATensorOfTheSameSpecShareOneTrace() {
    try (TFloat32 defaultBias = TFloat32.vectorOf(10f, 20f);
        MapFunction addBias = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> bias = in.input("bias", TFloat32.class, Shape.of(2), defaultBias);
          return Map.of("y", tf.math.add(x, bias));
        });
        TFloat32 x = TFloat32.vectorOf(1f, 2f);
        TFloat32 otherBias = TFloat32.vectorOf(-1f, -2f)) {
      try (Outputs out = addBias.call(Map.of("x", x))) {
        assertEquals(22f, out.get("y", TFloat32.class).getFloat(1), 0f);
      }
      try (Outputs out = addBias.call(Map.of("x", x, "bias", otherBias))) {
        assertEquals(0f, out.get("y", TFloat32.class).getFloat(1), 0f);
      }
      assertEquals(1, addBias.traceCount());
      assertEquals("(x: TensorSpec(FLOAT, *), bias: TensorSpec(FLOAT, [2]) = <default>)",
          addBias.functionType().toString());
    }
  }

  @Test
  void javaNumbersAndArraysAreCastToTheParametersDtype() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat64> d = in.input("d", TFloat64.class);
          Operand<TInt32> i = in.input("i", TInt32.class);
          return Map.of("d2", tf.math.mul(d, tf.constant(2.0)), "i2", tf.math.mul(i, tf.constant(2)));
        })) {
      try (Outputs out = f.call(Map.of("d", 1.5f, "i", 21))) {
        assertEquals(3.0, out.get("d2", TFloat64.class).getDouble(), 0);
        assertEquals(42, out.get("i2", TInt32.class).getInt());
      }
      try (Outputs out = f.call(Map.of("d", 2, "i", 1))) { // an int for a double parameter: same trace
        assertEquals(4.0, out.get("d2", TFloat64.class).getDouble(), 0);
      }
      assertEquals(1, f.traceCount());
      try (Outputs out = f.call(Map.of("d", new double[] {1, 2, 3}, "i", new int[] {4, 5}))) {
        assertEquals(6.0, out.get("d2", TFloat64.class).getDouble(2), 0);
        assertEquals(10, out.get("i2", TInt32.class).getInt(1));
      }
      assertEquals(2, f.traceCount());
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("d", 1.0, "i", true)));
      assertTrue(e.getMessage().contains("'i'"), e.getMessage());
    }
  }

  @Test
  void aBodyThatDeclaresAnotherParameterListFailsShowingBoth() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          if (traces.incrementAndGet() > 1) {
            in.input("extra", TFloat32.class);
          }
          return Map.of("y", x);
        });
        TFloat32 s = TFloat32.scalarOf(1f);
        TFloat32 v = TFloat32.vectorOf(1f)) {
      f.call(Map.of("x", s)).close();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", v)));
      assertTrue(e.getMessage().contains("(x: TensorSpec(FLOAT, *))"), e.getMessage());
      assertTrue(e.getMessage().contains("extra"), e.getMessage());
      assertEquals(1, f.traceCount());
      f.call(Map.of("x", s)).close(); // the cached signature still works
    }
  }

  @Test
  void aCallIsTypedAgainstTheKnownParametersWithoutRunningTheBody() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
          traces.incrementAndGet();
          return Map.of("y", in.input("x", TFloat32.class));
        });
        TFloat32 s = TFloat32.scalarOf(1f);
        TInt32 i = TInt32.scalarOf(1)) {
      f.call(Map.of("x", s)).close();
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", i)));
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("y", s)));
      assertEquals(1, traces.get());
    }
  }

  @Test
  void getConcreteFunctionTracesASpecAndLaterSubtypeCallsReuseIt() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
          traces.incrementAndGet();
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return Map.of("n", tf.size(x));
        });
        TFloat32 v3 = TFloat32.vectorOf(1f, 2f, 3f);
        TFloat32 v7 = TFloat32.tensorOf(Shape.of(7))) {
      ConcreteFunctionInfo c = f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1))));
      assertEquals("(x: TensorSpec(FLOAT, [-1]))", c.functionType().toString());
      assertEquals(1, traces.get());
      try (Outputs out = f.call(Map.of("x", v3))) {
        assertEquals(3, out.get("n", TInt32.class).getInt());
      }
      try (Outputs out = f.call(Map.of("x", v7))) {
        assertEquals(7, out.get("n", TInt32.class).getInt());
      }
      assertEquals(1, f.traceCount());
      // Asking again finds the same concrete function.
      assertEquals(c.name(), f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1)))).name());
      assertEquals(c.name(), f.getConcreteFunction(Map.of("x", v3)).name());
      assertEquals(1, f.traceCount());
    }
  }

  @Test
  void specsWorkForListElementsAndMapValues() {
    try (MapFunction f = Function.define((tf, in) -> {
      List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
      Map<String, Operand<TFloat32>> m = in.map("m", TFloat32.class);
      return Map.of("y", tf.math.add(xs.get(0), m.get("k")));
    }); TFloat32 a = TFloat32.vectorOf(1f, 2f); TFloat32 b = TFloat32.vectorOf(10f, 20f, 30f)) {
      TensorSpec anyVector = TensorSpec.of(TFloat32.class, Shape.of(-1));
      ConcreteFunctionInfo c = f.getConcreteFunction(Map.of("xs", List.of(anyVector), "m", Map.of("k", anyVector)));
      assertEquals("(xs: List[TensorSpec(FLOAT, [-1])], m: Map{'k': TensorSpec(FLOAT, [-1])})",
          c.functionType().toString());
      try (Outputs out = f.call(Map.of("xs", List.of(a), "m", Map.of("k", a)))) {
        assertEquals(4f, out.get("y", TFloat32.class).getFloat(1), 0f);
      }
      try (Outputs out = f.call(Map.of("xs", List.of(b), "m", Map.of("k", b)))) {
        assertEquals(60f, out.get("y", TFloat32.class).getFloat(2), 0f);
      }
      assertEquals(1, f.traceCount());
    }
  }
}
