package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import dev.polyfn.TensorSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A {@link TensorSpec} describes a call for {@code getConcreteFunction}; passed to {@code call},
 * which needs values, it fails naming the parameter (and element) and pointing there.
 */
class SpecsInCallTest {
  private static final TensorSpec SCALAR = TensorSpec.of(TFloat32.class, Shape.scalar());

  private static void assertMessage(RuntimeException e, String... parts) {
    for (String p : parts) {
      assertTrue(e.getMessage().contains(p), "'" + e.getMessage() + "' should contain '" + p + "'");
    }
  }

  @Test
  void aSpecForATensorParameterIsRejectedBeforeAndAfterTheFirstTrace() {
    try (SingleFunction f = Function.defineSingle((tf, in) -> tf.math.neg(in.input("x", TFloat32.class)));
        TFloat32 one = TFloat32.scalarOf(1f)) {
      IllegalArgumentException first = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("x", SCALAR)).close());
      assertMessage(first, "argument 'x'", "TensorSpec", "getConcreteFunction");
      try (TFloat32 y = (TFloat32) f.call(Map.of("x", one))) {
        assertEquals(-1f, y.getFloat(), 0f);
      }
      int traces = f.traceCount();
      IllegalArgumentException later = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("x", SCALAR)).close());
      assertMessage(later, "argument 'x'", "TensorSpec", "getConcreteFunction");
      assertEquals(traces, f.traceCount());
      // Specs still serve getConcreteFunction, and the call it prepares is a hit.
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1))));
      try (TFloat32 v = TFloat32.vectorOf(1f, 2f); TFloat32 y = (TFloat32) f.call(Map.of("x", v))) {
        assertEquals(-2f, y.getFloat(1), 0f);
      }
      assertEquals(traces + 1, f.traceCount());
    }
  }

  @Test
  void aSpecInAListOrMapNamesItsPath() {
    try (MapFunction f = Function.define((tf, in) -> {
          List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
          Map<String, Operand<TFloat32>> m = in.map("m", TFloat32.class);
          return Map.of("y", tf.math.add(xs.get(0), m.get("k")));
        });
        TFloat32 one = TFloat32.scalarOf(1f)) {
      try (Outputs out = f.call(Map.of("xs", List.of(one, one), "m", Map.of("k", one)))) {
        assertEquals(2f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      IllegalArgumentException list = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("xs", List.of(one, SCALAR), "m", Map.of("k", one))).close());
      assertMessage(list, "argument 'xs[1]'", "getConcreteFunction");
      IllegalArgumentException map = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("xs", List.of(one, one), "m", Map.of("k", SCALAR))).close());
      assertMessage(map, "argument 'm['k']'", "getConcreteFunction");
      assertEquals(1, f.traceCount());
      f.getConcreteFunction(Map.of("xs", List.of(SCALAR, SCALAR), "m", Map.of("k", SCALAR)));
      assertEquals(1, f.traceCount());
    }
  }

  /**
   * Specs equal as Python's {@code TensorSpec}s are: by dtype and dimensions, unknown ones
   * included. Before, TensorFlow Java's {@code Shape.equals} (false for two shapes with an unknown
   * dimension or rank) made {@code TensorSpec.of(FLOAT, [-1])} unequal to itself rebuilt, and a
   * {@code CompositeSpec} of such a shape too.
   */
  @Test
  void specsWithUnknownDimensionsAreEqualByValue() {
    TensorSpec a = TensorSpec.of(TFloat32.class, Shape.of(-1, 3));
    TensorSpec b = TensorSpec.of(TFloat32.class, Shape.of(-1, 3));
    assertEquals(a, b);
    assertEquals(a.hashCode(), b.hashCode());
    assertEquals(TensorSpec.of(TFloat32.class, Shape.unknown()), TensorSpec.of(TFloat32.class, Shape.unknown()));
    assertEquals(1, new java.util.HashSet<>(List.of(a, b)).size());
    for (TensorSpec other : List.of(TensorSpec.of(TFloat32.class, Shape.of(2, 3)), TensorSpec.of(TFloat32.class, Shape.of(-1)),
        TensorSpec.of(TFloat32.class, Shape.unknown()), TensorSpec.of(org.tensorflow.types.TInt32.class, Shape.of(-1, 3)))) {
      assertTrue(!a.equals(other) && !other.equals(a), a + " and " + other + " differ");
    }
    // A composite's spec likewise (a sparse tensor's dense shape of unknown rows).
    dev.polyfn.CompositeSpec s1 = new dev.polyfn.CompositeSpec(TFloat32.class, Shape.of(-1, 4), null, List.of("values"),
        List.of(TensorSpec.of(TFloat32.class, Shape.of(-1))));
    dev.polyfn.CompositeSpec s2 = new dev.polyfn.CompositeSpec(TFloat32.class, Shape.of(-1, 4), null, List.of("values"),
        List.of(TensorSpec.of(TFloat32.class, Shape.of(-1))));
    assertEquals(s1, s2);
    assertEquals(s1.hashCode(), s2.hashCode());
    assertTrue(!s1.equals(new dev.polyfn.CompositeSpec(TFloat32.class, Shape.of(-1, 5), null, List.of("values"),
        List.of(TensorSpec.of(TFloat32.class, Shape.of(-1))))));
  }
}
