package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint8;

/**
 * A call's result describes each output (dtype, rank, dims) after the addresses, and Java builds
 * the tensor objects from those descriptions: every dtype and rank must come out as TensorFlow
 * computed it, for outputs whose shapes change from call to call, zero-sized ones and results
 * longer than the thread's reused array, on every call path (the first call, cached calls, the
 * session path the tests' low promotion count reaches).
 */
class OutputDescriptionTest {

  @Test
  void everyOutputHasTheDtypeAndShapeTensorFlowComputed() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1, -1));
          List<Operand<?>> outs = new ArrayList<>();
          outs.add(tf.math.add(x, tf.constant(1f))); // [n, m] float
          outs.add(tf.reduceSum(x, tf.constant(new int[] {0, 1}))); // scalar
          outs.add(tf.shape(x, TInt64.class)); // [2] int64
          outs.add(tf.dtypes.cast(x, TFloat64.class)); // [n, m] double
          outs.add(tf.math.greater(x, tf.constant(0.5f))); // [n, m] bool
          outs.add(tf.dtypes.cast(tf.reshape(x, tf.constant(new long[] {-1, 1, 1})), TUint8.class)); // [n*m, 1, 1]
          outs.add(tf.slice(x, tf.constant(new int[] {0, 0}), tf.constant(new int[] {0, -1}))); // [0, m]
          outs.add(tf.dtypes.asString(tf.dtypes.cast(x, TInt32.class))); // [n, m] string
          return outs;
        })) {
      for (int call = 0; call < 8; call++) {
        int n = 1 + call % 3;
        int m = 2 + call % 2;
        float[] values = new float[n * m];
        for (int i = 0; i < values.length; i++) {
          values[i] = i;
        }
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(n, m), org.tensorflow.ndarray.buffer.DataBuffers.of(values));
             ListOutputs out = f.call(Map.of("x", x))) {
          String at = "call " + call + " with x [" + n + ", " + m + "]";
          assertEquals(Shape.of(n, m), out.get(0, TFloat32.class).shape(), at);
          assertEquals(1f + values[values.length - 1], out.get(0, TFloat32.class).getFloat(n - 1, m - 1), 0f, at);
          assertEquals(Shape.scalar(), out.get(1, TFloat32.class).shape(), at);
          assertEquals(Shape.of(2), out.get(2, TInt64.class).shape(), at);
          assertArrayEquals(new long[] {n, m}, new long[] {out.get(2, TInt64.class).getLong(0), out.get(2, TInt64.class).getLong(1)}, at);
          assertEquals(Shape.of(n, m), out.get(3, TFloat64.class).shape(), at);
          assertEquals(Shape.of(n, m), out.get(4, TBool.class).shape(), at);
          assertEquals(false, out.get(4, TBool.class).getBoolean(0, 0), at); // 0 > 0.5
          assertEquals(true, out.get(4, TBool.class).getBoolean(n - 1, m - 1), at); // n*m-1 > 0.5
          assertEquals(Shape.of((long) n * m, 1, 1), out.get(5, TUint8.class).shape(), at);
          assertEquals(Shape.of(0, m), out.get(6, TFloat32.class).shape(), at);
          assertEquals(Shape.of(n, m), out.get(7, TString.class).shape(), at);
          assertEquals(String.valueOf(values.length - 1), out.get(7, TString.class).getObject(n - 1, m - 1), at);
        }
      }
    }
  }

  @Test
  void aResultLongerThanTheReusedArrayDescribesEveryOutput() {
    // 12 outputs of rank 5: 1 + 12 + 12 * 7 longs, far past the thread's first result array.
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          List<Operand<?>> outs = new ArrayList<>();
          for (int i = 0; i < 12; i++) {
            outs.add(tf.reshape(tf.math.add(x, tf.constant((float) i)), tf.constant(new long[] {1, 2, 1, 3, 1})));
          }
          return outs;
        })) {
      for (int call = 0; call < 6; call++) {
        try (TFloat32 x = TFloat32.vectorOf(0f, 1f, 2f, 3f, 4f, 5f);
             ListOutputs out = f.call(Map.of("x", x))) {
          assertEquals(12, out.size());
          for (int i = 0; i < 12; i++) {
            TFloat32 y = out.get(i, TFloat32.class);
            assertEquals(Shape.of(1, 2, 1, 3, 1), y.shape(), "output " + i + ", call " + call);
            assertEquals(i + 5f, y.getFloat(0, 1, 0, 2, 0), 0f, "output " + i + ", call " + call);
          }
        }
      }
    }
  }
}
