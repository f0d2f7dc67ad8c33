"""Python counterparts of ControlFlowPorts{Loops,Conds,More}Test: programs in the manner of TensorFlow's own control
flow tests (while_v2_test.py, cond_v2_test.py, control_flow_ops_py_test.py, map_fn_test.py,
functional_ops_test.py's scan/foldl) that TfFunctionControlFlowPortsTest, TfFunctionGradientPortsTest
and ControlFlowParityTest do not cover: nested loops and conds, input-dependent and zero trip counts,
maximum_iterations with and without an early stop, loop variables of several dtypes and of growing
shape, TensorList accumulators, several outputs, captures and variables, map_fn over several inputs
with a dtype change, and their first and second derivatives. Each is run with TensorFlow 2.21 on
fixed inputs; the JSON it prints holds, per case, every call's inputs and outputs (dtype, shape,
flat values) and the function's trace count, which the Java test feeds to and compares with the
same program written with Flow.

Run: python tests/python/control_flow_ports_more.py > tests/src/test/resources/control_flow_ports_more.json
"""
import json

import tensorflow as tf

from recorded_tensor import enc

CASES = {}
ZERO = tf.UnconnectedGradients.ZERO


def grads(y, xs):
    return tf.gradients(y, xs, unconnected_gradients=ZERO)


def case(name, f, *calls):
    """Runs f on each call's inputs (a dict of name -> value) and records inputs, outputs and traces."""
    out = []
    for kwargs in calls:
        kwargs = {k: tf.convert_to_tensor(v) for k, v in kwargs.items()}
        r = f(**kwargs)
        r = list(r) if isinstance(r, (list, tuple)) else [r]
        out.append({"inputs": {k: enc(v) for k, v in kwargs.items()}, "outputs": [enc(t) for t in r]})
    CASES[name] = {"calls": out, "traces": f.experimental_get_tracing_count()}


f32 = tf.float32
F = lambda v: tf.constant(v, f32)
I = lambda v: tf.constant(v, tf.int32)
B = lambda v: tf.constant(v, tf.bool)


# ---- loops ----

# while_v2_test testNestedWhile / testDoubleNestedWhile-style: a while in a while's body, the outer
# trip count an input (0, 1 and 3), the inner one the outer counter; gradients to two captures.
@tf.function
def nested_while_input_trips(x, y, n):
    def outer(i, acc):
        _, a = tf.while_loop(lambda j, a: j <= i, lambda j, a: (j + 1, a * x + y), [0, acc])
        return i + 1, a
    v = tf.while_loop(lambda i, acc: i < n, outer, [0, tf.constant(1.0)])[1]
    return [v] + grads(v, [x, y])
case("nested_while_input_trips", nested_while_input_trips,
     dict(x=F(0.9), y=F(0.5), n=I(0)), dict(x=F(0.9), y=F(0.5), n=I(1)), dict(x=F(0.9), y=F(0.5), n=I(3)))


# cond_v2_test testWhileInCond-style: a bounded loop inside one branch only.
@tf.function
def while_in_cond_branch(x, y, p):
    def loop():
        return tf.while_loop(lambda v: v < 20.0, lambda v: v * x + y, [y], maximum_iterations=6)[0]
    v = tf.cond(p, loop, lambda: x * y)
    return [v] + grads(v, [x, y])
case("while_in_cond_branch", while_in_cond_branch,
     dict(x=F(1.5), y=F(2.0), p=B(True)), dict(x=F(1.5), y=F(2.0), p=B(False)), dict(x=F(1.1), y=F(1.0), p=B(True)))


# control_flow_ops_py_test testCondInWhile-style: a cond on a scalar the body computes from a vector.
@tf.function
def cond_on_reduced_scalar_in_loop(x, t):
    def body(i, v):
        s = tf.reduce_sum(v)
        return i + 1, tf.cond(s > t, lambda: v * 0.5, lambda: v * x + 1.0)
    v = tf.while_loop(lambda i, v: i < 5, body, [0, tf.constant([0.5, 1.0, -0.25])])[1]
    l = tf.reduce_sum(v * v)
    return [v] + grads(l, [x, t])
case("cond_on_reduced_scalar_in_loop", cond_on_reduced_scalar_in_loop,
     dict(x=F(1.7), t=F(4.0)), dict(x=F(0.3), t=F(4.0)))


# while_v2_test: a loop that runs zero times still gives gradients the captures' shapes (zeros).
@tf.function
def zero_trip_capture(w, n):
    v = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * w + tf.reduce_sum(w)), [0, tf.constant([1.0, 2.0])])[1]
    return [v] + grads(tf.reduce_sum(v), [w])
case("zero_trip_capture", zero_trip_capture, dict(w=F([0.5, 2.0]), n=I(0)), dict(w=F([0.5, 2.0]), n=I(2)))


