"""Python counterparts of TfFunctionPortsTest, TfFunctionGradientPortsTest and
TfFunctionControlFlowPortsTest: programs in the manner of TensorFlow's own tests of tf.function and
its control flow (polymorphic_function_test.py, quarantine_test.py, default_types_test.py,
cond_v2_test.py, while_v2_test.py, map_fn_test.py), run with TensorFlow 2.21; each line prints a
case's name and what Python returned (values, tracing counts), which the Java tests hold as their
expected values.

Run: python tests/python/tf_function_ports.py
"""
import enum

import tensorflow as tf


def show(name, v):
    print(name, "=>", v)


def tc(f):
    return f.experimental_get_tracing_count()


class Mode(enum.Enum):
    A = 1
    B = 2


# 1. variable created in body: trace count
@tf.function
def f1(x):
    if not hasattr(f1, "v"):
        f1.v = tf.Variable(1.0)
    f1.v.assign_add(x)
    return f1.v.read_value()
r = [f1(tf.constant(2.0)).numpy(), f1(tf.constant(3.0)).numpy()]
show("var_in_body values", r); show("var_in_body traces", f1.experimental_get_tracing_count())
try:
    r=f1(tf.constant([1.0,2.0])); show("var_in_body new shape", r.numpy())
except Exception as e: show("var_in_body new shape err", type(e).__name__)
show("var_in_body traces2", f1.experimental_get_tracing_count())

# 2. cond pred shape [1]
@tf.function
def f2(x):
    return tf.cond(x > 0, lambda: x * 2, lambda: -x)
try: show("cond pred [1]", f2(tf.constant([1.0])).numpy())
except Exception as e: show("cond pred [1] err", type(e).__name__+str(e)[:200])
try: show("cond pred [2]", f2(tf.constant([1.0, -1.0])).numpy())
except Exception as e: show("cond pred [2] err", type(e).__name__+str(e)[:200])

# 3. cond branches different shapes -> output static shape
@tf.function
def f3(p):
    y = tf.cond(p, lambda: tf.zeros([2]), lambda: tf.zeros([3]))
    return tf.constant(-1 if y.shape.rank is None else (y.shape[0] if y.shape[0] is not None else -2))
show("cond shapes [2]/[3]", f3(tf.constant(True)).numpy())
@tf.function
def f3b(p):
    y = tf.cond(p, lambda: tf.zeros([2]), lambda: tf.zeros([2,2]))
    return tf.constant(-1 if y.shape.rank is None else y.shape.rank)
show("cond shapes [2]/[2,2] rank", f3b(tf.constant(True)).numpy())

# 4. while maximum_iterations=0
@tf.function
def f4(x):
    return tf.while_loop(lambda v: True, lambda v: v + 1, [x], maximum_iterations=0)
show("while max0", f4(tf.constant(5))[0].numpy())

# 5. gradient of while loop x^n
@tf.function
def f5(x):
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, tf.constant(1.0)])[1]
    return tf.gradients(y, x)[0]
show("grad while x^3 at 2", f5(tf.constant(2.0)).numpy())

# 6. gradient cond untaken depends
@tf.function
def f6(x, p):
    y = tf.cond(p, lambda: x * x, lambda: tf.constant(3.0))
    return tf.gradients(y, x)[0]
show("grad cond taken", f6(tf.constant(3.0), tf.constant(True)).numpy())
show("grad cond untaken", f6(tf.constant(3.0), tf.constant(False)).numpy())

# 7. gradient through tf.maximum tie, abs at 0, sqrt at 0
@tf.function
def f7(x):
    return tf.gradients(tf.maximum(x, 1.0), x)[0], tf.gradients(tf.abs(x), x)[0]
show("grad max tie/abs", [t.numpy() for t in f7(tf.constant(1.0))])

# gradient of while that runs 0 times
@tf.function
def g1(x, n):
    y = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * x), [0, tf.constant(1.0)])[1]
    return tf.gradients(y, x)[0]
show("grad while n=0", g1(tf.constant(2.0), tf.constant(0)).numpy())
show("grad while n=4", g1(tf.constant(2.0), tf.constant(4)).numpy())
# x captured, loop var v starts at x
@tf.function
def g2(x):
    y = tf.while_loop(lambda v: v < 100.0, lambda v: v * v, [x])[0]
    return y, tf.gradients(y, x)[0]
