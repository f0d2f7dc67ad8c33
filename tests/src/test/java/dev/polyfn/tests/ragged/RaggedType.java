package dev.polyfn.tests.ragged;

import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import dev.polyfn.TensorSpec;
import java.util.List;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * {@link Ragged} as a composite type, defined with Polyfn's protocol alone: two graph inputs
 * (values, row splits) whose lengths, the value count and the row count, are both in the
 * signature and generalize independently under reduce-retracing.
 */
public final class RaggedType implements CompositeType<Ragged, RaggedOperand> {
  public static final RaggedType INSTANCE = new RaggedType();
  private static final List<String> NAMES = List.of("values", "row_splits");

  private RaggedType() {}

  @Override
  public String name() {
    return "Ragged";
  }

  @Override
  public Class<Ragged> valueClass() {
    return Ragged.class;
  }

  @Override
  public Class<RaggedOperand> viewClass() {
    return RaggedOperand.class;
  }

  @Override
  public CompositeSpec spec(Ragged r) {
    long values = r.values().shape().get(0);
    long splits = r.rowSplits().shape().get(0);
    return new CompositeSpec(TFloat32.class, Shape.of(splits - 1, -1), null, NAMES,
        List.of(TensorSpec.of(TFloat32.class, Shape.of(values)), TensorSpec.of(TInt64.class, Shape.of(splits))));
  }

  @Override
  public Tensor component(Ragged r, int i) {
    return i == 0 ? r.values() : r.rowSplits();
  }

  @Override
  @SuppressWarnings("unchecked")
  public RaggedOperand view(CompositeSpec spec, List<Operand<?>> components) {
    return new RaggedOperand((Operand<TFloat32>) components.get(0), (Operand<TInt64>) components.get(1));
  }

  @Override
  public List<Operand<?>> components(RaggedOperand view) {
    return List.of(view.values(), view.rowSplits());
  }

  @Override
  public Ragged fromComponents(List<Tensor> components) {
    return new Ragged((TFloat32) components.get(0), (TInt64) components.get(1));
  }
}
