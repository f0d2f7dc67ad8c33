package dev.polyfn.internal.flow;

import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tensorflow.Graph;
import org.tensorflow.Output;

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
 * of 1,000 multiplications). The Reshape's consumers read {@code g} instead.
 *
 * <p>The call's operations no gradient depends on (an input's that is not an x, such as a constant
 * factor's, and those the rewiring left unused) are left out of the traced function ({@link
 * AbsorbedOps#prune}): TensorFlow Java cannot remove them from the graph, and TensorFlow's
 * preparation of the first run took 0.5 s for that chain's 8,000 (0.1 s without them, as Python's
 * {@code GradientTape}, which builds none). The walk and the rewiring are native ({@code
 * polyfn_tf::unbroadcast}): through TensorFlow Java's operation API they took 0.3 s of tracing
 * for those 1,000 multiplications.
 */
final class UnbroadcastGradients {
  private UnbroadcastGradients() {}

  /**
   * Rewires the gradient operations named under {@code prefix} (one registry call's) that reach
   * {@code dx}, and returns {@code dx} with each gradient that was such a Reshape replaced by
   * what it reshaped, and marks the call's operations that none of them depends on then to be
   * left out. An entry of {@code dx} that is no gradient (null, or the registry's "none") is
   * returned as it is.
   */
  static Output<?>[] simplify(Graph graph, String prefix, Output<?>[] dx) {
    List<Integer> at = new ArrayList<>();
    List<String> ops = new ArrayList<>();
    for (int i = 0; i < dx.length; i++) {
      if (FlowGradients.isGradient(dx[i])) {
        at.add(i);
        ops.add(dx[i].op().name());
      }
    }
    if (at.isEmpty()) {
      return dx;
    }
    int[] indices = at.stream().mapToInt(i -> dx[i].index()).toArray();
    String[] got = Native.unbroadcastGradients(TensorFlowInternals.graphAddress(graph), prefix,
        ops.toArray(new String[0]), indices);
    Output<?>[] out = dx.clone();
    for (int j = 0; j < at.size(); j++) {
      int colon = got[j].lastIndexOf(':');
      out[at.get(j)] = graph.operation(got[j].substring(0, colon)).output(Integer.parseInt(got[j].substring(colon + 1)));
    }
    AbsorbedOps.prune(graph, Arrays.asList(got).subList(at.size(), got.length));
    return out;
  }
}
