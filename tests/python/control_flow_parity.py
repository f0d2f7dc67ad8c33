"""Python counterparts of ControlFlowParityTest: tf.cond / tf.while_loop / tf.map_fn programs and a
tiny model trained through a cond and a bounded while. Writes their outputs as the JSON the Java
test compares against.

Run: python tests/python/control_flow_parity.py > tests/src/test/resources/control_flow_parity.json
"""
import json

import tensorflow as tf


@tf.function
def cond_scale(x):
    return tf.cond(tf.reduce_sum(x) > 0, lambda: x * 10.0, lambda: -x)


@tf.function
def while_sum(n):
    _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + 0.5), (tf.constant(0), tf.constant(0.0)))
    return acc


@tf.function
def bounded_double(x):
    return tf.while_loop(lambda v: True, lambda v: (v * 2.0,), (x,), maximum_iterations=4)[0]


@tf.function
def collatz_steps(n):
    def body(x, steps):
        nxt = tf.cond(tf.math.floormod(x, 2) == 0, lambda: x // 2, lambda: x * 3 + 1)
        return nxt, steps + 1
    return tf.while_loop(lambda x, s: x > 1, body, (n, tf.constant(0)))[1]


@tf.function
def row_square_sums(x):
    return tf.map_fn(lambda row: tf.reduce_sum(tf.square(row)), x)


@tf.function
def grow(x):
    return tf.while_loop(lambda v: tf.size(v) < 8, lambda v: (tf.concat([v, v], 0),), (x,),
                         shape_invariants=(tf.TensorShape([None]),))[0]


def model_loss(w, b, x, t):
    """A cond on the input's sign, then three iterations of v = v * w + b, then a squared error."""
    h = tf.cond(tf.reduce_sum(x) > 0, lambda: w * x, lambda: w * x * 0.5)
    v = tf.while_loop(lambda v: True, lambda v: (v * w + b,), (h,), maximum_iterations=3)[0]
    return tf.reduce_sum(tf.square(v - t))


@tf.function
def loss_and_grads(w, b, x, t):
    with tf.GradientTape() as tape:
        tape.watch([w, b])
        loss = model_loss(w, b, x, t)
    dw, db = tape.gradient(loss, [w, b])
    return loss, dw, db


def f(t):
    return [float(v) for v in tf.reshape(t, [-1]).numpy()]


def main():
    out = {"tensorflow": tf.__version__}
    xs = [[1.0, 2.0], [-1.0, -2.0], [0.5, -3.0]]
    out["cond_scale"] = [{"x": x, "y": f(cond_scale(tf.constant(x)))} for x in xs]
    out["while_sum"] = [{"n": n, "y": f(while_sum(tf.constant(n)))[0]} for n in [0, 3, 1000]]
    out["bounded_double"] = [{"x": x, "y": f(bounded_double(tf.constant(x)))[0]} for x in [1.0, -0.5]]
    out["collatz_steps"] = [{"n": n, "y": int(collatz_steps(tf.constant(n)).numpy())} for n in [1, 6, 27]]
    rows = [[1.0, 2.0], [3.0, 4.0], [0.0, 5.0]]
    out["row_square_sums"] = {"x": rows, "y": f(row_square_sums(tf.constant(rows)))}
    out["grow"] = {"x": [1.0], "y": f(grow(tf.constant([1.0])))}
    cases = []
    for x, t in [([1.0, 2.0], [3.0, 1.0]), ([-1.0, -2.0], [0.5, 0.5])]:
        loss, dw, db = loss_and_grads(tf.constant(0.5), tf.constant(0.1), tf.constant(x), tf.constant(t))
        cases.append({"w": 0.5, "b": 0.1, "x": x, "t": t, "loss": float(loss), "dw": float(dw), "db": float(db)})
    out["model_gradients"] = cases
    # Twenty steps of gradient descent on one example, from w = 0.5, b = 0.1.
    w, b = tf.constant(0.5), tf.constant(0.1)
    x, t = tf.constant([1.0, 2.0]), tf.constant([3.0, 1.0])
    losses = []
    for _ in range(20):
        loss, dw, db = loss_and_grads(w, b, x, t)
        losses.append(float(loss))
        w, b = w - 0.01 * dw, b - 0.01 * db
    out["training"] = {"lr": 0.01, "steps": 20, "x": f(x), "t": f(t), "losses": losses, "w": float(w), "b": float(b)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
