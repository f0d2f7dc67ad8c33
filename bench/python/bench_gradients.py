"""Python's side of GradientFirstCallMain (bench/src/main/java/dev/polyfn/bench): the trace and
first call of a tf.function returning a gradient of a long body. chain: y = x*c*...*c (1,000
multiplications by a scalar constant, x of shape [4]), differentiated by a GradientTape and by
tf.gradients (which, as Polyfn's Flow.gradients, builds the gradient of every input of each op);
mlp: 100 layers h = tanh(h @ W + b) on x of shape [8, 8], tf.gradients of sum(h) (W and b drawn
as the Java program draws them, by another generator: the same shapes, other values). Times
get_concrete_function (the trace), then the first call and a second one, in one process without a
warm-up.

Usage: python bench_gradients.py [chain] [mlp]
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

C = np.float32(1.0001)


def chain_tape(n):
    @tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            h = x
            c = tf.constant(C)
            for _ in range(n):
                h = h * c
        return t.gradient(h, x)
    return f


def chain_gradients(n):
    @tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
    def f(x):
        h = x
        c = tf.constant(C)
        for _ in range(n):
            h = h * c
        return tf.gradients(h, [x])[0]
    return f


def mlp(layers):
    rng = np.random.RandomState(0)
    w0 = (rng.randn(8, 8) * 0.4).astype(np.float32)
    b0 = (rng.randn(8, 8) * 0.1).astype(np.float32)

    @tf.function(input_signature=[tf.TensorSpec([8, 8], tf.float32)])
    def f(x):
        h = x
        w = tf.constant(w0)
        b = tf.constant(b0)
        for _ in range(layers):
            h = tf.tanh(tf.matmul(h, w) + b)
        return tf.gradients(tf.reduce_sum(h), [x])[0]
    return f


def measure(name, f, arg):
    t0 = time.perf_counter()
    f.get_concrete_function()
    t1 = time.perf_counter()
    f(arg).numpy()
    t2 = time.perf_counter()
    f(arg).numpy()
    t3 = time.perf_counter()
    print(f"{name}: trace {t1 - t0:.3f} s, first call {t2 - t1:.3f} s, second {1000 * (t3 - t2):.2f} ms")


if __name__ == "__main__":
    which = sys.argv[1:] or ["chain", "mlp"]
    if "chain" in which:
        x = tf.constant([1, 2, 3, 4], tf.float32)
        measure("chain1000 [4] GradientTape", chain_tape(1000), x)
        measure("chain1000 [4] tf.gradients", chain_gradients(1000), x)
    if "mlp" in which:
        measure("mlp100 [8,8] tf.gradients", mlp(100), tf.constant(np.ones((8, 8), np.float32)))
