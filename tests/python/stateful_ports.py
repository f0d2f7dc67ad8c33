"""Python counterparts of the StatefulPorts*Test classes: small stateful programs (variable reads and
writes in program order, swaps, several functions sharing a variable, counters, hand-written SGD,
momentum and Adam steps, scatter updates, writes inside conds, loops and map_fn, variables passed
as arguments, nested calls, a variable created on the first trace, retracing, a variable reset
between calls, a save and load in the middle of a run), where a difference from Python would be a
silent wrong answer. Each is run with TensorFlow 2.21; the JSON it prints holds, per case, the
variables' initial values and a list of steps: a call (the function's name, its inputs, its
outputs and every variable's value after it), an eager assignment between calls, or a save and
load (later calls go to the loaded function); and each function's trace count. The Java tests
replay the same programs written with Polyfn and compare every output and variable after every
step.

Run: python tests/python/stateful_ports.py > tests/src/test/resources/stateful_ports.json
"""
import json
import sys
import tempfile

import tensorflow as tf

from recorded_tensor import enc

CASES = {}
f32, f64, i32, i64 = tf.float32, tf.float64, tf.int32, tf.int64
F = lambda v: tf.constant(v, f32)
D = lambda v: tf.constant(v, f64)
I = lambda v: tf.constant(v, i32)
L = lambda v: tf.constant(v, i64)
B = lambda v: tf.constant(v, tf.bool)


class Case:
    """One program: its variables (made from `init`), its tf.functions and the steps run on them."""

    def __init__(self, name, *init):
        self.name = name
        self.vars = [tf.Variable(v) for v in init]
        self.init = [enc(v) for v in init]
        self.fns = {}
        self.steps = []
        self.traces = {}

    def fn(self, f):
        self.fns[f.__name__] = tf.function(f)
        return self.fns[f.__name__]

    def call(self, name, **kwargs):
        args = {k: v if isinstance(v, tf.Variable) else tf.convert_to_tensor(v) for k, v in kwargs.items()}
        r = self.fns[name](**args)
        r = list(r) if isinstance(r, (list, tuple)) else [r]
        enc_in = {k: {"var": next(i for i, w in enumerate(self.vars) if w is v)} if isinstance(v, tf.Variable) else enc(v)
                  for k, v in args.items()}
        self.steps.append({"fn": name, "inputs": enc_in, "outputs": [enc(t) for t in r],
                           "vars": [enc(v) for v in self.vars]})
        return self

    def assign(self, i, value):
        self.vars[i].assign(value)
        self.steps.append({"assign": i, "value": enc(value), "vars": [enc(v) for v in self.vars]})
        return self

    def save_load(self, name):
        """Saves function `name` (with what it captures) and calls the loaded one from now on."""
        self.traces.setdefault(name, self.fns[name].experimental_get_tracing_count())
        m = tf.Module()
        m.f = self.fns[name]
        m.vars = list(self.vars)
        with tempfile.TemporaryDirectory() as d:
            tf.saved_model.save(m, d)
            loaded = tf.saved_model.load(d)
        self.loaded = loaded  # keeps the loaded variables alive
        self.fns[name] = loaded.f
        self.steps.append({"save_load": name, "vars": [enc(v) for v in self.vars]})
        return self

    def done(self):
        for k, f in self.fns.items():
            if hasattr(f, "experimental_get_tracing_count"):
                self.traces.setdefault(k, f.experimental_get_tracing_count())
        CASES[self.name] = {"init": self.init, "steps": self.steps, "traces": self.traces}


# ---- reads and writes in program order ----

c = Case("read_write_read", F(1.0)); v, = c.vars
@c.fn
def f(x):
    r0 = v.read_value()
    v.assign(x)
    return [r0, v.read_value()]
c.call("f", x=F(3.0)).call("f", x=F(-2.0)).done()

c = Case("write_after_read_uses_old", F([1.0, 2.0])); v, = c.vars
@c.fn
def f(x):
    r = v.read_value()
    v.assign(x)
    return r * 2.0
