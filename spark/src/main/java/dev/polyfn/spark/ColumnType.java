package dev.polyfn.spark;

import dev.polyfn.TensorSpec;
import java.util.List;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * The Spark column types Polyfn scoring reads and writes, and their tensors: a numeric column is
 * a batch vector {@code [rows]}, an array column of length k a matrix {@code [rows, k]}.
 */
enum ColumnType {
  FLOAT(DataTypes.FloatType, false, TFloat32.class),
  DOUBLE(DataTypes.DoubleType, false, TFloat64.class),
  INT(DataTypes.IntegerType, false, TInt32.class),
  LONG(DataTypes.LongType, false, TInt64.class),
  FLOAT_ARRAY(DataTypes.FloatType, true, TFloat32.class),
  DOUBLE_ARRAY(DataTypes.DoubleType, true, TFloat64.class);

  final DataType element;
  final boolean array;
  /** The tensor type a batch of this column becomes. */
  final Class<? extends TType> tensorType;

  ColumnType(DataType element, boolean array, Class<? extends TType> tensorType) {
    this.element = element;
    this.array = array;
    this.tensorType = tensorType;
  }

  /** The spec of a batch of this column: {@code [rows]}, or {@code [rows, k]} for an array. */
  TensorSpec batchSpec() {
    return TensorSpec.of(tensorType, array ? Shape.of(-1, -1) : Shape.of(-1));
  }

  DataType sparkType() {
    return array ? DataTypes.createArrayType(element, false) : element;
  }

  static ColumnType of(DataType type) {
    DataType element = type instanceof ArrayType ? ((ArrayType) type).elementType() : type;
    for (ColumnType t : values()) {
      if (t.array == type instanceof ArrayType && t.element.equals(element)) {
        return t;
      }
    }
    return null;
  }

  static String supported() {
    return "float, double, int, long, array<float> or array<double>";
  }

  /** A batch of this column's values (rows.size() of them, arrays all of length width). */
  Tensor toTensor(String column, List<Object> values, int width) {
    int n = values.size();
    switch (this) {
      case FLOAT: {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) values.get(i)).floatValue();
        }
        return TFloat32.tensorOf(Shape.of(n), DataBuffers.of(a, true, false));
      }
      case DOUBLE: {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) values.get(i)).doubleValue();
        }
        return TFloat64.tensorOf(Shape.of(n), DataBuffers.of(a, true, false));
      }
      case INT: {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) values.get(i)).intValue();
        }
        return TInt32.tensorOf(Shape.of(n), DataBuffers.of(a, true, false));
      }
      case LONG: {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
          a[i] = ((Number) values.get(i)).longValue();
        }
        return TInt64.tensorOf(Shape.of(n), DataBuffers.of(a, true, false));
      }
      case FLOAT_ARRAY: {
        float[] a = new float[elements(column, n, width)];
        for (int i = 0; i < n; i++) {
          List<?> row = array(column, values.get(i), width);
          for (int j = 0; j < width; j++) {
            a[i * width + j] = element(column, row, j).floatValue();
          }
        }
        return TFloat32.tensorOf(Shape.of(n, width), DataBuffers.of(a, true, false));
      }
      default: {
        double[] a = new double[elements(column, n, width)];
        for (int i = 0; i < n; i++) {
          List<?> row = array(column, values.get(i), width);
          for (int j = 0; j < width; j++) {
            a[i * width + j] = element(column, row, j).doubleValue();
          }
        }
        return TFloat64.tensorOf(Shape.of(n, width), DataBuffers.of(a, true, false));
      }
    }
  }

  /** The largest array the JVM allocates (a few header words below Integer.MAX_VALUE). */
  static final int MAX_ELEMENTS = Integer.MAX_VALUE - 8;

  /** n arrays of width elements as one Java array's length, refused when it would not fit (int overflow). */
  static int elements(String column, int n, int width) {
    long total = (long) n * width;
    if (total > MAX_ELEMENTS) {
      throw new IllegalArgumentException("column '" + column + "': a batch of " + n + " arrays of " + width
          + " elements has " + total + " elements, more than one tensor buffer holds (" + MAX_ELEMENTS
          + "); lower batchSize to at most " + Math.max(1, MAX_ELEMENTS / width) + " rows");
    }
    return (int) total;
  }

  private static Number element(String column, List<?> row, int j) {
    Object v = row.get(j);
    if (v == null) {
      throw new IllegalArgumentException("column '" + column + "' has a null element (index " + j
          + ") in an array; Polyfn scoring needs every element (fill nulls first)");
    }
    return (Number) v;
  }

  private static List<?> array(String column, Object value, int width) {
    List<?> row = value instanceof List ? (List<?>) value
        : scala.jdk.javaapi.CollectionConverters.asJava((scala.collection.Seq<?>) value);
    if (row.size() != width) {
      throw new IllegalArgumentException("column '" + column + "': every array in a batch must have the "
          + "same length; found " + row.size() + " after " + width);
    }
    return row;
  }

  /** The width of an array value (1 for a scalar column). */
  int width(Object value) {
    if (!array) {
      return 1;
    }
    return value instanceof List ? ((List<?>) value).size() : ((scala.collection.Seq<?>) value).size();
  }

  /** Row i of an output tensor of this type, as a Spark value. */
  Object value(String output, Tensor t, int i, int rows) {
    Shape shape = t.shape();
    boolean matrix = array;
    if (shape.numDimensions() != (matrix ? 2 : 1) || shape.get(0) != rows) {
      throw new IllegalStateException("output '" + output + "' has shape " + shape + "; a "
          + sparkType().simpleString() + " column needs " + (matrix ? "[" + rows + ", k]" : "[" + rows + "]")
          + " for a batch of " + rows + " rows");
    }
    switch (this) {
      case FLOAT: return ((TFloat32) cast(output, t, TFloat32.class)).getFloat(i);
      case DOUBLE: return ((TFloat64) cast(output, t, TFloat64.class)).getDouble(i);
      case INT: return ((TInt32) cast(output, t, TInt32.class)).getInt(i);
      case LONG: return ((TInt64) cast(output, t, TInt64.class)).getLong(i);
      case FLOAT_ARRAY: {
        TFloat32 m = (TFloat32) cast(output, t, TFloat32.class);
        float[] row = new float[(int) shape.get(1)];
        for (int j = 0; j < row.length; j++) {
          row[j] = m.getFloat(i, j);
        }
        return row;
      }
      default: {
        TFloat64 m = (TFloat64) cast(output, t, TFloat64.class);
        double[] row = new double[(int) shape.get(1)];
        for (int j = 0; j < row.length; j++) {
          row[j] = m.getDouble(i, j);
        }
        return row;
      }
    }
  }

  private Tensor cast(String output, Tensor t, Class<?> expected) {
    if (!expected.isInstance(t)) {
      throw new IllegalStateException("output '" + output + "' is a " + t.dataType() + " tensor; the "
          + sparkType().simpleString() + " column needs " + expected.getSimpleName());
    }
    return t;
  }
}