show("grad while square until >=100 at 3", [t.numpy() for t in g2(tf.constant(3.0))])
# pred depends on x; cond inside while
@tf.function
def g3(x):
    def body(i, v):
        v2 = tf.cond(v > 5.0, lambda: v * 0.5, lambda: v * x)
        return i + 1, v2
    y = tf.while_loop(lambda i, v: i < 4, body, [0, x])[1]
    return y, tf.gradients(y, x)[0]
show("grad cond in while at 3", [t.numpy() for t in g3(tf.constant(3.0))])
# nested while
@tf.function
def g4(x):
    def outer(i, v):
        w = tf.while_loop(lambda j, u: j < i, lambda j, u: (j + 1, u + x * tf.cast(j, tf.float32)), [0, v])[1]
        return i + 1, w
    y = tf.while_loop(lambda i, v: i < 3, outer, [0, x])[1]
    return y, tf.gradients(y, x)[0]
show("grad nested while at 2", [t.numpy() for t in g4(tf.constant(2.0))])
# map_fn gradient
@tf.function
def g5(x, e):
    y = tf.reduce_sum(tf.map_fn(lambda a: a * a * x, e))
    return y, tf.gradients(y, [x, e])
r = g5(tf.constant(2.0), tf.constant([1.0, 2.0, 3.0]))
show("grad map_fn", [r[0].numpy(), r[1][0].numpy(), r[1][1].numpy().tolist()])
# cond returning two outputs; grad only of second
@tf.function
def g6(x, p):
    a, b = tf.cond(p, lambda: (x * 2.0, x * x), lambda: (x * 3.0, x * x * x))
    return tf.gradients(b, x)[0], tf.gradients(a + b, x)[0]
show("grad cond 2 out T", [t.numpy() for t in g6(tf.constant(2.0), tf.constant(True))])
show("grad cond 2 out F", [t.numpy() for t in g6(tf.constant(2.0), tf.constant(False))])
# grad of vector while loop with max iterations
@tf.function
def g7(x):
    y = tf.while_loop(lambda v: tf.reduce_sum(v) < 1000.0, lambda v: v * x, [x], maximum_iterations=3)[0]
    return y, tf.gradients(tf.reduce_sum(y), x)[0]
r = g7(tf.constant([1.0, 2.0]))
show("grad while vec max3", [r[0].numpy().tolist(), r[1].numpy().tolist()])
# grad with respect to two xs, one unused in taken branch
@tf.function
def g8(x, z, p):
    y = tf.cond(p, lambda: x * z, lambda: x + 1.0)
    return tf.gradients(y, [x, z])
show("grad cond xz F", [t.numpy() for t in g8(tf.constant(2.0), tf.constant(5.0), tf.constant(False))])
show("grad cond xz T", [t.numpy() for t in g8(tf.constant(2.0), tf.constant(5.0), tf.constant(True))])
# while with int64 / accumulate with tensor array? keep simple: grad sum of loop iterates with v = sin(v)
@tf.function
def g9(x):
    y = tf.while_loop(lambda i, v: i < 5, lambda i, v: (i + 1, tf.sin(v) + v * 0.5), [0, x])[1]
    return y, tf.gradients(y, x)[0]
show("grad while sin", [t.numpy() for t in g9(tf.constant(0.7))])

# reduce_retracing with zero dims
@tf.function(reduce_retracing=True)
def r1(x): return tf.constant([-1 if x.shape.rank is None else x.shape.rank] + [-1 if d is None else d for d in (x.shape if x.shape.rank is not None else [])])
seq = [[0], [3], [0], [0, 2], [0, 3], [1, 3]]
out = []
for s in seq:
    out.append((s, r1(tf.zeros(s)).numpy().tolist(), tc(r1)))
show("reduce zero dims", out)

# nested tf.function: inner trace counts
@tf.function
def inner(x): return x * 2.0
@tf.function
def outer(x): return inner(x) + 1.0
outer(tf.zeros([2])); outer(tf.zeros([3])); outer(tf.zeros([2]))
show("nested inner/outer traces", (tc(inner), tc(outer)))

