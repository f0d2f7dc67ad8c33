"""Python's side of the real-model start-up rows: time to first result of a Keras model written by
make_bench_models.py through `tf.saved_model.load` and its restored `serve` function, from the
process's start (as the kernel recorded it: interpreter start-up and `import tensorflow` count)
until the first call returned; also the import, the load and the first call alone. As
ModelStartupMain.java measures Polyfn's Function.load. Prints one JSON object.

Usage: python bench_model_startup.py DIR ROW
"""
import json
import os
import sys
import time

from bench_startup import process_start


def main(d, name):
    start = process_start()
    t0 = time.time()
    import numpy as np
    import tensorflow as tf

    t1 = time.time()
    with open(os.path.join(d, "rows.txt")) as f:
        model, dims = next((p[1], [int(v) for v in p[2].split(",")]) for p in map(str.split, f) if len(p) == 3 and p[0] == name)
    x = np.fromfile(os.path.join(d, name + ".in"), dtype="<f4").reshape(dims)
    restored = tf.saved_model.load(os.path.join(d, model))
    t2 = time.time()
    y = np.asarray(restored.serve(tf.constant(x)), dtype=np.float32).reshape(-1)
    t3 = time.time()
    first = (t3 - start) * 1000
    diff = float(np.max(np.abs(y - np.fromfile(os.path.join(d, name + ".out"), dtype="<f4"))))
    print(json.dumps({"row": name, "contender": "python", "first_ms": round(first, 1),
                      "import_ms": round((t1 - t0) * 1000, 1), "load_ms": round((t2 - t1) * 1000, 1),
                      "first_call_ms": round((t3 - t2) * 1000, 1), "max_abs_diff_python": diff}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