# while_v2_test testGradientOfWhileWithMaximumIterations: the condition stops first (x=1.5) or the bound does (x=3).
@tf.function
def max_iter_early_stop(x):
    i, v = tf.while_loop(lambda i, v: v < 10.0, lambda i, v: (i + 1, v * x), [0, x], maximum_iterations=4)
    return [i, v] + grads(v, [x])
case("max_iter_early_stop", max_iter_early_stop, dict(x=F(1.5)), dict(x=F(3.0)), dict(x=F(20.0)))


# while_v2_test: an always-true condition bounded by maximum_iterations; v = v*x + y, second derivative too.
@tf.function
def max_iter_no_stop(x, y):
    v = tf.while_loop(lambda v: True, lambda v: v * x + y, [y], maximum_iterations=5)[0]
    gx, gy = grads(v, [x, y])
    return [v, gx, gy] + grads(gx, [x, y])
case("max_iter_no_stop", max_iter_no_stop, dict(x=F(0.8), y=F(1.5)))


# control_flow_ops_py_test testWhileWithMixedTypes-style: int32 and int64 counters, float32 and float64 accumulators.
@tf.function
def mixed_dtype_loop_vars(x, d, n):
    i, k, a, b = tf.while_loop(
        lambda i, k, a, b: i < n,
        lambda i, k, a, b: (i + 1, k * 3, a * x + tf.cast(i, f32), b + d * tf.cast(k, tf.float64)),
        [tf.constant(0), tf.constant(1, tf.int64), x, tf.constant(0.5, tf.float64)])
    return [i, k, a, b] + grads(a, [x]) + grads(b, [d])
case("mixed_dtype_loop_vars", mixed_dtype_loop_vars, dict(x=F(1.2), d=tf.constant(0.25, tf.float64), n=I(4)))


# while_v2_test testShapeInvariants-style: a vector growing by concat each iteration, differentiated.
@tf.function
def growing_concat(x, n):
    v = tf.while_loop(lambda v: tf.size(v) < n, lambda v: tf.concat([v, v[-1:] * x + 1.0], 0), [tf.reshape(x, [1])],
                      shape_invariants=[tf.TensorShape([None])])[0]
    return [v] + grads(tf.reduce_sum(v * v), [x])
case("growing_concat", growing_concat, dict(x=F(0.7), n=I(4)), dict(x=F(0.7), n=I(1)))


# while_v2_test testTensorArray / testAccumulateTensorList-style: write each iteration into a
# TensorArray (TensorListSetItem on a reserved list), stack, differentiate the stacked values.
@tf.function
def tensor_array_stack(x, n):
    ta = tf.TensorArray(f32, size=n, element_shape=[2])
    def body(i, v, ta):
        v = tf.sin(v) * x
        return i + 1, v, ta.write(i, v)
    _, _, ta = tf.while_loop(lambda i, v, ta: i < n, body, [0, tf.constant([0.3, 1.0]), ta])
    s = ta.stack()
    return [s] + grads(tf.reduce_sum(s * tf.range(1.0, 3.0)), [x])
case("tensor_array_stack", tensor_array_stack, dict(x=F(1.3), n=I(3)))


# list_ops_test / while_v2_test: a TensorList grown by TensorListPushBack in the loop, then stacked.
@tf.function
def push_back_stack(x, n):
    l = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([], tf.int32), max_num_elements=-1, element_dtype=f32)
    def body(i, v, l):
        v = v * x + 0.5
        return i + 1, v, tf.raw_ops.TensorListPushBack(input_handle=l, tensor=v)
    _, _, l = tf.while_loop(lambda i, v, l: i < n, body, [0, x, l])
    s = tf.raw_ops.TensorListStack(input_handle=l, element_shape=tf.constant([], tf.int32), element_dtype=f32)
    return [s] + grads(tf.reduce_sum(s), [x])
case("push_back_stack", push_back_stack, dict(x=F(1.1), n=I(4)))


# while_v2_test testGradientOfOneOutput-style: two loop variables of x, the gradient of each alone and of neither.
@tf.function
def two_outputs_one_used(x):
    _, a, b = tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * x, b + a), [0, tf.constant(1.0), tf.constant(0.0)])
    return [a, b] + grads(a, [x]) + grads(b, [x])
case("two_outputs_one_used", two_outputs_one_used, dict(x=F(1.5)))


# while_v2_test: the pred is the only thing depending on the loop variable: d acc/dx is the trip count.
@tf.function
def trips_decided_by_another_var(x, y):
    _, acc = tf.while_loop(lambda v, acc: v < 10.0, lambda v, acc: (v * y, acc + x), [y, tf.constant(0.0)])
    return [acc] + grads(acc, [x, y])
case("trips_decided_by_another_var", trips_decided_by_another_var, dict(x=F(0.5), y=F(2.0)), dict(x=F(0.5), y=F(20.0)))