c.call("f", x=F([5.0, 6.0])).call("f", x=F([0.5, -1.0])).done()

c = Case("assign_chain", F(0.0)); v, = c.vars
@c.fn
def f(x):
    v.assign(x); a = v.read_value()
    v.assign_add(2.0); b = v.read_value()
    v.assign_sub(5.0); c_ = v.read_value()
    v.assign(c_ * c_); d = v.read_value()
    return [a, b, c_, d]
c.call("f", x=F(1.5)).call("f", x=F(-4.0)).done()

c = Case("assign_add_sub_no_reads_between", F(2.0)); v, = c.vars
@c.fn
def f(x):
    v.assign_add(x)
    v.assign_sub(1.0)
    v.assign_add(x * x)
    return v.read_value()
c.call("f", x=F(3.0)).call("f", x=F(0.5)).call("f", x=F(-1.0)).done()

c = Case("old_read_used_after_write", F(10.0)); v, = c.vars
@c.fn
def f(x):
    r = v.read_value()
    v.assign(x)
    return [r + v.read_value(), r * 1.0]
c.call("f", x=F(1.0)).call("f", x=F(7.0)).done()

c = Case("read_add_read", F(3.0)); v, = c.vars
@c.fn
def f(x):
    r1 = v.read_value()
    v.assign_add(x)
    r2 = v.read_value()
    return r1 * r2
c.call("f", x=F(1.0)).call("f", x=F(2.0)).call("f", x=F(-6.0)).done()

c = Case("swap_with_temporaries", F(1.0), F(2.0)); a, b = c.vars
@c.fn
def f():
    ta, tb = a.read_value(), b.read_value()
    a.assign(tb)
    b.assign(ta)
    return [a.read_value(), b.read_value()]
c.call("f").call("f").call("f").done()

c = Case("swap_in_program_order", F([1.0, 2.0]), F([3.0, 4.0])); a, b = c.vars
@c.fn
def f():
    a.assign(b.read_value())
    b.assign(a.read_value())  # reads a after its write: both end up holding b's old value
    return [a.read_value(), b.read_value()]
c.call("f").assign(1, F([5.0, 6.0])).call("f").done()

c = Case("chain_three_variables", F(1.0), F(2.0), F(3.0)); a, b, c3 = c.vars
@c.fn
def f():
    a.assign(b + 1.0)
    b.assign(c3 * 2.0)
    c3.assign(a + b)
    return [a.read_value(), b.read_value(), c3.read_value()]
c.call("f").call("f").call("f").done()

c = Case("assign_from_other_after_its_write", I(0), I(5)); a, b = c.vars
@c.fn
def f(k):
    a.assign_add(k)
    b.assign(a * 10 + b)
    return [a.read_value(), b.read_value()]
c.call("f", k=I(1)).call("f", k=I(2)).call("f", k=I(-3)).done()

# ---- several functions, calls interleaved ----

c = Case("write_in_one_read_in_another", F(0.0)); v, = c.vars
@c.fn
def put(x):
    v.assign(x)
    return tf.constant(0.0)
@c.fn
def get():
    return v * 2.0
c.call("get").call("put", x=F(4.0)).call("get").call("get").call("put", x=F(-1.5)).call("get").done()

c = Case("accumulate_then_mean", F(0.0), I(0)); total, count = c.vars
@c.fn
def add(x):
    total.assign_add(tf.reduce_sum(x))
    count.assign_add(tf.size(x))
    return count.read_value()
@c.fn
def mean():
    return total / tf.cast(count, f32)
c.call("add", x=F([1.0, 2.0])).call("mean").call("add", x=F([3.0, 4.0, 5.0])).call("mean").call("mean").done()

c = Case("increment_and_double_functions", L(1)); v, = c.vars
@c.fn
def inc():
    v.assign_add(1)
    return v.read_value()
@c.fn
def double():
    v.assign(v * 2)
    return v.read_value()
c.call("inc").call("double").call("double").call("inc").call("double").done()

# ---- counters and recurrences over calls ----

