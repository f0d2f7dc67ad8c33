package dev.polyfn;

import java.util.List;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.types.family.TIntegral;
import org.tensorflow.types.family.TType;

/**
 * A {@link RaggedTensor} in a function's body: the flat values and each ragged dimension's row
 * splits (outermost first) as operands. A parameter declared with {@link Inputs#ragged} is one;
 * return one (alone or in a nest, from a {@link NestFunction}) and the caller gets a {@link
 * RaggedTensor}.
 *
 * <pre>{@code
 * RaggedOperand<TFloat32> r = in.ragged("r", TFloat32.class);
 * // each row's sum: the running sum of the values read at the row splits, differenced
 * Operand<TFloat32> running = tf.concat(List.of(tf.constant(new float[] {0f}),
 *     tf.math.cumsum(r.flatValues(), tf.constant(0))), tf.constant(0));
 * Operand<TFloat32> at = tf.gather(running, r.rowSplits(), tf.constant(0));
 * Operand<TFloat32> sums = tf.math.sub(tf.stridedSlice(at, Indices.sliceFrom(1)), tf.stridedSlice(at, Indices.sliceTo(-1)));
 * // the same rows, values doubled: the caller gets a RaggedTensor
 * RaggedOperand<TFloat32> doubled = new RaggedOperand<>(tf.math.mul(r.flatValues(), tf.constant(2f)), r.nestedRowSplits());
 * }</pre>
 *
 * @param flatValues the values of every row, concatenated
 * @param nestedRowSplits the row splits of each ragged dimension, outermost first (at least one)
 * @param <T> the values' type
 */
public record RaggedOperand<T extends TType>(Operand<T> flatValues, List<? extends Operand<? extends TIntegral>> nestedRowSplits) {
  /** Checks the structure: flat values and at least one row splits operand, none null. */
  public RaggedOperand {
    Objects.requireNonNull(flatValues, "flatValues");
    nestedRowSplits = List.copyOf(Objects.requireNonNull(nestedRowSplits, "nestedRowSplits"));
    if (nestedRowSplits.isEmpty()) {
      throw new IllegalArgumentException("a RaggedOperand needs the row splits of at least one ragged dimension");
    }
  }

  /** The outermost ragged dimension's row splits. */
  public Operand<? extends TIntegral> rowSplits() {
    return nestedRowSplits.get(0);
  }

  /** The number of ragged dimensions. */
  public int raggedRank() {
    return nestedRowSplits.size();
  }
}
