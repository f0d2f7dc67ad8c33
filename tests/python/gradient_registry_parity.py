"""Python counterparts of GradientRegistryParityTest: the gradient of one TensorFlow op at a time,
as Python's gradient functions (tensorflow/python/ops/*_grad.py) give it, for a table of small
programs with broadcasting and edge-case inputs (ties, zeros, empty tensors, unknown dimensions,
float64 and half). The Java test builds each program through Polyfn and compares its
Flow.gradients, which TensorFlow's C++ gradient registry (tensorflow/cc/gradients) builds.

Each case applies one raw op to its inputs: an "x" input is a float32 parameter (of the declared
signature, None for an unknown dimension), cast to the case's dtype; a "const" input is a
constant; a "list" input a list of them. The loss is the sum over the chosen outputs of
reduce_sum(cast(output, float32) * w), w = 1 + 0.1 * range(size) in the output's shape, so that no
element's gradient is a plain count. Non-finite gradients are written as the strings "nan", "inf",
"-inf".

Run: python tests/python/gradient_registry_parity.py > tests/src/test/resources/gradient_registry_parity.json
"""
import inspect
import json
import math

import tensorflow as tf

DTYPES = {"complex64": tf.complex64, "float32": tf.float32, "float64": tf.float64, "half": tf.float16, "int32": tf.int32,
          "int64": tf.int64, "bool": tf.bool}


def seq(n, seed=0.0, scale=2.0):
    """n deterministic values in (-scale, scale), two decimals."""
    return [round(math.sin(1.7 * i + 0.3 + seed) * scale, 2) for i in range(n)]


def size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def X(shape, vals=None, sig=None, dtype="float32", seed=0.0):
    """A float32 parameter; sig: its declared shape (None dimensions unknown, "?" an unknown rank)."""
    return {"x": seq(size(shape), seed) if vals is None else vals, "shape": shape,
            "sig": shape if sig is None else (None if sig == "?" else sig), "dtype": dtype}


def C(vals, shape=None, dtype="int32"):
    if shape is None:
        shape = [len(vals)] if isinstance(vals, list) else []
    return {"const": vals if isinstance(vals, list) else [vals], "shape": shape, "dtype": dtype}


def L(*items):
    return {"list": list(items)}


CASES = []


def case(name, op, inputs, attrs=None, outputs=(0,), then=()):
    """then: unary ops applied in turn to each chosen output (a complex value's ComplexAbs, say)."""
    c = {"name": name, "op": op, "inputs": inputs, "attrs": attrs or {}, "outputs": list(outputs)}
    if then:
        c["then"] = list(then)
    CASES.append(c)


def unary(op, vals, dtypes=("float32",), **attrs):
    for dt in dtypes:
        case(op + ("" if dt == "float32" else "_" + dt), op, [X([len(vals)], vals, dtype=dt)], attrs)


# Element-wise unary ops, at points where subgradients could differ (0, ties, domain edges).
unary("Abs", [-1.5, 0.0, 2.0], ("float32", "float64"))
unary("Neg", [-1.5, 0.0, 2.0])
unary("Reciprocal", [-1.5, 0.5, 2.0], ("float32", "half"))
unary("Square", [-1.5, 0.0, 2.0], ("float32", "half"))
unary("Sqrt", [0.0, 0.25, 4.0], ("float32", "float64"))
unary("Rsqrt", [0.25, 1.0, 4.0])
unary("Exp", [-1.0, 0.0, 1.5], ("float32", "half"))
unary("Expm1", [-1.0, 0.0, 1.5])
unary("Log", [0.5, 1.0, 3.0], ("float32", "float64"))
unary("Log1p", [-0.5, 0.0, 3.0])
unary("Sinh", [-1.0, 0.0, 1.5])
unary("Cosh", [-1.0, 0.0, 1.5])
unary("Tanh", [-1.0, 0.0, 1.5], ("float32", "half"))
unary("Asinh", [-1.0, 0.0, 1.5])
unary("Acosh", [1.5, 2.0, 3.0])
unary("Atanh", [-0.5, 0.0, 0.5])
unary("Sigmoid", [-1.0, 0.0, 1.5], ("float32", "float64"))
unary("Sign", [-1.0, 0.0, 1.5])
unary("Sin", [-1.0, 0.0, 1.5])
unary("Cos", [-1.0, 0.0, 1.5])
unary("Tan", [-1.0, 0.0, 1.2])
unary("Asin", [-0.5, 0.0, 0.5])
unary("Acos", [-0.5, 0.0, 0.5])
unary("Atan", [-1.0, 0.0, 1.5])
unary("Erf", [-1.0, 0.0, 1.5])
unary("Erfc", [-1.0, 0.0, 1.5])
unary("Lgamma", [0.5, 1.5, 3.0])
unary("Digamma", [0.5, 1.5, 3.0])
unary("Relu", [-1.0, 0.0, 1.5], ("float32", "float64"))
unary("Relu6", [-1.0, 0.0, 6.0, 7.0, 3.0])
unary("Elu", [-1.0, 0.0, 1.5])
unary("Selu", [-1.0, 0.0, 1.5])
unary("Softplus", [-1.0, 0.0, 1.5])
unary("Softsign", [-1.0, 0.0, 1.5])
unary("LeakyRelu", [-1.0, 0.0, 1.5], alpha=0.3)
unary("L2Loss", [-1.0, 0.5, 1.5])
unary("Identity", [-1.0, 0.5, 1.5])
unary("Cast", [-1.0, 0.5, 1.5], DstT=tf.float64)
case("Softmax", "Softmax", [X([2, 3])])
case("Softmax_unknown", "Softmax", [X([2, 3], sig=[None, None])])
case("LogSoftmax", "LogSoftmax", [X([2, 3])])
case("ClipByValue", "ClipByValue", [X([2, 3], [-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]), X([], [-1.0]), X([], [1.0])])
# The kernel takes bounds of the input's shape or scalars only (no broadcasting).
case("ClipByValue_bounds_per_element", "ClipByValue", [X([2, 3], [-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]),
                                                       X([2, 3], [-1.0, -1.0, 0.2, 0.5, 0.0, 0.0]), X([], [1.0])])

