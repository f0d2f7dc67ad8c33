"""Python counterparts of RetracingParityTest: sequences of calls, in the manner of TensorFlow's
own tests of tf.function's cache (polymorphic_function_test.py, quarantine_test.py: the tracing
count after each call, with and without reduce_retracing), recorded so that Polyfn's dispatch can
be compared call by call. Each call records the tracing count after it and which trace served it:
the body returns, as a constant made at trace time, the static shape of each tensor it was traced
for (rank, then the dims; -1 for an unknown dim or rank) and any Python value it was traced for.

Run: python tests/python/retracing_parity.py > tests/src/test/resources/retracing_parity.json
"""
import json

import numpy as np
import tensorflow as tf

SEP = -9  # between the leaves of one call's static-shape record


def static_shape(x):
    s = x.shape
    if s.rank is None:
        return [-1]
    return [s.rank] + [-1 if d is None else d for d in s]


def record(leaves, extra=()):
    out = []
    for x in leaves:
        out += static_shape(x) + [SEP]
    return tf.constant(out + list(extra), dtype=tf.int32)


def tensor(dtype, shape):
    return tf.ones(shape, dtype=dtype)


def run(fn, calls, make_args):
    steps = []
    for c in calls:
        args = make_args(c)
        seen = fn(*args)
        steps.append({"call": c, "traces": fn.experimental_get_tracing_count(), "seen": seen.numpy().tolist()})
    return steps


def one_tensor(reduce, shapes, dtypes=None):
    @tf.function(reduce_retracing=reduce)
    def f(x):
        return record([x])

    calls = [{"shape": s, "dtype": (dtypes[i] if dtypes else "float32")} for i, s in enumerate(shapes)]
    return run(f, calls, lambda c: (tensor(c["dtype"], c["shape"]),))


def tensor_and_int(reduce, items):
    @tf.function(reduce_retracing=reduce)
    def f(x, n):
        return record([x], [n])

    calls = [{"shape": s, "n": n} for s, n in items]
    return run(f, calls, lambda c: (tensor("float32", c["shape"]), c["n"]))


def tensor_list(reduce, lists):
    @tf.function(reduce_retracing=reduce)
    def f(xs):
        return record(xs)

    calls = [{"shapes": l} for l in lists]
    return run(f, calls, lambda c: ([tensor("float32", s) for s in c["shapes"]],))


def tensor_dict(reduce, dicts):
    @tf.function(reduce_retracing=reduce)
    def f(m):
        return record([m[k] for k in sorted(m)])

    calls = [{"shapes": d} for d in dicts]
    return run(f, calls, lambda c: ({k: tensor("float32", s) for k, s in c["shapes"].items()},))


def nest_of(reduce, nests):
    @tf.function(reduce_retracing=reduce)
    def f(n):
        return record(tf.nest.flatten(n))  # dict keys sorted, as Polyfn's nests

    def build(v):
        if isinstance(v, dict):
            return {k: build(x) for k, x in v.items()}
        if v and isinstance(v[0], list):
            return [build(x) for x in v]
        return tensor("float32", v)

    calls = [{"nest": n} for n in nests]
    return run(f, calls, lambda c: (build(c["nest"]),))


def spec_then_calls(reduce, shapes):
    @tf.function(reduce_retracing=reduce)
    def f(x):
        return record([x])

    f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    calls = [{"shape": s, "dtype": "float32"} for s in shapes]
    return run(f, calls, lambda c: (tensor(c["dtype"], c["shape"]),))


def signature_none(shapes):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return record([x])

    steps = []
    for s in shapes:
        try:
            seen = f(tensor("float32", s)).numpy().tolist()
        except (TypeError, ValueError):
            seen = "refused"
        steps.append({"call": {"shape": s}, "traces": f.experimental_get_tracing_count(), "seen": seen})
    return steps


def main():
    cases = {
        "shapes_default": one_tensor(False, [[2], [3], [2], [2, 2], []]),
        "shapes_reduce": one_tensor(True, [[2], [3], [4], [2], [2, 2], [3, 3, 3], [5], []]),
        "two_axes_reduce": one_tensor(True, [[2, 3], [2, 4], [3, 4], [3, 5], [2, 3], [2, 9], [7]]),
        "scalar_then_vectors_reduce": one_tensor(True, [[], [1], [2], []]),
        "dtypes_reduce": one_tensor(True, [[2], [2], [3], [3], [4]],
                                    ["float32", "float64", "float32", "int32", "float64"]),
        "python_ints_reduce": tensor_and_int(True, [([2], 1), ([2], 2), ([3], 1), ([4], 1), ([4], 2), ([2], 3)]),
        "python_ints_default": tensor_and_int(False, [([2], 1), ([2], 2), ([2], 1), ([3], 1)]),
        "lists_reduce": tensor_list(True, [[[2], [3]], [[2], [4]], [[5], [4]], [[2]], [[3]], [[2], [3], [4]]]),
        "lists_default": tensor_list(False, [[[2], [3]], [[2], [3]], [[2], [4]], [[2]]]),
        "dicts_reduce": tensor_dict(True, [{"a": [2]}, {"a": [3]}, {"a": [2], "b": [2]}, {"b": [5], "a": [4]},
                                           {"b": [2]}]),
        "nests_reduce": nest_of(True, [{"a": [[2], [3]], "b": [1]}, {"a": [[4], [3]], "b": [1]},
                                       {"a": [[4], [3]], "b": [2, 2]}, {"a": [[5]], "b": [1]}]),
        "spec_then_calls_default": spec_then_calls(False, [[2], [3], [2, 2], [4]]),
        "spec_then_calls_reduce": spec_then_calls(True, [[2], [3], [2, 2], [4], [3, 3]]),
        "signature_none": signature_none([[1], [5], [2, 2], [0]]),
    }
    print(json.dumps({"tensorflow": tf.__version__, "separator": SEP, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
