package dev.polyfn.examples;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TNumber;

/**
 * The main example: one polymorphic function called with several dtypes and shapes. It prints each
 * result and, at the end, every signature Polyfn traced.
 */
public final class Quickstart {
  public static void main(String[] args) {
    // y = x * x + 2, for any numeric dtype and any shape; also returns x's shape.
    try (MapFunction squarePlusTwo = Function.define((tf, in) -> {
      Operand<TNumber> x = in.input("x", TNumber.class);
      Operand<TNumber> y = tf.math.add(tf.math.mul(x, x), tf.dtypes.cast(tf.constant(2), x.type()));
      return Map.of("y", y, "shape", tf.shape(x));
    })) {
      try (TFloat32 scalar = TFloat32.scalarOf(3f);
          TFloat32 vector = TFloat32.vectorOf(1f, 2f, 3f);
          TFloat32 otherVector = TFloat32.vectorOf(-1f, 0.5f, 4f);
          TInt32 ints = TInt32.vectorOf(1, 2, 3, 4);
          TFloat64 matrix = TFloat64.tensorOf(Shape.of(2, 2), d -> d.setDouble(1.5, 0, 0).setDouble(0, 0, 1).setDouble(0.25, 1, 0).setDouble(-2, 1, 1))) {
        for (Tensor x : new Tensor[] {scalar, vector, otherVector, ints, matrix}) {
          try (Outputs out = squarePlusTwo.call(Map.of("x", x))) {
            System.out.printf("x %-30s -> y %-30s (traces so far: %d)%n",
                describe(x), describe(out.get("y")), squarePlusTwo.traceCount());
          }
        }
      }
      System.out.println();
      System.out.println("polymorphic type: " + squarePlusTwo.functionType());
      System.out.println("traced " + squarePlusTwo.traceCount() + " concrete functions:");
      for (ConcreteFunctionInfo c : squarePlusTwo.concreteFunctions()) {
        System.out.println("  " + c.functionType() + "  ->  " + c.outputNames() + "   [" + c.name() + "]");
      }
    }
  }

  private static String describe(Tensor t) {
    StringBuilder values = new StringBuilder();
    long n = t.shape().size();
    for (long i = 0; i < n; i++) {
      long[] coords = t.shape().numDimensions() == 0 ? new long[0] : unravel(i, t.shape());
      Object v = t instanceof TFloat32 ? ((TFloat32) t).getFloat(coords)
          : t instanceof TFloat64 ? ((TFloat64) t).getDouble(coords)
          : t instanceof TInt32 ? ((TInt32) t).getInt(coords) : "?";
      values.append(i == 0 ? "" : ", ").append(v);
    }
    return t.dataType() + t.shape().toString() + " [" + values + "]";
  }

  private static long[] unravel(long index, Shape shape) {
    long[] coords = new long[shape.numDimensions()];
    for (int d = coords.length - 1; d >= 0; d--) {
      coords[d] = index % shape.get(d);
      index /= shape.get(d);
    }
    return coords;
  }
}
