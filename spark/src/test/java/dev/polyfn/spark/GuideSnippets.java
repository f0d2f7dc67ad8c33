package dev.polyfn.spark;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;

/**
 * The snippet of the guide's Spark page (docs/spark.md), compiled so that it cannot drift
 * (tests/.../DocsTest checks that the guide's copy is this one).
 */
final class GuideSnippets {
  private GuideSnippets() {}

  static Dataset<Row> score(Dataset<Row> houses) {
    final class Models {
      static MapFunction price() {                       // the factory: a static method reference
        return Function.define((tf, in) -> {
          Operand<TFloat64> area = in.input("area", TFloat64.class, Shape.of(-1));          // [rows]
          Operand<TFloat32> f = in.input("features", TFloat32.class, Shape.of(-1, 3));     // [rows, 3]
          return Map.of("price", tf.math.mul(area, tf.constant(1200.0)),
                        "score", tf.sum(f, tf.constant(1)));
        });
      }
    }

    Dataset<Row> scored = PolyfnScoring.with("price", Models::price)
        .input("area")                                   // column -> parameter of the same name
        .input("feature_vector", "features")             // column -> parameter "features"
        .output("price", DataTypes.DoubleType)           // output -> column
        .output("score", DataTypes.FloatType)
        .batchSize(4096)                                 // the default
        .score(houses);                                  // houses' columns + price + score
    return scored;
  }
}
