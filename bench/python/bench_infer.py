"""Python's tf.function on the signature-inference workload of InferenceBench.java: a dense layer
tanh(x @ W + 0.5), x [n, 16], 1,000 calls over 50 distinct batch sizes, timed from the definition
to the last call (traces included), without and with reduce_retracing. A first round warms up and
is not reported; each round defines a fresh tf.function. One line per round goes to stderr; stdout
gets one JSON line with the medians over rounds (keys as InferenceBench.java's).

Usage: python bench_infer.py [rounds]
"""

import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.get_logger().setLevel("ERROR")

CALLS, SIZES, FEATURES = 1000, 50, 16


def dense(reduce_retracing):
    w = tf.fill([FEATURES, 8], 0.1)

    @tf.function(reduce_retracing=reduce_retracing)
    def f(x):
        return tf.math.tanh(tf.linalg.matmul(x, w) + 0.5)

    return f


def run(reduce_retracing, batches):
    start = time.perf_counter()
    f = dense(reduce_retracing)
    for i in range(CALLS):
        f(batches[(i * 7) % SIZES]).numpy()
    elapsed = time.perf_counter() - start
    return f.experimental_get_tracing_count(), elapsed * 1e3


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    batches = [tf.constant(np.zeros((n, FEATURES), np.float32)) for n in range(1, SIZES + 1)]
    results = {"tf_function": [], "reduce_retracing": []}
    for r in range(rounds + 1):
        plain = run(False, batches)
        reduced = run(True, batches)
        if r == 0:
            continue
        results["tf_function"].append(plain)
        results["reduce_retracing"].append(reduced)
        print(f"round {r}: tf.function {plain[0]} traces {plain[1]:.1f} ms | "
              f"reduce_retracing {reduced[0]} traces {reduced[1]:.1f} ms ({plain[1] / reduced[1]:.1f}x less)",
              file=sys.stderr)
    out = {"calls": CALLS, "batch_sizes": SIZES, "tf_version": tf.__version__}
    for name, rs in results.items():
        out[name] = {"traces": rs[0][0], "total_ms": round(statistics.median(r[1] for r in rs), 2)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