# while_v2_test testSecondDerivative with two captures: the mixed derivative d2v/dxdy.
@tf.function
def mixed_second_derivative(x, y):
    v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x + y * y), [0, tf.constant(1.0)])[1]
    gx, gy = grads(v, [x, y])
    return [v, gx, gy] + grads(gx, [y]) + grads(gy, [x])
case("mixed_second_derivative", mixed_second_derivative, dict(x=F(1.5), y=F(0.5)))


# while_v2_test: the body returns a captured tensor as a loop variable (passes it through).
@tf.function
def body_returns_capture(x, y):
    _, a, b = tf.while_loop(lambda i, a, b: i < 2, lambda i, a, b: (i + 1, y, a * b + x), [0, x, tf.constant(1.0)])
    return [a, b] + grads(b, [x, y])
case("body_returns_capture", body_returns_capture, dict(x=F(2.0), y=F(3.0)))


# control_flow_ops_py_test testWhileGrad_Variable-style: a variable read inside the loop body, the
# gradient with respect to the variable (Python differentiates through the read in the body).
@tf.function
def variable_read_in_loop(w0, x):
    v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * VAR.read_value() + x), [0, tf.constant(1.0)])[1]
    return [v] + grads(v, [VAR, x])
VAR = tf.Variable(1.0)
VAR.assign(0.5)
case("variable_read_in_loop", variable_read_in_loop, dict(w0=F(0.5), x=F(2.0)))


# while_v2_test: a dict of loop variables, several dtypes, gradients to the capture.
@tf.function
def dict_loop_vars(x):
    r = tf.while_loop(lambda s: s["i"] < 3, lambda s: [{"i": s["i"] + 1, "p": s["p"] * x, "q": s["q"] + s["p"]}],
                      [{"i": tf.constant(0), "p": tf.constant([1.0, 2.0]), "q": tf.constant([0.0, 0.0])}])[0]
    return [r["i"], r["p"], r["q"]] + grads(tf.reduce_sum(r["q"]), [x])
case("dict_loop_vars", dict_loop_vars, dict(x=F(1.5)))


# while_v2_test: a loop whose trip count depends on the value of an input tensor, vector state.
@tf.function
def trip_count_from_values(e):
    def body(i, acc):
        return i + 1, acc * 0.5 + e[i]
    n = tf.reduce_sum(tf.cast(e > 0.0, tf.int32))
    _, acc = tf.while_loop(lambda i, acc: i < n, body, [0, tf.constant(0.0)])
    return [acc] + grads(acc, [e])
case("trip_count_from_values", trip_count_from_values, dict(e=F([1.0, 2.0, -3.0, 4.0])), dict(e=F([-1.0, 2.0])))


# ---- conds ----

# cond_v2_test: branches of very different op counts, two inputs, both predicates.
@tf.function
def cond_uneven_branches(x, y, p):
    v = tf.cond(p, lambda: x * x * x + tf.sin(x) * y - tf.exp(y * 0.1) / (1.0 + x * x), lambda: y)
    return [v] + grads(v, [x, y])
case("cond_uneven_branches", cond_uneven_branches, dict(x=F(0.7), y=F(1.3), p=B(True)), dict(x=F(0.7), y=F(1.3), p=B(False)))


# cond_v2_test testNestedCond with several outputs: two outputs, nested conds in each branch.
@tf.function
def nested_cond_two_outputs(x, y, p, q):
    def then():
        a, b = tf.cond(q, lambda: (x * y, x + y), lambda: (x - y, x * x))
        return a, b * 2.0
    def other():
        a = tf.cond(q, lambda: tf.sin(x), lambda: tf.cos(y))
        return a * y, a
    a, b = tf.cond(p, then, other)
    return [a, b] + grads(a + 3.0 * b, [x, y])
case("nested_cond_two_outputs", nested_cond_two_outputs,
     *[dict(x=F(0.6), y=F(1.4), p=B(p), q=B(q)) for p in (True, False) for q in (True, False)])


# cond_v2_test: a cond returning a dict of an int and a float.
@tf.function
def cond_dict_int_float(x, p):
    r = tf.cond(p, lambda: {"k": tf.constant(1), "v": x * x}, lambda: {"k": tf.constant(2), "v": x * 3.0})
    return [r["k"], r["v"]] + grads(r["v"], [x])
case("cond_dict_int_float", cond_dict_int_float, dict(x=F(2.5), p=B(True)), dict(x=F(2.5), p=B(False)))


# cond_v2_test testCaptures-style: branches capture an intermediate value and a variable's value
# read outside; gradients to the input through the capture and to the read value.
@tf.function
def cond_captures_intermediate_and_variable(x, p):
    h = tf.exp(x * 0.5)
    w = VAR2.read_value()
    v = tf.cond(p, lambda: h * w + x, lambda: h * h)
    return [v] + grads(v, [x, w])
VAR2 = tf.Variable(1.5)
case("cond_captures_intermediate_and_variable", cond_captures_intermediate_and_variable,
     dict(x=F(0.4), p=B(True)), dict(x=F(0.4), p=B(False)))


