package dev.polyfn.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Scores a Spark {@code Dataset<Row>} with a Polyfn function: the rows of each partition are
 * batched, each input column becomes one tensor per batch ({@code [rows]} for a numeric column,
 * {@code [rows, k]} for an array column), the function runs once per batch, and each named output
 * becomes a column of the result.
 *
 * <pre>{@code
 * Dataset<Row> scored = PolyfnScoring.with("price", Models::price)   // defined once per executor
 *     .input("area", "x")                     // column "area" -> parameter "x"
 *     .output("y", DataTypes.DoubleType)      // output "y" -> column "y"
 *     .batchSize(4096)
 *     .score(houses);
 * }</pre>
 *
 * <p>The function is defined by the factory once per executor JVM (by name and factory: a job that
 * reuses a name with another factory gets its own function, never the other one's, and the other
 * one is closed once no running batch uses it) and called by every task there, so each batch shape
 * traces once per executor. Declare batch-sized inputs with an
 * unknown first dimension ({@code Shape.of(-1)}, {@code Shape.of(-1, k)}): then the last, smaller
 * batch of a partition reuses the trace instead of tracing its own size.
 */
public final class PolyfnScoring implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Rows per batch unless set: measured by ScoringBenchmark (docs/spark.md), where gains flatten out. */
  public static final int DEFAULT_BATCH_SIZE = 4096;

  private final String name;
  private final FunctionFactory factory;
  private final Map<String, String> inputs = new LinkedHashMap<>();
  private final Map<String, DataType> outputs = new LinkedHashMap<>();
  private final Map<String, String> outputColumns = new LinkedHashMap<>();
  private int batchSize = DEFAULT_BATCH_SIZE;

  private PolyfnScoring(String name, FunctionFactory factory) {
    this.name = name;
    this.factory = factory;
  }

  /**
   * Starts a scoring job.
   *
   * @param name names the function in each executor JVM; jobs using one function share a name
   * @param factory defines the function; serializable, called once per executor
   * @return the job, to configure with inputs and outputs
   */
  public static PolyfnScoring with(String name, FunctionFactory factory) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("name: expected a non-empty function name");
    }
    Objects.requireNonNull(factory, "factory");
    return new PolyfnScoring(name, factory);
  }

  /**
   * Feeds a column to the parameter of the same name.
   *
   * @param column a float, double, int, long, array&lt;float&gt; or array&lt;double&gt; column
   * @return this job
   */
  public PolyfnScoring input(String column) {
    return input(column, column);
  }

  /**
   * Feeds a column to a parameter.
   *
   * @param column a float, double, int, long, array&lt;float&gt; or array&lt;double&gt; column
   * @param parameter the function's parameter that receives the column's batch tensor
   * @return this job
   */
  public PolyfnScoring input(String column, String parameter) {
    if (column == null || parameter == null) {
      throw new IllegalArgumentException("input: expected a column and a parameter name, got "
          + column + " and " + parameter);
    }
    if (inputs.putIfAbsent(column, parameter) != null) {
      throw new IllegalArgumentException("input: column '" + column + "' is given twice");
    }
    return this;
  }

  /**
   * Adds an output of the function as a column of the same name.
   *
   * @param output the function's output name
   * @param type FloatType, DoubleType, IntegerType, LongType, or an array of FloatType or
   *     DoubleType (for an output of shape {@code [rows, k]})
   * @return this job
   */
  public PolyfnScoring output(String output, DataType type) {
    return output(output, output, type);
  }

  /**
   * Adds an output of the function as a column.
   *
   * @param output the function's output name (e.g. {@code output_0} of a Python SavedModel)
   * @param column the column it becomes
   * @param type FloatType, DoubleType, IntegerType, LongType, or an array of FloatType or
   *     DoubleType (for an output of shape {@code [rows, k]})
   * @return this job
   */
  public PolyfnScoring output(String output, String column, DataType type) {
    if (output == null || column == null || type == null || ColumnType.of(type) == null) {
      throw new IllegalArgumentException("output '" + output + "': expected a column name and a type among "
          + ColumnType.supported() + ", got " + column + " and " + (type == null ? null : type.simpleString()));
    }
    if (outputs.containsKey(output) || outputColumns.containsValue(column)) {
      throw new IllegalArgumentException("output: '" + output + "' or column '" + column + "' is given twice");
    }
    outputs.put(output, type);
    outputColumns.put(output, column);
    return this;
  }

  /**
   * Sets how many rows each function call scores.
   *
   * @param rows at least 1; default {@link #DEFAULT_BATCH_SIZE}
   * @return this job
   */
  public PolyfnScoring batchSize(int rows) {
    if (rows < 1) {
      throw new IllegalArgumentException("batchSize: expected at least 1 row, got " + rows);
    }
    this.batchSize = rows;
    return this;
  }

  /**
   * Scores a dataset (lazily, as Spark transformations are). Before returning, the function is
   * defined on the driver too (once per JVM, as on an executor; traced once with the columns'
   * batch specs if it has not traced yet) to check the plan against it.
   *
   * @param data the rows to score; its input columns must hold no nulls
   * @return the rows with one column appended per output
   * @throws IllegalArgumentException if an input column is missing or of an unsupported type, an
   *     output column's name is taken, or the function has no parameter an input column feeds, a
   *     parameter without default that no column feeds, or no output of a declared name
   */
  public Dataset<Row> score(Dataset<Row> data) {
    Plan plan = plan(data.schema());
    String functionName = name;
    FunctionFactory f = factory;
    String factoryId = ExecutorFunctions.identify(name, factory);
    try (ExecutorFunctions.Lease lease = ExecutorFunctions.acquire(functionName, factoryId, f)) {
      DriverChecks.check(name, lease.function(), plan);
    }
    MapPartitionsFunction<Row, Row> scorer =
        rows -> BatchIterator.start(rows, ExecutorFunctions.acquire(functionName, factoryId, f), plan);
    return data.mapPartitions(scorer, Encoders.row(plan.outputSchema));
  }

  /**
   * Checks the columns against {@code schema} and checks the plan against the function on the
   * driver (as {@link #score} does), without scoring.
   *
   * @return the schema of the scored rows
   */
  StructType check(StructType schema) {
    Plan plan = plan(schema);
    try (ExecutorFunctions.Lease lease =
        ExecutorFunctions.acquire(name, ExecutorFunctions.identify(name, factory), factory)) {
      DriverChecks.check(name, lease.function(), plan);
    }
    return plan.outputSchema;
  }

  /** The plan for rows of {@code schema}: where each input and output column is, and its type. */
  private Plan plan(StructType schema) {
    if (inputs.isEmpty() || outputs.isEmpty()) {
      throw new IllegalArgumentException("score: declare at least one input and one output");
    }
    List<String> columns = Arrays.asList(schema.fieldNames());
    Plan plan = new Plan();
    plan.batchSize = batchSize;
    plan.inputSchemaSize = schema.size();
    plan.inputColumns = inputs.keySet().toArray(new String[0]);
    plan.parameters = inputs.values().toArray(new String[0]);
    plan.inputIndexes = new int[plan.inputColumns.length];
    plan.inputTypes = new ColumnType[plan.inputColumns.length];
    for (int c = 0; c < plan.inputColumns.length; c++) {
      String column = plan.inputColumns[c];
      int index = columns.indexOf(column);
      if (index < 0) {
        throw new IllegalArgumentException("input: no column '" + column + "' in " + columns);
      }
      DataType type = schema.fields()[index].dataType();
      plan.inputIndexes[c] = index;
      plan.inputTypes[c] = ColumnType.of(type);
      if (plan.inputTypes[c] == null) {
        throw new IllegalArgumentException("input: column '" + column + "' is " + type.simpleString()
            + "; expected " + ColumnType.supported());
      }
    }
    List<StructField> fields = new ArrayList<>(Arrays.asList(schema.fields()));
    plan.outputNames = outputs.keySet().toArray(new String[0]);
    plan.outputTypes = new ColumnType[plan.outputNames.length];
    for (int o = 0; o < plan.outputNames.length; o++) {
      String output = plan.outputNames[o];
      String column = outputColumns.get(output);
      if (columns.contains(column)) {
        throw new IllegalArgumentException("output: the dataset already has a column '" + column + "'");
      }
      plan.outputTypes[o] = ColumnType.of(outputs.get(output));
      fields.add(new StructField(column, plan.outputTypes[o].sparkType(), false,
          org.apache.spark.sql.types.Metadata.empty()));
    }
    plan.outputSchema = new StructType(fields.toArray(new StructField[0]));
    return plan;
  }

  /** What each task needs, computed once on the driver. */
  static final class Plan implements Serializable {
    private static final long serialVersionUID = 1L;
    int batchSize;
    int inputSchemaSize;
    String[] inputColumns;
    String[] parameters;
    int[] inputIndexes;
    ColumnType[] inputTypes;
    String[] outputNames;
    ColumnType[] outputTypes;
    StructType outputSchema;
  }
}