@tf.function
def inner2(x): return x * 2.0
@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def outer_sig(x): return inner2(x)
@tf.function
def outer_known(x): return inner2(x)
outer_sig(tf.zeros([2])); outer_known(tf.zeros([4])); outer_known(tf.zeros([5]))
show("inner2 after [None] then [4],[5]", tc(inner2))

# enum / string values
@tf.function
def e(x, m): return x + (1.0 if m == Mode.A else 2.0)
rs = [e(tf.constant(1.0), Mode.A).numpy(), e(tf.constant(1.0), Mode.B).numpy(), e(tf.constant(1.0), Mode.A).numpy()]
show("enum", (rs, tc(e)))
@tf.function
def s(x, name): return x + float(len(name))
rs = [s(tf.constant(1.0), "ab").numpy(), s(tf.constant(1.0), "abc").numpy(), s(tf.constant(1.0), "a" + "b").numpy()]
show("strings", (rs, tc(s)))
# None
@tf.function
def nn(x, o): return x if o is None else x + o
rs = [nn(tf.constant(1.0), None).numpy(), nn(tf.constant(1.0), None).numpy(), nn(tf.constant(1.0), 2.0).numpy()]
show("none", (rs, tc(nn)))
# tuple values
@tf.function
def tu(x, t): return x + float(sum(t))
rs = [tu(tf.constant(1.0), (1, 2)).numpy(), tu(tf.constant(1.0), (1, 2)).numpy(), tu(tf.constant(1.0), (2, 1)).numpy()]
show("tuples", (rs, tc(tu)))
# float -0.0 vs 0.0 and nan
@tf.function
def fz(x, z): return x / z if z == 0 else x
@tf.function
def fl(x, z): return x * z
rs = [fl(tf.constant(1.0), 0.0).numpy(), fl(tf.constant(1.0), -0.0).numpy()]
show("neg zero", (rs, tc(fl)))
@tf.function
def fnan(x, z): return x * z
rs = [fnan(tf.constant(1.0), float('nan')).numpy(), fnan(tf.constant(1.0), float('nan')).numpy()]
show("nan", (rs, tc(fnan)))
n = float('nan')
rs = [fnan(tf.constant(1.0), n).numpy(), fnan(tf.constant(1.0), n).numpy()]
show("same nan obj", (rs, tc(fnan)))
# dtype: uint8 arith wrap
@tf.function
def u8(x): return x + tf.constant(10, tf.uint8), x * tf.constant(2, tf.uint8), x - tf.constant(20, tf.uint8)
show("uint8", [t.numpy().tolist() for t in u8(tf.constant([250, 5, 128], tf.uint8))])
@tf.function
def i64(x): return x + 1, x * 2, -x, tf.abs(x)
show("int64 overflow", [t.numpy().tolist() for t in i64(tf.constant([2**63-1, -2**63], tf.int64))])

# quarantine_test testReduceRetracingWithStringAndList (ported)
@tf.function(reduce_retracing=True)
def q(a, b):
    s = b[1].shape
    return b[0] + 1.0, tf.constant(-1 if s[0] is None else s[0])
b0 = tf.constant(1.0)
out = []
for a, n in [("hi", 0), ("hi", 1), ("hi", 2), ("bye", 0), ("bye", 1), ("hi", 3)]:
    r = q(a, [b0, tf.ones([n])])
    out.append((a, n, r[1].numpy().item(), tc(q)))
show("quarantine string+list", out)

# variable aliasing patterns
v1 = tf.Variable(1.0); v2 = tf.Variable(10.0); v3 = tf.Variable(100.0)
@tf.function
def al(a, b, c):
    a.assign_add(1.0)
    return a.read_value() + b.read_value() + c.read_value()
out = []
for name, args in [("111", (v1, v1, v1)), ("222", (v2, v2, v2)), ("121", (v1, v2, v1)), ("232", (v2, v3, v2)),
                   ("123", (v1, v2, v3)), ("312", (v3, v1, v2)), ("112", (v1, v1, v2))]:
    r = al(*args).numpy().item()
    out.append((name, r, tc(al)))
show("aliasing", out)
show("aliasing vars", [v1.numpy().item(), v2.numpy().item(), v3.numpy().item()])

# assignment inside cond then read after, inside while accumulate
v = tf.Variable(0.0)
@tf.function
def ca(x):
    tf.cond(x > 0, lambda: v.assign_add(x), lambda: v.assign_sub(1.0))
    return v.read_value()
