package dev.polyfn.internal.saved;

import dev.polyfn.Variable;
import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.TensorFlowInternals;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.Operation;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.train.Restore;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TString;

/**
 * A SavedModel's variables made from its checkpoint: the values read by an eager RestoreV2 and
 * assigned to new {@link Variable}s of the dtype and shape the SavedModel declares, without making
 * TensorFlow Java tensors of them (it has no tensor class for some dtypes a variable may have).
 */
final class CheckpointVariables {
  private CheckpointVariables() {}

  /**
   * Adds a variable holding each of {@code values} (eager operands of {@code dtypes}, which may be
   * dtypes TensorFlow Java has no tensor class for: an int8 variable of a quantized model) to
   * {@code out}, of the shape the SavedModel declares for it ({@code declared}, whose sizes or rank may be unknown: a Python variable
   * created with {@code shape=None}, whose functions were traced for any shape), and returns it; if
   * one cannot be made, those made already are closed. For Polyfn's and Python's SavedModels.
   */
  static List<Variable<?>> variablesOf(List<Operand<?>> values, List<DataType> dtypes, List<TensorShapeProto> declared,
      List<Variable<?>> out) {
    try {
      for (int i = 0; i < values.size(); i++) {
        out.add(Variable.restored(values.get(i), dtypes.get(i), shape(declared.get(i))));
      }
      return out;
    } catch (RuntimeException e) {
      out.forEach(Variable::close);
      throw e;
    }
  }

  /**
   * The checkpoint's tensors {@code keys} of {@code dtypes} at {@code prefix}, read by an eager
   * RestoreV2 (built by name: TensorFlow Java's wrapper wants a tensor class per dtype, which some
   * dtypes lack); eager operands of TensorFlow Java's default session. The caller has checked the
   * index ({@link CheckpointIndex#check}).
   */
  static List<Operand<?>> restoreV2(Path prefix, String[] keys, List<DataType> dtypes) {
    Ops tf = Ops.create(EagerSession.getDefault());
    String[] slices = new String[keys.length];
    Arrays.fill(slices, "");
    // Strings fed as tensors, not eager constants: see TensorFlowInternals.eagerInput.
    try (TString path = TString.scalarOf(prefix.toString()); TString names = TString.vectorOf(keys);
         TString noSlices = TString.vectorOf(slices)) {
      synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe
        Operation op = tf.scope().opBuilder(Restore.OP_NAME, "Restore").addInput(TensorFlowInternals.eagerInput(path).asOutput())
            .addInput(TensorFlowInternals.eagerInput(names).asOutput())
            .addInput(TensorFlowInternals.eagerInput(noSlices).asOutput())
            .setAttr("dtypes", dtypes.toArray(new DataType[0])).build();
        List<Operand<?>> out = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
          out.add(op.output(i));
        }
        return out;
      }
    }
  }

  /** A declared shape as TensorFlow Java's: -1 for an unknown size, {@link Shape#unknown()} for an unknown rank. */
  private static Shape shape(TensorShapeProto declared) {
    if (declared.getUnknownRank()) {
      return Shape.unknown();
    }
    return Shape.of(declared.getDimList().stream().mapToLong(d -> d.getSize() < 0 ? Shape.UNKNOWN_SIZE : d.getSize()).toArray());
  }
}
