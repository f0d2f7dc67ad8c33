package dev.polyfn.internal.flow;

import java.util.List;
import java.util.Map;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.OperationBuilder;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Squeeze;
import org.tensorflow.types.TInt32;

/**
 * Gradients that TensorFlow's C++ registry does not have and Python's {@code *_grad.py} do, built
 * here as Python builds them, so that {@code Flow.gradients} through them gives Python's values
 * instead of failing: a loss's {@code SparseSoftmaxCrossEntropyWithLogits}, {@code Xlogy}, {@code
 * Xdivy} and {@code Xlog1py} (cross-entropies, KL divergences), {@code Erfc}, {@code Digamma},
 * {@code MatrixInverse}, {@code MatrixDeterminant}, {@code MatrixSolve}, {@code TopKV2}, {@code
 * FloorMod}, and {@code FloorDiv} (none, as in Python). {@code GradientRegistryParityTest} checks
 * each against the gradient Python recorded.
 */
final class MissingGradients {
  private MissingGradients() {}

  /** Whether {@code op}'s gradient is built here. */
  static boolean handles(GraphOperation op) {
    return switch (op.type()) {
      case "SparseSoftmaxCrossEntropyWithLogits", "Xlogy", "Xdivy", "Xlog1py", "Erfc", "Digamma", "MatrixInverse",
          "MatrixDeterminant", "MatrixSolve", "TopKV2", "FloorMod", "FloorDiv" -> true;
      default -> false;
    };
  }

