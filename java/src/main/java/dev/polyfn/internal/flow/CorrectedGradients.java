package dev.polyfn.internal.flow;

import java.util.List;
import java.util.Map;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.OperationBuilder;
import org.tensorflow.Output;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Sum;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/**
 * Gradients built here, as Python's nn_grad.py, array_grad.py and math_grad.py build them, for the
 * ops whose gradient in TensorFlow's C++ registry is wrong (tests/python/gradient_registry_parity.py
 * compares every op against Python's) or missing where a second derivative of a common op needs it:
 * <ul>
 *   <li>{@code SqrtGrad}, {@code RsqrtGrad}, {@code TanhGrad}, {@code SigmoidGrad}, {@code
 *       SoftplusGrad}, {@code EluGrad}, {@code ReluGrad}, {@code Relu6Grad} and {@code
 *       LeakyReluGrad}, the gradients of {@code Sqrt}, {@code Rsqrt} and the activations: the
 *       registry has no gradient for them, so a second derivative through one (an RNN's tanh)
 *       failed naming the op; built as Python's math_grad.py and nn_grad.py build them ({@code
 *       _SqrtGradGrad}, {@code _TanhGradGrad}, {@code _ReluGradGrad}, ...).
 *   <li>{@code LRN}: the registry's {@code LRNGrad} takes none of the op's attributes, so its
 *       depth_radius, bias, alpha and beta are the defaults: a wrong value for any other.
 *   <li>{@code LogSoftmax}: the registry sums the incoming gradient over axis 1, not the last:
 *       wrong for a rank of 3 or more, refused at trace for rank 1.
 *   <li>{@code Conv2D}: the registry leaves out dilations and explicit paddings: a dilated
 *       convolution's gradient aborted the process (oneDNN), an {@code EXPLICIT} padding's failed.
 *   <li>{@code QuantizeAndDequantizeV4}: the registry's gradient could not be built (its
 *       {@code QuantizeAndDequantizeV4Grad} got an int32 input where a float one belongs).
 *   <li>{@code GatherV2} with a negative axis or batch_dims, or an int64 axis: the registry's
 *       gradient failed at run time (a Slice out of range) or at trace. Here the registry
 *       differentiates a copy of the gather whose axis (int32) and batch_dims are made
 *       non-negative; complex params included.
 * </ul>
 */
final class CorrectedGradients {
  private CorrectedGradients() {}

  /**
   * Whether {@code op}'s gradient is built here rather than by TensorFlow's registry: only where
   * the registry's is wrong, since a path through one of these goes through the per-op walk, many
   * times slower to build than one registry call.
   */
  static boolean handles(GraphOperation op) {
    return switch (op.type()) {
      case "LRN" -> op.attributes().getAttrInt("depth_radius") != 5 || op.attributes().getAttrFloat("bias") != 1f
          || op.attributes().getAttrFloat("alpha") != 1f || op.attributes().getAttrFloat("beta") != 0.5f;
      case "LogSoftmax" -> op.input(0).shape().isUnknown() || op.input(0).shape().numDimensions() != 2;
      case "Conv2D" -> "EXPLICIT".equals(op.attributes().getAttrString("padding"))
          || java.util.Arrays.stream(op.attributes().getAttrIntList("dilations")).anyMatch(d -> d != 1);
      case "QuantizeAndDequantizeV4", "SqrtGrad", "RsqrtGrad", "TanhGrad", "SigmoidGrad", "SoftplusGrad", "EluGrad",
          "ReluGrad", "Relu6Grad", "LeakyReluGrad" -> true;
      // The registry's fails for a negative axis or batch_dims, and for an int64 axis.
      case "GatherV2" -> op.attributes().getAttrInt("batch_dims") < 0 || op.input(2).dataType() != DataType.DT_INT32
          || !nonNegativeConstant(op.input(2));
      default -> false;
    };
  }

