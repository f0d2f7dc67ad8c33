package dev.polyfn.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkContext;
import org.apache.spark.ml.Transformer;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.StringArrayParam;
import org.apache.spark.ml.util.DefaultParamsReadable;
import org.apache.spark.ml.util.DefaultParamsWritable;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * A Spark ML {@link Transformer} that scores rows with a Polyfn function, as {@link PolyfnScoring}
 * does: input columns feed the function's parameters one batch tensor each, and its outputs become
 * columns. The function comes from a {@link FunctionFactory} or from a SavedModel directory
 * (Python's {@code tf.saved_model.save}, or Polyfn's {@code save}), loaded once per executor JVM
 * with {@code Function.load}. It works in a {@code Pipeline} and is saved and loaded with it.
 *
 * <pre>{@code
 * PolyfnTransformer scorer = new PolyfnTransformer()
 *     .setSavedModel("/models/price")               // read at this path by every executor
 *     .setInputCols("area", "feature_vector")
 *     .setParameters("area", "features")            // default: the column names
 *     .setOutputs("output_0")                       // the function's outputs (default: the columns)
 *     .setOutputCols("price")
 *     .setOutputTypes(DataTypes.DoubleType)
 *     .setBatchSize(4096);                          // the default
 * PipelineModel model = new Pipeline().setStages(new PipelineStage[] {scorer}).fit(houses);
 * model.write().overwrite().save("/pipelines/price");
 * Dataset<Row> scored = PipelineModel.load("/pipelines/price").transform(houses);
 * }</pre>
 *
 * <p><b>Where the SavedModel is read.</b> By default every executor reads the directory at the
 * path given: a local path that every node has (a shared file system, or the same path in every
 * node's image; any path in local mode). With {@link #setShipSavedModel setShipSavedModel(true)}
 * the driver adds the directory to the job with {@code SparkContext.addFile(dir, true)} and each
 * executor loads its own downloaded copy ({@code SparkFiles.get} of the directory's last name):
 * for a directory on a Hadoop file system ({@code hdfs://}, {@code s3a://}...), or a local
 * directory in local mode (Spark refuses to ship local directories on a cluster).
 *
 * <p><b>One model per job.</b> The driver resolves the SavedModel once per transform: the highest
 * version of TensorFlow Serving's layout ({@code dir/1}, {@code dir/2}...) and a stamp of its
 * content. Every executor loads that version and refuses (failing the task, naming the directory
 * and both stamps) a model rewritten since, rather than scoring part of the job with it.
 *
 * <p><b>Checked on the driver.</b> {@link #transformSchema} and {@link #transform} define the
 * function on the driver too (loading the SavedModel there once; tracing a factory's function once
 * with the columns' batch specs if it has not traced) and refuse, before any task runs, an input
 * column that feeds a parameter the function does not have, a parameter without default that no
 * column feeds, and an output the function does not return.
 *
 * <p><b>Saved with a pipeline.</b> Every setting is a Spark ML parameter. A SavedModel is saved
 * as its path (the pipeline does not copy the model); a factory is saved as its Java
 * serialization, so loading the pipeline needs the factory's class on the class path.
 */
public final class PolyfnTransformer extends Transformer implements DefaultParamsWritable {
  private static final long serialVersionUID = 1L;
  /** The directories shipped per application, by the name executors find them under. */
  private static final Map<String, String> SHIPPED = new ConcurrentHashMap<>();

  private final String uid;
  private final StringArrayParam inputCols;
  private final StringArrayParam parameters;
  private final StringArrayParam outputCols;
  private final StringArrayParam outputs;
  private final StringArrayParam outputTypes;
  private final IntParam batchSize;
  private final Param<String> functionName;
  private final FactoryParam factory;
  private final Param<String> savedModel;
  private final Param<String> savedModelFunction;
  private final BooleanParam shipSavedModel;

  /** A transformer with a new random uid. */
  public PolyfnTransformer() {
    this(Identifiable$.MODULE$.randomUID("polyfn"));
  }

  /**
   * A transformer with this uid (as Spark ML's readers create it).
   *
   * @param uid the stage's unique id
   */
  public PolyfnTransformer(String uid) {
    this.uid = uid;
    inputCols = new StringArrayParam(this, "inputCols", "the columns fed to the function, one batch tensor each");
    parameters = new StringArrayParam(this, "parameters",
        "the function's parameter fed by each input column (default: the column names)");
    outputCols = new StringArrayParam(this, "outputCols", "the columns the function's outputs become");
    outputs = new StringArrayParam(this, "outputs",
        "the function's output that becomes each output column (default: the column names)");
    outputTypes = new StringArrayParam(this, "outputTypes",
        "each output column's type: float, double, int, bigint, array<float> or array<double>");
    batchSize = new IntParam(this, "batchSize", "rows per function call (at least 1)");
    functionName = new Param<>(this, "functionName", "names the factory's function in each executor JVM");
    factory = new FactoryParam(this, "factory", "defines the function (serializable; called once per executor)");
    savedModel = new Param<>(this, "savedModel", "the SavedModel directory the function is loaded from");
    savedModelFunction = new Param<>(this, "savedModelFunction",
        "the function's name in a SavedModel with several (unset: its only function)");
    shipSavedModel = new BooleanParam(this, "shipSavedModel",
        "whether the driver ships the SavedModel directory to executors with SparkContext.addFile");
    setDefault(batchSize, PolyfnScoring.DEFAULT_BATCH_SIZE);
    setDefault(shipSavedModel, false);
  }

  @Override
  public String uid() {
    return uid;
  }

  /** @return the param: the columns fed to the function */
  public StringArrayParam inputCols() {
    return inputCols;
  }

  /** @return the param: the parameter each input column feeds */
  public StringArrayParam parameters() {
    return parameters;
  }

  /** @return the param: the output columns */
  public StringArrayParam outputCols() {
    return outputCols;
  }

  /** @return the param: the function's output for each output column */
  public StringArrayParam outputs() {
    return outputs;
  }

  /** @return the param: each output column's type, as Spark's DDL names it */
  public StringArrayParam outputTypes() {
    return outputTypes;
  }

  /** @return the param: rows per function call */
  public IntParam batchSize() {
    return batchSize;
  }

  /** @return the param: the factory's function name */
  public Param<String> functionName() {
    return functionName;
  }

  /** @return the param: the factory */
  public Param<FunctionFactory> factory() {
    return factory;
  }

  /** @return the param: the SavedModel directory */
  public Param<String> savedModel() {
    return savedModel;
  }

  /** @return the param: the function's name in the SavedModel */
  public Param<String> savedModelFunction() {
    return savedModelFunction;
  }

  /** @return the param: whether the SavedModel is shipped with {@code SparkContext.addFile} */
  public BooleanParam shipSavedModel() {
    return shipSavedModel;
  }

  /**
   * Sets the input columns.
   *
   * @param columns float, double, int, long, array&lt;float&gt; or array&lt;double&gt; columns
   * @return this transformer
   */
  public PolyfnTransformer setInputCols(String... columns) {
    return (PolyfnTransformer) set(inputCols, columns);
  }

  /**
   * Sets the parameter each input column feeds, in the order of the input columns.
   *
   * @param names the function's parameter names (default: the input column names)
   * @return this transformer
   */
  public PolyfnTransformer setParameters(String... names) {
    return (PolyfnTransformer) set(parameters, names);
  }

  /**
   * Sets the output columns.
   *
   * @param columns the new columns, one per output
   * @return this transformer
   */
  public PolyfnTransformer setOutputCols(String... columns) {
    return (PolyfnTransformer) set(outputCols, columns);
  }

  /**
   * Sets the function's output that becomes each output column, in the order of the columns.
   *
   * @param names output names, e.g. {@code output_0} (default: the output column names)
   * @return this transformer
   */
  public PolyfnTransformer setOutputs(String... names) {
    return (PolyfnTransformer) set(outputs, names);
  }

  /**
   * Sets each output column's type, in the order of the output columns.
   *
   * @param types FloatType, DoubleType, IntegerType, LongType, or an array of FloatType or DoubleType
   * @return this transformer
   */
  public PolyfnTransformer setOutputTypes(DataType... types) {
    String[] names = new String[types.length];
    for (int i = 0; i < types.length; i++) {
      names[i] = types[i].catalogString();
    }
    return (PolyfnTransformer) set(outputTypes, names);
  }

  /**
   * Sets how many rows each function call scores.
   *
   * @param rows at least 1; default {@link PolyfnScoring#DEFAULT_BATCH_SIZE}
   * @return this transformer
   */
  public PolyfnTransformer setBatchSize(int rows) {
    if (rows < 1) {
      throw new IllegalArgumentException("batchSize: expected at least 1 row, got " + rows);
    }
    return (PolyfnTransformer) set(batchSize, rows);
  }

  /**
   * Scores with the function a factory defines (instead of a SavedModel).
   *
   * @param name names the function in each executor JVM, as in {@link PolyfnScoring#with}
   * @param factory serializable; called once per executor JVM (and once on the driver)
   * @return this transformer
   */
  public PolyfnTransformer setFunction(String name, FunctionFactory factory) {
    if (name == null || name.isEmpty() || factory == null) {
      throw new IllegalArgumentException("setFunction: expected a non-empty name and a factory, got " + name
          + " and " + factory);
    }
    set(functionName, name);
    return (PolyfnTransformer) set(this.factory, factory);
  }

  /**
   * Scores with the only function of a SavedModel (instead of a factory).
   *
   * @param dir the SavedModel directory (see the class comment for where executors read it)
   * @return this transformer
   */
  public PolyfnTransformer setSavedModel(String dir) {
    if (dir == null || dir.isEmpty()) {
      throw new IllegalArgumentException("setSavedModel: expected a directory, got " + dir);
    }
    clear(savedModelFunction);
    return (PolyfnTransformer) set(savedModel, dir);
  }

  /**
   * Scores with the function named {@code function} of a SavedModel ({@code Function.load(dir, function)}).
   *
   * @param dir the SavedModel directory
   * @param function the name of a {@code tf.function} attribute of the saved object
   * @return this transformer
   */
  public PolyfnTransformer setSavedModel(String dir, String function) {
    setSavedModel(dir);
    if (function == null || function.isEmpty()) {
      throw new IllegalArgumentException("setSavedModel: expected a function name, got " + function);
    }
    return (PolyfnTransformer) set(savedModelFunction, function);
  }

  /**
   * Sets whether the driver ships the SavedModel directory to the executors.
   *
   * @param ship true to {@code SparkContext.addFile(dir, true)} it and load each executor's copy
   * @return this transformer
   */
  public PolyfnTransformer setShipSavedModel(boolean ship) {
    return (PolyfnTransformer) set(shipSavedModel, ship);
  }

  /** @return the input columns */
  public String[] getInputCols() {
    return $(inputCols);
  }

  /** @return the output columns */
  public String[] getOutputCols() {
    return $(outputCols);
  }

  /** @return the rows per function call */
  public int getBatchSize() {
    return (Integer) $(batchSize);
  }

  @Override
  public Dataset<Row> transform(Dataset<?> dataset) {
    return scoring(dataset.sparkSession().sparkContext()).score(dataset.toDF());
  }

  @Override
  public StructType transformSchema(StructType schema) {
    return scoring(SparkSession.active().sparkContext()).check(schema);
  }

  @Override
  public PolyfnTransformer copy(ParamMap extra) {
    return defaultCopy(extra);
  }

  /**
   * Reads a transformer saved by {@code write().save(path)} (Spark ML's reader, as a pipeline's
   * loader finds it).
   *
   * @return the reader
   */
  public static MLReader<PolyfnTransformer> read() {
    return new DefaultParamsReadable<PolyfnTransformer>() {}.read();
  }

  /**
   * Loads a transformer saved at {@code path}.
   *
   * @param path where {@code write().save(path)} wrote it
   * @return the transformer
   */
  public static PolyfnTransformer load(String path) {
    return read().load(path);
  }

  /** The scoring job these params describe, its function shipped to {@code sc}'s executors. */
  private PolyfnScoring scoring(SparkContext sc) {
    String[] columns = required(inputCols, "setInputCols");
    String[] params = isDefined(parameters) ? $(parameters) : columns;
    String[] cols = required(outputCols, "setOutputCols");
    String[] names = isDefined(outputs) ? $(outputs) : cols;
    String[] types = required(outputTypes, "setOutputTypes");
    sameLength("parameters", params, columns.length, "inputCols");
    sameLength("outputs", names, cols.length, "outputCols");
    sameLength("outputTypes", types, cols.length, "outputCols");
    if (isDefined(savedModel) == isDefined(factory)) {
      throw new IllegalArgumentException("set either setFunction(name, factory) or setSavedModel(dir), not "
          + (isDefined(savedModel) ? "both" : "neither"));
    }
    PolyfnScoring scoring = isDefined(factory) ? PolyfnScoring.with($(functionName), $(factory)) : savedModelScoring(sc);
    for (int i = 0; i < columns.length; i++) {
      scoring.input(columns[i], params[i]);
    }
    for (int i = 0; i < cols.length; i++) {
      DataType type;
      try {
        type = DataType.fromDDL(types[i]);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("outputTypes: '" + types[i] + "' (of column '" + cols[i]
            + "') is not a Spark type: " + e.getMessage(), e);
      }
      scoring.output(names[i], cols[i], type);
    }
    return scoring.batchSize((Integer) $(batchSize));
  }

  private PolyfnScoring savedModelScoring(SparkContext sc) {
    String dir = $(savedModel);
    String function = isDefined(savedModelFunction) ? $(savedModelFunction) : null;
    String shippedName = null;
    if ((Boolean) $(shipSavedModel)) {
      String trimmed = dir.replaceAll("/+$", "");
      shippedName = trimmed.substring(trimmed.lastIndexOf('/') + 1);
      String key = sc.applicationId() + "/" + shippedName;
      String before = SHIPPED.putIfAbsent(key, dir);
      if (before == null) {
        sc.addFile(dir, true);
      } else if (!before.equals(dir)) {
        throw new IllegalArgumentException("savedModel " + dir + ": " + before + " was already shipped under the "
            + "name '" + shippedName + "' in this application; shipped SavedModel directories need distinct last names");
      }
    }
    SavedModelFactory f = new SavedModelFactory(dir, function, shippedName, null, null);
    Path local = f.localDir();
    if (!Files.isDirectory(local)) {
      throw new IllegalArgumentException("savedModel: no directory " + local + (shippedName == null
          ? " on the driver (executors read the path as given: it must exist on every node, or use setShipSavedModel(true))"
          : " (the driver's copy of " + dir + ")"));
    }
    // The version and content every executor must load: resolved here, once per job.
    f = f.resolved();
    return PolyfnScoring.with(f.functionName(), f);
  }

  private String[] required(StringArrayParam param, String setter) {
    if (!isDefined(param) || $(param).length == 0) {
      throw new IllegalArgumentException(param.name() + ": not set; call " + setter);
    }
    return $(param);
  }

  private static void sameLength(String name, String[] values, int n, String of) {
    if (values.length != n) {
      throw new IllegalArgumentException(name + ": expected one per " + of + " (" + n + "), got " + values.length);
    }
  }
}