c = Case("counter_int32", I(0)); n, = c.vars
@c.fn
def f():
    n.assign_add(1)
    return n.read_value()
for _ in range(5):
    c.call("f")
c.done()

c = Case("counter_int64_step", L(0)); n, = c.vars
@c.fn
def f(step):
    n.assign_add(step)
    return [n.read_value(), n % 3]
c.call("f", step=L(4)).call("f", step=L(5000000000)).call("f", step=L(-7)).done()

c = Case("float64_accumulate", D(0.0)); s, = c.vars
@c.fn
def f(x):
    s.assign_add(tf.reduce_sum(x * x))
    return tf.sqrt(s)
c.call("f", x=D([3.0, 4.0])).call("f", x=D([0.1])).call("f", x=D([1e-9, 2.0])).done()

c = Case("int32_vector_update", I([1, 2, 3])); v, = c.vars
@c.fn
def f(x):
    v.assign(v * 2 - x)
    return tf.reduce_sum(v)
c.call("f", x=I([1, 1, 1])).call("f", x=I([0, 5, -2])).call("f", x=I([3, 3, 3])).done()

c = Case("recurrence_many_calls", F(0.0)); v, = c.vars
@c.fn
def f(x):
    v.assign(0.5 * v + x)
    return v.read_value()
for k in range(10):
    c.call("f", x=F(1.0 if k < 6 else 3.0))
c.done()

c = Case("fibonacci_state", L(0), L(1)); a, b = c.vars
@c.fn
def f():
    t = a + b
    a.assign(b.read_value())
    b.assign(t)
    return a.read_value()
for _ in range(8):
    c.call("f")
c.done()

c = Case("reset_from_eager_between_calls", F(0.0)); v, = c.vars
@c.fn
def f(x):
    v.assign_add(x)
    return v * 10.0
c.call("f", x=F(1.0)).call("f", x=F(1.0)).assign(0, F(100.0)).call("f", x=F(2.0)).assign(0, F(-1.0)).call("f", x=F(1.0)).done()

c = Case("float64_newton_sqrt", D(1.0)); g, = c.vars
@c.fn
def f(x):
    g.assign(0.5 * (g + x / g))
    return g * g - x
for _ in range(5):
    c.call("f", x=D(2.0))
c.done()

# ---- training steps written by hand ----

X = F([[1.0, 2.0, 0.5], [0.0, -1.0, 2.0], [3.0, 0.5, -0.5], [1.5, 1.0, 1.0]])
Y = F([2.0, -1.0, 4.0, 3.0])

c = Case("sgd_linear_regression", F([0.1, -0.2, 0.3]), F(0.0)); w, b = c.vars
@c.fn
def step(x, y):
    with tf.GradientTape() as tape:
        pred = tf.linalg.matvec(x, w) + b
        loss = tf.reduce_mean(tf.square(pred - y))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.05 * gw)
    b.assign_sub(0.05 * gb)
    return loss
for _ in range(5):
    c.call("step", x=X, y=Y)
c.done()

c = Case("momentum_sgd", F([1.0, -1.0]), F([0.0, 0.0])); w, vel = c.vars
@c.fn
def step(t):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(w - t)) + 0.1 * tf.reduce_sum(w * w * w * w)
    g = tape.gradient(loss, w)
    vel.assign(0.9 * vel - 0.05 * g)
    w.assign_add(vel)
    return loss
for _ in range(6):
    c.call("step", t=F([0.5, 2.0]))
c.done()

c = Case("adam_like", F([0.5, -1.5, 2.0]), F([0.0, 0.0, 0.0]), F([0.0, 0.0, 0.0]), F(0.0)); w, m, s, t = c.vars
@c.fn
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.linalg.matvec(x, w) - y))
    g = tape.gradient(loss, w)
    t.assign_add(1.0)
    m.assign(0.9 * m + 0.1 * g)
    s.assign(0.999 * s + 0.001 * g * g)
    mh = m / (1.0 - tf.pow(0.9, t))
    sh = s / (1.0 - tf.pow(0.999, t))
    w.assign_sub(0.1 * mh / (tf.sqrt(sh) + 1e-7))
    return [loss, w.read_value()]
