package dev.polyfn.spark.guide;

// The guide's PolyfnTransformer example (docs/spark.md), compiled so that it cannot drift.
import dev.polyfn.spark.PolyfnTransformer;
import java.io.IOException;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;

public final class ScoreHouses {
  public static void main(String[] args) throws IOException {
    SparkSession spark = SparkSession.builder().appName("score-houses").getOrCreate();
    Dataset<Row> houses = spark.read().parquet(args[0]);   // area: double, feature_vector: array<float>

    // Written by Python: tf.saved_model.save(module, "/models/price"), where module.score is a
    // tf.function of (x: float64 [None], features: float32 [None, 3]) returning {"y": ..., "z": ...}.
    PolyfnTransformer scorer = new PolyfnTransformer()
        .setSavedModel("/models/price", "score")           // or .setFunction("price", Models::price)
        .setInputCols("area", "feature_vector")
        .setParameters("x", "features")                    // default: the column names
        .setOutputs("y", "z")                              // the function's outputs (default: the columns)
        .setOutputCols("price", "score")
        .setOutputTypes(DataTypes.DoubleType, DataTypes.FloatType)
        .setBatchSize(4096);                               // the default

    PipelineModel model = new Pipeline().setStages(new PipelineStage[] {scorer}).fit(houses);
    model.write().overwrite().save(args[1]);
    PipelineModel.load(args[1]).transform(houses).show(); // houses' columns + price + score
  }
}
