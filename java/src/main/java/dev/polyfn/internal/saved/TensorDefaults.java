package dev.polyfn.internal.saved;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.trace.Param;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.EagerSession;
import org.tensorflow.Tensor;
import org.tensorflow.exceptions.TensorFlowException;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.Struct.StructuredValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TString;
import org.tensorflow.types.family.TType;

/**
 * The default tensors of optional tensor parameters in a SavedModel, kept as Python keeps a
 * {@code tf.function}'s default argument values: as {@code TensorProto}s, in {@code polyfn.json}
 * (base64) and in the {@code FunctionSpec} of Python's object graph (its full argspec's {@code
 * defaults}, each a {@code StructuredValue} tensor value, which Python's loader turns into a
 * constant). Reading one checks that it is a tensor the parameter accepts before a call can use it.
 */
public final class TensorDefaults {
  /** A default larger than this is refused at save: it travels in polyfn.json and the object graph. */
  static final int MAX_BYTES = 16 << 20;

  private TensorDefaults() {}

  private static TString serialized(Ops tf, TType t) {
    synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe
      return (TString) TensorFlowInternals.copyOut(tf.io.serializeTensor(TensorFlowInternals.eagerInput(t)));
    }
  }

  /** The {@code TensorProto} of parameter {@code p}'s default tensor (a save: refused, naming it, if unusable). */
  static TensorProto proto(String function, Param p) {
    if (!(p.defaultValue() instanceof TType t)) {
      throw new IllegalStateException("cannot save '" + function + "': parameter '" + p.name() + "' has a default "
          + (p.defaultValue() == null ? "of null" : p.defaultValue().getClass().getName()) + ", not a tensor");
    }
    Ops tf = Ops.create(EagerSession.getDefault());
    byte[] bytes;
    try (TString s = serialized(tf, t)) {
      bytes = s.asBytes().getObject();
    } catch (IllegalStateException e) {
      throw new IllegalStateException("cannot save '" + function + "': the default tensor of parameter '" + p.name()
          + "' is closed", e);
    }
    if (bytes.length > MAX_BYTES) {
      throw new IllegalStateException("cannot save '" + function + "': the default tensor of parameter '" + p.name()
          + "' takes " + bytes.length + " bytes, more than the " + MAX_BYTES + " a saved default may take");
    }
    try {
      return TensorProto.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("cannot save '" + function + "': the default tensor of parameter '" + p.name()
          + "' cannot be serialized: " + e.getMessage(), e);
    }
  }

  /** {@code proto} as {@code polyfn.json} holds it. */
  static String text(TensorProto proto) {
    return Base64.getEncoder().encodeToString(proto.toByteArray());
  }

  /** The {@code TensorProto} of a {@code polyfn.json} default ({@code at} names the field). */
  static TensorProto fromText(String at, Object text) {
    if (!(text instanceof String s)) {
      throw new IllegalArgumentException(at + ": expected a base64 TensorProto, got " + text);
    }
    try {
      return TensorProto.parseFrom(Base64.getDecoder().decode(s));
    } catch (IllegalArgumentException | InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(at + ": not a base64 TensorProto (" + e.getMessage() + ")");
    }
  }

  /**
   * A new tensor, which the caller owns, holding {@code proto}: checked against the parameter's
   * tensor class {@code type} and declared {@code shape} (null: any), every failure an
   * IllegalArgumentException naming {@code at}.
   */
  static TType tensor(String at, TensorProto proto, Class<? extends TType> type, Shape shape) {
    checkSize(at, proto, shape);
    Class<? extends TType> cls;
    try {
      cls = DataTypes.tensorClass(proto.getDtype());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(at + ": a default of dtype " + proto.getDtype()
          + ", which TensorFlow Java has no tensor class for");
    }
    int[] accepted = type == null ? new int[0] : DataTypes.accepted(type);
    if (accepted.length > 0 && Arrays.stream(accepted).noneMatch(c -> c == proto.getDtype().getNumber())) {
      throw new IllegalArgumentException(at + ": a default of dtype " + proto.getDtype() + " for a parameter of "
          + type.getSimpleName());
    }
    Ops tf = Ops.create(EagerSession.getDefault());
    TType t;
    try (TString bytes = TString.tensorOfBytes(org.tensorflow.ndarray.NdArrays.scalarOfObject(proto.toByteArray()))) {
      synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe
        t = TensorFlowInternals.copyOut(tf.io.parseTensor(TensorFlowInternals.eagerInput(bytes), cls));
      }
    } catch (TensorFlowException | IllegalArgumentException e) {
      throw new IllegalArgumentException(at + ": the default tensor cannot be read: " + e.getMessage(), e);
    }
    if (shape != null && !shape.isUnknown() && !fits(t.shape(), shape)) {
      Shape s = t.shape();
      t.close();
      throw new IllegalArgumentException(at + ": a default of shape " + s + " for a parameter of shape " + shape);
    }
    return t;
  }

  /**
   * Checks what TensorFlow would allocate for {@code proto} before it parses it: TensorFlow makes
   * a tensor of the declared shape and repeats the last value given to fill it, so a few bytes can
   * claim gigabytes (a shape of 4e9 floats with one value) and kill the JVM. The shape must be
   * fully defined, fit the parameter's ({@code declared}, null: any), hold at most {@link
   * #MAX_BYTES} of data (a string tensor: its strings as filled, plus each element's own header),
   * and the values given must not outnumber the elements.
   */
  private static void checkSize(String at, TensorProto proto, Shape declared) {
    TensorShapeProto shape = proto.getTensorShape();
    if (shape.getUnknownRank() || shape.getDimCount() > 254) {
      throw new IllegalArgumentException(at + ": a default tensor of " + (shape.getUnknownRank() ? "unknown rank"
          : "rank " + shape.getDimCount() + " (TensorFlow's limit is 254)"));
    }
    long count = 1;
    long[] dims = new long[shape.getDimCount()];
    for (int i = 0; i < dims.length; i++) {
      dims[i] = shape.getDim(i).getSize();
      if (dims[i] < 0) {
        throw new IllegalArgumentException(at + ": a default tensor with dimension " + i + " of size " + dims[i]);
      }
      count = dims[i] == 0 || count == 0 ? 0 : count > MAX_BYTES / dims[i] ? MAX_BYTES + 1L : count * dims[i];
    }
    if (declared != null && !declared.isUnknown() && !fits(Shape.of(dims), declared)) {
      throw new IllegalArgumentException(at + ": a default of shape " + Shape.of(dims) + " for a parameter of shape "
          + declared);
    }
    long values = valueCount(proto);
    long bytes;
    if (proto.getDtype() == DataType.DT_STRING) {
      long given = 0;
      long last = 0;
      for (var v : proto.getStringValList()) {
        given += v.size();
        last = v.size();
      }
      // Each element is a TF_TString (24 bytes) holding its string; missing ones repeat the last.
      bytes = count > MAX_BYTES ? count : count * 24 + given + Math.max(0, count - values) * last;
    } else {
      int size = elementSize(proto.getDtype());
      if (size == 0) {
        throw new IllegalArgumentException(at + ": a default of dtype " + proto.getDtype()
            + ", which a saved default cannot hold");
      }
      bytes = count > MAX_BYTES ? count : count * size;
      if (!proto.getTensorContent().isEmpty() && proto.getTensorContent().size() != bytes) {
        throw new IllegalArgumentException(at + ": a default tensor of " + count + " elements with "
            + proto.getTensorContent().size() + " bytes of content, not " + bytes);
      }
    }
    if (bytes > MAX_BYTES) {
      throw new IllegalArgumentException(at + ": a default tensor of shape " + Arrays.toString(dims) + " would take over "
          + MAX_BYTES + " bytes, more than a saved default may take");
    }
    if (values > Math.max(count, 1)) {
      throw new IllegalArgumentException(at + ": a default tensor of " + count + " elements with " + values + " values");
    }
  }

  /** How many values {@code proto} gives in its typed fields (not its tensor_content). */
  private static long valueCount(TensorProto p) {
    return (long) p.getHalfValCount() + p.getFloatValCount() + p.getDoubleValCount() + p.getIntValCount()
        + p.getStringValCount() + p.getScomplexValCount() + p.getInt64ValCount() + p.getBoolValCount()
        + p.getDcomplexValCount() + p.getResourceHandleValCount() + p.getVariantValCount() + p.getUint32ValCount()
        + p.getUint64ValCount() + p.getFloat8Val().size();
  }

  /** Bytes per element of a fixed-size dtype; 0 for any other (resources, variants, unknown codes). */
  private static int elementSize(DataType t) {
    return switch (t) {
      case DT_BOOL, DT_INT8, DT_UINT8, DT_QINT8, DT_QUINT8, DT_FLOAT8_E5M2, DT_FLOAT8_E4M3FN -> 1;
      case DT_HALF, DT_BFLOAT16, DT_INT16, DT_UINT16, DT_QINT16, DT_QUINT16 -> 2;
      case DT_FLOAT, DT_INT32, DT_UINT32, DT_QINT32 -> 4;
      case DT_DOUBLE, DT_INT64, DT_UINT64, DT_COMPLEX64 -> 8;
      case DT_COMPLEX128 -> 16;
      default -> 0;
    };
  }

  private static boolean fits(Shape value, Shape declared) {
    if (value.numDimensions() != declared.numDimensions()) {
      return false;
    }
    for (int i = 0; i < value.numDimensions(); i++) {
      if (declared.get(i) >= 0 && declared.get(i) != value.get(i)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The tensor defaults of a Python {@code tf.function}'s positional arguments ({@code argCount}
   * of them, {@code self} left out), by argument index.
   */
  static Map<Integer, TensorProto> ofPython(SavedObject function, int argCount) {
    Map<Integer, TensorProto> out = new HashMap<>();
    List<StructuredValue> defaults = new ArrayList<>();
    for (var pair : function.getFunction().getFunctionSpec().getFullargspec().getNamedTupleValue().getValuesList()) {
      if (pair.getKey().equals("defaults")) {
        StructuredValue d = pair.getValue();
        defaults = d.hasTupleValue() ? d.getTupleValue().getValuesList()
            : d.hasListValue() ? d.getListValue().getValuesList() : List.of();
      }
    }
    int first = argCount - defaults.size();
    for (int i = 0; i < defaults.size(); i++) {
      if (first + i >= 0 && defaults.get(i).hasTensorValue()) {
        out.put(first + i, defaults.get(i).getTensorValue());
      }
    }
    return out;
  }

  /** Closes {@code tensors}, for a load that fails after reading them. */
  static void closeAll(Iterable<? extends Tensor> tensors) {
    for (Tensor t : tensors) {
      if (t != null) {
        t.close();
      }
    }
  }
}
