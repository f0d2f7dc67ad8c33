package example;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

class PolyfnGradleTest {
  @Test
  void definesAndCallsAFunction() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
          return Map.of("y", tf.math.add(tf.math.mul(x, x), tf.constant(2f)));
        });
        TFloat32 x = TFloat32.vectorOf(1f, 2f, 3f);
        Outputs out = f.call(Map.of("x", x))) {
      TFloat32 y = out.get("y", TFloat32.class);
      float[] values = new float[3];
      for (int i = 0; i < 3; i++) {
        values[i] = y.getFloat(i);
      }
      assertArrayEquals(new float[] {3f, 6f, 11f}, values);
      assertEquals(1, f.traceCount());
      System.out.println("polyfn from gradle: y = [3.0, 6.0, 11.0], traces 1");
    }
  }
}