# cond_v2_test: x reaches the result only through the predicate: its gradient is zero.
@tf.function
def cond_x_only_in_pred(x, z):
    v = tf.cond(x > 0.0, lambda: z * 2.0, lambda: z * z)
    return [v] + grads(v, [x, z])
case("cond_x_only_in_pred", cond_x_only_in_pred, dict(x=F(1.0), z=F(3.0)), dict(x=F(-1.0), z=F(3.0)))


# cond_v2_test: branches returning their inputs unchanged (identity outputs).
@tf.function
def cond_passes_inputs_through(x, y, p):
    a, b = tf.cond(p, lambda: (x, y), lambda: (y, x * 2.0))
    return [a, b] + grads(a * 10.0 + b, [x, y])
case("cond_passes_inputs_through", cond_passes_inputs_through, dict(x=F(1.5), y=F(4.0), p=B(True)), dict(x=F(1.5), y=F(4.0), p=B(False)))


# cond_v2_test: branches of different static shapes ([4] and [2]); the gradient to x of shape [2].
@tf.function
def cond_different_shapes_grad(x, p):
    v = tf.cond(p, lambda: tf.concat([x, x * x], 0), lambda: tf.sin(x))
    return [v] + grads(tf.reduce_sum(v * v), [x])
case("cond_different_shapes_grad", cond_different_shapes_grad, dict(x=F([0.5, -1.5]), p=B(True)), dict(x=F([0.5, -1.5]), p=B(False)))


# cond_v2_test: a cond inside a loop, differentiated twice (the second derivative through both).
@tf.function
def cond_in_loop_second_derivative(x):
    def body(i, v):
        return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: v * x, lambda: v + x * x)
    v = tf.while_loop(lambda i, v: i < 4, body, [0, tf.constant(1.0)])[1]
    g = grads(v, [x])[0]
    return [v, g] + grads(g, [x])
case("cond_in_loop_second_derivative", cond_in_loop_second_derivative, dict(x=F(1.3)))


# cond_v2_test: both branches constants: the gradient is zero.
@tf.function
def cond_constant_branches(x):
    v = tf.cond(x > 1.0, lambda: tf.constant(5.0), lambda: tf.constant(-5.0))
    return [v] + grads(v, [x])
case("cond_constant_branches", cond_constant_branches, dict(x=F(2.0)))


# cond_v2_test testSecondDerivative with two inputs: mixed and pure second derivatives.
@tf.function
def cond_mixed_second_derivative(x, y, p):
    v = tf.cond(p, lambda: x * x * y + tf.sin(x * y), lambda: y * y * y)
    gx, gy = grads(v, [x, y])
    return [gx, gy] + grads(gx, [x, y]) + grads(gy, [y])
case("cond_mixed_second_derivative", cond_mixed_second_derivative, dict(x=F(0.8), y=F(1.2), p=B(True)), dict(x=F(0.8), y=F(1.2), p=B(False)))


# cond_v2_test: a while loop in one branch and a cond in the other, inside a loop.
@tf.function
def loop_of_cond_of_loop(x, n):
    def body(i, v):
        inner = lambda: tf.while_loop(lambda j, u: j < i, lambda j, u: (j + 1, u * x), [0, v])[1]
        return i + 1, tf.cond(v < 5.0, inner, lambda: tf.cond(v > 50.0, lambda: v * 0.1, lambda: v - x))
    v = tf.while_loop(lambda i, v: i < n, body, [0, x])[1]
    return [v] + grads(v, [x])
case("loop_of_cond_of_loop", loop_of_cond_of_loop, dict(x=F(1.5), n=I(4)), dict(x=F(2.5), n=I(5)), dict(x=F(1.5), n=I(0)))


# ---- map_fn, scan, foldl ----

# map_fn_test testMap_MultiInputSingleOutput-style: two inputs (by index), int to float dtype change.
@tf.function
def map_two_inputs_by_index(a, b):
    r = tf.map_fn(lambda i: a[i] * tf.cast(i + 1, f32) + b[i] * b[i], tf.range(tf.shape(a)[0]), fn_output_signature=f32)
    return [r] + grads(tf.reduce_sum(r * tf.constant([1.0, -2.0, 0.5])), [a, b])
case("map_two_inputs_by_index", map_two_inputs_by_index, dict(a=F([1.0, 2.0, 3.0]), b=F([0.5, -0.5, 1.5])))


# map_fn_test: float elements to int32 results (a dtype change), then used as a count.
@tf.function
def map_float_to_int(e):
    r = tf.map_fn(lambda a: tf.cast(tf.floor(a * 2.0), tf.int32), e, fn_output_signature=tf.int32)
    return [r, tf.reduce_sum(r)]
case("map_float_to_int", map_float_to_int, dict(e=F([0.2, 1.7, -0.6, 3.1])))


