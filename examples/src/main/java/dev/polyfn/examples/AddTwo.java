package dev.polyfn.examples;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/** The README's quickstart, whole: the guide's snippets are checked against compiled sources. */
public final class AddTwo {
  public static void main(String[] args) {
    // Traced once per input signature (dtype and shape), cached, then run natively.
    try (MapFunction addTwo = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return Map.of("y", tf.math.add(x, tf.constant(2f)));
        });
        TFloat32 x = TFloat32.vectorOf(1f, 2f);
        Outputs out = addTwo.call(Map.of("x", x))) {
      TFloat32 y = out.get("y", TFloat32.class);
      System.out.println(y.getFloat(0) + ", " + y.getFloat(1));   // 3.0, 4.0
      System.out.println(addTwo.traceCount());                     // 1: a float vector of length 2
      System.out.println(addTwo.concreteFunctions());              // [polyfn_function_..._1(x: TensorSpec(FLOAT, [2])) -> [y]]
    }
  }
}