show("cond assign", [ca(tf.constant(2.0)).numpy().item(), ca(tf.constant(-5.0)).numpy().item(), ca(tf.constant(3.0)).numpy().item()])
w = tf.Variable(1.0)
@tf.function
def wa(n):
    def body(i):
        w.assign(w * 2.0)
        return i + 1
    tf.while_loop(lambda i: i < n, body, [0])
    return w.read_value()
show("while assign", [wa(tf.constant(3)).numpy().item(), wa(tf.constant(0)).numpy().item(), wa(tf.constant(2)).numpy().item()])
@tf.function
def m1(x, e):
    y = tf.reduce_sum(tf.map_fn(lambda a: a * a * x, e))
    g = tf.gradients(y, [x, e])
    return y, g[0], g[1]
r = m1(tf.constant(2.0), tf.zeros([0]))
show("map_fn empty", [r[0].numpy().item(), r[1].numpy().item(), r[2].numpy().tolist()])
@tf.function
def m2(x, e):
    y = tf.reduce_sum(tf.map_fn(lambda a: tf.cast(a, tf.float32) * x, e, fn_output_signature=tf.float32))
    return y, tf.gradients(y, x)[0]
show("map_fn int elems", [t.numpy().item() for t in m2(tf.constant(2.0), tf.constant([1, 2, 3]))])
@tf.function
def m3(x, e):
    # rows of a matrix, result per row a vector; loss weighted
    y = tf.map_fn(lambda r: tf.sin(r) * x + r * r, e)
    l = tf.reduce_sum(y * tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    g = tf.gradients(l, [x, e])
    return l, g[0], g[1]
r = m3(tf.constant(0.5), tf.constant([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]))
show("map_fn matrix", [r[0].numpy().item(), r[1].numpy().item(), r[2].numpy().tolist()])
# map_fn inside while with grad
@tf.function
def m4(x):
    def body(i, v):
        return i + 1, tf.map_fn(lambda a: a * x, v)
    y = tf.while_loop(lambda i, v: i < 2, body, [0, tf.constant([1.0, 2.0])])[1]
    return tf.reduce_sum(y), tf.gradients(tf.reduce_sum(y), x)[0]
show("map_fn in while", [t.numpy().item() for t in m4(tf.constant(3.0))])
@tf.function
def f(e):
    y = tf.map_fn(lambda r: r * 2.0, e)
    s = y.shape
    return tf.constant([s.rank] + [-1 if d is None else d for d in s])
print("map_fn static shape =>", f(tf.zeros([3, 2])).numpy().tolist())
f2 = tf.function(lambda e: tf.constant([-1 if d is None else d for d in tf.map_fn(lambda r: r * 2.0, e).shape]), input_signature=[tf.TensorSpec([None, 2])])
print("map_fn static shape None =>", f2(tf.zeros([3, 2])).numpy().tolist())
@tf.function
def s1(x, p):
    y = tf.cond(p, lambda: x * x * x, lambda: x * x)
    g = tf.gradients(y, x)[0]
    return g, tf.gradients(g, x)[0]
show("second order cond T", [t.numpy().item() for t in s1(tf.constant(2.0), tf.constant(True))])
show("second order cond F", [t.numpy().item() for t in s1(tf.constant(2.0), tf.constant(False))])
@tf.function
def s2(x):
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, tf.constant(1.0)])[1]
    g = tf.gradients(y, x)[0]
    return g, tf.gradients(g, x)[0]
show("second order while", [t.numpy().item() for t in s2(tf.constant(2.0))])
@tf.function
def s3(x, p, q):
    y = tf.cond(p, lambda: tf.cond(q, lambda: x * 3.0, lambda: x * x), lambda: tf.sin(x))
    return tf.gradients(y, x)[0]
show("nested cond", [s3(tf.constant(2.0), tf.constant(a), tf.constant(b)).numpy().item() for a, b in [(True, True), (True, False), (False, True)]])
@tf.function
def s4(x):
    h = x * 2.0
    y = tf.cond(h > 3.0, lambda: h * h, lambda: h)
    return tf.gradients(y, [h, x])
show("grad wrt intermediate", [t.numpy().item() for t in s4(tf.constant(2.0))])
@tf.function
def s5(x):
    # x is both the loop var init and captured
    y = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v * x + x), [0, x])[1]
    return y, tf.gradients(y, x)[0]