# Binary element-wise ops: broadcast, ties, zeros, unknown dimensions.
for op in ("AddV2", "Sub", "Mul", "RealDiv", "Div", "SquaredDifference", "Maximum", "Minimum", "Atan2"):
    case(op + "_broadcast", op, [X([2, 3], seed=1.0), X([3], seed=2.0)])
case("Mul_unknown_batch", "Mul", [X([1, 3]), X([2, 3], sig=[None, 3], seed=1.0)])
case("Atan2_unknown_batch", "Atan2", [X([2, 3], sig=[None, 3], seed=1.0), X([3])])
case("Maximum_ties", "Maximum", [X([4], [1.0, 2.0, -1.0, 0.0]), X([4], [1.0, 1.0, -1.0, 0.5])])
case("Minimum_ties", "Minimum", [X([4], [1.0, 2.0, -1.0, 0.0]), X([4], [1.0, 1.0, -1.0, 0.5])])
case("Maximum_ties_broadcast", "Maximum", [X([2, 2], [1.0, 2.0, 1.0, 0.0]), X([1], [1.0])])
case("DivNoNan", "DivNoNan", [X([4], [1.0, 0.0, -2.0, 3.0]), X([4], [0.0, 0.0, 2.0, 0.5])])
case("DivNoNan_broadcast", "DivNoNan", [X([2, 2], [1.0, 0.0, -2.0, 3.0]), X([2], [0.0, 2.0])])
case("Pow", "Pow", [X([4], [0.5, 2.0, 3.0, 1.5]), X([4], [2.0, 0.5, -1.0, 3.0])])
case("Pow_nonpositive", "Pow", [X([4], [0.0, -2.0, 0.0, -1.5]), X([4], [2.0, 2.0, 0.0, 3.0])])
case("Pow_broadcast", "Pow", [X([2, 2], [0.5, 2.0, 3.0, 1.5]), X([], [2.0])])
case("Xlogy", "Xlogy", [X([4], [0.0, 0.0, 2.0, 1.5]), X([4], [0.0, 2.0, 0.5, 3.0])])
case("Xlogy_broadcast", "Xlogy", [X([2, 2], [0.0, 1.0, 2.0, 1.5]), X([2], [0.0, 2.0])])
case("Xlog1py", "Xlog1py", [X([4], [0.0, 0.0, 2.0, 1.5]), X([4], [-1.0, 2.0, 0.5, 3.0])])
case("Xdivy", "Xdivy", [X([4], [0.0, 0.0, 2.0, 1.5]), X([4], [0.0, 2.0, 0.5, 3.0])])
case("AddN", "AddN", [L(X([2, 2]), X([2, 2], seed=1.0), X([2, 2], seed=2.0))])
case("SelectV2_broadcast_cond", "SelectV2", [C([True, False, True], [3], "bool"), X([2, 3]), X([2, 3], seed=1.0)])
case("SelectV2_broadcast_values", "SelectV2", [C([True, False, True, False, False, True], [2, 3], "bool"),
                                                X([3]), X([2, 1], seed=1.0)])
case("Select", "Select", [C([True, False], [2], "bool"), X([2, 3]), X([2, 3], seed=1.0)])

# Reductions: negative and kept axes, ties, zeros, empty inputs.
case("Sum_negative_axis", "Sum", [X([2, 3]), C([-1])])
case("Sum_keep_dims", "Sum", [X([2, 3, 2]), C([0, 2])], {"keep_dims": True})
case("Sum_unknown", "Sum", [X([2, 3], sig=[None, None]), C([1])])
case("Mean_negative_axis", "Mean", [X([2, 3]), C([-1])])
case("Mean_keep_dims", "Mean", [X([2, 3, 2]), C([0, 2])], {"keep_dims": True})
case("Mean_empty", "Mean", [X([0, 3], []), C([0])])
case("Mean_unknown", "Mean", [X([2, 3], sig=[None, 3]), C([0])])
case("Max_ties", "Max", [X([2, 3], [1.0, 3.0, 3.0, 2.0, 2.0, -1.0]), C([1])])
case("Min_ties", "Min", [X([2, 3], [1.0, 1.0, 3.0, 2.0, -1.0, -1.0]), C([-1])], {"keep_dims": True})
case("Prod", "Prod", [X([2, 3]), C([1])])
case("Prod_zero", "Prod", [X([2, 3], [1.0, 0.0, 3.0, 0.0, 0.0, 2.0]), C([1])])
case("Prod_negative_axis_keep", "Prod", [X([2, 3]), C([-2])], {"keep_dims": True})
case("Cumsum", "Cumsum", [X([2, 3]), C(1, [])])
case("Cumsum_reverse_exclusive", "Cumsum", [X([2, 3]), C(-1, [])], {"reverse": True, "exclusive": True})
case("Cumsum_exclusive", "Cumsum", [X([4]), C(0, [])], {"exclusive": True})
case("Cumprod", "Cumprod", [X([4], [1.5, 2.0, -0.5, 3.0]), C(0, [])])
case("Cumprod_reverse_exclusive", "Cumprod", [X([4], [1.5, 2.0, -0.5, 3.0]), C(0, [])],
     {"reverse": True, "exclusive": True})
