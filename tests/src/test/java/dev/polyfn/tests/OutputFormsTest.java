package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import dev.polyfn.UnaryFunction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TType;

/** Map, list, single and unary functions, and calls with a bare tensor. */
class OutputFormsTest {

  @Test
  void aListFunctionReturnsACloseableListInOrder() {
    ListOutputs kept;
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return List.of(tf.math.neg(x), tf.math.square(x), tf.shape(x));
        });
        TFloat32 x = TFloat32.vectorOf(3f, 4f);
        ListOutputs out = f.call(Map.of("x", x))) {
      kept = out;
      assertEquals(3, out.size());
      assertEquals(-3f, out.get(0, TFloat32.class).getFloat(0), 0f);
      assertEquals(16f, out.get(1, TFloat32.class).getFloat(1), 0f);
      assertEquals(2, out.get(2, TInt32.class).getInt(0));
      assertThrows(IllegalArgumentException.class, () -> out.get(2, TFloat32.class));
      assertEquals(List.of("output_0", "output_1", "output_2"), f.concreteFunctions().get(0).outputNames());
    }
    assertThrows(IllegalStateException.class, () -> kept.get(0));
  }

  @Test
  void manyOutputsAndFewInterleavedOnOneThreadEachGetTheirOwn() {
    // A call writes its output addresses into an array the thread reuses; a function with more
    // outputs than it holds gets a longer one. Calls of both, interleaved, must each see exactly
    // their own outputs, on every path (the first call, cached calls, the session path).
    try (ListFunction many = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          List<Operand<?>> outs = new java.util.ArrayList<>();
          for (int i = 0; i < 40; i++) {
            outs.add(tf.math.add(x, tf.constant((float) i)));
          }
          return outs;
        });
        ListFunction two = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return List.of(tf.math.neg(x), tf.math.square(x));
        });
        TFloat32 x = TFloat32.scalarOf(3f)) {
      for (int call = 0; call < 80; call++) {
        try (ListOutputs out = two.call(Map.of("x", x))) {
          assertEquals(2, out.size());
          assertEquals(-3f, out.get(0, TFloat32.class).getFloat(), 0f);
          assertEquals(9f, out.get(1, TFloat32.class).getFloat(), 0f);
        }
        try (ListOutputs out = many.call(Map.of("x", x))) {
          assertEquals(40, out.size());
          for (int i = 0; i < 40; i++) {
            assertEquals(3f + i, out.get(i, TFloat32.class).getFloat(), 0f, "output " + i + " of call " + call);
          }
        }
      }
      assertEquals(1, many.traceCount());
      assertEquals(1, two.traceCount());
    }
  }

  @Test
  void aSingleFunctionReturnsOneTensorAndTakesABareTensor() {
    try (SingleFunction norm = Function.defineSingle((tf, in) -> {
          Operand<TFloat32> v = in.input("v", TFloat32.class, Shape.of(-1));
          return tf.math.sqrt(tf.sum(tf.math.square(v), tf.constant(0)));
        });
        TFloat32 v = TFloat32.vectorOf(3f, 4f);
        TFloat32 w = TFloat32.vectorOf(6f, 8f, 0f)) {
      try (TType n = norm.call(v)) {
        assertEquals(5f, ((TFloat32) n).getFloat(), 0f);
      }
      try (TType n = norm.call(Map.of("v", w))) {
        assertEquals(10f, ((TFloat32) n).getFloat(), 0f);
      }
      assertEquals(1, norm.traceCount());
    }
  }

  @Test
  void aUnaryFunctionIsTypedEndToEnd() {
    try (UnaryFunction<TFloat32, TFloat32> twice =
            Function.unary(TFloat32.class, (tf, x) -> tf.math.mul(x, tf.constant(2f)));
        TFloat32 x = TFloat32.vectorOf(1f, 2f);
        TFloat32 y = twice.call(x)) {
      assertEquals(4f, y.getFloat(1), 0f);
      assertEquals("(x: TensorSpec(FLOAT, *))", twice.functionType().toString());
    }
    try (UnaryFunction<TFloat32, TInt32> size = Function.unary(TFloat32.class, (tf, x) -> tf.size(x));
        TFloat32 x = TFloat32.tensorOf(Shape.of(2, 3));
        TInt32 n = size.call(x)) {
      assertEquals(6, n.getInt());
    }
  }

  @Test
  void aMapFunctionTakesABareTensorWhenItHasOneParameter() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.neg(in.input("x", TFloat32.class))));
        TFloat32 x = TFloat32.scalarOf(2f)) {
      try (Outputs out = f.call(x)) {
        assertEquals(-2f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(-2f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(1, f.traceCount());
    }
  }

  @Test
  void aBareTensorIsRejectedWhenThereAreSeveralParameters() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y",
            tf.math.add(in.input("a", TFloat32.class), in.input("b", TFloat32.class))));
        TFloat32 x = TFloat32.scalarOf(2f)) {
      IllegalArgumentException first = assertThrows(IllegalArgumentException.class, () -> f.call(x));
      assertTrue(first.getMessage().contains("'b'"), first.getMessage());
      f.call(Map.of("a", x, "b", x)).close();
      IllegalArgumentException later = assertThrows(IllegalArgumentException.class, () -> f.call(x));
      assertTrue(later.getMessage().contains("(a, b)"), later.getMessage());
    }
  }
}