  /** Adds to {@code grads} the gradient of each floating-point input of {@code op}, given its output's {@code dy}. */
  static void apply(Ops g, Graph graph, GraphOperation op, Output<?> dy, Map<String, List<Output<?>>> grads) {
    switch (op.type()) {
      case "LRN" -> {
        OperationBuilder b = g.scope().opBuilder("LRNGrad", "LRNGrad").addInput(dy).addInput(op.input(0))
            .addInput(op.output(0));
        copy(b, op, "depth_radius", "bias", "alpha", "beta");
        FlowGradients.add(grads, op.input(0), b.build().output(0));
      }
      case "LogSoftmax" -> FlowGradients.add(grads, op.input(0), logSoftmax(g, op, dy));
      case "Conv2D" -> conv2d(g, op, dy, grads);
      case "QuantizeAndDequantizeV4" -> {
        // Python's _QuantizeAndDequantizeV4Grad: the input's gradient inside [min, max], and the bounds'.
        OperationBuilder b = g.scope().opBuilder("QuantizeAndDequantizeV4Grad", "QuantizeAndDequantizeV4Grad")
            .addInput(dy).addInput(op.input(0)).addInput(op.input(1)).addInput(op.input(2));
        copy(b, op, "axis");
        GraphOperation q = (GraphOperation) b.build();
        for (int i = 0; i < 3; i++) {
          FlowGradients.add(grads, op.input(i), q.output(i));
        }
      }
      case "SqrtGrad" -> sqrtGrad(g, op, dy, grads);
      case "RsqrtGrad" -> rsqrtGrad(g, op, dy, grads);
      case "TanhGrad", "SigmoidGrad", "SoftplusGrad", "EluGrad" -> activationGradGrad(g, op, dy, grads);
      case "ReluGrad", "Relu6Grad", "LeakyReluGrad" -> {
        // Python's _ReluGradGrad and its kin: the same op on the incoming gradient, none to the features.
        OperationBuilder b = g.scope().opBuilder(op.type(), op.type()).addInput(dy).addInput(op.input(1));
        if (op.type().equals("LeakyReluGrad")) {
          copy(b, op, "alpha");
        }
        FlowGradients.add(grads, op.input(0), b.build().output(0));
        FlowGradients.add(grads, op.input(1), g.zerosLike(op.input(1)).asOutput());
      }
      default -> gatherV2(g, graph, op, dy, grads);
    }
  }