case("EuclideanNorm", "EuclideanNorm", [X([2, 3]), C([1])])

# Matrix products.
case("MatMul", "MatMul", [X([2, 3]), X([3, 2], seed=1.0)])
case("MatMul_transposed", "MatMul", [X([3, 2]), X([2, 3], seed=1.0)], {"transpose_a": True, "transpose_b": True})
case("BatchMatMulV2_broadcast", "BatchMatMulV2", [X([2, 2, 3]), X([3, 2], seed=1.0)])
case("BatchMatMulV2_broadcast_batch", "BatchMatMulV2", [X([1, 2, 3]), X([2, 3, 2], seed=1.0)], {"adj_x": False,
                                                                                               "adj_y": False})
case("BatchMatMulV2_adjoint", "BatchMatMulV2", [X([2, 3, 2]), X([2, 2, 3], seed=1.0)], {"adj_x": True, "adj_y": True})
case("BatchMatMul", "BatchMatMul", [X([2, 2, 3]), X([2, 3, 2], seed=1.0)])
case("Einsum", "Einsum", [L(X([2, 3]), X([3, 4], seed=1.0))], {"equation": "ij,jk->ik"})
case("Einsum_broadcast", "Einsum", [L(X([2, 3]), X([4, 3], seed=1.0))], {"equation": "ij,kj->ikj"})

# Shape and indexing ops.
case("Reshape", "Reshape", [X([2, 3]), C([3, 2])])
case("ExpandDims", "ExpandDims", [X([2, 3]), C(-1, [])])
case("Squeeze", "Squeeze", [X([2, 1, 3]), ], {"squeeze_dims": [1]})
case("Transpose", "Transpose", [X([2, 3, 2]), C([2, 0, 1])])
case("Tile", "Tile", [X([2, 3]), C([2, 1])])
case("Tile_unknown", "Tile", [X([2, 3], sig=[None, None]), C([1, 2])])
case("BroadcastTo", "BroadcastTo", [X([3]), C([2, 3])])
case("BroadcastTo_keepdim", "BroadcastTo", [X([2, 1]), C([2, 2, 3])])
case("Slice", "Slice", [X([3, 4]), C([1, 1]), C([2, -1])])
case("StridedSlice", "StridedSlice", [X([3, 4]), C([0, 3]), C([3, 0]), C([2, -1])])
case("StridedSlice_shrink_newaxis", "StridedSlice", [X([3, 4]), C([1, 0, 1]), C([2, 0, 3]), C([1, 1, 1])],
     {"shrink_axis_mask": 1, "new_axis_mask": 2})
case("StridedSlice_ellipsis", "StridedSlice", [X([2, 3, 4]), C([0, 1]), C([0, 3]), C([1, 2])], {"ellipsis_mask": 1})
case("GatherV2", "GatherV2", [X([4, 2]), C([3, 0, 3]), C(0, [])])
case("GatherV2_axis", "GatherV2", [X([2, 4]), C([3, 0, 3]), C(-1, [])])
case("GatherV2_batch_dims", "GatherV2", [X([2, 3]), C([2, 0, 1, 1], [2, 2]), C(1, [])], {"batch_dims": 1})
case("GatherNd", "GatherNd", [X([3, 2]), C([2, 0, 2], [3, 1])])
case("Pack", "Pack", [L(X([2]), X([2], seed=1.0))], {"axis": 1})
case("Unpack", "Unpack", [X([2, 3])], {"num": 3, "axis": -1}, outputs=(0, 2))
case("ConcatV2", "ConcatV2", [L(X([2, 1]), X([2, 2], seed=1.0)), C(-1, [])])
case("Split", "Split", [C(1, []), X([2, 4])], {"num_split": 2}, outputs=(1,))
case("SplitV", "SplitV", [X([5]), C([2, 3]), C(0, [])], {"num_split": 2}, outputs=(0, 1))
case("Pad", "Pad", [X([2, 2]), C([1, 0, 0, 2], [2, 2])])
case("PadV2", "PadV2", [X([2, 2]), C([1, 0, 0, 2], [2, 2]), X([], [0.5])])
case("MirrorPad", "MirrorPad", [X([3]), C([2, 1], [1, 2])], {"mode": "REFLECT"})
case("MirrorPad_symmetric", "MirrorPad", [X([3]), C([2, 1], [1, 2])], {"mode": "SYMMETRIC"})
case("ReverseV2", "ReverseV2", [X([2, 3]), C([-1])])
case("ReverseSequence", "ReverseSequence", [X([2, 3]), C([2, 3], [2], "int64")], {"seq_dim": 1, "batch_dim": 0})
case("Roll", "Roll", [X([2, 3]), C([1, -1]), C([0, 1])])
case("Fill", "Fill", [C([2, 2]), X([], [1.5])])
case("Diag", "Diag", [X([3])])
case("DiagPart", "DiagPart", [X([3, 3])])
case("MatrixDiag", "MatrixDiag", [X([2, 3])])
case("MatrixDiagPart", "MatrixDiagPart", [X([2, 3])])
case("MatrixSetDiag", "MatrixSetDiag", [X([2, 3]), X([2], seed=1.0)])
case("MatrixBandPart", "MatrixBandPart", [X([3, 3]), C(0, [], "int64"), C(1, [], "int64")])
case("UnsortedSegmentSum", "UnsortedSegmentSum", [X([4, 2]), C([0, 2, 0, 1]), C(3, [])])
case("UnsortedSegmentMax", "UnsortedSegmentMax", [X([4], [1.0, 2.0, 2.0, -1.0]), C([0, 0, 0, 1]), C(2, [])])
case("SegmentSum", "SegmentSum", [X([4, 2]), C([0, 0, 1, 2])])
case("DynamicStitch", "DynamicStitch", [L(C([0, 2]), C([1, 2])), L(X([2]), X([2], seed=1.0))])
case("DynamicPartition", "DynamicPartition", [X([4]), C([1, 0, 1, 1])], {"num_partitions": 2}, outputs=(0, 1))
case("SpaceToDepth", "SpaceToDepth", [X([1, 2, 2, 2])], {"block_size": 2})
case("DepthToSpace", "DepthToSpace", [X([1, 1, 1, 4])], {"block_size": 2})
case("SpaceToBatchND", "SpaceToBatchND", [X([1, 2, 2, 1]), C([2, 2]), C([0, 0, 0, 0], [2, 2])])