for _ in range(4):
    c.call("step", x=X, y=Y)
c.done()

c = Case("sgd_float64_logistic", D([0.0, 0.0]), D(0.0)); w, b = c.vars
@c.fn
def step(x, y):
    with tf.GradientTape() as tape:
        logits = tf.linalg.matvec(x, w) + b
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.5 * gw)
    b.assign_sub(0.5 * gb)
    return loss
for _ in range(4):
    c.call("step", x=D([[1.0, 2.0], [-1.0, 0.5], [2.0, -1.0]]), y=D([1.0, 0.0, 1.0]))
c.done()

# ---- scatter updates ----

c = Case("scatter_nd_update", F([0.0, 1.0, 2.0, 3.0, 4.0])); v, = c.vars
@c.fn
def f(idx, upd):
    v.scatter_nd_update(idx, upd)
    return tf.reduce_sum(v)
c.call("f", idx=I([[1], [3]]), upd=F([10.0, 30.0])).call("f", idx=I([[0], [3]]), upd=F([-1.0, -3.0])).done()

c = Case("scatter_add_int32", I([1, 1, 1, 1])); v, = c.vars
@c.fn
def f(idx, upd):
    v.scatter_add(tf.IndexedSlices(upd, idx))
    return v.read_value()
c.call("f", idx=I([0, 2, 2]), upd=I([5, 1, 2])).call("f", idx=I([3]), upd=I([-4])).done()

c = Case("scatter_nd_add_2d", F([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])); v, = c.vars
@c.fn
def f(upd):
    v.scatter_nd_add(tf.constant([[0, 1], [1, 2], [0, 1]]), upd)
    return tf.reduce_sum(v, axis=1)
c.call("f", upd=F([1.0, 2.0, 3.0])).call("f", upd=F([-0.5, 0.25, 10.0])).done()

c = Case("scatter_update_read_then_add", F([1.0, 2.0, 3.0])); v, = c.vars
@c.fn
def f(upd):
    v.scatter_nd_update(tf.constant([[2]]), upd)
    r = v.read_value()
    v.scatter_nd_add(tf.constant([[0], [2]]), tf.concat([upd, upd], 0))
    return [r, v.read_value()]
c.call("f", upd=F([9.0])).call("f", upd=F([-1.0])).done()

c = Case("scatter_sub_and_max", F([5.0, 5.0, 5.0])); v, = c.vars
@c.fn
def f(upd):
    v.scatter_sub(tf.IndexedSlices(upd, tf.constant([0, 1])))
    v.scatter_max(tf.IndexedSlices(tf.constant([4.0, 4.0]), tf.constant([1, 2])))
    return v.read_value()
c.call("f", upd=F([1.0, 3.0])).call("f", upd=F([2.0, -10.0])).done()

c = Case("gather_around_scatter_update", F([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])); v, = c.vars
@c.fn
def f(upd):
    before = tf.gather(v, [2, 0])
    v.scatter_nd_update(tf.constant([[0], [2]]), upd)
    return [before, tf.gather(v, [2, 0]), tf.gather_nd(v, [[1, 1]])]
c.call("f", upd=F([[7.0, 8.0], [9.0, 10.0]])).call("f", upd=F([[0.0, 0.0], [-1.0, -2.0]])).done()

# ---- writes inside conds, loops and map_fn ----

c = Case("cond_assign_in_both_branches", F(10.0)); v, = c.vars
@c.fn
def f(p, x):
    def yes():
        v.assign_add(x)
        return v.read_value()
    def no():
        v.assign_sub(x)
        return v * 2.0
    r = tf.cond(p, yes, no)
    return [r, v.read_value()]
c.call("f", p=B(True), x=F(1.0)).call("f", p=B(False), x=F(3.0)).call("f", p=B(True), x=F(0.5)).done()