  /**
   * Python's {@code _SqrtGradGrad}: {@code SqrtGrad(y, b) = b / (2y)}, so with {@code ga = dy / y}
   * the gradient of y is {@code -conj(ga) · out} and of b {@code ga / 2}.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void sqrtGrad(Ops g, GraphOperation op, Output<?> dy, Map<String, List<Output<?>>> grads) {
    Operand y = op.input(0);
    Operand ga = g.math.div((Operand) dy, y);
    FlowGradients.add(grads, op.input(0), g.math.neg(g.math.mul(conj(g, ga), (Operand) op.output(0))).asOutput());
    FlowGradients.add(grads, op.input(1), g.math.mul(ga, (Operand) scalar(g, 0.5f, y)).asOutput());
  }

  /**
   * Python's {@code _RsqrtGradGrad}: {@code RsqrtGrad(a, b) = -b a³ / 2}, so the gradient of a is
   * {@code -1.5 · conj(dy) · b · conj(a)²} and of b {@code RsqrtGrad(conj(a), dy)}.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void rsqrtGrad(Ops g, GraphOperation op, Output<?> dy, Map<String, List<Output<?>>> grads) {
    Operand ca = conj(g, op.input(0));
    Operand da = g.math.mul(g.math.mul(g.math.mul((Operand) scalar(g, -1.5f, ca), conj(g, dy)), (Operand) op.input(1)),
        g.math.square(ca));
    FlowGradients.add(grads, op.input(0), da.asOutput());
    FlowGradients.add(grads, op.input(1), g.scope().opBuilder("RsqrtGrad", "RsqrtGrad").addInput(ca.asOutput()).addInput(dy)
        .build().output(0));
  }

  /**
   * Python's gradients of the activations' gradient ops: {@code TanhGrad(y, b) = b (1 - y²)},
   * {@code SigmoidGrad(y, b) = b y (1 - y)} (inputs y, b), {@code SoftplusGrad(b, x) = b / (1 +
   * e^-x)} and {@code EluGrad(b, y) = b (y + 1 if y < 0 else 1)} (inputs b, then x or y).
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void activationGradGrad(Ops g, GraphOperation op, Output<?> dy, Map<String, List<Output<?>>> grads) {
    Operand grad = (Operand) dy;
    Operand in0 = conj(g, op.input(0));
    Operand in1 = conj(g, op.input(1));
    Operand d0;
    Operand d1;
    switch (op.type()) {
      case "TanhGrad" -> { // d/dy = grad · -2 b y, d/db = TanhGrad(y, grad)
        d0 = g.math.mul(g.math.mul(grad, scalar(g, -2f, in1)), g.math.mul(in1, in0));
        d1 = g.scope().opBuilder("TanhGrad", "TanhGrad").addInput(in0.asOutput()).addInput(dy).build().output(0);
      }
      case "SigmoidGrad" -> { // d/dy = grad b (1 - 2y), d/db = SigmoidGrad(y, grad)
        Operand gb = g.math.mul(grad, in1);
        d0 = g.math.sub(gb, g.math.mul(g.math.mul(scalar(g, 2f, gb), gb), in0));
        d1 = g.scope().opBuilder("SigmoidGrad", "SigmoidGrad").addInput(in0.asOutput()).addInput(dy).build().output(0);
      }
      case "SoftplusGrad" -> { // d/db = SoftplusGrad(grad, x), d/dx = grad b / (e^-x + 2 + e^x)
        Operand x = op.input(1);
        d0 = g.scope().opBuilder("SoftplusGrad", "SoftplusGrad").addInput(dy).addInput(x.asOutput()).build().output(0);
        d1 = g.math.div(g.math.mul(grad, (Operand) op.input(0)),
            g.math.add(g.math.add(g.math.exp(g.math.neg(x)), scalar(g, 2f, x)), g.math.exp(x)));
      }
      default -> { // EluGrad: d/db = EluGrad(grad, y), d/dy = grad b where y < 0, else 0
        Operand y = op.input(1);
        d0 = g.scope().opBuilder("EluGrad", "EluGrad").addInput(dy).addInput(y.asOutput()).build().output(0);
        d1 = g.select(g.math.less(y, (Operand) scalar(g, 0f, y)), g.math.mul(grad, (Operand) op.input(0)), g.zerosLike(y));
      }
    }
    FlowGradients.add(grads, op.input(0), d0.asOutput());
    FlowGradients.add(grads, op.input(1), d1.asOutput());
  }

  /** {@code v} as a scalar of {@code like}'s dtype. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Operand<?> scalar(Ops g, float v, Operand<?> like) {
    return g.dtypes.cast(g.constant(v), (Class) like.type());
  }

  /** {@code x}'s complex conjugate, or x itself if it is real. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static Operand<?> conj(Ops g, Operand<?> x) {
    DataType t = x.asOutput().dataType();
    return t == DataType.DT_COMPLEX64 || t == DataType.DT_COMPLEX128 ? g.math.conj((Operand) x) : x;
  }

  /** dx = dy − sum(dy, last axis) · exp(y), as Python's {@code _LogSoftmaxGrad}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Output<?> logSoftmax(Ops g, GraphOperation op, Output<?> dy) {
    Operand sum = g.sum((Operand) dy, g.constant(-1), Sum.keepDims(true));
    return g.math.sub((Operand) dy, g.math.mul(sum, g.math.exp((Operand) op.output(0)))).asOutput();
  }

  /** Python's {@code _Conv2DGrad}: both backprops with all of the convolution's attributes. */
  private static void conv2d(Ops g, GraphOperation op, Output<?> dy, Map<String, List<Output<?>>> grads) {
    String[] attrs = {"strides", "padding", "explicit_paddings", "use_cudnn_on_gpu", "data_format", "dilations"};
    OperationBuilder in = g.scope().opBuilder("Conv2DBackpropInput", "Conv2DBackpropInput")
        .addInput(g.shape(op.input(0)).asOutput()).addInput(op.input(1)).addInput(dy);
    copy(in, op, attrs);
    OperationBuilder filter = g.scope().opBuilder("Conv2DBackpropFilter", "Conv2DBackpropFilter")
        .addInput(op.input(0)).addInput(g.shape(op.input(1)).asOutput()).addInput(dy);
    copy(filter, op, attrs);
    FlowGradients.add(grads, op.input(0), in.build().output(0));
    FlowGradients.add(grads, op.input(1), filter.build().output(0));
  }

