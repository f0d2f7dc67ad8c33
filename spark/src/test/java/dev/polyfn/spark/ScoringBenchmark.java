package dev.polyfn.spark;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.types.DataTypes;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat64;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.udf;

/**
 * Per-row cost of scoring y = 2x + 1 over a double column in local[2]: Polyfn with batches of 1
 * and of 64 to 16,384 rows, against a plain Java UDF doing the same arithmetic, and the same
 * function through {@link PolyfnTransformer} (from its factory, and saved then loaded from a
 * SavedModel directory). Not a test; run by hand (README, "Spark"):
 * java -cp ... dev.polyfn.spark.ScoringBenchmark [rows]
 */
public final class ScoringBenchmark {
  static MapFunction affine() {
    return Function.define((tf, in) -> {
      Operand<TFloat64> x = in.input("x", TFloat64.class, Shape.of(-1));
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(2.0)), tf.constant(1.0)));
    }, FunctionOptions.defaults().withName("bench-affine"));
  }

  public static void main(String[] args) throws java.io.IOException {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000L;
    java.nio.file.Path saved = java.nio.file.Files.createTempDirectory("polyfn-bench").resolve("affine");
    try (MapFunction f = affine()) {
      f.getConcreteFunction(Map.of("x", dev.polyfn.TensorSpec.of(TFloat64.class, Shape.of(-1))));
      f.save(saved);
    }
    PolyfnTransformer fromFactory = new PolyfnTransformer().setFunction("bench", ScoringBenchmark::affine)
        .setInputCols("x").setOutputCols("y").setOutputTypes(DataTypes.DoubleType);
    PolyfnTransformer fromSavedModel = new PolyfnTransformer().setSavedModel(saved.toString())
        .setInputCols("x").setOutputCols("y").setOutputTypes(DataTypes.DoubleType);
    SparkSession spark = SparkSession.builder().master("local[2]").appName("polyfn-spark-bench")
        .config("spark.ui.enabled", "false").getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    UserDefinedFunction javaUdf = udf((UDF1<Double, Double>) x -> 2 * x + 1, DataTypes.DoubleType);
    System.out.printf("%-30s %12s %14s%n", "scoring", "rows", "ns per row");
    for (int round = 0; round < 2; round++) { // the first round warms up (JIT, traces)
      boolean report = round == 1;
      measure(spark, "read only (baseline)", rows, report, d -> d.select(sum(col("x"))));
      measure(spark, "Java UDF", rows, report, d -> d.select(sum(javaUdf.apply(col("x")))));
      for (int batch : new int[] {16_384, 4_096, 1_024, 256, 64}) {
        measure(spark, "Polyfn batch " + batch, rows, report,
            d -> PolyfnScoring.with("bench", ScoringBenchmark::affine).input("x").batchSize(batch)
                .output("y", DataTypes.DoubleType).score(d).select(sum(col("y"))));
      }
      measure(spark, "Transformer (factory) 4096", rows, report,
          d -> fromFactory.transform(d).select(sum(col("y"))));
      measure(spark, "Transformer (SavedModel) 4096", rows, report,
          d -> fromSavedModel.transform(d).select(sum(col("y"))));
      measure(spark, "Polyfn batch 1", Math.min(rows, 100_000), report,
          d -> PolyfnScoring.with("bench", ScoringBenchmark::affine).input("x").batchSize(1)
              .output("y", DataTypes.DoubleType).score(d).select(sum(col("y"))));
    }
    spark.stop();
  }

  interface Job {
    Dataset<Row> run(Dataset<Row> data);
  }

  static void measure(SparkSession spark, String name, long rows, boolean report, Job job) {
    Dataset<Row> data = spark.range(0, rows, 1, 2).selectExpr("cast(id as double) as x");
    long start = System.nanoTime();
    double total = job.run(data).first().getDouble(0);
    long nanos = System.nanoTime() - start;
    if (report) {
      System.out.printf("%-30s %12d %14.1f   (sum %.6g)%n", name, rows, (double) nanos / rows, total);
    }
  }
}
