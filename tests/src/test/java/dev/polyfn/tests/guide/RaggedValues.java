package dev.polyfn.tests.guide;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.RaggedOperand;
import dev.polyfn.RaggedTensor;
import java.util.List;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.index.Indices;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * The ragged tensor snippet of docs/structured-values.md, compiled so that it cannot drift
 * (DocsTest checks that it is copied from here; the tests' own user composite, also called
 * RaggedOperand, lives in ValuesAndFiles).
 */
final class RaggedValues {
  private RaggedValues() {}

  static MapFunction rowSums() {
    MapFunction rowSums = Function.define((tf, in) -> {
      RaggedOperand<TFloat32> r = in.ragged("r", TFloat32.class);
      // each row's sum: the running sum of the values read at the row splits, differenced
      Operand<TFloat32> running = tf.concat(List.of(tf.constant(new float[] {0f}),
          tf.math.cumsum(r.flatValues(), tf.constant(0))), tf.constant(0));
      Operand<TFloat32> at = tf.gather(running, r.rowSplits(), tf.constant(0));
      return Map.of("sums", tf.math.sub(tf.stridedSlice(at, Indices.sliceFrom(1)), tf.stridedSlice(at, Indices.sliceTo(-1))));
    });
    try (TFloat32 values = TFloat32.vectorOf(1f, 2f, 3f);
         TInt64 splits = TInt64.vectorOf(0, 2, 2, 3);                    // [[1, 2], [], [3]]
         Outputs out = rowSums.call(Map.of("r", RaggedTensor.of(values, splits)))) {
      out.get("sums");                                                   // [3, 0, 3]
    }
    return rowSums;
  }
}
