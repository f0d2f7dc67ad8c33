package dev.polyfn.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PolyfnTransformer} in local[2]: a SavedModel that Python writes now
 * ({@code src/test/python/make_spark_model.py}) scores like Python's own restored model, in a
 * Pipeline saved and loaded again, shipped with SparkContext.addFile or read in place; wrong
 * names are refused on the driver before any job runs.
 */
class PolyfnTransformerTest {
  private static final int ROWS = 50;
  static SparkSession spark;
  @TempDir static Path dir;
  static String model;
  private static final Map<String, double[]> python = new HashMap<>();
  /** Jobs started, by job group. */
  private static final Map<String, AtomicInteger> jobs = new java.util.concurrent.ConcurrentHashMap<>();

  @BeforeAll
  static void start() throws Exception {
    String exe = System.getProperty("polyfn.python", "python3");
    Process p = new ProcessBuilder(exe, Path.of("src", "test", "python", "make_spark_model.py").toString(),
        dir.toString(), String.valueOf(ROWS)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out);
    for (String line : out.strip().split("\n")) {
      String[] parts = line.trim().split(" ");
      double[] v = new double[parts.length - 1];
      for (int i = 1; i < parts.length; i++) {
        v[i - 1] = Double.parseDouble(parts[i]);
      }
      python.put(parts[0], v);
    }
    assertEquals(ROWS, python.get("y").length, out);
    model = dir.resolve("model").toString();
    spark = SparkSession.builder().master("local[2]").appName("polyfn-transformer-test")
        .config("spark.ui.enabled", "false").getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    spark.sparkContext().addSparkListener(new SparkListener() {
      @Override
      public void onJobStart(SparkListenerJobStart job) {
        String group = job.properties() == null ? null : job.properties().getProperty("spark.jobGroup.id");
        jobs.computeIfAbsent(String.valueOf(group), g -> new AtomicInteger()).incrementAndGet();
      }
    });
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  /** Row i: id, x = i * 0.5, features = [i, 1, -2] (as the Python script's rows). */
  private static Dataset<Row> rows() {
    return PolyfnScoringTest.rowsOf(spark, ROWS, 3);
  }

  private static PolyfnTransformer pythonModel() {
    return new PolyfnTransformer().setSavedModel(model, "score")
        .setInputCols("x", "features")
        .setOutputs("y", "z").setOutputCols("y", "score")
        .setOutputTypes(DataTypes.DoubleType, DataTypes.FloatType)
        .setBatchSize(16);
  }

  /** Asserts y and score of each row are Python's numbers. */
  private static void assertLikePython(Dataset<Row> scored) {
    List<Row> result = scored.collectAsList();
    assertEquals(ROWS, result.size());
    for (Row r : result) {
      int i = r.getInt(0);
      assertEquals(python.get("y")[i], r.getDouble(r.fieldIndex("y")), 1e-12, "y of row " + i);
      assertEquals(python.get("z")[i], r.getFloat(r.fieldIndex("score")), 1e-6, "score of row " + i);
    }
  }

  @Test
  void aSavedModelWrittenByPythonScoresLikePython() {
    PolyfnTransformer scorer = pythonModel();
    StructType schema = scorer.transformSchema(rows().schema());
    assertEquals(List.of("id", "x", "features", "y", "score"), List.of(schema.fieldNames()));
    assertEquals(DataTypes.FloatType, schema.apply("score").dataType());
    assertLikePython(scorer.transform(rows()));
  }

  @Test
  void aShippedSavedModelIsLoadedFromEachExecutorsCopy() {
    PolyfnTransformer scorer = pythonModel().setShipSavedModel(true);
    Dataset<Row> scored = scorer.transform(rows());
    List<String> added = scala.jdk.javaapi.CollectionConverters.asJava(spark.sparkContext().listFiles());
    assertTrue(added.stream().anyMatch(f -> f.matches(".*/model/?")), "not added: " + added);
    // This JVM's copy (driver and executors are one JVM in local mode) is what was loaded.
    Path copy = Path.of(org.apache.spark.SparkFiles.get("model"));
    assertTrue(java.nio.file.Files.isRegularFile(copy.resolve("saved_model.pb")), copy + " holds no saved_model.pb");
    assertTrue(!copy.equals(Path.of(model)), copy.toString());
    assertLikePython(scored);
  }

  @Test
  void aPipelineSavedAndLoadedScoresTheSame() throws Exception {
    // A SavedModel stage, then a factory stage reading its output: both kept by the saved pipeline.
    PolyfnTransformer plusOne = new PolyfnTransformer().setFunction("plusOne", Models::plusOne)
        .setInputCols("y").setParameters("v").setOutputCols("w").setOutputTypes(DataTypes.DoubleType);
    Pipeline pipeline = new Pipeline().setStages(new PipelineStage[] {pythonModel(), plusOne});
    PipelineModel fitted = pipeline.fit(rows());
    List<Row> before = sorted(fitted.transform(rows()));
    for (Row r : before) {
      assertEquals(python.get("y")[r.getInt(0)] + 1, r.getDouble(r.fieldIndex("w")), 1e-12);
    }

    String modelPath = dir.resolve("pipeline-model").toString();
    fitted.write().overwrite().save(modelPath);
    PipelineModel loaded = PipelineModel.load(modelPath);
    PolyfnTransformer first = (PolyfnTransformer) loaded.stages()[0];
    assertArrayEquals(new String[] {"x", "features"}, first.getInputCols());
    assertEquals(16, first.getBatchSize());
    assertEquals(before, sorted(loaded.transform(rows())));

    String pipelinePath = dir.resolve("pipeline").toString();
    pipeline.write().overwrite().save(pipelinePath);
    assertEquals(before, sorted(Pipeline.load(pipelinePath).fit(rows()).transform(rows())));
  }

  private static FunctionFactory line(double a, double b) {
    return () -> Models.line(a, b);
  }

  @Test
  void aFactoryCapturingValuesIsSavedAndLoadedWithTheTransformer() throws Exception {
    PolyfnTransformer line = new PolyfnTransformer().setFunction("line", line(3.0, -1.0))
        .setInputCols("x").setOutputs("y").setOutputCols("line").setOutputTypes(DataTypes.DoubleType);
    String path = dir.resolve("line-transformer").toString();
    line.write().overwrite().save(path);
    PolyfnTransformer loaded = PolyfnTransformer.load(path);
    assertEquals(line.uid(), loaded.uid());
    PolyfnTransformer copied = loaded.copy(new org.apache.spark.ml.param.ParamMap().put(loaded.batchSize(), 5));
    assertEquals(5, copied.getBatchSize());
    assertEquals(PolyfnScoring.DEFAULT_BATCH_SIZE, loaded.getBatchSize());
    for (PolyfnTransformer t : List.of(loaded, copied)) {
      for (Row r : t.transform(rows()).collectAsList()) {
        assertEquals(3 * r.getInt(0) * 0.5 - 1, r.getDouble(r.fieldIndex("line")), 1e-12);
      }
    }
  }

  private static List<Row> sorted(Dataset<Row> scored) {
    List<Row> rows = new ArrayList<>(scored.collectAsList());
    rows.sort((a, b) -> Integer.compare(a.getInt(0), b.getInt(0)));
    return rows;
  }

  /** Runs {@code attempt} in a job group of its own; returns how many jobs it started. */
  private static int jobsOf(String group, Runnable attempt) throws Exception {
    spark.sparkContext().setJobGroup(group, group, false);
    try {
      attempt.run();
    } finally {
      spark.sparkContext().clearJobGroup();
    }
    // Listener events arrive in order: once a later job's start is seen, the attempt's are in.
    String marker = group + "-marker";
    spark.sparkContext().setJobGroup(marker, marker, false);
    spark.range(1).count();
    spark.sparkContext().clearJobGroup();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!jobs.containsKey(marker) && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertTrue(jobs.containsKey(marker), "the listener saw no marker job");
    AtomicInteger started = jobs.get(group);
    return started == null ? 0 : started.get();
  }

  private static void assertRefusedBeforeAnyJob(String group, Supplier<Dataset<Row>> job, String... expected)
      throws Exception {
    IllegalArgumentException[] e = new IllegalArgumentException[1];
    int started = jobsOf(group, () ->
        e[0] = assertThrows(IllegalArgumentException.class, () -> job.get().collectAsList()));
    for (String part : expected) {
      assertTrue(e[0].getMessage().contains(part), "expected '" + part + "' in: " + e[0].getMessage());
    }
    assertEquals(0, started, "jobs started: " + e[0].getMessage());
  }

  @Test
  void aWrongParameterNameIsRefusedOnTheDriverBeforeAnyJobRuns() throws Exception {
    // A SavedModel's parameters are known once loaded on the driver.
    assertRefusedBeforeAnyJob("savedmodel-wrong-name",
        () -> pythonModel().setParameters("x", "feats").transform(rows()),
        "input column 'features' feeds parameter 'feats'", "has no parameter 'feats'", "features: TensorSpec");
    assertRefusedBeforeAnyJob("savedmodel-unfed",
        () -> pythonModel().setInputCols("x").transform(rows()),
        "parameter 'features'", "is fed by no input column");
    assertRefusedBeforeAnyJob("savedmodel-wrong-output",
        () -> pythonModel().setOutputs("y", "w").transform(rows()),
        "output 'w'", "its outputs: [y, z]");
    // A factory's function that has not traced yet traces once on the driver with the columns'
    // specs (a name of its own: the pipeline test's plusOne may have traced in this JVM)...
    assertRefusedBeforeAnyJob("factory-wrong-name",
        () -> new PolyfnTransformer().setFunction("plusOne-untraced", Models::plusOne).setInputCols("x")
            .setOutputCols("w").setOutputTypes(DataTypes.DoubleType).transform(rows()),
        "function 'plusOne-untraced' cannot be called with input columns [x -> x]", "missing required argument 'v'");
    // ...and one that has traced is checked against its parameters.
    new PolyfnTransformer().setFunction("plusOne-traced", Models::plusOne).setInputCols("x")
        .setParameters("v").setOutputCols("w").setOutputTypes(DataTypes.DoubleType).transform(rows()).count();
    assertRefusedBeforeAnyJob("factory-traced-wrong-name",
        () -> new PolyfnTransformer().setFunction("plusOne-traced", Models::plusOne).setInputCols("x")
            .setOutputCols("w").setOutputTypes(DataTypes.DoubleType).transform(rows()),
        "input column 'x' feeds parameter 'x', but function 'plusOne-traced' has no parameter 'x'",
        "its parameters: (v: TensorSpec(DOUBLE, [-1]))");
    // PolyfnScoring checks the same way.
    assertRefusedBeforeAnyJob("scoring-wrong-name",
        () -> PolyfnScoring.with("line-untraced", line(2.0, 1.0)).input("x", "nope").input("features")
            .output("y", DataTypes.DoubleType).score(rows()),
        "function 'line-untraced' cannot be called with input columns [x -> nope, features -> features]",
        "missing required argument 'x'");
  }

  @Test
  void transformSchemaChecksTheNamesToo() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> pythonModel().setParameters("x", "feats").transformSchema(rows().schema()));
    assertTrue(e.getMessage().contains("has no parameter 'feats'"), e.getMessage());
    // The Pipeline checks its stages' schemas before fitting.
    e = assertThrows(IllegalArgumentException.class, () -> new Pipeline()
        .setStages(new PipelineStage[] {pythonModel().setParameters("x", "feats")}).fit(rows()));
    assertTrue(e.getMessage().contains("has no parameter 'feats'"), e.getMessage());
  }

  @Test
  void incompleteSettingsAreRefusedNamingTheSetting() {
    Dataset<Row> data = rows();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new PolyfnTransformer().setInputCols("x").setOutputCols("y")
            .setOutputTypes(DataTypes.DoubleType).transform(data));
    assertTrue(e.getMessage().contains("setFunction(name, factory) or setSavedModel(dir), not neither"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> pythonModel().setOutputTypes(DataTypes.DoubleType).transform(data));
    assertTrue(e.getMessage().contains("outputTypes: expected one per outputCols (2), got 1"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> pythonModel().setSavedModel(dir.resolve("nothing").toString(), "score").transform(data));
    assertTrue(e.getMessage().contains("savedModel: no directory"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new PolyfnTransformer().setBatchSize(0));
    assertTrue(e.getMessage().contains("batchSize"), e.getMessage());
  }
}
