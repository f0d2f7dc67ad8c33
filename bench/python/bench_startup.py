"""Python's side of the start-up rows: time to first result of the SavedModel Polyfn saved (the
same 10-signature function as bench/src/.../StartupMain.java), from the process's start (as the
kernel recorded it, so interpreter start-up and `import tensorflow` count) until the first
signature returned, and until all 10 did. Prints one JSON object, with the time broken down
(ms): `interpreter_ms` from the process's start to `main`, `import_ms` for `import tensorflow`
(and numpy), `load_ms` for `tf.saved_model.load`, `calls_ms` for the 10 first calls (each one
TensorFlow's preparation of its function, then the run).

Usage: python bench_startup.py SAVED_DIR
"""
import json
import os
import sys
import time


def process_start():
    """The process's start time (seconds since the epoch) from /proc, like Java's ProcessHandle."""
    with open("/proc/self/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as f:
        btime = next(int(line.split()[1]) for line in f if line.startswith("btime"))
    return btime + ticks / os.sysconf("SC_CLK_TCK")


def main(saved):
    start = process_start()
    entered = time.time()
    import numpy as np
    import tensorflow as tf

    imported = time.time()
    model = tf.saved_model.load(saved)
    loaded = time.time()
    first = None
    checksum = 0.0
    for k in range(1, 11):
        fn = model.signatures["startup__float32_%d_16" % k]
        out = fn(x=tf.constant(np.full((k, 16), 0.25, dtype=np.float32)))
        checksum += float(out["score"].numpy()[0])
        if first is None:
            first = (time.time() - start) * 1000
    end = time.time()
    ms = lambda a, b: round((b - a) * 1000, 1)
    print(json.dumps({"mode": "python", "first_ms": round(first, 1), "all_ms": ms(start, end),
                      "after_import_ms": ms(imported, end), "checksum": round(checksum, 6),
                      "interpreter_ms": ms(start, entered), "import_ms": ms(entered, imported),
                      "load_ms": ms(imported, loaded), "calls_ms": ms(loaded, end)}))


if __name__ == "__main__":
    main(sys.argv[1])
