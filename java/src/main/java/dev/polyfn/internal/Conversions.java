package dev.polyfn.internal;

import java.math.BigInteger;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.tensorflow.Tensor;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TUint16;
import org.tensorflow.types.TUint8;
import org.tensorflow.types.family.TType;

/**
 * Casts Java numbers, booleans and primitive arrays passed for tensor parameters to tensors of the
 * parameter's dtype, as {@code tf.function} converts Python numbers for a typed parameter.
 *
 * <p>As {@code tf.constant}, a cast never changes a value silently: an integer outside the dtype's
 * range ({@code tf.constant(2**40, tf.int32)}) and a floating-point value for an integer dtype
 * ({@code tf.constant(1.5, tf.int32)}, even {@code 2.0}) are rejected. Integers cast to floating
 * dtypes round, as in TensorFlow.
 */
public final class Conversions {
  private static final int FLOAT = 1;
  private static final int DOUBLE = 2;
  private static final int INT32 = 3;
  private static final int UINT8 = 4;
  private static final int INT64 = 9;
  private static final int BOOL = 10;
  private static final int UINT16 = 17;

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
   * @throws IllegalArgumentException naming {@code path} when the value has no such dtype or does
   *     not fit in it
   */
  public static Tensor toTensor(String path, Object value, Class<? extends TType> type) {
    int[] accepted = DataTypes.accepted(type);
    int natural = natural(value);
    int dtype = accepted.length == 0 || contains(accepted, natural) ? natural
        : accepted.length == 1 ? accepted[0]
        : contains(accepted, FLOAT) ? FLOAT : accepted[0];
    boolean logical = value instanceof Boolean || value instanceof boolean[];
    boolean numeric = dtype == FLOAT || dtype == DOUBLE || isInteger(dtype);
    if (logical != (dtype == BOOL) || !logical && !numeric) {
      throw new IllegalArgumentException("argument '" + path + "': cannot cast a "
          + value.getClass().getSimpleName() + " to a tensor of " + type.getSimpleName());
    }
    if (value instanceof Boolean) {
      return TBool.scalarOf((Boolean) value);
    }
    if (value instanceof boolean[]) {
      return TBool.vectorOf((boolean[]) value);
    }
    return value instanceof Number ? scalar(path, (Number) value, dtype) : vector(path, value, dtype);
  }

  private static Tensor scalar(String path, Number n, int dtype) {
    switch (dtype) {
      case FLOAT: return TFloat32.scalarOf(n.floatValue());
      case DOUBLE: return TFloat64.scalarOf(n.doubleValue());
      default: break;
    }
    if (!isIntegral(n)) {
      throw new IllegalArgumentException("argument '" + path + "': " + n
          + " is a floating-point value, which TensorFlow does not cast to " + name(dtype)
          + "; pass an integer (or a tensor)");
    }
    if (n instanceof BigInteger && ((BigInteger) n).bitLength() > 63) {
      throw outOfRange(path, "", n, dtype);
    }
    long v = checked(path, "", n.longValue(), dtype);
    switch (dtype) {
      case INT32: return TInt32.scalarOf((int) v);
      case INT64: return TInt64.scalarOf(v);
      case UINT8: return TUint8.scalarOf((byte) v);
      default: return TUint16.scalarOf((short) v);
    }
  }

  private static Tensor vector(String path, Object array, int dtype) {
    if (array instanceof float[] || array instanceof double[]) {
      double[] d = array instanceof double[] ? (double[]) array : widen((float[]) array);
      if (isInteger(dtype)) {
        // TensorFlow rejects a floating-point array for an integer dtype whatever its values.
        throw new IllegalArgumentException("argument '" + path + "': a " + array.getClass().getSimpleName()
            + " holds floating-point values, which TensorFlow does not cast to " + name(dtype)
            + "; pass an int[] or long[] (or a tensor)");
      }
      return floating(d, dtype);
    }
    long[] l = array instanceof long[] ? (long[]) array
        : java.util.Arrays.stream((int[]) array).asLongStream().toArray();
    if (!isInteger(dtype)) {
      double[] d = new double[l.length];
      for (int i = 0; i < d.length; i++) {
        d[i] = l[i];
      }
      return floating(d, dtype);
    }
    for (int i = 0; i < l.length; i++) {
      checked(path, "element [" + i + "] = ", l[i], dtype);
    }
    switch (dtype) {
      case INT32: {
        int[] out = new int[l.length];
        for (int i = 0; i < out.length; i++) {
          out[i] = (int) l[i];
        }
        return TInt32.vectorOf(out);
      }
      case INT64: return TInt64.vectorOf(l);
      case UINT8: {
        byte[] out = new byte[l.length];
        for (int i = 0; i < out.length; i++) {
          out[i] = (byte) l[i];
        }
        return TUint8.vectorOf(out);
      }
      default: {
        short[] out = new short[l.length];
        for (int i = 0; i < out.length; i++) {
          out[i] = (short) l[i];
        }
        return TUint16.vectorOf(out);
      }
    }
  }

  private static Tensor floating(double[] d, int dtype) {
    if (dtype == DOUBLE) {
      return TFloat64.vectorOf(d);
    }
    float[] f = new float[d.length];
    for (int i = 0; i < f.length; i++) {
      f[i] = (float) d[i];
    }
    return TFloat32.vectorOf(f);
  }

  private static double[] widen(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }

  /** {@code v} when it fits in integer dtype {@code dtype}, else the error naming it. */
  private static long checked(String path, String element, long v, int dtype) {
    long min;
    long max;
    switch (dtype) {
      case INT32: min = Integer.MIN_VALUE; max = Integer.MAX_VALUE; break;
      case UINT8: min = 0; max = 255; break;
      case UINT16: min = 0; max = 65535; break;
      default: return v; // int64: every long fits
    }
    if (v < min || v > max) {
      throw outOfRange(path, element, v, dtype);
    }
    return v;
  }

  private static IllegalArgumentException outOfRange(String path, String element, Object v, int dtype) {
    String range = dtype == INT32 ? " [-2147483648, 2147483647]" : dtype == UINT8 ? " [0, 255]"
        : dtype == UINT16 ? " [0, 65535]" : " [-9223372036854775808, 9223372036854775807]";
    return new IllegalArgumentException(
        "argument '" + path + "': " + element + v + " is out of range for " + name(dtype) + range);
  }

  private static String name(int dtype) {
    DataType t = DataType.forNumber(dtype);
    return t == null ? "dtype " + dtype : t.name().substring(3); // DT_INT32 -> INT32
  }

  private static boolean isInteger(int dtype) {
    return dtype == INT32 || dtype == INT64 || dtype == UINT8 || dtype == UINT16;
  }

  /** Java's integer number classes; any other {@code Number} (Double, BigDecimal...) may be fractional. */
  private static boolean isIntegral(Number n) {
    return n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte
        || n instanceof BigInteger || n instanceof AtomicInteger || n instanceof AtomicLong;
  }

  private static int natural(Object v) {
    if (v instanceof Float || v instanceof float[]) {
      return FLOAT;
    }
    if (v instanceof Long || v instanceof long[] || v instanceof BigInteger || v instanceof AtomicLong) {
      return INT64;
    }
    if (v instanceof Boolean || v instanceof boolean[]) {
      return BOOL;
    }
    if (v instanceof Number && !isIntegral((Number) v) || v instanceof double[]) {
      return DOUBLE;
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
}