# map_fn_test testMap_Grad nested: a map_fn inside a map_fn's fn, differentiated.
@tf.function
def nested_map_fn(x, e):
    r = tf.map_fn(lambda row: tf.map_fn(lambda a: a * a * x, row), e)
    return [r] + grads(tf.reduce_sum(r * e), [x, e])
case("nested_map_fn", nested_map_fn, dict(x=F(1.5), e=F([[1.0, 2.0], [-1.0, 0.5], [3.0, 0.0]])))


# map_fn_test: a cond per element, differentiated to the elements and the capture.
@tf.function
def map_fn_with_cond(x, e):
    r = tf.map_fn(lambda a: tf.cond(a > 0.0, lambda: a * x, lambda: a * a), e)
    return [r] + grads(tf.reduce_sum(r), [x, e])
case("map_fn_with_cond", map_fn_with_cond, dict(x=F(2.0), e=F([1.0, -2.0, 3.0, -0.5])))


# map_fn_test: a while per element whose trip count depends on the element.
@tf.function
def map_fn_with_while(x, e):
    r = tf.map_fn(lambda a: tf.while_loop(lambda v: v < 10.0, lambda v: v * x, [a])[0], e)
    return [r] + grads(tf.reduce_sum(r), [x, e])
case("map_fn_with_while", map_fn_with_while, dict(x=F(2.0), e=F([1.0, 3.0, 12.0, 0.5])))


# functional_ops_test testScan_Simple / testScanGradient: a scan, written in Java as a loop over a TensorList.
@tf.function
def scan_linear(w, e):
    r = tf.scan(lambda a, x: a * w + x, e, initializer=tf.constant(1.0))
    return [r] + grads(tf.reduce_sum(r), [w, e])
case("scan_linear", scan_linear, dict(w=F(0.5), e=F([1.0, 2.0, 3.0, 4.0])))


# functional_ops_test testFoldl_Simple / testFoldl_Grad: a foldl, written in Java as a loop reading elems.
@tf.function
def foldl_product(w, e):
    r = tf.foldl(lambda a, x: a * x + w, e, initializer=tf.constant(1.0))
    return [r] + grads(r, [w, e])
case("foldl_product", foldl_product, dict(w=F(0.25), e=F([2.0, -1.0, 0.5])))


# map_fn inside a while inside a cond branch: three levels, one differentiation.
@tf.function
def map_in_loop_in_cond(x, p):
    def loop():
        return tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.map_fn(lambda a: tf.sin(a) * x, v)),
                             [0, tf.constant([0.5, 1.0, 1.5])])[1]
    v = tf.cond(p, loop, lambda: tf.constant([0.5, 1.0, 1.5]) * x)
    return [v] + grads(tf.reduce_sum(v), [x])
case("map_in_loop_in_cond", map_in_loop_in_cond, dict(x=F(1.2), p=B(True)), dict(x=F(1.2), p=B(False)))


# ---- round two: nesting, RNNs, second derivatives ----

# while_v2_test testNestedWhileCapturesOuterLoopVar-style: the inner body reads the outer loop
# variable as a capture (not a loop variable of its own).
@tf.function
def inner_reads_outer_var(x):
    def outer(i, v):
        u = tf.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, u * v + x), [0, tf.constant(0.5)])[1]
        return i + 1, v + u * 0.1
    v = tf.while_loop(lambda i, v: i < 3, outer, [0, x])[1]
    return [v] + grads(v, [x])
case("inner_reads_outer_var", inner_reads_outer_var, dict(x=F(0.8)))


# while_v2_test: maximum_iterations on both a loop and the loop inside its body.
@tf.function
def nested_max_iterations(x):
    def outer(v):
        return tf.while_loop(lambda u: u < 100.0, lambda u: u * x, [v], maximum_iterations=2)[0] + 1.0
    v = tf.while_loop(lambda v: v < 1000.0, outer, [x], maximum_iterations=3)[0]
    g = grads(v, [x])[0]
    return [v, g] + grads(g, [x])
case("nested_max_iterations", nested_max_iterations, dict(x=F(1.5)), dict(x=F(3.0)))


# while_v2_test testSecondDerivative of nested loops.
@tf.function
def nested_loop_second_derivative(x):
    def outer(i, v):
        return i + 1, tf.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, tf.sin(u) * x), [0, v])[1]
    v = tf.while_loop(lambda i, v: i < 2, outer, [0, x])[1]
    g = grads(v, [x])[0]
    return [v, g] + grads(g, [x])
case("nested_loop_second_derivative", nested_loop_second_derivative, dict(x=F(0.9)))


# while_v2_test: second derivative of a loop stopped by its condition before its bound.
@tf.function
def early_stop_second_derivative(x):
    v = tf.while_loop(lambda v: v < 5.0, lambda v: v * v * x, [x], maximum_iterations=10)[0]
    g = grads(v, [x])[0]
    return [v, g] + grads(g, [x])