show("loop var and capture", [t.numpy().item() for t in s5(tf.constant(3.0))])
@tf.function
def s6(x, z):
    # pass-through loop var z, y depends on z and x
    i, v, zz = tf.while_loop(lambda i, v, zz: i < 3, lambda i, v, zz: (i + 1, v + zz * x, zz), [0, tf.constant(0.0), z])
    return tf.gradients(v, [x, z])
show("pass-through var", [t.numpy().item() for t in s6(tf.constant(2.0), tf.constant(5.0))])
@tf.function
def s7(x):
    y = tf.cond(x > 0.0, lambda: tf.zeros([2]) + x, lambda: tf.zeros([2]) - x)
    return tf.gradients(tf.reduce_sum(y * tf.constant([1.0, 3.0])), x)[0]
show("cond broadcast", [s7(tf.constant(v)).numpy().item() for v in (2.0, -2.0)])
@tf.function
def s8(x):
    y = tf.cond(x > 0.0, lambda: tf.stop_gradient(x) * x, lambda: x)
    return tf.gradients(y, x)[0]
show("stop_gradient in cond", s8(tf.constant(3.0)).numpy().item())
@tf.function
def s9(x):
    # float64 in loop
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, tf.constant(1.0, tf.float64)])[1]
    return y, tf.gradients(y, x)[0]
show("float64 loop", [t.numpy().item() for t in s9(tf.constant(1.5, tf.float64))])
d = tf.constant(1.0)
@tf.function
def f(x, y=d):
    return x + y
r = [f(tf.constant(1.0)).numpy().item(), f(tf.constant(1.0), tf.constant(2.0)).numpy().item(), f(tf.constant(1.0), y=tf.constant(5.0)).numpy().item(), f(tf.constant(1.0)).numpy().item()]
show("tensor default", (r, tc(f)))
@tf.function
def g(x, n=1):
    return x * float(n)
r = [g(tf.constant(3.0)).numpy().item(), g(tf.constant(3.0), 1).numpy().item(), g(tf.constant(3.0), n=2).numpy().item()]
show("int default", (r, tc(g)))
@tf.function
def s(x):
    return tf.strings.length(x), tf.strings.join([x, x])
r = s(tf.constant(["a", "bc", ""]))
show("strings", [r[0].numpy().tolist(), [b.decode() for b in r[1].numpy().tolist()], tc(s)])
s(tf.constant(["xyz", "q", "w"])); s(tf.constant(["a"]))
show("strings traces", tc(s))
@tf.function(reduce_retracing=True)
def s2(x): return tf.strings.length(x)
s2(tf.constant(["a"])); s2(tf.constant(["a", "b"])); s2(tf.constant(["a", "b", "c"])); s2(tf.constant("a"))
show("strings reduce traces", tc(s2))

# several ranked loop variables and cond outputs keep their static shapes
@tf.function
def ranked(a, b, c):
    i, x, y, z = tf.while_loop(lambda i, x, y, z: i < 2, lambda i, x, y, z: (i + 1, x + 1.0, y, z), [0, a, b, c])
    p, q = tf.cond(tf.constant(True), lambda: (a, b), lambda: (-a, b))
    return tf.constant([d for t in (x, y, z, p, q) for d in [t.shape.rank] + t.shape.as_list()]), tf.reduce_sum(x)
r = ranked(tf.zeros([2, 3]), tf.zeros([4]), tf.zeros([5, 1]))
show("ranked shapes", [r[0].numpy().tolist(), r[1].numpy().item()])

# a loop variable of unknown rank (shape invariant TensorShape(None)) before ranked ones
@tf.function
def unknown_rank(a, b):
    out = tf.while_loop(lambda i, u, y, z: i < 2, lambda i, u, y, z: (i + 1, u, y, z), [0, tf.constant(1.0), b, a],
                        shape_invariants=[tf.TensorShape([]), tf.TensorShape(None), b.shape, a.shape])
    return tf.constant([d for t in out[1:] for d in ([-1] if t.shape.rank is None else [t.shape.rank] + t.shape.as_list())])
show("unknown rank first", unknown_rank(tf.zeros([2, 3]), tf.zeros([4])).numpy().tolist())
