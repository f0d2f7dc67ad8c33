package dev.polyfn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.MapFunction;
import dev.polyfn.SaveOptions;
import dev.polyfn.TensorSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat64;

/**
 * A model replaced under the same name, in local[2]: a new SavedModel version is what every task
 * scores with, a model rewritten after the job was planned is refused rather than served, and a
 * replaced function is closed after its last running batch, never during one.
 */
class ModelReplacementTest {
  static SparkSession spark;
  @TempDir static Path dir;
  /** The functions the tracked factories defined in this JVM, in order. */
  static final List<MapFunction> CREATED = Collections.synchronizedList(new ArrayList<>());
  /** Opened by the gated partition once it has handed out two rows; it then waits for RESUME. */
  static volatile CountDownLatch blocked;
  static volatile CountDownLatch resume;

  @BeforeAll
  static void start() {
    spark = SparkSession.builder().master("local[2]").appName("polyfn-replacement-test")
        .config("spark.ui.enabled", "false").getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** Saves y = a x (Polyfn's save), as version {@code version} of {@code model}, or flat if negative. */
  private static void save(Path model, double a, long version) {
    try (MapFunction f = Models.line(a, 0.0)) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat64.class, Shape.of(-1))));
      f.save(model, version < 0 ? SaveOptions.defaults() : SaveOptions.defaults().withServingVersion(version));
    }
  }

  private static PolyfnTransformer scorer(Path model) {
    return new PolyfnTransformer().setSavedModel(model.toString()).setInputCols("x").setOutputCols("y")
        .setOutputTypes(DataTypes.DoubleType).setBatchSize(8);
  }

  /** Asserts each row's y is a x (row i: x = i * 0.5). */
  private static void assertScoredWith(double a, List<Row> rows, int n) {
    assertEquals(n, rows.size());
    for (Row r : rows) {
      assertEquals(a * r.getInt(0) * 0.5, r.getDouble(r.fieldIndex("y")), 1e-12, "row " + r);
    }
  }

  @Test
  void aNewServingVersionIsWhatEveryTaskScoresWith() {
    Path model = dir.resolve("versioned");
    save(model, 2.0, 1);
    assertScoredWith(2.0, scorer(model).transform(PolyfnScoringTest.rowsOf(spark, 40, 2)).collectAsList(), 40);
    // Version 2 published next to version 1: the next job loads it, on the driver and every executor.
    save(model, 3.0, 2);
    assertScoredWith(3.0, scorer(model).transform(PolyfnScoringTest.rowsOf(spark, 40, 2)).collectAsList(), 40);
  }

  @Test
  void aModelRewrittenAfterTheJobWasPlannedIsRefusedNotServed() {
    Path model = dir.resolve("flat");
    save(model, 2.0, -1);
    String before = ModelStamp.of(model);
    Dataset<Row> planned = scorer(model).transform(PolyfnScoringTest.rowsOf(spark, 20, 2));
    save(model, 3.0, -1);
    String after = ModelStamp.of(model);
    assertNotEquals(before, after);
    // A job planned now scores with the new model (and replaces the old function in this JVM)...
    assertScoredWith(3.0, scorer(model).transform(PolyfnScoringTest.rowsOf(spark, 20, 2)).collectAsList(), 20);
    // ...and the job planned before finds, as an executor joining late would, another model than
    // its driver checked: refused, naming the directory and both stamps.
    SparkException e = assertThrows(SparkException.class, planned::collectAsList);
    String message = String.valueOf(e.getMessage());
    assertTrue(message.contains("SavedModel " + model + " is not the model the driver planned the job with: the "
        + "driver saw stamp " + before + ", this JVM finds stamp " + after), message);
  }

  /** y = a x, recorded in {@link #CREATED} when defined. */
  private static FunctionFactory tracked(double a) {
    return () -> {
      MapFunction f = Models.line(a, 0.0);
      CREATED.add(f);
      return f;
    };
  }

  /** 10 rows scored by {@code tracked(a)} under {@code name}. */
  private static List<Row> line(String name, double a) {
    return PolyfnScoring.with(name, tracked(a)).input("x").output("y", DataTypes.DoubleType)
        .score(PolyfnScoringTest.rowsOf(spark, 10, 2)).collectAsList();
  }

  private static boolean isClosed(MapFunction f) {
    try {
      f.functionType();
      return false;
    } catch (IllegalStateException closed) {
      return true;
    }
  }

  /** Hands out its partition's rows, waiting for {@link #resume} after the second one. */
  private static final class Gate implements Iterator<Row> {
    private final Iterator<Row> rows;
    private int taken;

    Gate(Iterator<Row> rows) {
      this.rows = rows;
    }

    @Override
    public boolean hasNext() {
      if (taken == 2 && blocked.getCount() > 0) {
        blocked.countDown();
        try {
          resume.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return rows.hasNext();
    }

    @Override
    public Row next() {
      taken++;
      return rows.next();
    }
  }

  @Test
  void aReplacedFunctionIsClosedAfterItsLastRunningBatchNeverDuringIt() throws Exception {
    blocked = new CountDownLatch(1);
    resume = new CountDownLatch(1);
    Dataset<Row> data = PolyfnScoringTest.rowsOf(spark, 4, 1);
    Dataset<Row> gated = data.mapPartitions((MapPartitionsFunction<Row, Row>) Gate::new, Encoders.row(data.schema()));
    Dataset<Row> first = PolyfnScoring.with("swap", tracked(2.0)).input("x").output("y", DataTypes.DoubleType)
        .batchSize(2).score(gated);
    ExecutorService thread = Executors.newSingleThreadExecutor();
    try {
      Future<List<Row>> running = thread.submit(first::collectAsList);
      // The first job has scored its first batch of two rows and waits for its next rows.
      assertTrue(blocked.await(120, TimeUnit.SECONDS), "the first job never reached its second batch");
      assertEquals(1, CREATED.size());
      MapFunction old = CREATED.get(0);

      // Another factory under the same name replaces the function in this JVM meanwhile...
      assertScoredWith(3.0, line("swap", 3.0), 10);
      assertEquals(2, CREATED.size());
      MapFunction replaced = CREATED.get(1);
      // ...but the running job still holds the old one: open, and a job with its factory uses it
      // again (not defined again), which closes the unused one it replaces at once.
      assertTrue(!isClosed(old), "closed under a running batch");
      assertScoredWith(2.0, line("swap", 2.0), 10);
      assertEquals(2, CREATED.size(), "defined again while still open");
      assertTrue(isClosed(replaced), "a replaced function no batch uses stays open");
      assertScoredWith(4.0, line("swap", 4.0), 10);
      assertEquals(3, CREATED.size());
      assertTrue(!isClosed(old), "closed under a running batch");
      // The running job's next batch scores with its function; the function closes after it.
      resume.countDown();
      assertScoredWith(2.0, running.get(120, TimeUnit.SECONDS), 4);
      assertTrue(isClosed(old), "the replaced function stays open after its last batch");
      assertTrue(!isClosed(CREATED.get(2)), "the current function was closed");
    } finally {
      resume.countDown();
      thread.shutdownNow();
    }
  }
}
