package dev.polyfn.internal;

import org.tensorflow.Tensor;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * Casts Java numbers, booleans and primitive arrays passed for tensor parameters to tensors of the
 * parameter's dtype, as {@code tf.function} converts Python numbers for a typed parameter.
 */
public final class Conversions {
  private static final int FLOAT = 1;
  private static final int DOUBLE = 2;
  private static final int INT32 = 3;
  private static final int INT64 = 9;
  private static final int BOOL = 10;

  private Conversions() {}

  /** Whether {@code value} is a Java value Polyfn can cast to a tensor. */
  public static boolean convertible(Object value) {
    return value instanceof Number || value instanceof Boolean || value instanceof float[]
        || value instanceof double[] || value instanceof int[] || value instanceof long[]
        || value instanceof boolean[];
  }

  /**
   * A new tensor holding {@code value}, of the parameter's dtype: its only dtype, or for a family
   * the dtype natural to the value (float for {@code float}, int32 for {@code int}...) when the
   * family has it, else the family's first.
   *
   * @throws IllegalArgumentException naming {@code path} when the value has no such dtype
   */
  public static Tensor toTensor(String path, Object value, Class<? extends TType> type) {
    int[] accepted = DataTypes.accepted(type);
    int natural = natural(value);
    int dtype = accepted.length == 0 || contains(accepted, natural) ? natural
        : accepted.length == 1 ? accepted[0]
        : contains(accepted, FLOAT) ? FLOAT : accepted[0];
    Tensor t = make(value, dtype);
    if (t == null) {
      throw new IllegalArgumentException("argument '" + path + "': cannot cast a "
          + value.getClass().getSimpleName() + " to a tensor of " + type.getSimpleName());
    }
    return t;
  }

  private static int natural(Object v) {
    if (v instanceof Float || v instanceof float[]) {
      return FLOAT;
    }
    if (v instanceof Double || v instanceof double[]) {
      return DOUBLE;
    }
    if (v instanceof Long || v instanceof long[]) {
      return INT64;
    }
    if (v instanceof Boolean || v instanceof boolean[]) {
      return BOOL;
    }
    return INT32;
  }

  private static boolean contains(int[] codes, int code) {
    for (int c : codes) {
      if (c == code) {
        return true;
      }
    }
    return false;
  }

  private static Tensor make(Object v, int dtype) {
    if (v instanceof Number) {
      Number n = (Number) v;
      switch (dtype) {
        case FLOAT: return TFloat32.scalarOf(n.floatValue());
        case DOUBLE: return TFloat64.scalarOf(n.doubleValue());
        case INT32: return TInt32.scalarOf(n.intValue());
        case INT64: return TInt64.scalarOf(n.longValue());
        default: return null;
      }
    }
    if (v instanceof Boolean) {
      return dtype == BOOL ? TBool.scalarOf((Boolean) v) : null;
    }
    double[] values = asDoubles(v);
    if (values == null) {
      return v instanceof boolean[] && dtype == BOOL ? TBool.vectorOf((boolean[]) v) : null;
    }
    switch (dtype) {
      case FLOAT: {
        float[] f = new float[values.length];
        for (int i = 0; i < f.length; i++) {
          f[i] = (float) values[i];
        }
        return TFloat32.vectorOf(f);
      }
      case DOUBLE: return TFloat64.vectorOf(values);
      case INT32: return v instanceof int[] ? TInt32.vectorOf((int[]) v) : null;
      case INT64: return v instanceof long[] ? TInt64.tensorOf(StdArrays.ndCopyOf((long[]) v))
          : v instanceof int[] ? TInt64.tensorOf(StdArrays.ndCopyOf(java.util.Arrays.stream((int[]) v).asLongStream().toArray())) : null;
      default: return null;
    }
  }

  private static double[] asDoubles(Object v) {
    if (v instanceof double[]) {
      return (double[]) v;
    }
    if (v instanceof float[]) {
      float[] f = (float[]) v;
      double[] d = new double[f.length];
      for (int i = 0; i < f.length; i++) {
        d[i] = f[i];
      }
      return d;
    }
    if (v instanceof int[]) {
      return java.util.Arrays.stream((int[]) v).asDoubleStream().toArray();
    }
    if (v instanceof long[]) {
      return java.util.Arrays.stream((long[]) v).asDoubleStream().toArray();
    }
    return null;
  }
}
