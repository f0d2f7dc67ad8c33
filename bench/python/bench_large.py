"""Python's side of the large-body rows: the same chain of N ops as
bench/src/main/java/dev/polyfn/bench/LargeBodyMain.java (element-wise on x of shape [4], or with
matmuls on x of shape [8, 8]), each op with a constant operand getting its own constant. After a
warm-up (a small function traced and called), times get_concrete_function (the trace) and then the
first call (TensorFlow's instantiation, Grappler, kernels, the run). Prints one JSON object.

Usage: python bench_large.py ew|matmul N
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def elementwise_step(x, i):
    k = i % 4
    if k == 0:
        return x * 0.999
    if k == 1:
        return x + 0.001
    if k == 2:
        return tf.math.tanh(x)
    return x - 0.0005


def matmul_step(x, i):
    k = i % 3
    if k == 0:
        w = np.array([((j * 7 + i) % 13 - 6) / 50.0 for j in range(64)], dtype=np.float32).reshape(8, 8)
        return tf.linalg.matmul(x, tf.constant(w))
    if k == 1:
        return x + 0.01
    return tf.math.tanh(x)


def run(kind, n):
    shape = [8, 8] if kind == "matmul" else [4]
    step = matmul_step if kind == "matmul" else elementwise_step

    @tf.function
    def f(x):
        for i in range(n):
            x = step(x, i)
        return {"y": x}

    x = tf.constant(np.full(shape, 0.5, dtype=np.float32))
    t0 = time.perf_counter()
    f.get_concrete_function(tf.TensorSpec(shape, tf.float32))
    t1 = time.perf_counter()
    y = float(f(x)["y"].numpy().ravel()[0])
    t2 = time.perf_counter()
    assert np.isfinite(y) and f.experimental_get_tracing_count() == 1
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    run(kind, 10)  # warm-up: TensorFlow's start-up
    trace, first = run(kind, n)
    print(json.dumps({"contender": "python", "kind": kind, "ops": n, "trace_ms": round(trace, 1),
                      "first_call_ms": round(first, 1), "first_result_ms": round(trace + first, 1),
                      "tf_version": tf.__version__}))


if __name__ == "__main__":
    main()
