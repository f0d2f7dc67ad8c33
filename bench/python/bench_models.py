"""Python's side of the real-model rows (bench/run.sh's "Real models" block): the per-call time of
a Keras model written by make_bench_models.py, through `tf.saved_model.load` and its restored
`serve` function, measured as ModelBench.java measures Polyfn and SavedModelBundle: the result is
compared with the one make_bench_models.py recorded (max abs diff), a warm-up, then `rounds`
samples, each a batch of calls lasting about `sample_ms` (at least one), whose time per call is
the sample; the median sample is reported. Prints one JSON object.

Usage: python bench_models.py DIR ROW [rounds] [sample_ms] [warmup_ms]
"""
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

WARMUP_CALLS = 96  # as ModelBench.java


def row_of(d, name):
    with open(os.path.join(d, "rows.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == name:
                return p[1], [int(v) for v in p[2].split(",")]
    raise SystemExit("%s: no row %s" % (os.path.join(d, "rows.txt"), name))


def main(d, name, rounds=15, sample_ms=200, warmup_ms=4000):
    model, dims = row_of(d, name)
    x = tf.constant(np.fromfile(os.path.join(d, name + ".in"), dtype="<f4").reshape(dims))
    want = np.fromfile(os.path.join(d, name + ".out"), dtype="<f4")
    restored = tf.saved_model.load(os.path.join(d, model))
    serve = restored.serve
    got = np.asarray(serve(x), dtype=np.float32).reshape(-1)
    diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
    if not diff <= 1e-4 * max(1.0, float(np.max(np.abs(want)))):
        raise SystemExit("%s: Python's result differs from the recorded one by %g" % (name, diff))
    t0, calls = time.perf_counter(), 0
    while calls < WARMUP_CALLS or time.perf_counter() - t0 < warmup_ms / 1e3:
        serve(x)
        calls += 1
    samples = []
    for _ in range(rounds):
        s, n = time.perf_counter(), 0
        while True:
            serve(x)
            n += 1
            t = time.perf_counter() - s
            if t >= sample_ms / 1e3:
                break
        samples.append(t * 1e6 / n)
    print(json.dumps({"row": name, "batch": dims[0], "python_us": round(statistics.median(samples), 1),
                      "rounds": rounds, "sample_ms": sample_ms, "warmup_ms": warmup_ms, "warmup_calls": calls, "max_abs_diff_recorded": diff,
                      "samples_us": [round(v, 1) for v in samples], "tf_version": tf.__version__}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *[int(v) for v in sys.argv[3:6]])
