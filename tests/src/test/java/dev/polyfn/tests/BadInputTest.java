package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/** Every bad input fails with a clear exception, and the function keeps working afterwards. */
class BadInputTest {
  private MapFunction add;
  private TFloat32 one;
  private TFloat32 two;

  @BeforeEach
  void setUp() {
    add = Function.define((tf, in) -> {
      Operand<TFloat32> a = in.input("a", TFloat32.class);
      Operand<TFloat32> b = in.input("b", TFloat32.class);
      return Map.of("sum", tf.math.add(a, b));
    });
    one = TFloat32.scalarOf(1f);
    two = TFloat32.scalarOf(2f);
  }

  @AfterEach
  void tearDown() {
    add.close();
    one.close();
    two.close();
  }

  private void assertStillWorks() {
    try (Outputs out = add.call(Map.of("a", one, "b", two))) {
      assertEquals(3f, out.get("sum", TFloat32.class).getFloat(), 0f);
    }
  }

  private static void assertMessage(RuntimeException e, String... parts) {
    for (String p : parts) {
      assertTrue(e.getMessage().contains(p), "'" + e.getMessage() + "' should contain '" + p + "'");
    }
  }

  /**
   * A map key that is not well-formed UTF-16 (an unpaired surrogate) is refused naming the
   * argument: it reached the native side as U+FFFD, where "\uD800" and "\uE000" sort the other
   * way round, so each value was paired with the other key's placeholder.
   */
  @Test
  void aMapKeyWithAnUnpairedSurrogateIsRefusedNamingTheArgument() {
    try (MapFunction f = Function.define((tf, in) -> {
      Map<String, Operand<TFloat32>> m = in.map("m", TFloat32.class);
      return Map.of("y", m.values().iterator().next());
    });
        TFloat32 a = TFloat32.vectorOf(1f);
        TFloat32 b = TFloat32.vectorOf(1f, 2f)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("m", Map.of("\uD800", a, "\uE000", b))));
      assertTrue(e.getMessage().startsWith("argument 'm': map key") && e.getMessage().contains("unpaired surrogate"),
          e.getMessage());
      try (var g = Function.defineNested((tf, in) -> {
        in.nest("n");
        return Map.of("y", tf.constant(1f));
      })) {
        IllegalArgumentException nested = assertThrows(IllegalArgumentException.class,
            () -> g.call(Map.of("n", Map.of("k\uDC00", a))));
        assertTrue(nested.getMessage().contains("unpaired surrogate"), nested.getMessage());
      }
      try (Outputs out = f.call(Map.of("m", Map.of("\uD83D\uDE00", a)))) { // a whole surrogate pair is fine
        assertEquals(1, out.get("y", TFloat32.class).shape().size(0));
      }
    }
  }

  @Test
  void missingArgumentOnFirstTrace() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("a", one)));
    assertMessage(e, "'b'", "FLOAT");
    assertEquals(0, add.traceCount());
    assertStillWorks();
  }

  @Test
  void missingArgumentAfterTheParametersAreKnown() {
    assertStillWorks();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("b", one)));
    assertMessage(e, "missing", "'a'");
    assertStillWorks();
    assertEquals(1, add.traceCount());
  }

  @Test
  void unexpectedArgumentOnFirstTraceAndLater() {
    IllegalArgumentException first =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("a", one, "b", two, "c", one)));
    assertMessage(first, "unexpected", "'c'");
    assertEquals(0, add.traceCount());
    assertStillWorks();
    IllegalArgumentException later =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("a", one, "b", two, "z", one)));
    assertMessage(later, "unexpected", "'z'", "(a, b)");
    assertStillWorks();
  }

  @Test
  void nullArgument() {
    Map<String, Object> args = new HashMap<>();
    args.put("a", one);
    args.put("b", null);
    IllegalArgumentException first = assertThrows(IllegalArgumentException.class, () -> add.call(args));
    assertMessage(first, "'b'", "null");
    assertStillWorks();
    IllegalArgumentException later = assertThrows(IllegalArgumentException.class, () -> add.call(args));
    assertMessage(later, "'b'", "null");
    assertThrows(NullPointerException.class, () -> add.call((Map<String, ?>) null));
    assertStillWorks();
  }

  @Test
  void nonTensorWhereATensorIsDeclared() {
    IllegalArgumentException first =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("a", one, "b", "two")));
    assertMessage(first, "'b'", "tensor", "java.lang.String");
    assertStillWorks();
    IllegalArgumentException later =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("a", one, "b", "two")));
    assertMessage(later, "'b'", "tensor", "java.lang.String");
    assertStillWorks();
  }

  @Test
  void closedTensor() {
    TFloat32 closed = TFloat32.scalarOf(5f);
    closed.close();
    IllegalArgumentException first =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("a", closed, "b", two)));
    assertMessage(first, "'a'", "closed");
    assertStillWorks();
    IllegalArgumentException later =
        assertThrows(IllegalArgumentException.class, () -> add.call(Map.of("a", closed, "b", two)));
    assertMessage(later, "'a'", "closed");
    assertStillWorks();
  }

  @Test
  void anExceptionInTheBodyReachesTheCallerAndNothingIsCached() {
    IllegalStateException boom = new IllegalStateException("boom");
    AtomicInteger runs = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      if (runs.incrementAndGet() == 1) {
        throw boom;
      }
      return Map.of("y", tf.math.neg(x));
    })) {
      assertSame(boom, assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", one))));
      assertEquals(0, f.traceCount());
      try (Outputs out = f.call(Map.of("x", one))) {
        assertEquals(-1f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(1, f.traceCount());
      assertEquals(2, runs.get());
    }
  }

  @Test
  void aBodyReturningAnOperandOfAnotherGraphFails() {
    try (org.tensorflow.Graph other = new org.tensorflow.Graph();
        MapFunction f = Function.define((tf, in) -> {
          in.input("x", TFloat32.class);
          return Map.of("y", org.tensorflow.op.Ops.create(other).constant(1f));
        })) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", one)));
      assertMessage(e, "'y'", "traced graph");
      assertEquals(0, f.traceCount());
    }
  }

  @Test
  void aRuntimeErrorInTheFunctionIsATensorFlowException() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> m = in.input("m", TFloat32.class);
          return Map.of("p", tf.linalg.matMul(m, m));
        });
        TFloat32 bad = TFloat32.tensorOf(org.tensorflow.ndarray.Shape.of(2, 3))) {
      // TensorFlow's own error naming the op and shapes ("A || B" with B a supertype of A accepted any).
      RuntimeException e = assertThrows(org.tensorflow.exceptions.TFInvalidArgumentException.class,
          () -> f.call(Map.of("m", bad)));
      assertTrue(e.getMessage().contains("MatMul") && e.getMessage().contains("[2,3]"), e.toString());
      try (TFloat32 ok = TFloat32.tensorOf(org.tensorflow.ndarray.Shape.of(2, 2));
          Outputs out = f.call(Map.of("m", ok))) {
        assertEquals(org.tensorflow.ndarray.Shape.of(2, 2), out.get("p").shape());
      }
    }
  }
}
