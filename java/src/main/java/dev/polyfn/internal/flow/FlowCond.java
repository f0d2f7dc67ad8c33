package dev.polyfn.internal.flow;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;

/**
 * {@code Flow.cond} and its structured forms: both branch lambdas traced into regions of the
 * body's graph, gathered into branch functions with their captures as inputs, and one {@code
 * If}/{@code StatelessIf} operation that calls them.
 */
public final class FlowCond {
  private FlowCond() {}

  /** {@code Flow.condList}, outputs named by their index in errors. */
  public static List<Operand<?>> condList(Ops tf, Operand<TBool> pred, Supplier<? extends List<? extends Operand<?>>> then,
      Supplier<? extends List<? extends Operand<?>>> otherwise) {
    return condList(tf, pred, then, otherwise, i -> "output " + i);
  }

  /** {@code Flow.condList}; {@code label} names output i in errors (by key when the caller flattened a map or record). */
  public static List<Operand<?>> condList(Ops tf, Operand<TBool> pred, Supplier<? extends List<? extends Operand<?>>> then,
      Supplier<? extends List<? extends Operand<?>>> otherwise, IntFunction<String> label) {
    Objects.requireNonNull(then, "then");
    Objects.requireNonNull(otherwise, "otherwise");
    if (FlowEager.applies(tf)) {
      return FlowEager.condList(pred, then, otherwise, label);
    }
    Graph graph = FlowChecks.graphOf(tf, "cond");
    FlowChecks.scalarBool(graph, pred, "cond", "pred");
    Regions.Region<List<Output<?>>> t = Regions.trace(graph, () -> exits(tf, "then", then.get(), graph, label));
    Regions.Region<List<Output<?>>> e;
    try {
      e = Regions.trace(graph, () -> exits(tf, "else", otherwise.get(), graph, label));
    } catch (RuntimeException | Error failure) {
      Regions.discard(graph, t.ops());
      throw failure;
    }
    try {
      FlowChecks.sameStructure(t.result(), e.result(), label);
      Replays.check(graph, "then branch", List.of(t));
      Replays.check(graph, "else branch", List.of(e));
    } catch (IllegalArgumentException failure) {
      Regions.discard(graph, t.ops());
      Regions.discard(graph, e.ops());
      throw failure;
    }
    List<DataType> listElements = listElements(t.result(), e.result());
    List<Output<?>> captures = union(Regions.captures(graph, t.ops(), List.of()),
        Regions.captures(graph, e.ops(), List.of()));
    Regions.Built tb = Regions.build(graph, "cond_then", t.ops(), List.of(), captures, t.result());
    Regions.Built eb = Regions.build(graph, "cond_else", e.ops(), List.of(), captures, e.result());
    int n = t.result().size();
    DataType[] types = new DataType[n];
    Shape[] shapes = new Shape[n];
    for (int i = 0; i < n; i++) {
      types[i] = t.result().get(i).dataType();
      shapes[i] = FlowChecks.common(t.result().get(i).shape(), e.result().get(i).shape());
    }
    var b = tf.scope().opBuilder(tb.stateful() || eb.stateful() ? "If" : "StatelessIf", "cond");
    b.addInput(pred.asOutput());
    b.addInputList(captures.toArray(new Output<?>[0]));
    b.setAttr("Tout", types);
    b.setAttr("then_branch", FlowChecks.func(tb.name()));
    b.setAttr("else_branch", FlowChecks.func(eb.name()));
    b.setAttr("output_shapes", FlowChecks.shapes(List.of(shapes)));
    FlowChecks.lowerLikePython(graph, b);
    GraphOperation op = (GraphOperation) tf.scope().apply(b).build();
    FlowFunctions.record(graph, op, new FlowFunctions.CondInfo(then, otherwise, listElements));
    List<Operand<?>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(op.output(i));
    }
    return out;
  }

  /**
   * For each output, the element dtype of the TensorList both branches return (null where one does
   * not return a TensorList, or their element dtypes differ), read while the branches' operations
   * still lead back to where the lists were made.
   */
  private static List<DataType> listElements(List<Output<?>> then, List<Output<?>> otherwise) {
    List<DataType> out = new ArrayList<>();
    for (int i = 0; i < then.size(); i++) {
      DataType a = then.get(i).dataType() == DataType.DT_VARIANT ? ListGradients.listElement(then.get(i)) : null;
      out.add(a != null && a == ListGradients.listElement(otherwise.get(i)) ? a : null);
    }
    return Collections.unmodifiableList(out);
  }

  /** A branch's results, checked and passed through an Identity made in the branch. */
  private static List<Output<?>> exits(Ops tf, String branch, List<? extends Operand<?>> results, Graph graph,
      IntFunction<String> label) {
    if (results == null) {
      throw new IllegalArgumentException("cond: the " + branch + " branch returned null");
    }
    List<Output<?>> out = new ArrayList<>();
    for (int i = 0; i < results.size(); i++) {
      Operand<?> o = FlowChecks.operandOf(graph, results.get(i), "cond", branch + " " + label.apply(i));
      out.add(tf.identity(o).asOutput());
    }
    return out;
  }

  /** The outputs of {@code a}, then those of {@code b} not in {@code a}. */
  public static List<Output<?>> union(List<Output<?>> a, List<Output<?>> b) {
    List<Output<?>> out = new ArrayList<>(a);
    for (Output<?> o : b) {
      boolean seen = false;
      for (Output<?> x : out) {
        seen |= x.op().name().equals(o.op().name()) && x.index() == o.index();
      }
      if (!seen) {
        out.add(o);
      }
    }
    return out;
  }
}
