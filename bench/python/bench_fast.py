"""Python contenders for the call-path rows of Polyfn's benchmark suite: tf.function with and
without jit_compile=True on the 20-op element-wise chain (1M floats) and the MLP, the same
graphs as bench/src/main/java/dev/polyfn/bench/FastPathBench.java. Timing as bench_tf.py.

Usage: python bench_fast.py [--quick] > python-fast.json
"""

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from bench_tf import measure, weights  # noqa: E402

tf.get_logger().setLevel("ERROR")


def ew20(x):
    y = x
    for _ in range(4):
        y = y * tf.constant(0.99, tf.float32)
        y = y + tf.constant(0.01, tf.float32)
        y = tf.math.tanh(y)
        y = y - tf.constant(0.001, tf.float32)
        y = tf.math.abs(y)
    return y


W1, B1, W2, B2 = (tf.constant(weights(64, 64)), tf.constant(weights(64)), tf.constant(weights(64, 10)),
                  tf.constant(weights(10)))


def mlp(x):
    h = tf.nn.relu(tf.matmul(x, W1) + B1)
    return tf.matmul(h, W2) + B2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    rounds, batch_ms, warmup_ms = (7, 40, 150) if a.quick else (21, 100, 500)
    inputs = {"ew20": tf.constant(np.full([1 << 20], 0.5, np.float32)), "mlp": tf.constant(np.ones([1, 64], np.float32))}
    bodies = {"ew20": ew20, "mlp": mlp}
    out = {"tf_version": tf.__version__, "workloads": {}}
    for name, body in bodies.items():
        x = inputs[name]
        for label, jit in (("python_tf_function", False), ("python_tf_function_xla", True)):
            f = tf.function(body, jit_compile=jit)
            f(x)
            out["workloads"].setdefault(name, {})[label] = measure(lambda: f(x), rounds, batch_ms, warmup_ms)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
