package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * A variable read inside a body has the variable's static shape, as in TensorFlow, so bodies that
 * branch on or compute from shapes trace as they would there.
 */
class VariableReadShapeTest {

  @Test
  void aReadHasTheVariablesShapeAndShapeDependentCodeUsesIt() {
    AtomicReference<Shape> seen = new AtomicReference<>();
    try (TFloat32 init = TFloat32.tensorOf(Shape.of(2, 3), t -> t.setFloat(5f, 1, 2));
        Variable<TFloat32> v = Variable.create(init);
        MapFunction flat = Function.define((tf, in) -> {
          Operand<TFloat32> r = v.read(tf);
          seen.set(r.shape());
          // Computed from the static shape, as a TensorFlow body would (size 6, not -1).
          long size = r.shape().get(0) * r.shape().get(1);
          Operand<TFloat32> flattened = tf.reshape(r, tf.constant(new long[] {size}));
          return Map.of("flat", flattened, "rows", tf.constant((int) r.shape().get(0)));
        })) {
      try (Outputs out = flat.call(Map.of())) {
        assertEquals(Shape.of(2, 3), seen.get());
        TFloat32 f = out.get("flat", TFloat32.class);
        assertEquals(Shape.of(6), f.shape());
        assertEquals(5f, f.getFloat(5), 0f);
        assertEquals(2, out.get("rows", TInt32.class).getInt());
      }
    }
  }

  @Test
  void aScalarCounterReadIsAScalar() {
    AtomicReference<Shape> seen = new AtomicReference<>();
    try (TFloat32 zero = TFloat32.scalarOf(0f);
        Variable<TFloat32> counter = Variable.create(zero);
        MapFunction increment = Function.define((tf, in) -> {
          Operand<TFloat32> r = counter.read(tf);
          seen.set(r.shape());
          Operand<TFloat32> next = tf.math.add(r, tf.constant(1f));
          counter.assign(tf, next);
          return Map.of("next", next);
        })) {
      increment.call(Map.of()).close();
      try (Outputs out = increment.call(Map.of())) {
        assertEquals(2f, out.get("next", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(Shape.scalar(), seen.get());
      assertEquals(2f, counter.value().getFloat(), 0f);
    }
  }

  @Test
  void aReadInsideANestedFunctionHasTheShapeToo() {
    AtomicReference<Shape> seen = new AtomicReference<>();
    try (TFloat32 init = TFloat32.vectorOf(1f, 2f, 3f, 4f);
        Variable<TFloat32> v = Variable.create(init);
        MapFunction inner = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> r = v.read(tf);
          seen.set(r.shape());
          return Map.of("y", tf.math.mul(r, x));
        });
        MapFunction outer = Function.define((tf, in) ->
            Map.of("z", inner.apply(tf, Map.of("x", in.input("x", TFloat32.class))).get("y")));
        TFloat32 two = TFloat32.scalarOf(2f);
        Outputs out = outer.call(Map.of("x", two))) {
      assertEquals(Shape.of(4), seen.get());
      assertEquals(8f, out.get("z", TFloat32.class).getFloat(3), 0f);
    }
  }
}
