package dev.polyfn.spark;

import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.util.TaskCompletionListener;
import org.tensorflow.Tensor;

/**
 * Scores one partition: takes up to batchSize rows, makes one tensor per input column, calls the
 * function once, and yields the rows with the outputs appended. Only one batch is held at a time.
 */
final class BatchIterator implements Iterator<Row> {
  private final Iterator<Row> rows;
  private final ExecutorFunctions.Lease lease;
  private final MapFunction function;
  private final PolyfnScoring.Plan plan;
  private final List<Row> batch = new ArrayList<>();
  private final List<Row> scored = new ArrayList<>();
  private int next;

  private BatchIterator(Iterator<Row> rows, ExecutorFunctions.Lease lease, PolyfnScoring.Plan plan) {
    this.rows = rows;
    this.lease = lease;
    this.function = lease.function();
    this.plan = plan;
  }

  /**
   * Scores {@code rows} with the leased function. The lease is closed when the rows end, or when
   * the task ends (a task that stops early, or fails), so a replaced function is closed only after
   * its last batch.
   */
  static BatchIterator start(Iterator<Row> rows, ExecutorFunctions.Lease lease, PolyfnScoring.Plan plan) {
    TaskContext task = TaskContext.get();
    if (task != null) {
      task.addTaskCompletionListener((TaskCompletionListener) context -> lease.close());
    }
    return new BatchIterator(rows, lease, plan);
  }

  @Override
  public boolean hasNext() {
    if (next < scored.size()) {
      return true;
    }
    scored.clear();
    next = 0;
    batch.clear();
    while (batch.size() < plan.batchSize && rows.hasNext()) {
      batch.add(rows.next());
    }
    if (batch.isEmpty()) {
      lease.close();
      return false;
    }
    score();
    return true;
  }

  @Override
  public Row next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return scored.get(next++);
  }

  private void score() {
    int n = batch.size();
    Map<String, Object> args = new LinkedHashMap<>();
    try {
      for (int c = 0; c < plan.inputColumns.length; c++) {
        String column = plan.inputColumns[c];
        int index = plan.inputIndexes[c];
        ColumnType type = plan.inputTypes[c];
        List<Object> values = new ArrayList<>(n);
        int width = -1;
        for (Row row : batch) {
          if (row.isNullAt(index)) {
            throw new IllegalArgumentException("column '" + column + "' is null in row " + row
                + "; Polyfn scoring needs a value in every row (filter or fill nulls first)");
          }
          Object v = type.array ? row.getList(index) : row.get(index);
          if (width < 0) {
            width = type.width(v);
          }
          values.add(v);
        }
        args.put(plan.parameters[c], type.toTensor(column, values, width));
      }
      try (Outputs out = function.call(args)) {
        Object[][] values = new Object[n][];
        int inputWidth = plan.inputSchemaSize;
        for (int i = 0; i < n; i++) {
          Row row = batch.get(i);
          Object[] v = new Object[inputWidth + plan.outputNames.length];
          for (int j = 0; j < inputWidth; j++) {
            v[j] = row.get(j);
          }
          values[i] = v;
        }
        for (int o = 0; o < plan.outputNames.length; o++) {
          String name = plan.outputNames[o];
          if (!out.names().contains(name)) {
            throw new IllegalStateException("the function has no output '" + name + "'; its outputs: "
                + out.names());
          }
          Tensor t = out.get(name);
          for (int i = 0; i < n; i++) {
            values[i][inputWidth + o] = plan.outputTypes[o].value(name, t, i, n);
          }
        }
        for (Object[] v : values) {
          scored.add(RowFactory.create(v));
        }
      }
    } finally {
      for (Object t : args.values()) {
        ((Tensor) t).close();
      }
    }
  }
}