  /**
   * The registry's gradient of a copy of the gather reading an Identity of the params, with axis
   * taken modulo the params' rank and batch_dims made non-negative with the indices' static rank.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void gatherV2(Ops g, Graph graph, GraphOperation op, Output<?> dy, Map<String, List<Output<?>>> grads) {
    Output<?> params = op.input(0);
    DataType p = params.dataType();
    if (!FlowGradients.isFloat(p) && p != DataType.DT_COMPLEX64 && p != DataType.DT_COMPLEX128) {
      return;
    }
    long batchDims = op.attributes().getAttrInt("batch_dims");
    if (batchDims < 0) {
      int rank = op.input(1).shape().isUnknown() ? -1 : op.input(1).shape().numDimensions();
      if (rank < 0) {
        throw new IllegalArgumentException("gradients: no gradient through GatherV2 '" + op.name()
            + "': its batch_dims is negative and its indices' rank unknown");
      }
      batchDims += rank;
    }
    // An int32 axis in [0, rank): the registry's gradient builds int32 slices from it.
    Operand<TInt32> axis = op.input(2).dataType() == DataType.DT_INT64
        ? g.dtypes.cast((Operand<TInt64>) op.input(2), TInt32.class) : (Operand<TInt32>) op.input(2);
    Output<?> x = g.identity(params).asOutput();
    GraphOperation copy = (GraphOperation) g.scope().opBuilder("GatherV2", "GatherV2").addInput(x)
        .addInput(op.input(1)).addInput(g.math.floorMod(axis, g.rank(params)).asOutput())
        .setAttr("batch_dims", batchDims).build();
    Output<?>[] dx = graph.addGradients(g.scope().makeOpName("grad_GatherV2"), new Output<?>[] {copy.output(0)},
        new Output<?>[] {x}, new Output<?>[] {dy});
    if (FlowGradients.isGradient(dx[0])) {
      FlowGradients.add(grads, params, dx[0]);
    }
  }

  /** Whether {@code o} is a constant scalar that is not negative. */
  private static boolean nonNegativeConstant(Output<?> o) {
    GraphOperation c = (GraphOperation) o.op();
    if (!c.type().equals("Const") || !o.shape().isScalar()) {
      return false;
    }
    // A tensor attribute comes back as a RawTensor, not a TInt32 or TInt64: read its bytes.
    try (Tensor t = c.attributes().getAttrTensor("value")) {
      return t.dataType() == DataType.DT_INT32 ? t.asRawTensor().data().asInts().getInt(0) >= 0
          : t.dataType() == DataType.DT_INT64 && t.asRawTensor().data().asLongs().getLong(0) >= 0;
    }
  }

  private static void copy(OperationBuilder b, GraphOperation op, String... names) {
    for (String n : names) {
      b.setAttr(n, op.attributes().getAttrValueProto(n));
    }
  }
}