# Neural-network ops.
case("BiasAdd", "BiasAdd", [X([2, 3]), X([3], seed=1.0)])
case("BiasAdd_NCHW", "BiasAdd", [X([1, 2, 2, 2]), X([2], seed=1.0)], {"data_format": "NCHW"})
case("Conv2D_same", "Conv2D", [X([1, 3, 3, 1]), X([2, 2, 1, 2], seed=1.0)], {"strides": [1, 1, 1, 1], "padding": "SAME"})
case("Conv2D_valid_strided", "Conv2D", [X([1, 4, 4, 1]), X([2, 2, 1, 1], seed=1.0)],
     {"strides": [1, 2, 2, 1], "padding": "VALID"})
case("Conv2D_explicit", "Conv2D", [X([1, 3, 3, 1]), X([2, 2, 1, 1], seed=1.0)],
     {"strides": [1, 1, 1, 1], "padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 0, 0, 1, 0, 0]})
case("Conv2D_dilated", "Conv2D", [X([1, 4, 4, 1]), X([2, 2, 1, 1], seed=1.0)],
     {"strides": [1, 1, 1, 1], "padding": "VALID", "dilations": [1, 2, 2, 1]})
case("DepthwiseConv2dNative", "DepthwiseConv2dNative", [X([1, 3, 3, 2]), X([2, 2, 2, 1], seed=1.0)],
     {"strides": [1, 1, 1, 1], "padding": "SAME"})
case("Conv3D", "Conv3D", [X([1, 2, 2, 2, 1]), X([1, 2, 2, 1, 1], seed=1.0)],
     {"strides": [1, 1, 1, 1, 1], "padding": "SAME"})
case("MaxPool", "MaxPool", [X([1, 4, 4, 1])], {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"})
case("MaxPool_ties", "MaxPool", [X([1, 2, 2, 1], [1.0, 1.0, 0.5, 1.0])],
     {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "SAME"})
case("MaxPoolV2", "MaxPoolV2", [X([1, 4, 4, 1]), C([1, 2, 2, 1]), C([1, 2, 2, 1])], {"padding": "VALID"})
case("AvgPool", "AvgPool", [X([1, 3, 3, 1])], {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"})
case("MaxPool3D", "MaxPool3D", [X([1, 2, 2, 2, 1])], {"ksize": [1, 2, 2, 2, 1], "strides": [1, 1, 1, 1, 1],
                                                      "padding": "VALID"})
case("AvgPool3D", "AvgPool3D", [X([1, 2, 2, 2, 1])], {"ksize": [1, 2, 2, 1, 1], "strides": [1, 1, 1, 1, 1],
                                                      "padding": "SAME"})
case("LRN", "LRN", [X([1, 1, 2, 3])], {"depth_radius": 1})
case("FusedBatchNormV3", "FusedBatchNormV3", [X([2, 1, 1, 2]), X([2], [1.0, 2.0]), X([2], [0.5, -0.5]),
                                              C([0.0, 0.0], [2], "float32"), C([1.0, 1.0], [2], "float32")],
     {"is_training": True})
case("SoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits",
     [X([2, 3]), C([0.2, 0.3, 0.5, 1.0, 0.0, 0.0], [2, 3], "float32")], outputs=(0,))
case("SparseSoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", [X([2, 3]), C([2, 0])])
case("TopKV2", "TopKV2", [X([2, 3], [1.0, 3.0, 2.0, 0.5, -1.0, 4.0]), C(2, [])])
case("ResizeBilinear", "ResizeBilinear", [X([1, 2, 2, 1]), C([3, 3])])
case("ResizeNearestNeighbor", "ResizeNearestNeighbor", [X([1, 2, 2, 1]), C([3, 3])])
case("ResizeBicubic", "ResizeBicubic", [X([1, 2, 2, 1]), C([3, 3])])
case("CropAndResize", "CropAndResize", [X([1, 3, 3, 1]), C([0.0, 0.0, 1.0, 1.0], [1, 4], "float32"), C([0]), C([2, 2])])
case("MatrixInverse", "MatrixInverse", [X([2, 2], [2.0, 1.0, 0.5, 3.0])])
case("Cholesky", "Cholesky", [X([2, 2], [4.0, 1.0, 1.0, 3.0])])
case("MatrixDeterminant", "MatrixDeterminant", [X([2, 2], [2.0, 1.0, 0.5, 3.0])])
case("MatrixSolve", "MatrixSolve", [X([2, 2], [2.0, 1.0, 0.5, 3.0]), X([2, 1], seed=1.0)])
# The gradients Polyfn builds where the registry has none (MissingGradients): attributes, batches,
# unknown dimensions, a second output, other dtypes.
case("MatrixInverse_adjoint_batch", "MatrixInverse", [X([2, 2, 2], [2.0, 1.0, 0.5, 3.0, 1.0, -1.0, 2.0, 4.0])],
     {"adjoint": True})
case("MatrixDeterminant_batch_float64", "MatrixDeterminant",
     [X([2, 2, 2], [2.0, 1.0, 0.5, 3.0, 1.0, -1.0, 2.0, 4.0], dtype="float64")])
case("MatrixSolve_adjoint_unknown", "MatrixSolve", [X([2, 2], [2.0, 1.0, 0.5, 3.0], sig=[None, 2]), X([2, 3], seed=1.0)],
     {"adjoint": True})
case("TopKV2_rank3", "TopKV2", [X([2, 2, 4]), C(3, [])])
case("TopKV2_unknown", "TopKV2", [X([3, 4], sig=[None, 4]), C(1, [])])
case("SparseSoftmaxCrossEntropyWithLogits_unknown", "SparseSoftmaxCrossEntropyWithLogits",
     [X([3, 4], sig=[None, 4]), C([3, 0, 1])])
case("SparseSoftmaxCrossEntropyWithLogits_backprop", "SparseSoftmaxCrossEntropyWithLogits", [X([2, 3]), C([2, 0])],
     outputs=(0, 1))
case("Xdivy_broadcast_unknown", "Xdivy", [X([2, 2], [0.0, 1.0, 2.0, 1.5], sig=[None, 2]), X([2], [0.5, 2.0])])
case("Xlog1py_float64", "Xlog1py", [X([3], [0.0, 2.0, 1.5], dtype="float64"), X([3], [1.0, 0.5, 3.0], dtype="float64")])
case("FloorMod_broadcast", "FloorMod", [X([2, 2], [2.5, -2.5, 3.0, 1.0]), X([2], [2.0, -1.5])])
unary("Erfc", [-0.5, 2.0], ("float64", "half"))
unary("Digamma", [0.25, 4.0], ("float64",))


# Unknown ranks (a signature of None), more attributes and op versions.
case("Sum_unknown_rank", "Sum", [X([2, 3], sig="?"), C([-1])], {"keep_dims": True})
case("Mean_unknown_rank", "Mean", [X([2, 3], sig="?"), C([0])])
case("Max_unknown_rank", "Max", [X([2, 3], [1.0, 3.0, 3.0, 2.0, 2.0, -1.0], sig="?"), C([1])])
case("Mul_unknown_rank", "Mul", [X([2, 3], sig="?"), X([3], sig="?", seed=1.0)])
case("Atan2_unknown_rank", "Atan2", [X([2, 3], sig="?", seed=1.0), X([3], sig="?")])
case("LogSoftmax_unknown_rank", "LogSoftmax", [X([2, 2, 3], sig="?")])
case("BiasAdd_unknown_rank", "BiasAdd", [X([2, 3], sig="?"), X([3], seed=1.0)])
case("Tile_zero_multiple", "Tile", [X([2, 3]), C([0, 2])])
case("Sum_no_axes", "Sum", [X([2, 3]), C([], [0])])
case("Mean_no_axes", "Mean", [X([2, 3]), C([], [0])])
case("FloorMod", "FloorMod", [X([4], [2.5, -2.5, 3.0, 1.0]), X([4], [2.0, 2.0, -2.0, 3.0])])
case("FloorDiv", "FloorDiv", [X([4], [2.5, -2.5, 3.0, 1.0]), X([4], [2.0, 2.0, -2.0, 3.0])])
case("Floor", "Floor", [X([3], [-1.5, 0.5, 2.0])])
case("Round", "Round", [X([3], [-1.5, 0.5, 2.3])])
case("StopGradient", "StopGradient", [X([3])])
case("CheckNumerics", "CheckNumerics", [X([3])], {"message": "bad"})
case("EnsureShape", "EnsureShape", [X([2, 3], sig=[None, 3])], {"shape": [2, 3]})
case("QuantizeAndDequantizeV2", "QuantizeAndDequantizeV2", [X([4], [-2.0, -0.5, 0.3, 1.5]), C(-1.0, [], "float32"),
                                                            C(1.0, [], "float32")], {"range_given": True})
case("QuantizeAndDequantizeV4", "QuantizeAndDequantizeV4", [X([4], [-2.0, -0.5, 0.3, 1.5]), X([], [-1.0]),
                                                            X([], [1.0])], {"range_given": True})
case("MatrixDiagV3", "MatrixDiagV3", [X([2, 2]), C([0, 1]), C(-1, []), C(-1, []), C(0.0, [], "float32")])
case("MatrixDiagPartV3", "MatrixDiagPartV3", [X([3, 3]), C(1, []), C(0.0, [], "float32")])
case("MatrixSetDiagV3", "MatrixSetDiagV3", [X([3, 3]), X([2], seed=1.0), C(1, [])])
case("BatchToSpaceND", "BatchToSpaceND", [X([4, 1, 1, 1]), C([2, 2]), C([0, 0, 0, 0], [2, 2])])
case("ScatterNdNonAliasingAdd", "ScatterNdNonAliasingAdd", [X([4]), C([1, 3, 1], [3, 1]), X([3], seed=1.0)])
case("CropAndResize_boxes", "CropAndResize", [X([1, 3, 3, 1]), X([1, 4], [0.1, 0.2, 0.8, 0.9]), C([0]), C([2, 2])])
case("SoftmaxCrossEntropyWithLogits_both_outputs", "SoftmaxCrossEntropyWithLogits",
     [X([2, 3]), X([2, 3], [0.2, 0.3, 0.5, 1.0, 0.0, 0.0])], outputs=(0, 1))
case("Conv2DBackpropFilter", "Conv2DBackpropFilter", [X([1, 3, 3, 1]), C([2, 2, 1, 1]), X([1, 2, 2, 1], seed=1.0)],
     {"strides": [1, 1, 1, 1], "padding": "VALID"})
case("MaxPoolGrad", "MaxPoolGrad", [X([1, 2, 2, 1]), X([1, 1, 1, 1], [0.0]), X([1, 1, 1, 1], [1.5])],
     {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"})
case("ExtractImagePatches", "ExtractImagePatches", [X([1, 3, 3, 1])], {"ksizes": [1, 2, 2, 1],
                                                                       "strides": [1, 1, 1, 1],
                                                                       "rates": [1, 1, 1, 1], "padding": "VALID"})
case("BatchMatMulV3", "BatchMatMulV3", [X([2, 2, 3]), X([3, 2], seed=1.0)], {"Tout": "float32"})
case("UnsortedSegmentMin", "UnsortedSegmentMin", [X([4], [1.0, 2.0, 1.0, -1.0]), C([0, 0, 0, 1]), C(2, [])])
case("UnsortedSegmentProd", "UnsortedSegmentProd", [X([4], [1.5, 0.0, 2.0, -1.0]), C([0, 0, 1, 1]), C(2, [])])
case("SegmentMean", "SegmentMean", [X([4, 2]), C([0, 0, 1, 2])])
case("Betainc_x", "Betainc", [C([1.0, 2.0], [2], "float32"), C([2.0, 3.0], [2], "float32"), X([2], [0.3, 0.6])])
case("Igamma_x", "Igamma", [C([1.0, 2.0], [2], "float32"), X([2], [0.3, 1.6])])
case("SpaceToBatch", "SpaceToBatch", [X([1, 2, 2, 1]), C([0, 0, 0, 0], [2, 2])], {"block_size": 2})
case("BatchToSpace", "BatchToSpace", [X([4, 1, 1, 1]), C([0, 0, 0, 0], [2, 2])], {"block_size": 2})
case("Dilation2D", "Dilation2D", [X([1, 3, 3, 1]), X([2, 2, 1], seed=1.0)], {"strides": [1, 1, 1, 1],
                                                                             "rates": [1, 1, 1, 1], "padding": "VALID"})

# Complex values between float ones: conj in the gradients, and gradients through complex inputs.
case("Complex_ComplexAbs", "Complex", [X([3]), X([3], seed=1.0)], then=("ComplexAbs",))
case("Complex_Exp_Real", "Complex", [X([3]), X([3], seed=1.0)], then=("Exp", "Real"))
case("Complex_Square_Imag", "Complex", [X([3]), X([3], seed=1.0)], then=("Square", "Imag"))
case("Complex_Conj_Imag", "Complex", [X([3]), X([3], seed=1.0)], then=("Conj", "Imag"))
case("Complex_Reciprocal_Real", "Complex", [X([3]), X([3], seed=1.0)], then=("Reciprocal", "Real"))
case("Complex_Angle", "Complex", [X([3]), X([3], seed=1.0)], then=("Angle",))
case("Complex_Tanh_Imag", "Complex", [X([3]), X([3], seed=1.0)], then=("Tanh", "Imag"))
case("Cast_complex_Sqrt_Real", "Cast", [X([3], [0.5, 1.0, 2.0])], {"DstT": tf.complex64}, then=("Sqrt", "Real"))

# Attributes the raw op names otherwise than the op's definition (which the Java test uses).
PYTHON_ATTR_NAMES = {"squeeze_dims": "axis"}
# Attributes whose value is a dtype.
TYPE_ATTRS = {"DstT", "Tout"}
# Attributes whose value is a shape.
SHAPE_ATTRS = {"shape"}


# More dtypes, ranks, attributes and empty or unknown-shape inputs.
case("LogSoftmax_rank3", "LogSoftmax", [X([2, 2, 3])])
case("LogSoftmax_rank1", "LogSoftmax", [X([3])])
case("Softmax_rank3_half", "Softmax", [X([2, 2, 3], dtype="half")])
case("LogSoftmax_float64", "LogSoftmax", [X([2, 3], dtype="float64")])
case("LRN_attrs", "LRN", [X([1, 1, 2, 4])], {"depth_radius": 2, "bias": 2.0, "alpha": 0.5, "beta": 0.75})
case("Mean_float64", "Mean", [X([2, 3], dtype="float64"), C([1])])
case("Mean_half", "Mean", [X([2, 3], dtype="half"), C([0, 1])])
case("Sum_empty", "Sum", [X([2, 0], []), C([1])])
case("Max_empty_rows", "Max", [X([0, 3], []), C([1])])
case("Prod_empty", "Prod", [X([0, 2], []), C([0])])
case("Prod_unknown", "Prod", [X([2, 3], sig=[None, None]), C([0])])
case("Softmax_empty", "Softmax", [X([0, 3], [])])
case("MatMul_empty_inner", "MatMul", [X([2, 0], []), X([0, 3], [])])
case("MatMul_float64", "MatMul", [X([2, 3], dtype="float64"), X([3, 2], seed=1.0, dtype="float64")])
case("ConcatV2_empty_piece", "ConcatV2", [L(X([2, 0], []), X([2, 2], seed=1.0)), C(1, [])])
case("ConcatV2_unknown", "ConcatV2", [L(X([2, 1], sig=[None, None]), X([2, 2], sig=[None, 2], seed=1.0)), C(1, [])])
case("Tile_empty", "Tile", [X([0, 2], []), C([2, 2])])
case("BroadcastTo_unknown", "BroadcastTo", [X([1, 3], sig=[None, None]), C([2, 3])])
case("BatchMatMulV2_unknown_batch", "BatchMatMulV2", [X([2, 2, 3], sig=[None, 2, 3]), X([3, 2], seed=1.0)])
case("SelectV2_unknown", "SelectV2", [C([True, False, True], [3], "bool"), X([2, 3], sig=[None, 3]),
                                      X([1], [0.5], sig=[None])])
case("Maximum_half", "Maximum", [X([2, 2], [1.0, 2.0, 1.0, 0.0], dtype="half"), X([2], [1.0, 0.5], dtype="half")])
case("SquaredDifference_float64", "SquaredDifference", [X([2, 3], dtype="float64"), X([3], seed=1.0, dtype="float64")])
case("Pow_float64_broadcast", "Pow", [X([2, 2], [0.5, 2.0, 0.0, 1.5], dtype="float64"), X([2], [2.0, 0.0],
                                                                                          dtype="float64")])
case("Relu_half", "Relu", [X([3], [-1.0, 0.0, 1.5], dtype="half")])
case("BiasAdd_half", "BiasAdd", [X([2, 3], dtype="half"), X([3], seed=1.0, dtype="half")])
case("MaxPool_float64", "MaxPool", [X([1, 4, 4, 1], dtype="float64")],
     {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"})
case("AvgPool_valid_strided", "AvgPool", [X([1, 4, 4, 1])], {"ksize": [1, 3, 3, 1], "strides": [1, 1, 1, 1],
                                                             "padding": "VALID"})
case("Cumsum_float64", "Cumsum", [X([2, 3], dtype="float64"), C(0, [])], {"reverse": True})
case("Split_negative_axis", "Split", [C(-1, []), X([2, 4])], {"num_split": 2}, outputs=(0, 1))
case("Pack_negative_axis", "Pack", [L(X([2, 2]), X([2, 2], seed=1.0))], {"axis": -1})
case("GatherV2_negative_batch_dims", "GatherV2", [X([2, 3]), C([2, 0, 1, 1], [2, 2]), C(1, [])], {"batch_dims": -1})
case("GatherV2_unknown_params", "GatherV2", [X([4, 2], sig=[None, None]), C([3, 0, 3]), C(0, [])])
case("StridedSlice_negative_stride_masks", "StridedSlice", [X([5]), C([0]), C([0]), C([-2])],
     {"begin_mask": 1, "end_mask": 1})
case("Slice_unknown", "Slice", [X([3, 4], sig=[None, None]), C([1, 0]), C([-1, 2])])
case("FusedBatchNormV3_inference", "FusedBatchNormV3", [X([2, 1, 1, 2]), X([2], [1.0, 2.0]), X([2], [0.5, -0.5]),
                                                        C([0.1, -0.2], [2], "float32"), C([1.0, 2.0], [2], "float32")],
     {"is_training": False})
case("FusedBatchNorm", "FusedBatchNorm", [X([2, 1, 1, 2]), X([2], [1.0, 2.0]), X([2], [0.5, -0.5]),
                                          C([], [0], "float32"), C([], [0], "float32")], {"is_training": True})
case("ResizeBilinear_half_pixel", "ResizeBilinear", [X([1, 2, 3, 1]), C([3, 4])], {"half_pixel_centers": True})
case("ResizeBilinear_align_corners", "ResizeBilinear", [X([1, 2, 3, 1]), C([3, 4])], {"align_corners": True})
case("ResizeNearestNeighbor_half_pixel", "ResizeNearestNeighbor", [X([1, 2, 3, 1]), C([3, 5])],
     {"half_pixel_centers": True})
case("ResizeNearestNeighbor_align_corners", "ResizeNearestNeighbor", [X([1, 2, 3, 1]), C([3, 5])],
     {"align_corners": True})
case("ResizeBicubic_half_pixel", "ResizeBicubic", [X([1, 2, 3, 1]), C([3, 4])], {"half_pixel_centers": True})
case("CropAndResize_nearest", "CropAndResize", [X([1, 3, 3, 1]), C([0.1, 0.0, 0.9, 1.0], [1, 4], "float32"), C([0]),
                                                C([2, 2])], {"method": "nearest"})
case("Conv2DBackpropInput", "Conv2DBackpropInput", [C([1, 3, 3, 1]), X([2, 2, 1, 1]), X([1, 2, 2, 1], seed=1.0)],
     {"strides": [1, 1, 1, 1], "padding": "VALID"})
case("BiasAddV1", "BiasAddV1", [X([2, 3]), X([3], seed=1.0)])
case("ScatterNd", "ScatterNd", [C([1, 0, 1], [3, 1]), X([3, 2]), C([2, 2])])
case("TensorScatterUpdate", "TensorScatterUpdate", [X([3, 2]), C([2, 0], [2, 1]), X([2, 2], seed=1.0)])
case("TensorScatterAdd", "TensorScatterAdd", [X([3, 2]), C([2, 2], [2, 1]), X([2, 2], seed=1.0)])
case("OneHot_on_off", "OneHot", [C([0, 2]), C(3, []), X([], [2.0]), X([], [-1.0])])
case("Softplus_half", "Softplus", [X([3], [-1.0, 0.0, 1.5], dtype="half")])
case("Sqrt_half", "Sqrt", [X([3], [0.25, 1.0, 4.0], dtype="half")])
case("Selu_float64", "Selu", [X([3], [-1.0, 0.0, 1.5], dtype="float64")])
case("Elu_half", "Elu", [X([3], [-1.0, 0.0, 1.5], dtype="half")])
case("Erfinv", "Erfinv", [X([3], [-0.5, 0.0, 0.5])])
case("Ndtri", "Ndtri", [X([3], [0.2, 0.5, 0.9])])
case("UnsortedSegmentSum_negative_id", "UnsortedSegmentSum", [X([4]), C([0, -1, 1, 0]), C(2, [])])
case("Transpose_unknown", "Transpose", [X([2, 3], sig=[None, None]), C([1, 0])])
case("Reshape_unknown", "Reshape", [X([2, 3], sig=[None, 3]), C([-1])])
case("Squeeze_all", "Squeeze", [X([1, 3, 1])])
case("ReverseV2_multi", "ReverseV2", [X([2, 3]), C([0, 1])])
case("MirrorPad_2d", "MirrorPad", [X([2, 3]), C([1, 1, 2, 0], [2, 2])], {"mode": "SYMMETRIC"})
case("Einsum_trace", "Einsum", [L(X([3, 3]))], {"equation": "ii->"})
case("Einsum_batch_broadcast", "Einsum", [L(X([2, 1, 3]), X([4, 3], seed=1.0))], {"equation": "...j,kj->...k"})

def build(c):
    """The case's loss and its differentiated inputs, given the float32 parameters."""
    specs = []

    def collect(i):
        if "x" in i:
            specs.append(tf.TensorSpec(i["sig"], tf.float32))
        elif "list" in i:
            for j in i["list"]:
                collect(j)

    for i in c["inputs"]:
        collect(i)

    def program(*params):
        params = list(params)

        def make(i):
            if "x" in i:
                p = params.pop(0)
                return p if i["dtype"] == "float32" else tf.cast(p, DTYPES[i["dtype"]])
            if "list" in i:
                return [make(j) for j in i["list"]]
            return tf.constant(i["const"], DTYPES[i["dtype"]], shape=i["shape"])

        # The raw op's keywords are Python's names of the inputs (Sum's "axis" for "reduction_indices").
        names = list(inspect.signature(getattr(tf.raw_ops, c["op"])).parameters)
        args = {n: make(i) for n, i in zip(names, c["inputs"])}
        attrs = {PYTHON_ATTR_NAMES.get(k, k): (DTYPES[v] if k in TYPE_ATTRS else v)
                 for k, v in c["attrs"].items()}
        out = getattr(tf.raw_ops, c["op"])(**args, **attrs)
        outs = [out] if isinstance(out, tf.Tensor) else list(out)
        loss = tf.constant(0.0)
        for k in c["outputs"]:
            o = outs[k]
            for t in c.get("then", []):
                fn = getattr(tf.raw_ops, t)
                o = fn(**{next(iter(inspect.signature(fn).parameters)): o})
            o = tf.cast(o, tf.float32)
            w = tf.reshape(1.0 + 0.1 * tf.cast(tf.range(tf.size(o)), tf.float32), tf.shape(o))
            loss += tf.reduce_sum(o * w)
        return loss

    @tf.function(input_signature=specs)
    def grads(*params):
        with tf.GradientTape() as tape:
            tape.watch(params)
            loss = program(*params)
        gs = tape.gradient(loss, params, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return [tf.convert_to_tensor(g) for g in gs]

    return grads


def values(i):
    if "x" in i:
        return [tf.constant(i["x"], tf.float32, shape=i["shape"])]
    if "list" in i:
        return [v for j in i["list"] for v in values(j)]
    return []


def number(v):
    return v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))


def attr_json(k, v):
    if k in TYPE_ATTRS:
        return {"t": v}
    if k in SHAPE_ATTRS:
        return {"shape": list(v)}
    if isinstance(v, bool):
        return {"b": v}
    if isinstance(v, int):
        return {"i": v}
    if isinstance(v, float):
        return {"f": v}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, tf.DType):
        return {"t": v.name}
    return {"li": list(v)}


def main():
    out = []
    for c in CASES:
        if any(isinstance(v, tf.DType) for v in c["attrs"].values()):
            c["attrs"] = {k: (v.name if isinstance(v, tf.DType) else v) for k, v in c["attrs"].items()}
        xs = [v for i in c["inputs"] for v in values(i)]
        try:
            gs = build(c)(*xs)
            c["grads"] = [[number(float(v)) for v in g.numpy().reshape(-1)] for g in gs]
            c["grad_shapes"] = [list(g.shape) for g in gs]
        except Exception as e:  # a gradient Python does not have either
            c["python_error"] = type(e).__name__ + ": " + str(e).splitlines()[0][:200]
        c["attrs"] = {k: attr_json(k, v) for k, v in c["attrs"].items()}
        out.append(c)
    # One case a line, so that a change of TensorFlow's values shows case by case in a diff.
    print('{"cases": [\n' + ",\n".join(json.dumps(c, separators=(",", ":")) for c in out) + "\n]}")


if __name__ == "__main__":
    main()
