package dev.polyfn.internal.structure;

import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import dev.polyfn.SparseOperand;
import dev.polyfn.TensorSpec;
import java.util.List;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * {@code org.tensorflow.SparseTensor} as a built-in composite: indices, values and dense shape
 * are three graph inputs; the type is the values' dtype and the dense shape (as Python's
 * {@code SparseTensorSpec}), so the number of non-zeros is not part of the signature.
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public final class SparseType implements CompositeType<SparseTensor, SparseOperand> {
  private static final List<String> NAMES = List.of("indices", "values", "dense_shape");

  @Override
  public String name() {
    return "SparseTensor";
  }

  @Override
  public Class<SparseTensor> valueClass() {
    return SparseTensor.class;
  }

  @Override
  public Class<SparseOperand> viewClass() {
    return SparseOperand.class;
  }

  @Override
  public CompositeSpec spec(SparseTensor value) {
    TInt64 dense = value.denseShape();
    if (dense.rank() != 1) {
      throw new IllegalArgumentException("a SparseTensor's dense shape must be a vector, got rank " + dense.rank());
    }
    int rank = (int) dense.shape().get(0);
    long[] dims = new long[rank];
    for (int i = 0; i < rank; i++) {
      dims[i] = dense.getLong(i);
    }
    Class<? extends TType> dtype = value.values().type();
    return new CompositeSpec(dtype, Shape.of(dims), null, NAMES, List.of(
        TensorSpec.of(TInt64.class, Shape.of(-1, rank)),
        TensorSpec.of(dtype, Shape.of(-1)),
        TensorSpec.of(TInt64.class, Shape.of(rank))));
  }

  @Override
  public Tensor component(SparseTensor value, int i) {
    return i == 0 ? value.indices() : i == 1 ? value.values() : value.denseShape();
  }

  @Override
  public SparseOperand view(CompositeSpec spec, List<Operand<?>> components) {
    return new SparseOperand((Operand<TInt64>) components.get(0), components.get(1), (Operand<TInt64>) components.get(2));
  }

  @Override
  public List<Operand<?>> components(SparseOperand view) {
    return List.of(view.indices(), view.values(), view.denseShape());
  }

  @Override
  public SparseTensor fromComponents(List<Tensor> components) {
    return SparseTensor.of((TInt64) components.get(0), (TType) components.get(1), (TInt64) components.get(2));
  }
}
