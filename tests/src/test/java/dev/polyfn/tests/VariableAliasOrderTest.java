package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * A body that reads a captured variable before it declares a variable parameter: the trace meets
 * the capture first, a call writes its parameters first; the signature must not depend on which
 * came first, or every call retraces.
 */
class VariableAliasOrderTest {

  private static float call(MapFunction f, Variable<TFloat32> v) {
    try (Outputs out = f.call(Map.of("v", v))) {
      return out.get("s", TFloat32.class).getFloat();
    }
  }

  @Test
  void aCaptureReadBeforeAVariableParameterTracesOnce() {
    try (TFloat32 one = TFloat32.scalarOf(1f);
        TFloat32 ten = TFloat32.scalarOf(10f);
        TFloat32 hundred = TFloat32.scalarOf(100f);
        Variable<TFloat32> captured = Variable.create(one);
        Variable<TFloat32> b = Variable.create(ten);
        Variable<TFloat32> c = Variable.create(hundred);
        MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> first = captured.read(tf);
          Operand<TFloat32> passed = tf.readVariableOp(in.variableInput("v", TFloat32.class), TFloat32.class);
          return Map.of("s", tf.math.add(first, passed));
        })) {
      assertEquals(11f, call(f, b), 0f);
      assertEquals(11f, call(f, b), 0f);
      assertEquals(1, f.traceCount(), "the same variable again: the same signature");
      assertEquals(101f, call(f, c), 0f);
      assertEquals(1, f.traceCount(), "another variable in the same aliasing pattern reuses the trace");
      assertEquals(2f, call(f, captured), 0f);
      assertEquals(2f, call(f, captured), 0f);
      assertEquals(2, f.traceCount(), "the captured variable passed too: one new pattern, traced once");
      assertEquals(11f, call(f, b), 0f);
      assertEquals(2, f.traceCount());
    }
  }
}
