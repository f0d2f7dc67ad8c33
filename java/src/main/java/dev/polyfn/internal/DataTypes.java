package dev.polyfn.internal;

import java.util.ArrayList;
import java.util.List;
import org.tensorflow.internal.types.registry.TensorTypeRegistry;
import org.tensorflow.types.TBfloat16;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint16;
import org.tensorflow.types.TUint8;
import org.tensorflow.types.family.TType;

/** Maps TensorFlow Java tensor classes, concrete or family, to TF_DataType codes. */
public final class DataTypes {
  private static final List<Class<? extends TType>> CONCRETE =
      List.of(TFloat32.class, TFloat64.class, TFloat16.class, TBfloat16.class, TInt32.class,
          TInt64.class, TUint8.class, TUint16.class, TBool.class, TString.class);

  private DataTypes() {}

  /**
   * The dtype codes a parameter of {@code type} accepts: one for a concrete class, every member
   * for a family ({@code TFloating}, {@code TNumber}...), none (meaning any) for {@code TType}.
   */
  public static int[] accepted(Class<? extends TType> type) {
    if (type == TType.class) {
      return new int[0];
    }
    if (isConcrete(type)) {
      return new int[] {code(type)};
    }
    List<Integer> codes = new ArrayList<>();
    for (Class<? extends TType> c : CONCRETE) {
      if (type.isAssignableFrom(c)) {
        codes.add(code(c));
      }
    }
    if (codes.isEmpty()) {
      throw new IllegalArgumentException("no TensorFlow tensor type implements " + type.getName());
    }
    return codes.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * Whether {@code type} is one dtype ({@code TFloat32}) rather than a family ({@code TFloating}).
   * TensorFlow Java declares both as interfaces, so this looks the class up among the concrete
   * tensor classes.
   */
  public static boolean isConcrete(Class<? extends TType> type) {
    return CONCRETE.contains(type);
  }

  /**
   * Whether TensorFlow Java has a tensor class for {@code dtype}, so that a tensor of it can be
   * handed to the caller (not for complex numbers, quantized types, resources or variants).
   */
  public static boolean hasTensorClass(org.tensorflow.proto.DataType dtype) {
    int n = dtype.getNumber();
    for (int c : Codes.CONCRETE) {
      if (c == n) {
        return true;
      }
    }
    return false;
  }

  /** The codes of the concrete classes, looked up once: every trace checks each output's dtype. */
  private static final class Codes {
    static final int[] CONCRETE = DataTypes.CONCRETE.stream().mapToInt(DataTypes::code).toArray();
  }

  /** The TF_DataType code of a concrete tensor class. */
  public static int code(Class<? extends TType> type) {
    return TensorTypeRegistry.find(type).dataType().getNumber();
  }

  /**
   * The bytes of one element of {@code dtype}, or -1 for a dtype of variable-length elements
   * (strings). Known also for the dtypes a restored variable may have that TensorFlow Java has no
   * tensor class for: int8, int16, uint32, uint64, complex64 and complex128.
   *
   * @throws IllegalArgumentException for another dtype TensorFlow Java has no tensor class for
   */
  public static int byteSize(org.tensorflow.proto.DataType dtype) {
    switch (dtype) {
      case DT_INT8:
        return 1;
      case DT_INT16:
        return 2;
      case DT_UINT32:
        return 4;
      case DT_UINT64:
      case DT_COMPLEX64:
        return 8;
      case DT_COMPLEX128:
        return 16;
      default:
        var info = TensorTypeRegistry.find(dtype);
        return info.isVariableLength() ? -1 : info.byteSize();
    }
  }

  /**
   * TensorFlow Java's tensor class for {@code dtype} (from its internal type registry, which only
   * this package reads).
   *
   * @throws IllegalArgumentException if TensorFlow Java has none
   */
  public static Class<? extends TType> tensorClass(org.tensorflow.proto.DataType dtype) {
    return TensorTypeRegistry.find(dtype).type();
  }
}
