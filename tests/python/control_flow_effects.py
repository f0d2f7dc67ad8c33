"""Python counterparts of ControlFlowEffectsTest: variable effects inside tf.cond, tf.while_loop and
tf.map_fn bodies under tf.function (TensorFlow's automatic control dependencies). Prints, as JSON,
each program's outputs and its variables' values after every call; the Java test runs this script
(with the build's TensorFlow 2.21 virtualenv) and compares Polyfn's numbers with these.

Run: python tests/python/control_flow_effects.py > tests/src/test/resources/control_flow_effects.json
(the recorded results; the test also runs this script and checks it still gives them)
"""
import json

import tensorflow as tf


def cond_effects():
    """A write and a read in the taken branch; the untaken branch's write never runs."""
    a = tf.Variable(0.0)
    b = tf.Variable(0.0)

    @tf.function
    def f(x):
        def then():
            a.assign(x)
            return a.read_value() * 10.0

        def otherwise():
            b.assign_add(1.0)
            return -x

        y = tf.cond(x > 0, then, otherwise)
        return {"y": y, "a": a.read_value(), "b": b.read_value()}

    return [call(f, {"x": x}, a=a, b=b) for x in (3.0, -1.0, 5.0, -2.0)]


def while_effects():
    """assign_add and an order-sensitive assign in a loop body: once per iteration, in order."""
    v = tf.Variable(0.0)
    w = tf.Variable(1.0)

    @tf.function
    def f(n):
        def body(i):
            v.assign_add(1.0)
            w.assign(w.read_value() * 2.0 + v.read_value())
            return (i + 1,)

        tf.while_loop(lambda i: i < n, body, (tf.constant(0),))
        return {"v": v.read_value(), "w": w.read_value()}

    return [call(f, {"n": n}, v=v, w=w) for n in (3, 0, 2)]


def map_effects():
    """A variable updated by map_fn's fn, once per element; fn reads its own write."""
    s = tf.Variable(0.0)

    @tf.function
    def f(xs):
        def fn(e):
            s.assign_add(e)
            return e * 2.0 + s.read_value()

        y = tf.map_fn(fn, xs)
        return {"y": y, "s": s.read_value()}

    return [call(f, {"xs": xs}, s=s) for xs in ([1.0, 2.0, 3.0], [0.5, -4.0])]


def nested_effects():
    """A cond in a loop body: each iteration runs the write of the branch it takes."""
    v = tf.Variable(0.0)
    w = tf.Variable(0.0)

    @tf.function
    def f(n):
        def body(i):
            def even():
                v.assign_add(tf.cast(i, tf.float32))
                return i + 1

            def odd():
                w.assign_add(1.0)
                return i + 1

            return (tf.cond(i % 2 == 0, even, odd),)

        tf.while_loop(lambda i: i < n, body, (tf.constant(0),))
        return {"v": v.read_value(), "w": w.read_value()}

    return [call(f, {"n": n}, v=v, w=w) for n in (5, 2)]


def deep_effects():
    """A cond in a cond in a loop body, their results unused: kept for their writes, at any depth."""
    v = tf.Variable(0.0)
    w = tf.Variable(0.0)

    @tf.function
    def f(n):
        def body(i):
            def outer():
                def even():
                    v.assign_add(tf.cast(i, tf.float32))
                    return tf.constant(1)

                def odd():
                    w.assign_add(1.0)
                    return tf.constant(2)

                return tf.cond(i % 2 == 0, even, odd)

            tf.cond(i > 0, outer, lambda: tf.constant(0))
            return (i + 1,)

        tf.while_loop(lambda i: i < n, body, (tf.constant(0),))
        return {"v": v.read_value(), "w": w.read_value()}

    return [call(f, {"n": n}, v=v, w=w) for n in (5, 1, 3)]


def unused_cond():
    """A cond kept only for its effect (its output unused), and a read after a write in the body."""
    c = tf.Variable(0.0)
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        def then():
            c.assign_add(1.0)
            return tf.constant(0.0)

        tf.cond(x > 0, then, lambda: tf.constant(0.0))
        v.assign(x)
        return {"y": v.read_value() * 2.0}

    return [call(f, {"x": x}, c=c, v=v) for x in (2.0, -1.0, 4.0)]


def call(f, args, **variables):
    out = f(**{k: tf.constant(v) for k, v in args.items()})
    return {"args": args,
            "outputs": {k: t.numpy().tolist() for k, t in out.items()},
            "variables": {k: var.numpy().tolist() for k, var in variables.items()}}


if __name__ == "__main__":
    print(json.dumps({"tensorflow": tf.__version__,
                      "cond_effects": cond_effects(), "while_effects": while_effects(),
                      "map_effects": map_effects(), "nested_effects": nested_effects(),
                      "deep_effects": deep_effects(),
                      "unused_cond": unused_cond()}))
