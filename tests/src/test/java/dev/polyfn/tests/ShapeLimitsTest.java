package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.TensorSpec;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/** Shapes TensorFlow cannot hold are refused before they reach it, naming the parameter. */
class ShapeLimitsTest {
  private static MapFunction identity() {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.identity(x));
    });
  }

  @Test
  void aSpecOfRank300IsAnIllegalArgumentNamingTheParameter() {
    long[] dims = new long[300];
    Arrays.fill(dims, 1);
    try (MapFunction f = identity(); TFloat32 x = TFloat32.scalarOf(1f)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(dims)))));
      assertTrue(e.getMessage().contains("x: ") && e.getMessage().contains("254"), e.getMessage());
      f.call(Map.of("x", x)).close(); // still usable
      e = assertThrows(IllegalArgumentException.class,
          () -> f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(dims)))));
      assertTrue(e.getMessage().contains("x: ") && e.getMessage().contains("254"), e.getMessage());
      assertEquals(1, f.traceCount());
    }
  }

  @Test
  void aSpecWhoseElementCountOverflowsIsAnIllegalArgument() {
    try (MapFunction f = identity()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.getConcreteFunction(
          Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(Long.MAX_VALUE, Long.MAX_VALUE, 4)))));
      assertTrue(e.getMessage().contains("x: "), e.getMessage());
      assertEquals(0, f.traceCount());
    }
  }

  @Test
  void constraintsWithBadShapesAreRejectedWhenDeclared() {
    long[] tooMany = new long[255];
    Arrays.fill(tooMany, -1);
    for (Shape bad : new Shape[] {Shape.of(-5), Shape.of(2, -3), Shape.of(tooMany)}) {
      try (MapFunction f = Function.define((tf, in) -> {
        Operand<TFloat32> x = in.input("x", TFloat32.class, bad);
        return Map.of("y", tf.identity(x));
      }); TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", x)));
        assertTrue(e.getMessage().contains("x: "), e.getMessage());
        assertEquals(0, f.traceCount());
      }
    }
  }
}
