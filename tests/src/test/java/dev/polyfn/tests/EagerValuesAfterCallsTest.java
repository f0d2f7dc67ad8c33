package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.tensorflow.EagerSession;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * Eager values stay exact after functions have run on the caller-thread paths. TensorFlow's
 * experimental "run every op as a function" mode (which Polyfn turns on only when {@code
 * dev.polyfn.eagerOpAsFunction=true} opts in) makes an eager {@code Const} return the value of an
 * earlier constant with the same dtype, shape and first three values (TensorFlow caches the
 * wrapped op's instantiation under a summary of the tensor). A Keras LSTM's bias [0, 0, 0, 0, 1,
 * 1, 1, 1, 0, ...] loaded by {@code Function.load} after another model's zero bias of the same
 * shape came back all zeros; a program's own {@code tf.constant} did the same.
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

  /**
   * A program's own eager constants, made after its functions ran (before and after the session
   * path), read back as made. With the mode on, the second and third read as the first.
   */
  @Test
  void programsOwnEagerConstantsHoldTheirValuesAfterCalls() {
    Assumptions.assumeFalse(Boolean.getBoolean("dev.polyfn.eagerOpAsFunction"), "the opt-in mode has this hazard, documented");
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(1f))));
         TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      for (int i = 0; i < 70; i++) {
        try (Outputs o = f.call(Map.of("x", x))) {
          assertEquals(3f, ((TFloat32) o.get("y")).getFloat(1));
        }
      }
    }
    Ops tf = Ops.create(EagerSession.getDefault());
    for (float[] v : VALUES) {
      assertArrayEquals(v, SavedModelTest.floats(tf.constant(v).asTensor()), "tf.constant(" + Arrays.toString(v) + ")");
    }
  }
}
