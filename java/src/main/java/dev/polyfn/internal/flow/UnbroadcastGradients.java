package dev.polyfn.internal.flow;

import dev.polyfn.internal.GraphEdits;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;

/**
 * Takes out of a gradient of TensorFlow's C++ registry the reductions that static shapes show
 * reduce nothing. For a binary element-wise op (Add, Sub, Mul, RealDiv, Maximum, ...) the registry
 * builds each input's gradient as {@code Reshape(Sum(g, BroadcastGradientArgs(Shape(a),
 * Shape(b))[k]), Shape(input))}, whatever the shapes. Where the input's static shape is fully
 * known and is the op's output's (the other input broadcasts into it, and {@code g} has it too),
 * every dimension that Sum reduces has size 1 and Reshape gives back {@code g}'s shape: the
 * gradient is {@code g} itself, as Python's math_grad.py gives it ({@code SmartBroadcastGradientArgs}).
 * The values are the same; what goes is TensorFlow's preparation of the first run, which
 * constant-folds every Shape, BroadcastGradientArgs, Sum and Reshape it is given (7 s for a chain
 * of 1,000 multiplications). The Reshape's consumers read {@code g} instead; the unused operations
 * stay in the graph and TensorFlow prunes them when it instantiates the function.
 */
final class UnbroadcastGradients {
  private UnbroadcastGradients() {}

  /**
   * Rewires the gradient operations named under {@code prefix} (one registry call's) that reach
   * {@code dx}, and returns {@code dx} with each gradient that was such a Reshape replaced by
   * what it reshaped. An entry of {@code dx} that is no gradient (null, or the registry's "none")
   * is returned as it is.
   */
  static Output<?>[] simplify(Graph graph, String prefix, Output<?>[] dx) {
    Map<String, Output<?>> replaced = new HashMap<>();
    for (GraphOperation reshape : reshapes(prefix + "/", dx)) {
      Output<?> g = unreduced(reshape);
      if (g != null) {
        Output<?> out = reshape.output(0);
        for (GraphOperation c : reshape.consumers(0)) {
          for (int i = 0; i < c.numInputs(); i++) {
            if (same(c.input(i), out)) {
              GraphEdits.updateEdge(graph, g, c, i);
            }
          }
        }
        replaced.put(FlowGradients.key(out), g);
      }
    }
    Output<?>[] out = dx.clone();
    for (int i = 0; i < out.length; i++) {
      // A Reshape's g may itself have been a replaced Reshape (AddN of one path, say).
      while (FlowGradients.isGradient(out[i]) && replaced.containsKey(FlowGradients.key(out[i]))) {
        out[i] = replaced.get(FlowGradients.key(out[i]));
      }
    }
    return out;
  }

  /** The Reshape operations under {@code under} that {@code dx} depends on, found walking back from it. */
  private static List<GraphOperation> reshapes(String under, Output<?>[] dx) {
    List<GraphOperation> found = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    ArrayDeque<GraphOperation> todo = new ArrayDeque<>();
    for (Output<?> d : dx) {
      if (d != null && FlowGradients.isGradient(d)) {
        todo.push((GraphOperation) d.op());
      }
    }
    while (!todo.isEmpty()) {
      GraphOperation op = todo.pop();
      if (!op.name().startsWith(under) || !seen.add(op.name())) {
        continue;
      }
      if (op.type().equals("Reshape")) {
        found.add(op);
      }
      for (int i = 0; i < op.numInputs(); i++) {
        todo.push((GraphOperation) op.input(i).op());
      }
    }
    return found;
  }

  /**
   * The {@code g} of {@code reshape} when it is {@code Reshape(Sum(g, BroadcastGradientArgs(Shape(a),
   * Shape(b))[k]), Shape(input k))} of a known-shape input the op did not broadcast; else null.
   */
  private static Output<?> unreduced(GraphOperation reshape) {
    GraphOperation sum = (GraphOperation) reshape.input(0).op();
    GraphOperation shapeOf = (GraphOperation) reshape.input(1).op();
    if (!sum.type().equals("Sum") || !shapeOf.type().equals("Shape")) {
      return null;
    }
    Output<?> axes = sum.input(1);
    GraphOperation args = (GraphOperation) axes.op();
    if (!args.type().equals("BroadcastGradientArgs")) {
      return null;
    }
    int k = axes.index();
    GraphOperation otherShapeOf = (GraphOperation) args.input(1 - k).op();
    if (!same(args.input(k), reshape.input(1)) || !otherShapeOf.type().equals("Shape")) {
      return null;
    }
    Shape input = shapeOf.input(0).shape();
    Output<?> g = sum.input(0);
    return known(input) && known(g.shape()) && input.equals(g.shape())
        && broadcastsInto(otherShapeOf.input(0).shape(), input) ? g : null;
  }

  /** Whether {@code other} is fully known and broadcasting it with {@code to} gives {@code to}. */
  private static boolean broadcastsInto(Shape other, Shape to) {
    if (!known(other) || other.numDimensions() > to.numDimensions()) {
      return false;
    }
    int offset = to.numDimensions() - other.numDimensions();
    for (int i = 0; i < other.numDimensions(); i++) {
      long d = other.get(i);
      if (d != 1 && d != to.get(offset + i)) {
        return false;
      }
    }
    return true;
  }

  private static boolean known(Shape s) {
    return !s.isUnknown() && !s.hasUnknownDimension();
  }

  private static boolean same(Output<?> a, Output<?> b) {
    return a.index() == b.index() && a.op().name().equals(b.op().name());
  }
}