case("early_stop_second_derivative", early_stop_second_derivative, dict(x=F(1.3)))


# An RNN as users write it: h = tanh(W h + U x_t) over a sequence read by index, the loss on the
# last state and on the stacked states; gradients to W, U, the inputs and the initial state.
@tf.function
def rnn(w, u, xs, h0):
    n = tf.shape(xs)[0]
    ta = tf.TensorArray(f32, size=n)
    def body(t, h, ta):
        h = tf.tanh(tf.linalg.matvec(w, h) + tf.linalg.matvec(u, xs[t]))
        return t + 1, h, ta.write(t, h)
    _, h, ta = tf.while_loop(lambda t, h, ta: t < n, body, [0, h0, ta])
    hs = ta.stack()
    loss = tf.reduce_sum(h * h) + tf.reduce_sum(hs * 0.5)
    return [h, hs, loss] + grads(loss, [w, u, xs, h0])
case("rnn", rnn, dict(w=F([[0.5, -0.2], [0.1, 0.3]]), u=F([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]),
                     xs=F([[0.1, 0.2, 0.3], [-0.5, 0.4, 0.0], [1.0, -1.0, 0.5], [0.2, 0.2, 0.2]]), h0=F([0.0, 0.1])))


# cond_v2_test: two outputs, an int counter and a float; the float's gradient.
@tf.function
def cond_int_and_float_in_loop(x):
    def body(i, k, v):
        k2, v2 = tf.cond(v > 2.0, lambda: (k + 1, v * 0.5), lambda: (k, v * x))
        return i + 1, k2, v2
    _, k, v = tf.while_loop(lambda i, k, v: i < 6, body, [0, 0, x])
    return [k, v] + grads(v, [x])
case("cond_int_and_float_in_loop", cond_int_and_float_in_loop, dict(x=F(1.7)))


# while_v2_test: x enters as the initial value, is captured by the body and read after the loop.
@tf.function
def input_used_before_inside_after(x):
    h = x * 2.0
    v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x - h), [0, h])[1]
    y = v * x + h
    return [y] + grads(y, [x, h])
case("input_used_before_inside_after", input_used_before_inside_after, dict(x=F(1.25)))


# while_v2_test: a zero-trip loop passes the initial value's gradient through (ones), and a
# zero-trip inner loop inside a running outer loop.
@tf.function
def zero_trip_init_gradient(x, n):
    v = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * v), [0, x * 3.0])[1]
    def outer(i, u):
        return i + 1, tf.while_loop(lambda j, w: j < n, lambda j, w: (j + 1, w * x), [0, u + x])[1]
    u = tf.while_loop(lambda i, u: i < 2, outer, [0, x])[1]
    return [v, u] + grads(v, [x]) + grads(u, [x])
case("zero_trip_init_gradient", zero_trip_init_gradient, dict(x=F(0.5), n=I(0)), dict(x=F(0.5), n=I(2)))


# control_flow_ops_py_test: stop_gradient inside a loop body.
@tf.function
def stop_gradient_in_loop(x):
    v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.stop_gradient(v) * x + v), [0, x])[1]
    return [v] + grads(v, [x])
case("stop_gradient_in_loop", stop_gradient_in_loop, dict(x=F(1.5)))


# while_v2_test testShapeInvariants: a [None, 2] matrix growing by rows, differentiated.
@tf.function
def growing_rows(x):
    m = tf.while_loop(lambda m: tf.shape(m)[0] < 4, lambda m: tf.concat([m, m[-1:] * x], 0), [tf.reshape(x, [1, 2])],
                      shape_invariants=[tf.TensorShape([None, 2])])[0]
    return [m] + grads(tf.reduce_sum(m * m), [x])
case("growing_rows", growing_rows, dict(x=F([0.5, -1.25])))


# map_fn_test: rank-3 elements mapped to scalars, differentiated to the elements.
@tf.function
def map_rank3_to_scalars(e, w):
    r = tf.map_fn(lambda m: tf.reduce_sum(tf.linalg.matvec(m, w) ** 2), e)
    return [r] + grads(tf.reduce_sum(r), [e, w])
case("map_rank3_to_scalars", map_rank3_to_scalars,
     dict(e=F([[[1.0, 2.0], [0.5, -1.0]], [[0.0, 1.0], [2.0, 0.5]], [[-1.0, 0.0], [1.0, 1.0]]]), w=F([0.3, -0.7])))


# map_fn_test: second derivative through a cond per element.
@tf.function
def map_cond_second_derivative(x, e):
    r = tf.reduce_sum(tf.map_fn(lambda a: tf.cond(a > 0.0, lambda: a * x * x * x, lambda: tf.sin(a * x)), e))
    g = grads(r, [x])[0]
    return [r, g] + grads(g, [x])
case("map_cond_second_derivative", map_cond_second_derivative, dict(x=F(1.1), e=F([1.0, -2.0, 0.5])))


