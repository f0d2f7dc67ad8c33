package dev.polyfn;

import java.util.List;
import java.util.Objects;
import org.tensorflow.types.family.TIntegral;
import org.tensorflow.types.family.TType;

/**
 * A ragged tensor, Polyfn's counterpart of Python's {@code tf.RaggedTensor}: its flat values and
 * the row splits of each ragged dimension, outermost first ({@code nested_row_splits}). Row {@code
 * i} of a ragged dimension is the slice {@code [splits[i], splits[i + 1])} of the level below, the
 * last level's rows slicing the flat values. Functions take it as a parameter declared with {@link
 * Inputs#ragged} (or nested anywhere a tensor may be) and return it from a {@link NestFunction}
 * (the body returns a {@link RaggedOperand}). A function loaded from a Python SavedModel whose
 * input signature holds a {@code tf.RaggedTensorSpec} takes one too.
 *
 * <pre>{@code
 * // [[1, 2], [], [3]]: 3 rows of float values, int64 row splits (int32 splits work as well)
 * try (TFloat32 values = TFloat32.vectorOf(1f, 2f, 3f);
 *      TInt64 splits = TInt64.vectorOf(0, 2, 2, 3);
 *      Outputs out = f.call(Map.of("r", RaggedTensor.of(values, splits)))) {
 *   ...
 * }
 * }</pre>
 *
 * <p>A call checks each argument before TensorFlow sees it: the flat values have rank 1 or more
 * (inner dims are uniform, as in Python), every row splits tensor is an int64 or int32 vector (one
 * dtype for all), starts at 0, never decreases and ends at the number of rows of the level below
 * (of values, for the last); otherwise the call fails with {@link IllegalArgumentException}
 * naming the argument's path. TensorFlow gets a copy of the row splits that were checked (O(rows);
 * the flat values are not copied), so another thread writing into them cannot slip unchecked
 * splits past the check. As Python's {@code RaggedTensorSpec}, the values' dtype, the ragged
 * rank, the row splits' dtype, the number of rows and the flat values' inner dims are the
 * signature; the numbers of values and of inner rows are not.
 *
 * <p>The tensors stay owned by whoever made them (the caller's arguments; a {@link NestOutputs}
 * for returned ones).
 *
 * @param flatValues the values of every row, concatenated ({@code [values, inner dims...]})
 * @param nestedRowSplits the row splits of each ragged dimension, outermost first (at least one)
 * @param <T> the values' type
 */
public record RaggedTensor<T extends TType>(T flatValues, List<? extends TIntegral> nestedRowSplits) {
  /** Checks the structure: flat values and at least one row splits tensor, none null. */
  public RaggedTensor {
    Objects.requireNonNull(flatValues, "flatValues");
    Objects.requireNonNull(nestedRowSplits, "nestedRowSplits");
    nestedRowSplits = List.copyOf(nestedRowSplits);
    if (nestedRowSplits.isEmpty()) {
      throw new IllegalArgumentException("a RaggedTensor needs the row splits of at least one ragged dimension");
    }
  }

  /** A ragged tensor of {@code flatValues} split by {@code nestedRowSplits}, outermost first. */
  @SafeVarargs
  public static <T extends TType, S extends TIntegral> RaggedTensor<T> of(T flatValues, S... nestedRowSplits) {
    return new RaggedTensor<>(flatValues, List.of(nestedRowSplits));
  }

  /** The outermost ragged dimension's row splits ({@code rows + 1} entries). */
  public TIntegral rowSplits() {
    return nestedRowSplits.get(0);
  }

  /** The number of ragged dimensions (Python's {@code ragged_rank}). */
  public int raggedRank() {
    return nestedRowSplits.size();
  }
}
