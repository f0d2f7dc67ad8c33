"""Python's tf.function on StructBench.java's structured workloads: record3 (a namedtuple of
three float scalars, summed) and nest100 (a list of 10 dicts {"a": 5 scalars, "b": 5 scalars},
summed), cached calls timed as bench_tf.py times its workloads.

Usage: python bench_struct.py [--quick] > python-struct.json
"""

import argparse
import collections
import json
import sys

from bench_tf import measure, ones, tf  # same timing and inputs as the other Python rows

Triple = collections.namedtuple("Triple", "a b c")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    t = dict(rounds=7, batch_ms=40, warmup_ms=150) if a.quick else dict(rounds=21, batch_ms=100, warmup_ms=500)

    @tf.function
    def record3(t):
        return {"y": t.a + t.b + t.c}

    @tf.function
    def nest100(xs):
        return {"y": tf.math.add_n([x for m in xs for k in ("a", "b") for x in m[k]])}

    inputs = {
        "record3": (record3, Triple(ones(), ones(), ones())),
        "nest100": (nest100, [{"a": [ones() for _ in range(5)], "b": [ones() for _ in range(5)]} for _ in range(10)]),
    }
    out = {"tf_version": tf.__version__, "workloads": {}}
    for name, (f, arg) in inputs.items():
        f(arg)
        r = measure(lambda: f(arg)["y"], **t)
        assert f.experimental_get_tracing_count() == 1
        out["workloads"][name] = {"python_tf_function": r}
        print("python %-8s tf.function %9.2f us" % (name, r["us"]), file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
