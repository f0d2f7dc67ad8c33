"""Python contenders of Polyfn's benchmark suite: `tf.function` and its ConcreteFunction.

Same workloads as bench/src/main/java/dev/polyfn/bench/Workload.java and
native/tf/examples/floor.rs. Timing: after a warm-up, `rounds` batches of calls sized to about
`batch_ms` each; the median (and min) per-call time over the batches is reported, in microseconds.

Usage: python bench_tf.py [--quick] [--hit-signatures N] > python.json
"""

import argparse
import functools
import json
import operator
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.get_logger().setLevel("ERROR")


def weights(*dims):
    n = int(np.prod(dims))
    i = np.arange(n, dtype=np.int64)
    return (((i % 17) - 8).astype(np.float32) * np.float32(0.01)).reshape(dims)


def measure(fn, rounds, batch_ms, warmup_ms):
    start = time.perf_counter()
    calls = 0
    while (time.perf_counter() - start) * 1e3 < warmup_ms or calls < 3:
        fn()
        calls += 1
    per_call_ms = (time.perf_counter() - start) * 1e3 / calls
    batch = max(1, int(batch_ms / per_call_ms + 0.999))
    samples = []
    for _ in range(rounds):
        s = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - s) * 1e6 / batch)
    return {"us": statistics.median(samples), "min_us": min(samples), "batch": batch, "rounds": rounds}


def ones(*dims):
    return tf.constant(np.ones(dims, dtype=np.float32))


def add_chain(xs):
    return functools.reduce(operator.add, xs)


def workloads():
    """name -> (python function, args tuple, input signature for get_concrete_function)."""
    W1, B1, W2, B2 = weights(64, 64), weights(64), weights(64, 10), weights(10)

    def add2(x):
        return x + tf.constant(2.0)

    def mlp(x):
        h = tf.nn.relu(tf.linalg.matmul(x, tf.constant(W1)) + tf.constant(B1))
        return tf.linalg.matmul(h, tf.constant(W2)) + tf.constant(B2)

    def matmul512(a, b):
        return tf.linalg.matmul(a, b)

    def args16(*xs):
        return add_chain(xs)

    def list100(xs):
        return add_chain(xs)

    def map10(d):
        return add_chain([d["k%d" % i] for i in range(10)])

    def shape(x):
        return tf.shape(x)

    scalar = tf.TensorSpec([], tf.float32)
    return {
        "add2": (add2, (ones(),), (scalar,)),
        "mlp": (mlp, (ones(1, 64),), (tf.TensorSpec([1, 64], tf.float32),)),
        "matmul512": (matmul512, (ones(512, 512), ones(512, 512)), (tf.TensorSpec([512, 512], tf.float32),) * 2),
        "args16": (args16, tuple(ones() for _ in range(16)), (scalar,) * 16),
        "list100": (list100, ([ones() for _ in range(100)],), ([scalar] * 100,)),
        "map10": (map10, ({"k%d" % i: ones() for i in range(10)},), ({"k%d" % i: scalar for i in range(10)},)),
        "shape_4B": (shape, (ones(1),), (tf.TensorSpec([1], tf.float32),)),
        "shape_64MiB": (shape, (ones(1 << 24),), (tf.TensorSpec([1 << 24], tf.float32),)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--hit-signatures", type=int, default=None)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    t = dict(rounds=7, batch_ms=40, warmup_ms=150) if a.quick else dict(rounds=21, batch_ms=100, warmup_ms=500)
    hit_n = a.hit_signatures or (1000 if a.quick else 10000)
    out = {
        "tf_version": tf.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "mode": "quick" if a.quick else "full",
        "workloads": {},
    }

    for name, (body, args, spec) in workloads().items():
        if a.only and a.only != name:
            continue
        f = tf.function(body)
        f(*args)
        cf = f.get_concrete_function(*spec)
        cf(*args)
        r_fn = measure(lambda: f(*args), **t)
        r_cf = measure(lambda: cf(*args), **t)
        out["workloads"][name] = {"python_tf_function": r_fn, "python_concrete": r_cf}
        print("python %-12s tf.function %9.2f us  concrete %9.2f us" % (name, r_fn["us"], r_cf["us"]), file=sys.stderr)

    if not a.only or a.only == "hit":
        # Cache hits with 1 vs N traced signatures: y = x + 2 over float vectors [1] .. [N].
        for n in (1, hit_n):
            f = tf.function(lambda x: x + tf.constant(2.0))
            start = time.perf_counter()
            block, block_start, tenths = max(1, n // 10), start, []
            for k in range(1, n + 1):
                f(tf.zeros([k]))
                if k % block == 0:
                    now = time.perf_counter()
                    tenths.append(round((now - block_start) * 1e3 / block, 2))
                    block_start = now
            trace_s = time.perf_counter() - start
            traced = f.experimental_get_tracing_count()
            x = ones(1)
            r = measure(lambda: f(x), **t)
            r.update(signatures=n, traces=traced, trace_seconds=round(trace_s, 2), ms_per_trace_by_tenth=tenths)
            out["workloads"]["hit_1" if n == 1 else "hit_10k"] = {"python_tf_function": r}
            print("python hit with %d signatures (%d traces, %.1f s): %.2f us" % (n, traced, trace_s, r["us"]), file=sys.stderr)

    if not a.only or a.only == "first_call":
        # First call of a new tf.function (trace + concrete function + first execution), ms.
        x = ones()
        reps, warm = (15, 3) if a.quick else (50, 10)
        samples = []
        for i in range(warm + reps):
            f = tf.function(lambda x: x + tf.constant(2.0))
            s = time.perf_counter()
            f(x)
            if i >= warm:
                samples.append((time.perf_counter() - s) * 1e3)
        out["workloads"]["first_call"] = {
            "python_tf_function": {"ms": statistics.median(samples), "min_ms": min(samples), "rounds": reps}
        }
        print("python first call %.2f ms" % statistics.median(samples), file=sys.stderr)

    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
