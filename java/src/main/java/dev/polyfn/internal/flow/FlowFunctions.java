package dev.polyfn.internal.flow;

import dev.polyfn.LoopOptions;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;

/**
 * What {@link FlowGradients} needs to know about the control-flow operations {@code Flow} built
 * (the lambdas of their branches, traced again for their gradients).
 */
public final class FlowFunctions {
  private FlowFunctions() {}

  /**
   * An If/StatelessIf and its branch lambdas: the gradient traces them again (their captures are
   * the inputs after the predicate). {@code listElements}: for each output, the element dtype of
   * the TensorList both branches return, null where it is not one (or the branches' differ), so
   * that a TensorList a cond returns is known as one ({@link ListGradients#listElement}): the
   * branches are functions by then, out of reach of the walk that tells.
   */
  public record CondInfo(Supplier<? extends List<? extends Operand<?>>> then,
      Supplier<? extends List<? extends Operand<?>>> otherwise, List<DataType> listElements) {}

  /**
   * A While/StatelessWhile and its lambdas: inputs are {@code skip} internal counters, {@code
   * vars} loop variables, then captures.
   */
  public record LoopInfo(Function<List<Operand<?>>, Operand<TBool>> cond,
      Function<List<Operand<?>>, List<? extends Operand<?>>> body, LoopOptions options, int skip, int vars,
      List<Shape> shapes) {}

  /**
   * The TensorListStack ending a {@code Flow.mapFn}: its loop and lambda. TensorFlow's registry has
   * no gradient for TensorList operations, so without this the gradient would stop at the stack.
   */
  public record MapInfo(GraphOperation loop, Output<?> elems, Operand<?> n,
      Function<Operand<?>, Operand<?>> fn) {}

  private static final Map<Graph, Map<String, Object>> INFO = new WeakHashMap<>();

  public static void record(Graph graph, GraphOperation op, Object info) {
    synchronized (INFO) {
      INFO.computeIfAbsent(graph, k -> new java.util.HashMap<>()).put(op.name(), info);
    }
  }

  public static void forget(Graph graph) {
    synchronized (INFO) {
      INFO.remove(graph);
    }
  }

  public static Object info(Graph graph, String op) {
    synchronized (INFO) {
      Map<String, Object> m = INFO.get(graph);
      return m == null ? null : m.get(op);
    }
  }
}
