package dev.polyfn.internal.structure;

import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import dev.polyfn.RaggedOperand;
import dev.polyfn.RaggedTensor;
import dev.polyfn.TensorSpec;
import dev.polyfn.internal.TensorFlowInternals;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TIntegral;
import org.tensorflow.types.family.TType;

/**
 * {@link RaggedTensor} as a built-in composite, flattened as Python flattens a {@code
 * RaggedTensorSpec} into a concrete function's inputs ({@code _to_components}): the flat values,
 * then each ragged dimension's row splits, outermost first. Its type is {@code
 * RaggedTensorSpec.from_value}'s: the values' dtype, the static shape ({@code [rows, -1 per ragged
 * dimension, the flat values' inner dims]}) and the component specs ({@code [-1, inner dims]} for
 * the flat values, {@code [rows + 1]} for the outer row splits, {@code [-1]} for inner ones, in
 * the row splits' dtype).
 *
 * <p>{@link #spec} checks the value's dtypes and ranks; {@link #checkedCopy}, on every call, its
 * row splits, before TensorFlow's ragged kernels see splits they would trust. A failure is a
 * {@link Nests.PathError}, so the caller's message names the argument's path.
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public final class RaggedType implements CompositeType<RaggedTensor, RaggedOperand> {
  public static final String NAME = "RaggedTensor";

  /** The component names of a ragged tensor of {@code raggedRank} ragged dimensions, in feeding order. */
  public static List<String> names(int raggedRank) {
    List<String> names = new ArrayList<>(raggedRank + 1);
    names.add("flat_values");
    for (int i = 0; i < raggedRank; i++) {
      names.add("row_splits_" + i);
    }
    return names;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Class<RaggedTensor> valueClass() {
    return RaggedTensor.class;
  }

  @Override
  public Class<RaggedOperand> viewClass() {
    return RaggedOperand.class;
  }

  @Override
  public CompositeSpec spec(RaggedTensor value) {
    TType values = (TType) value.flatValues();
    List<? extends TIntegral> splits = value.nestedRowSplits();
    if (values.rank() < 1) {
      throw bad("flat_values must have rank 1 or more (the values, then their uniform inner dims), got a scalar");
    }
    Class<? extends TType> splitsType = splits.get(0).type();
    for (int i = 0; i < splits.size(); i++) {
      TType s = splits.get(i);
      if (s.type() != TInt64.class && s.type() != TInt32.class) {
        throw bad("row_splits_" + i + " must be an int64 or int32 tensor, got " + s.dataType());
      }
      if (s.type() != splitsType) {
        throw bad("row_splits_" + i + " is a " + s.dataType() + " tensor, row_splits_0 a " + splits.get(0).dataType()
            + " one: the row splits of every ragged dimension share one dtype");
      }
      if (s.rank() != 1 || s.shape().get(0) < 1) {
        throw bad("row_splits_" + i + " must be a vector of at least one split (0), got shape " + s.shape());
      }
    }
    long[] inner = values.shape().asArray();
    long[] dims = new long[splits.size() + inner.length];
    dims[0] = splits.get(0).shape().get(0) - 1;
    for (int i = 1; i < dims.length; i++) {
      dims[i] = i <= splits.size() ? -1 : inner[i - splits.size()];
    }
    inner[0] = -1;
    List<TensorSpec> components = new ArrayList<>(splits.size() + 1);
    components.add(TensorSpec.of(values.type(), Shape.of(inner)));
    components.add(TensorSpec.of(splitsType, Shape.of(dims[0] + 1)));
    for (int i = 1; i < splits.size(); i++) {
      components.add(TensorSpec.of(splitsType, Shape.of(-1)));
    }
    return new CompositeSpec(values.type(), Shape.of(dims), null, names(splits.size()), components);
  }

  /**
   * {@code value} as TensorFlow will see it: every row splits tensor read once, checked (from 0,
   * never decreasing, ending at the rows or values of the level below) and copied into a tensor
   * handed to {@code owner}, which closes it after the call. The caller's splits never reach
   * TensorFlow: another thread could rewrite them between the check and the run, and ragged
   * kernels trust their splits. The copy costs O(rows); the flat values are passed as they are.
   * Call after {@link #spec}, which checks the dtypes and ranks.
   *
   * @throws Nests.PathError naming what is wrong (or closed)
   */
  @Override
  public RaggedTensor forCall(RaggedTensor value, Consumer<Tensor> owner) {
    return checkedCopy(value, owner);
  }

  static RaggedTensor<?> checkedCopy(RaggedTensor<?> value, Consumer<Tensor> owner) {
    List<? extends TIntegral> splits = value.nestedRowSplits();
    long[][] read = new long[splits.size()][];
    for (int i = 0; i < splits.size(); i++) {
      read[i] = read(i, splits.get(i));
    }
    for (int i = 0; i < splits.size(); i++) {
      boolean last = i == splits.size() - 1;
      long end = last ? value.flatValues().shape().get(0) : read[i + 1].length - 1;
      check(i, read[i], end, last ? "the number of values in flat_values" : "the number of rows row_splits_"
          + (i + 1) + " splits");
    }
    List<TIntegral> copies = new ArrayList<>(splits.size());
    for (int i = 0; i < splits.size(); i++) {
      TIntegral copy = splits.get(i) instanceof TInt64 ? TInt64.vectorOf(read[i]) : TInt32.vectorOf(ints(read[i]));
      owner.accept(copy);
      copies.add(copy);
    }
    return new RaggedTensor<>(value.flatValues(), copies);
  }

  private static int[] ints(long[] longs) {
    int[] out = new int[longs.length];
    for (int k = 0; k < longs.length; k++) {
      out[k] = (int) longs[k]; // read from an int32 tensor: exact
    }
    return out;
  }

  /** Checks row splits {@code s} of level {@code i}: from 0, never decreasing, to {@code end}. */
  private static void check(int i, long[] s, long end, String what) {
    if (s[0] != 0) {
      throw bad("row_splits_" + i + " must start at 0, got " + s[0]);
    }
    for (int k = 1; k < s.length; k++) {
      if (s[k] < s[k - 1]) {
        throw bad("row_splits_" + i + " must not decrease, got " + s[k - 1] + " then " + s[k] + " at index " + k);
      }
    }
    if (s[s.length - 1] != end) {
      throw bad("row_splits_" + i + " must end at " + end + " (" + what + "), got " + s[s.length - 1]);
    }
  }

  /** The splits of level {@code i}, read while Polyfn holds the tensor (another thread may close it). */
  private static long[] read(int i, TIntegral splits) {
    int n = (int) splits.shape().get(0);
    long[] out = new long[n];
    try {
      TensorFlowInternals.whileRetained(splits, () -> {
        if (splits instanceof TInt64 t) {
          t.copyTo(DataBuffers.of(out, false, false));
        } else {
          int[] ints = new int[n];
          ((TInt32) splits).copyTo(DataBuffers.of(ints, false, false));
          for (int k = 0; k < n; k++) {
            out[k] = ints[k];
          }
        }
      });
    } catch (IllegalStateException closed) {
      throw new Nests.PathError("component 'row_splits_" + i + "' of a RaggedTensor is closed", closed);
    }
    return out;
  }

  private static Nests.PathError bad(String what) {
    return new Nests.PathError("a RaggedTensor's " + what, null);
  }

  @Override
  public Tensor component(RaggedTensor value, int i) {
    return i == 0 ? value.flatValues() : (Tensor) value.nestedRowSplits().get(i - 1);
  }

  @Override
  public RaggedOperand view(CompositeSpec spec, List<Operand<?>> components) {
    return new RaggedOperand(components.get(0), (List) components.subList(1, components.size()));
  }

  @Override
  public List<Operand<?>> components(RaggedOperand view) {
    List<Operand<?>> out = new ArrayList<>();
    out.add(view.flatValues());
    out.addAll(view.nestedRowSplits());
    return out;
  }

  @Override
  public RaggedTensor fromComponents(List<Tensor> components) {
    return new RaggedTensor((TType) components.get(0), (List) components.subList(1, components.size()));
  }
}