# control_flow_ops_py_test: tf.where inside a loop, the untaken side's NaN kept out of the gradient.
@tf.function
def where_in_loop(x):
    def body(i, v):
        safe = tf.where(v > 0.0, v, tf.ones_like(v))
        return i + 1, tf.where(v > 0.0, tf.math.log(safe) + x, v * x)
    v = tf.while_loop(lambda i, v: i < 3, body, [0, tf.constant([2.0, -1.0, 0.5])])[1]
    return [v] + grads(tf.reduce_sum(v), [x])
case("where_in_loop", where_in_loop, dict(x=F(1.5)))


# cond_v2_test: two gradients of one loop in a function, to different inputs, then of their sum.
@tf.function
def two_gradient_calls(x, y):
    v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x + y), [0, y])[1]
    gx = grads(v, [x])[0]
    gy = grads(v, [y])[0]
    return [v, gx, gy] + grads(gx + gy, [x, y])
case("two_gradient_calls", two_gradient_calls, dict(x=F(0.7), y=F(1.2)))


# ---- round three: total derivatives, dtypes, matrices ----

# gradients_test: y depends on a loop output and on x; the gradient with respect to both (x's is total).
@tf.function
def grad_wrt_loop_output_and_input(x):
    v = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * x + 1.0), [0, x])[1]
    y = v * x
    return [y] + grads(y, [v, x]) + grads(y, [x, x])
case("grad_wrt_loop_output_and_input", grad_wrt_loop_output_and_input, dict(x=F(1.5)))


# while_v2_test: a loop variable whose next value does not depend on it: its initial value's gradient
# is 0 once the body ran, 1 if it did not.
@tf.function
def loop_var_reset(x, z, n):
    v = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, x * tf.cast(i + 1, f32)), [0, z])[1]
    return [v] + grads(v, [x, z])
case("loop_var_reset", loop_var_reset, dict(x=F(2.0), z=F(7.0), n=I(3)), dict(x=F(2.0), z=F(7.0), n=I(0)))


# while_v2_test testMaximumIterationsZero with a gradient: the initial value's.
@tf.function
def max_iter_zero_grad(x):
    v = tf.while_loop(lambda v: v < 100.0, lambda v: v * x, [x * 2.0], maximum_iterations=0)[0]
    return [v] + grads(v, [x])
case("max_iter_zero_grad", max_iter_zero_grad, dict(x=F(3.0)))


# cond_v2_test: a cond whose predicate is a loop's output, in both directions.
@tf.function
def cond_on_loop_output(x):
    v = tf.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, [x])[0]
    y = tf.cond(v > 15.0, lambda: v * x, lambda: v + x * x)
    return [y] + grads(y, [x])
case("cond_on_loop_output", cond_on_loop_output, dict(x=F(1.0)), dict(x=F(1.5)))


# while_v2_test: a float16 loop, differentiated (zeros and accumulators of a half dtype).
@tf.function
def half_loop(x):
    v = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x + tf.constant(0.5, tf.float16)), [0, x])[1]
    return [v] + grads(v, [x])
case("half_loop", half_loop, dict(x=tf.constant(1.25, tf.float16)))


# float64 through a cond in a loop, second derivative.
@tf.function
def float64_cond_loop_second(x):
    def body(i, v):
        return i + 1, tf.cond(v > 2.0, lambda: tf.sqrt(v) * x, lambda: v * v + x)
    v = tf.while_loop(lambda i, v: i < 4, body, [0, x])[1]
    g = grads(v, [x])[0]
    return [v, g] + grads(g, [x])
case("float64_cond_loop_second", float64_cond_loop_second, dict(x=tf.constant(1.1, tf.float64)))


# cond_v2_test testNestedCond: the inner predicate computed in the outer branch.
@tf.function
def inner_pred_from_outer_branch(x, p):
    def then():
        h = x * x
        return tf.cond(h > 2.0, lambda: h * x, lambda: h - x)
    y = tf.cond(p, then, lambda: tf.exp(x))
    return [y] + grads(y, [x])
case("inner_pred_from_outer_branch", inner_pred_from_outer_branch,
     dict(x=F(1.6), p=B(True)), dict(x=F(1.2), p=B(True)), dict(x=F(1.2), p=B(False)))


# list_ops_test: a loop carrying two TensorLists, one reserved and set, one pushed back; both stacked.
@tf.function
def two_tensor_lists(x):
    a = tf.raw_ops.TensorListReserve(element_shape=tf.constant([], tf.int32), num_elements=3, element_dtype=f32)
    b = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([], tf.int32), max_num_elements=-1, element_dtype=f32)
    def body(i, v, a, b):
        v = v * x
        return (i + 1, v, tf.raw_ops.TensorListSetItem(input_handle=a, index=i, item=v * v),
                tf.raw_ops.TensorListPushBack(input_handle=b, tensor=v + 1.0))
    _, _, a, b = tf.while_loop(lambda i, v, a, b: i < 3, body, [0, x, a, b])
    sa = tf.raw_ops.TensorListStack(input_handle=a, element_shape=tf.constant([], tf.int32), element_dtype=f32)
    sb = tf.raw_ops.TensorListStack(input_handle=b, element_shape=tf.constant([], tf.int32), element_dtype=f32)
    return [sa, sb] + grads(tf.reduce_sum(sa) - tf.reduce_sum(sb * sb), [x])
