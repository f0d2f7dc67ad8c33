package dev.polyfn;

import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.Native;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.internal.types.registry.TensorTypeRegistry;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.family.TType;

/**
 * The {@link Inputs} a body sees while it is traced: each declaration asks Rust for the
 * parameter's placeholder specs (typed from the call's argument under the declared constraint) and
 * builds the placeholders in the trace graph.
 */
final class TracingInputs implements Inputs {
  private final long trace;
  private final Ops tf;
  private final Map<String, ?> args;
  private final List<String> placeholders = new ArrayList<>();

  TracingInputs(long trace, Ops tf, Map<String, ?> args) {
    this.trace = trace;
    this.tf = tf;
    this.args = args;
  }

  @Override
  public <T extends TType> Operand<T> input(String name, Class<T> type) {
    return declare(name, type, null);
  }

  @Override
  public <T extends TType> Operand<T> input(String name, Class<T> type, Shape shape) {
    Objects.requireNonNull(shape, "shape");
    return declare(name, type, shape);
  }

  private <T extends TType> Operand<T> declare(String name, Class<T> type, Shape shape) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    CallBuffer value = CallBuffer.fresh();
    Object arg = args.get(name);
    if (arg != null) {
      if (!(arg instanceof Tensor)) {
        throw new IllegalArgumentException(
            "argument '" + name + "': expected a tensor of " + type.getSimpleName() + ", got "
                + arg.getClass().getName());
      }
      value.tensor(name, (Tensor) arg);
    } else if (args.containsKey(name)) {
      throw new IllegalArgumentException(
          "argument '" + name + "': expected a tensor of " + type.getSimpleName() + ", got null");
    }
    int rank = shape == null ? -2 : shape.isUnknown() ? -1 : shape.numDimensions();
    long[] dims = rank > 0 ? shape.asArray() : new long[0];
    long[] spec = Native.declareTensor(
        trace, name, DataTypes.accepted(type), rank, dims, value.facts(), value.factCount());
    return placeholder(spec, 1);
  }

  /** Builds the placeholder described at {@code spec[at]}: dtype, rank, dims. */
  @SuppressWarnings("unchecked")
  private <T extends TType> Operand<T> placeholder(long[] spec, int at) {
    Class<T> concrete = (Class<T>) TensorTypeRegistry.find(DataType.forNumber((int) spec[at])).type();
    int rank = (int) spec[at + 1];
    Shape shape = rank < 0 ? Shape.unknown() : Shape.of(java.util.Arrays.copyOfRange(spec, at + 2, at + 2 + rank));
    Placeholder<T> p = tf.placeholder(concrete, Placeholder.shape(shape));
    placeholders.add(p.op().name());
    return p;
  }

  String[] placeholderNames() {
    return placeholders.toArray(new String[0]);
  }
}
