package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.TFloat32;

/**
 * Values Polyfn brings into the eager context stay exact after a function has run on the
 * caller-thread path. That path puts the eager context in TensorFlow's "run every op as a
 * function" mode, where an eager {@code Const} returns the value of an earlier constant with the
 * same dtype, shape and first three values (TensorFlow caches the wrapped op's instantiation under
 * a summary of the tensor). A Keras LSTM's bias [0, 0, 0, 0, 1, 1, 1, 1, 0, ...] loaded by
 * {@code Function.load} after another model's zero bias of the same shape came back all zeros.
 */
class EagerValuesAfterCallsTest {
  /** Same dtype, shape and first three values; they differ after. */
  private static final float[][] VALUES = {
      {0.125f, 0.25f, 0.375f, 1f, 5f}, {0.125f, 0.25f, 0.375f, 2f, 6f}, {0.125f, 0.25f, 0.375f, 3f, 7f}};

  @Test
  void variablesHoldTheirOwnValuesWhenAnEarlierValueStartsAlike() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f))));
         TFloat32 x = TFloat32.scalarOf(3f);
         Outputs o = f.call(Map.of("x", x))) {
      assertEquals(6f, ((TFloat32) o.get("y")).getFloat());
    }
    for (float[] v : VALUES) {
      try (TFloat32 t = TFloat32.vectorOf(v); Variable<TFloat32> var = Variable.create(t)) {
        assertArrayEquals(v, SavedModelTest.floats(var.value()), "created with " + Arrays.toString(v));
      }
    }
    try (TFloat32 first = TFloat32.vectorOf(VALUES[0]); Variable<TFloat32> var = Variable.create(first)) {
      for (float[] v : VALUES) {
        try (TFloat32 t = TFloat32.vectorOf(v)) {
          var.assign(t);
        }
        assertArrayEquals(v, SavedModelTest.floats(var.value()), "assigned " + Arrays.toString(v));
      }
    }
  }
}