  /** Adds to {@code grads} the gradients of {@code op}'s inputs, given its outputs' {@code dys} (null where none). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static void apply(Ops g, GraphOperation op, List<Output<?>> dys, Map<String, List<Output<?>>> grads) {
    Output<?> dy = dys.get(0);
    switch (op.type()) {
      case "SparseSoftmaxCrossEntropyWithLogits" -> sparseSoftmax(g, op, dy, dys.get(1), grads);
      case "Xlogy", "Xdivy", "Xlog1py" -> {
        // Python's _XLogyGrad, _XDivyGrad, _XLog1pyGrad: where x is 0 the x-gradient is 0 (also where y is).
        Operand x = CorrectedGradients.conj(g, op.input(0));
        Operand y = CorrectedGradients.conj(g, op.input(1));
        Operand notZeroX = g.dtypes.cast(g.math.notEqual(x, g.zerosLike(x)), (Class) x.type());
        Operand px = binary(g, op.type(), notZeroX, y);
        Operand py = switch (op.type()) {
          case "Xlogy" -> binary(g, "Xdivy", x, y);
          case "Xdivy" -> binary(g, "Xdivy", g.math.neg(x), g.math.square(y));
          default -> binary(g, "Xdivy", x, g.math.add(y, g.onesLike(y)));
        };
        broadcastSummed(g, op, 0, g.math.mul(px, (Operand) dy), grads);
        broadcastSummed(g, op, 1, g.math.mul(py, (Operand) dy), grads);
      }
      case "Erfc" -> { // Python's _ErfcGrad: -2/√π · e^(-x²)
        Operand x = CorrectedGradients.conj(g, op.input(0));
        Operand d = g.math.mul(g.math.mul((Operand) dy, scalar(g, -2 / Math.sqrt(Math.PI), x)),
            g.math.exp(g.math.neg(g.math.square(x))));
        FlowGradients.add(grads, op.input(0), d.asOutput());
      }
      case "Digamma" -> { // Python's _DigammaGrad: polygamma(1, x)
        Operand x = CorrectedGradients.conj(g, op.input(0));
        FlowGradients.add(grads, op.input(0), g.math.mul((Operand) dy, binary(g, "Polygamma", g.onesLike(x), x)).asOutput());
      }
      case "MatrixInverse" -> { // Python's _MatrixInverseGrad
        boolean adjoint = op.attributes().getAttrBool("adjoint");
        Output<?> ainv = op.output(0);
        Operand inner = matmul(g, dy, ainv, adjoint, !adjoint);
        FlowGradients.add(grads, op.input(0), g.math.neg(matmul(g, ainv, inner.asOutput(), !adjoint, false)).asOutput());
      }
      case "MatrixDeterminant" -> { // Python's _MatrixDeterminantGrad: grad · det · inverse(a)ᴴ
        Operand c = op.output(0);
        Output<?> aAdjInv = g.scope().opBuilder("MatrixInverse", "MatrixInverse").addInput(op.input(0))
            .setAttr("adjoint", true).build().output(0);
        Operand<TInt32> shape = g.concat(List.of(g.shape(c), g.constant(new int[] {1, 1})), g.constant(0));
        Operand multipliers = g.reshape(g.math.mul((Operand) dy, c), shape);
        FlowGradients.add(grads, op.input(0), g.math.mul(multipliers, (Operand) aAdjInv).asOutput());
      }
      case "MatrixSolve" -> { // Python's _MatrixSolveGrad
        boolean adjoint = op.attributes().getAttrBool("adjoint");
        Output<?> c = op.output(0);
        Output<?> gradB = g.scope().opBuilder("MatrixSolve", "MatrixSolve").addInput(op.input(0)).addInput(dy)
            .setAttr("adjoint", !adjoint).build().output(0);
        Operand gradA = adjoint ? matmul(g, c, gradB, false, true) : matmul(g, gradB, c, false, true);
        FlowGradients.add(grads, op.input(0), g.math.neg(gradA).asOutput());
        FlowGradients.add(grads, op.input(1), gradB);
      }
      case "TopKV2" -> topK(g, op, dy, grads);
      case "FloorMod" -> { // Python's _FloorModGrad: dx = grad, dy = grad · -floor(x / y)
        Operand floorXy = g.math.floorDiv((Operand) CorrectedGradients.conj(g, op.input(0)),
            (Operand) CorrectedGradients.conj(g, op.input(1)));
        broadcastSummed(g, op, 0, dy, grads);
        broadcastSummed(g, op, 1, g.math.mul((Operand) dy, g.math.neg(floorXy)), grads);
      }
      default -> { } // FloorDiv: Python's gradient is None for both inputs, so they get none here
    }
  }

  /**
   * Python's {@code _SparseSoftmaxCrossEntropyWithLogitsGrad}: the loss's gradient times the op's
   * own backprop (through which no gradient flows), plus, when the backprop output is
   * differentiated, its second-order term; the labels get none.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void sparseSoftmax(Ops g, GraphOperation op, Output<?> gradLoss, Output<?> gradGrad,
      Map<String, List<Output<?>>> grads) {
    Operand grad = null;
    if (gradLoss != null) {
      Operand backprop = g.stopGradient((Operand) op.output(1));
      grad = g.math.mul(g.expandDims((Operand) gradLoss, g.constant(-1)), backprop);
    }
    if (gradGrad != null) {
      Operand softmax = g.nn.softmax((Operand) op.input(0));
      Operand inner = g.squeeze(matmul(g, g.expandDims((Operand) gradGrad, g.constant(1)).asOutput(),
          g.expandDims(softmax, g.constant(2)).asOutput(), false, false), Squeeze.axis(List.of(1L)));
      Operand term = g.math.mul(g.math.sub((Operand) gradGrad, inner), softmax);
      grad = grad == null ? term : g.math.add(grad, term);
    }
    FlowGradients.add(grads, op.input(0), grad.asOutput());
  }

  /** Python's {@code _TopKGrad}: the values' gradient scattered back to the places they were taken from. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void topK(Ops g, GraphOperation op, Output<?> dy, Map<String, List<Output<?>>> grads) {
    Operand<TInt32> inShape = g.shape(op.input(0));
    Operand<TInt32> indShape = g.shape(op.output(1));
    Operand<TInt32> indLast = last(g, indShape);
    Operand<TInt32> ind2d = g.reshape((Operand) op.output(1), g.stack(List.of(g.constant(-1), indLast)));
    Operand<TInt32> inLast = last(g, inShape);
    Operand<TInt32> outer = g.gather(g.shape(ind2d), g.constant(0), g.constant(0));
    Operand<TInt32> offsets = g.expandDims(g.range(g.constant(0), g.math.mul(outer, inLast), inLast), g.constant(-1));
    Operand<TInt32> ind = g.reshape(g.math.add(ind2d, offsets), g.constant(new int[] {-1}));
    Operand flat = g.scatterNd(g.expandDims(ind, g.constant(-1)), g.reshape((Operand) dy, g.constant(new int[] {-1})),
        g.expandDims(g.prod(inShape, g.constant(0)), g.constant(0)));
    FlowGradients.add(grads, op.input(0), g.reshape(flat, inShape).asOutput());
  }

  /** The last element of vector {@code v}. */
  private static Operand<TInt32> last(Ops g, Operand<TInt32> v) {
    return g.gather(v, g.math.sub(g.size(v), g.constant(1)), g.constant(0));
  }

  /** {@code d} as input {@code i}'s gradient, summed over the dimensions it was broadcast along (known or not). */
  private static void broadcastSummed(Ops g, GraphOperation op, int i, Operand<?> d, Map<String, List<Output<?>>> grads) {
    FlowGradients.add(grads, op.input(i), BroadcastSums.summedAny(g, op.input(i), d.asOutput()));
  }

  private static Operand<?> binary(Ops g, String type, Operand<?> a, Operand<?> b) {
    return g.scope().opBuilder(type, type).addInput(a.asOutput()).addInput(b.asOutput()).build().output(0);
  }

  private static Operand<?> matmul(Ops g, Output<?> a, Output<?> b, boolean adjA, boolean adjB) {
    OperationBuilder m = g.scope().opBuilder("BatchMatMulV2", "BatchMatMulV2").addInput(a).addInput(b)
        .setAttr("adj_x", adjA).setAttr("adj_y", adjB);
    return m.build().output(0);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Operand<?> scalar(Ops g, double v, Operand<?> like) {
    return g.dtypes.cast(g.constant(v), (Class) like.type());
  }
}