case("two_tensor_lists", two_tensor_lists, dict(x=F(1.2)))


# while_v2_test: a loop variable of unknown rank (shape invariant None) on the gradient's path.
@tf.function
def unknown_rank_grad(x):
    v = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * x), [0, tf.reshape(x, [1, 1])],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])[1]
    return [v] + grads(tf.reduce_sum(v), [x])
case("unknown_rank_grad", unknown_rank_grad, dict(x=F(1.5)))


# while_v2_test: a matrix power by a loop, differentiated to the matrix.
@tf.function
def matrix_power(a, n):
    p = tf.while_loop(lambda i, p: i < n, lambda i, p: (i + 1, tf.matmul(p, a)), [0, tf.eye(2)])[1]
    return [p] + grads(tf.reduce_sum(p * tf.constant([[1.0, 2.0], [3.0, 4.0]])), [a])
case("matrix_power", matrix_power, dict(a=F([[0.5, 1.0], [-0.5, 0.25]]), n=I(3)))


# A counter of int64 deciding the loop, the float accumulator differentiated.
@tf.function
def int64_counter(x, n):
    _, acc = tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc + x * tf.cast(i, f32)),
                           [tf.constant(0, tf.int64), tf.constant(0.0)])
    return [acc] + grads(acc, [x])
case("int64_counter", int64_counter, dict(x=F(0.5), n=tf.constant(5, tf.int64)))


# math_grad_test: a reduce_max with a tie inside a loop body.
@tf.function
def max_tie_in_loop(x):
    v = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * tf.reduce_max(v) + x), [0, tf.constant([1.0, 1.0, 0.5])])[1]
    return [v] + grads(tf.reduce_sum(v), [x])
case("max_tie_in_loop", max_tie_in_loop, dict(x=F(0.0)))



# math_grad_test testSqrtGradGradient / testRsqrtGradGradient: second derivatives of sqrt and rsqrt
# (in a cond, and mixed with the other input); TensorFlow's C++ registry has no gradient for
# SqrtGrad or RsqrtGrad.
@tf.function
def sqrt_rsqrt_second_derivative(x, z, p):
    y = tf.cond(p, lambda: tf.sqrt(x) * z + tf.math.rsqrt(x * z), lambda: tf.math.rsqrt(x))
    gx, gz = grads(y, [x, z])
    return [y, gx, gz] + grads(gx, [x, z])
case("sqrt_rsqrt_second_derivative", sqrt_rsqrt_second_derivative, dict(x=F(1.7), z=F(0.6), p=B(True)),
     dict(x=F(1.7), z=F(0.6), p=B(False)))



# A loop body of the element-wise ops users put in one (tanh, sigmoid, softplus, relu, elu, exp,
# log, pow, division, abs, square), differentiated twice.
@tf.function
def loop_common_ops_second_derivative(x):
    def body(i, v):
        u = (tf.tanh(v * x) + tf.sigmoid(v) + tf.nn.softplus(v * 0.5) + tf.nn.relu(v - 0.2) + tf.nn.elu(v - 1.0)
             + tf.exp(-v * v) + tf.math.log(1.0 + v * v) + tf.pow(tf.abs(v) + 1.0, x) + v / (1.0 + x * x) + tf.square(v) * 0.1)
        return i + 1, u * 0.3
    v = tf.while_loop(lambda i, v: i < 2, body, [0, tf.constant([0.4, -0.7])])[1]
    y = tf.reduce_sum(v)
    g = grads(y, [x])[0]
    return [v, g] + grads(g, [x])
case("loop_common_ops_second_derivative", loop_common_ops_second_derivative, dict(x=F(0.9)))



# nn_grad_test: second derivatives through leaky_relu and relu6 in a cond (LeakyReluGrad's and
# Relu6Grad's gradients, which TensorFlow's C++ registry lacks).
@tf.function
def cond_leaky_relu6_second(x, p):
    y = tf.cond(p, lambda: tf.nn.leaky_relu(x * x - 1.0, alpha=0.3) * x + tf.nn.relu6(x * 3.0) * x * x, lambda: tf.nn.relu6(x) * x)
    g = grads(y, [x])[0]
    return [y, g] + grads(g, [x])
case("cond_leaky_relu6_second", cond_leaky_relu6_second, dict(x=F(0.8), p=B(True)), dict(x=F(1.5), p=B(True)),
     dict(x=F(2.5), p=B(False)))


print(json.dumps(CASES, indent=1))