c = Case("cond_reads_after_prior_write", F(0.0)); v, = c.vars
@c.fn
def f(p, x):
    v.assign(x)
    return tf.cond(p, lambda: v * 2.0, lambda: v - 1.0)
c.call("f", p=B(True), x=F(3.0)).call("f", p=B(False), x=F(5.0)).done()

c = Case("cond_write_then_read_after", F(1.0)); v, = c.vars
@c.fn
def f(p, x):
    def yes():
        v.assign(x)
        return tf.constant(1)
    r = tf.cond(p, yes, lambda: tf.constant(0))
    return [r, v * 1.0]
c.call("f", p=B(False), x=F(4.0)).call("f", p=B(True), x=F(4.0)).call("f", p=B(False), x=F(9.0)).done()

c = Case("loop_assign_add", F(0.0)); v, = c.vars
@c.fn
def f(n):
    def body(i):
        v.assign_add(tf.cast(i, f32))
        return i + 1
    tf.while_loop(lambda i: i < n, body, [tf.constant(0)])
    return v.read_value()
c.call("f", n=I(4)).call("f", n=I(0)).call("f", n=I(3)).done()

c = Case("loop_read_write_read", F(1.0)); v, = c.vars
@c.fn
def f(n):
    def body(i, acc):
        r1 = v.read_value()
        v.assign(r1 * 2.0 + 1.0)
        r2 = v.read_value()
        return i + 1, acc + (r2 - r1)
    _, acc = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), tf.constant(0.0)])
    return [acc, v.read_value()]
c.call("f", n=I(3)).call("f", n=I(2)).done()

c = Case("loop_with_cond_writing", I(0)); v, = c.vars
@c.fn
def f(n):
    def body(i):
        def even():
            v.assign_add(i)
            return tf.constant(0)
        def odd():
            v.assign_sub(1)
            return tf.constant(0)
        tf.cond(tf.equal(i % 2, 0), even, odd)
        return i + 1
    tf.while_loop(lambda i: i < n, body, [tf.constant(0)])
    return v.read_value()
c.call("f", n=I(5)).call("f", n=I(1)).call("f", n=I(6)).done()

c = Case("loop_condition_reads_variable", F(1.0)); v, = c.vars
@c.fn
def f(limit):
    def body(k):
        v.assign(v * 2.0)
        return k + 1
    k, = tf.while_loop(lambda k: v < limit, body, [tf.constant(0)], maximum_iterations=50)
    return [k, v.read_value()]
c.call("f", limit=F(10.0)).call("f", limit=F(10.0)).call("f", limit=F(100.0)).done()

c = Case("loop_swaps_two_variables", F(0.0), F(1.0)); a, b = c.vars
@c.fn
def f(n):
    def body(i):
        t = a.read_value()
        a.assign(b.read_value())
        b.assign(t + b)
        return i + 1
    tf.while_loop(lambda i: i < n, body, [tf.constant(0)])
    return [a.read_value(), b.read_value()]
c.call("f", n=I(5)).call("f", n=I(3)).done()

c = Case("cond_reads_then_write_after", F(1.0)); v, = c.vars
@c.fn
def f(p, x):
    r = tf.cond(p, lambda: v * 2.0, lambda: v.read_value())
    v.assign(x)  # after the cond: its branch's read must not see this write
    return [r, v.read_value()]
for k in range(6):
    c.call("f", p=B(k % 2 == 0), x=F(float(k + 5)))
c.done()

c = Case("loop_reads_then_write_after", F(1.0)); v, = c.vars
@c.fn
def f(n, x):
    _, acc = tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc + v), [tf.constant(0), tf.constant(0.0)])
    v.assign(x)
    return [acc, v.read_value()]
for k in range(4):
    c.call("f", n=I(k + 1), x=F(float(10 * k + 2)))
c.done()

c = Case("map_fn_reads_then_write_after", F(2.0)); v, = c.vars
@c.fn
def f(x):
    y = tf.map_fn(lambda e: e * v, x)
    v.assign(tf.reduce_sum(x))
    return [y, v.read_value()]
