package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.family.TType;

/** Constant and by-reference captures. */
class CapturesTest {

  @Test
  void aConstantCaptureKeepsItsTraceTimeValue() {
    try (TFloat32 scale = TFloat32.scalarOf(2f);
        MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return Map.of("y", tf.math.mul(x, in.constCapture(scale)));
        });
        TFloat32 x = TFloat32.scalarOf(5f)) {
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(10f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      scale.setFloat(100f); // the function holds a copy made when it was traced
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(10f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(1, f.traceCount());
      assertTrue(f.functionType().captures().isEmpty());
    }
  }

  @Test
  void aCaptureByReferenceSeesEachNewValueWithoutRetracing() {
    AtomicReference<TFloat32> scale = new AtomicReference<>(TFloat32.scalarOf(2f));
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
          traces.incrementAndGet();
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> s = in.capture("scale", scale::get);
          return Map.of("y", tf.math.mul(x, s));
        });
        TFloat32 x = TFloat32.scalarOf(5f)) {
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(10f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      scale.getAndSet(TFloat32.scalarOf(3f)).close();
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(15f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(1, f.traceCount());
      assertEquals("(x: TensorSpec(FLOAT, *); captures: scale: TensorSpec(any, *))", f.functionType().toString());
      assertEquals("(x: TensorSpec(FLOAT, []); captures: scale: TensorSpec(FLOAT, []))",
          f.concreteFunctions().get(0).functionType().toString());

      // A capture whose shape changes is a new signature.
      scale.getAndSet(TFloat32.vectorOf(1f, 2f)).close();
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(10f, out.get("y", TFloat32.class).getFloat(1), 0f);
      }
      assertEquals(2, f.traceCount());
      assertEquals(2, traces.get());
      assertEquals("capture scale: TensorSpec(FLOAT, [2]) does not match TensorSpec(FLOAT, []): rank 1 vs 0",
          f.traceHistory().get(1).reason());
    } finally {
      scale.get().close();
    }
  }

  @Test
  void aClosedCapturedTensorIsAClearErrorAndTheFunctionRecovers() {
    AtomicReference<TFloat32> value = new AtomicReference<>(TFloat32.scalarOf(1f));
    try (SingleFunction f = Function.defineSingle((tf, in) ->
        tf.math.add(in.input("x", TFloat32.class), in.capture("bias", value::get)));
        TFloat32 x = TFloat32.scalarOf(1f)) {
      f.call(x).close();
      value.get().close();
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(x));
      assertTrue(e.getMessage().contains("bias") && e.getMessage().contains("closed"), e.getMessage());
      value.set(TFloat32.scalarOf(4f));
      try (TType y = f.call(x)) {
        assertEquals(5f, ((TFloat32) y).getFloat(), 0f);
      }
    } finally {
      value.get().close();
    }
  }
}
