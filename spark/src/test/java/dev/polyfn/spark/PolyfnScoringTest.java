package dev.polyfn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Diagnostics;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scoring Spark rows with Polyfn functions in local[2] (two executor threads in this JVM, which
 * also runs TensorFlow Java: Spark's protobuf 4 and Jackson next to TensorFlow Java's runtime).
 */
class PolyfnScoringTest {
  static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = SparkSession.builder().master("local[2]").appName("polyfn-spark-test")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  static Dataset<Row> rows(int n, int partitions) {
    return rowsOf(spark, n, partitions);
  }

  /** Row i: id i, x = i * 0.5, features = [i, 1, -2]; in {@code partitions} partitions. */
  static Dataset<Row> rowsOf(SparkSession spark, int n, int partitions) {
    StructType schema = new StructType().add("id", DataTypes.IntegerType, false)
        .add("x", DataTypes.DoubleType, false)
        .add("features", DataTypes.createArrayType(DataTypes.FloatType, false), false);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      rows.add(RowFactory.create(i, i * 0.5, List.of((float) i, 1f, -2f)));
    }
    return spark.createDataFrame(rows, schema).repartition(partitions);
  }

  /** The y column of {@code scoring} over 100 rows, by id. */
  private static double[] ys(PolyfnScoring scoring) {
    double[] ys = new double[100];
    for (Row r : scoring.output("y", DataTypes.DoubleType).score(rows(100, 2)).collectAsList()) {
      ys[r.getInt(0)] = r.getDouble(r.fieldIndex("y"));
    }
    return ys;
  }

  @Test
  void aNameReusedWithAnotherFactoryScoresWithThatFactoryNeverTheFirstOne() {
    // Two jobs, one name, two models: method references to different methods...
    double[] first = ys(PolyfnScoring.with("reused", Models::affine).input("x").input("features"));
    double[] second = ys(PolyfnScoring.with("reused", () -> Models.line(3.0, -1.0)).input("x"));
    // ...and one lambda capturing different values.
    double[] third = ys(PolyfnScoring.with("reused", lineFactory(10.0, 0.5)).input("x"));
    double[] again = ys(PolyfnScoring.with("reused", lineFactory(3.0, -1.0)).input("x"));
    for (int i = 0; i < 100; i++) {
      double x = i * 0.5;
      assertEquals(2 * x + 1, first[i], 1e-9, "row " + i);
      assertEquals(3 * x - 1, second[i], 1e-9, "row " + i);
      assertEquals(10 * x + 0.5, third[i], 1e-9, "row " + i);
      assertEquals(3 * x - 1, again[i], 1e-9, "row " + i);
    }
  }

  private static FunctionFactory lineFactory(double a, double b) {
    return () -> Models.line(a, b);
  }

  @Test
  void aFactoryThatCannotBeSerializedIsRefusedOnTheDriverNamingTheFunction() {
    Object notSerializable = new Object();
    FunctionFactory bad = () -> {
      notSerializable.hashCode();
      return Models.affineFloat();
    };
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PolyfnScoring.with("unshippable", bad).input("x").output("y", DataTypes.DoubleType).score(rows(4, 1)));
    assertTrue(e.getMessage().contains("factory of 'unshippable'"), e.getMessage());
  }

  @Test
  void scoresEveryRowInBatchesAndAppendsTheOutputs() {
    Dataset<Row> scored = PolyfnScoring.with("affine", Models::affine)
        .input("x").input("features")
        .output("y", DataTypes.DoubleType).output("z", DataTypes.FloatType)
        .batchSize(64)
        .score(rows(1000, 4));
    assertEquals(List.of("id", "x", "features", "y", "z"), List.of(scored.schema().fieldNames()));
    List<Row> result = scored.collectAsList();
    assertEquals(1000, result.size());
    for (Row r : result) {
      int i = r.getInt(0);
      assertEquals(i * 0.5 * 2 + 1, r.getDouble(3), 1e-12, "y of row " + i);
      assertEquals(i - 1f, r.getFloat(4), 1e-4, "z of row " + i);
    }
    // Defined once in this JVM (both executor threads share it), whatever the number of tasks.
    assertEquals(1, Models.AFFINE_DEFINED.get());
    PolyfnScoring.with("affine", Models::affine).input("x").input("features")
        .output("y", DataTypes.DoubleType).output("z", DataTypes.FloatType).score(rows(10, 2)).count();
    assertEquals(1, Models.AFFINE_DEFINED.get());
  }

  @Test
  void arrayOutputsAndTheDefaultBatchSize() {
    Dataset<Row> data = rows(100, 2).withColumn("xf", org.apache.spark.sql.functions.col("x").cast("float"));
    List<Row> result = PolyfnScoring.with("affineFloat", Models::affineFloat)
        .input("xf", "x").output("y", DataTypes.FloatType).score(data).collectAsList();
    assertEquals(100, result.size());
    for (Row r : result) {
      assertEquals(r.getInt(0) * 0.5f * 2 + 1, r.getFloat(r.fieldIndex("y")), 1e-5);
    }
    assertTrue(Diagnostics.liveConcreteFunctions() >= 1);

    List<Row> arrays = PolyfnScoring.with("doubled", Models::doubled).input("features")
        .output("doubled", DataTypes.createArrayType(DataTypes.FloatType)).batchSize(7)
        .score(rows(30, 2)).collectAsList();
    assertEquals(30, arrays.size());
    for (Row r : arrays) {
      assertEquals(List.of(r.getInt(0) * 2f, 2f, -4f), r.getList(r.fieldIndex("doubled")));
    }
  }

  @Test
  void aNullArrayElementFailsTheJobNamingTheColumn() {
    StructType schema = new StructType().add("features",
        DataTypes.createArrayType(DataTypes.FloatType, true), false);
    Dataset<Row> data = spark.createDataFrame(
        List.of(RowFactory.create(java.util.Arrays.asList(1f, null, 3f))), schema);
    SparkException e = assertThrows(SparkException.class,
        () -> PolyfnScoring.with("doubled", Models::doubled).input("features")
            .output("doubled", DataTypes.createArrayType(DataTypes.FloatType)).score(data).collectAsList());
    assertTrue(String.valueOf(e.getMessage()).contains("column 'features' has a null element"), e.getMessage());
  }

  @Test
  void tensorFlowJavaWorksWithTheProtobufSparkBrings() throws Exception {
    // Spark 4 puts protobuf-java 4.x on the class path over TensorFlow Java's 3.x: RuntimeVersion
    // exists only in 4.x. TensorFlow Java's generated messages still build, serialize and parse.
    Class.forName("com.google.protobuf.RuntimeVersion");
    byte[] bytes = org.tensorflow.proto.ConfigProto.newBuilder().setInterOpParallelismThreads(2)
        .build().toByteArray();
    assertEquals(2, org.tensorflow.proto.ConfigProto.parseFrom(bytes).getInterOpParallelismThreads());
  }

  @Test
  void badConfigurationNamesTheColumnOrParameter() {
    Dataset<Row> data = rows(4, 1);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PolyfnScoring.with("affine", Models::affine).input("nope").output("y", DataTypes.DoubleType).score(data));
    assertTrue(e.getMessage().contains("no column 'nope'"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> PolyfnScoring.with("affine", Models::affine).input("id").input("id"));
    assertTrue(e.getMessage().contains("'id' is given twice"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> PolyfnScoring.with("affine", Models::affine).output("y", DataTypes.StringType));
    assertTrue(e.getMessage().contains("output 'y'") && e.getMessage().contains("string"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> PolyfnScoring.with("affine", Models::affine).batchSize(0));
    assertTrue(e.getMessage().contains("batchSize"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> PolyfnScoring.with("affine", Models::affine).input("x").output("x", DataTypes.DoubleType).score(data));
    assertTrue(e.getMessage().contains("already has a column 'x'"), e.getMessage());
  }

  @Test
  void aMissingOutputIsRefusedOnTheDriverWithItsName() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PolyfnScoring.with("affineFloat", Models::affineFloat).input("x")
            .output("w", DataTypes.FloatType)
            .score(rows(4, 1).withColumn("x", org.apache.spark.sql.functions.col("x").cast("float"))));
    assertTrue(e.getMessage().contains("output 'w': function 'affineFloat' has no such output; its outputs: [y]"),
        e.getMessage());
  }
}