for k in range(4):
    c.call("f", x=F([1.0, 2.0, float(k)]))
c.done()

c = Case("cond_nested_reader_then_write_after", F(3.0)); v, = c.vars
branch_reader = tf.function(lambda: v.read_value())
@c.fn
def f(p, x):
    r = tf.cond(p, branch_reader, lambda: tf.constant(-1.0))
    v.assign(x)
    return [r, v.read_value()]
for k in range(4):
    c.call("f", p=B(k != 2), x=F(float(k + 7)))
c.done()

c = Case("map_fn_assign_add", F(0.0)); v, = c.vars
@c.fn
def f(x):
    def each(e):
        v.assign_add(e)
        return e * 2.0
    y = tf.map_fn(each, x)
    return [y, v.read_value()]
c.call("f", x=F([1.0, 2.0, 3.0])).call("f", x=F([0.5, -4.0, 1.0])).done()

# ---- variables as arguments, nested calls, creation, retracing, save and load ----

c = Case("variable_argument", F(1.0), F(100.0)); v0, v1 = c.vars
@c.fn
def f(var, x):
    var.assign_add(x)
    return var * 2.0
c.call("f", var=v0, x=F(1.0)).call("f", var=v1, x=F(5.0)).call("f", var=v0, x=F(-3.0)).done()

c = Case("nested_call_effects", F(1.0)); v, = c.vars
inner = tf.function(lambda x: (v.assign_add(x), v.read_value())[1])
@c.fn
def outer(x):
    a = inner(x)
    b = v.read_value()
    v.assign(b * 10.0)
    return [a, b, v.read_value()]
c.call("outer", x=F(2.0)).call("outer", x=F(-25.0)).done()

c = Case("nested_reader_then_write", F(5.0)); v, = c.vars
reader = tf.function(lambda: v.read_value())
@c.fn
def f(x):
    a = reader()
    v.assign(x)  # after the call: its read must not see this write
    return [a * 1.0, v.read_value()]
c.call("f", x=F(7.0)).call("f", x=F(-1.0)).done()

c = Case("read_before_nested_write", F(2.0)); v, = c.vars
writer = tf.function(lambda x: (v.assign(x), tf.constant(0.0))[1])
@c.fn
def f(x):
    r = v.read_value()
    writer(x)  # after the read: the read must not see this write
    return [r * 1.0, v.read_value()]
c.call("f", x=F(4.0)).call("f", x=F(-3.0)).call("f", x=F(6.0)).done()

c = Case("variable_created_on_first_trace")
holder = []
@c.fn
def f(x):
    if not holder:
        holder.append(tf.Variable(0.0))
    holder[0].assign_add(x)
    return holder[0].read_value()
c.call("f", x=F(1.0)).call("f", x=F(2.5)).call("f", x=F(-1.0)).done()

c = Case("retrace_new_shape_sees_value", F(0.0)); v, = c.vars
@c.fn
def f(x):
    v.assign_add(1.0)
    return x * v
c.call("f", x=F([1.0, 2.0])).call("f", x=F([1.0, 2.0, 3.0])).call("f", x=F([3.0, 4.0])).assign(0, F(10.0)) \
    .call("f", x=F([1.0, 1.0, 1.0, 1.0])).done()

c = Case("save_load_counter", F(0.0)); v, = c.vars
@c.fn
def f(x):
    v.assign_add(x)
    return v * 1.0
c.call("f", x=F(1.0)).call("f", x=F(2.0)).save_load("f").call("f", x=F(10.0)).call("f", x=F(0.5)).done()

c = Case("save_load_sgd", F([0.1, -0.2, 0.3]), F(0.0)); w, b = c.vars
@c.fn
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.linalg.matvec(x, w) + b - y))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.05 * gw)
    b.assign_sub(0.05 * gb)
    return [loss, w.read_value(), b.read_value()]
c.call("step", x=X, y=Y).call("step", x=X, y=Y).save_load("step").call("step", x=X, y=Y).call("step", x=X, y=Y).done()

print(json.dumps(CASES, indent=1))
