"""Loads a SavedModel Polyfn wrote with Python's tf.saved_model.load and checks every signature.

Usage: python check_saved.py SAVED_DIR CASES_JSON

CASES_JSON: {"signatures": [names...], "cases": [{"signature": name,
  "inputs": {key: {"dtype": "float32", "shape": [...], "values": [flat...]}},
  "outputs": {name: {"shape": [...], "values": [flat...]}}}]}
With "output_specs": {name: {"dtype": "float32", "shape": [dims, null unknown]}} in a case, the
static shape and dtype of each output of its signature (structured_outputs) must be those, and
of each concrete function of the restored function (with "function").
With "function": name in CASES_JSON, each case's "args" (a tensor as above, lists and dicts of
them, a record as the namedtuple the load made) are also passed to the loaded object's function of that name, as Python calls a restored
tf.function (`model.<name>(**args)`), which must return Polyfn's numbers too, and the function
must list one concrete function per expected signature.
Exits 0 and prints "OK <n cases>" when the loaded signatures are exactly the expected ones and
each returns Polyfn's numbers; else prints what differs and exits 1.
"""
import json
import sys

import numpy as np
import tensorflow as tf


def namedtuple_classes(function):
    """The namedtuple classes Python's load made for the function's input signatures, by name:
    what a Python user takes from m.<name>.concrete_functions[0].structured_input_signature."""
    found = {}

    def walk(s):
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            found[type(s).__name__] = type(s)
        if isinstance(s, (list, tuple)):
            for x in s:
                walk(x)
        elif isinstance(s, dict):
            for x in s.values():
                walk(x)

    for c in function.concrete_functions:
        walk(c.structured_input_signature)
    return found


def structure(v, records):
    """A case's argument as Python passes it: a tensor, or lists and dicts of them; a record as
    the namedtuple class of its name that the load made (printed), else as a tuple (printed)."""
    if isinstance(v, dict) and "dtype" in v:
        return tf.constant(np.array(v["values"], dtype=v["dtype"]).reshape(v["shape"]))
    if isinstance(v, dict) and sorted(v) == ["dense_shape", "indices", "values"]:
        return tf.sparse.SparseTensor(**{k: structure(x, records) for k, x in v.items()})
    if isinstance(v, dict) and "__record__" in v:
        fields = {k: structure(x, records) for k, x in v["fields"].items()}
        cls = records.get(v["__record__"])
        print(f"record {v['__record__']} as " + (f"namedtuple{cls._fields}" if cls else "tuple"))
        return cls(**fields) if cls else tuple(fields.values())
    if isinstance(v, dict):
        return {k: structure(x, records) for k, x in v.items()}
    if isinstance(v, (bool, int, float, str)):
        return v  # a Java value's literal, passed as Python passes a literal argument
    return [structure(x, records) for x in v]


def compare(where, out, outputs):
    for name, want in outputs.items():
        got = out[name].numpy()
        if list(got.shape) != want["shape"] or not np.allclose(got.reshape(-1), want["values"]):
            print(f"{where}: output {name} is {got.tolist()}, Polyfn gave {want}")
            return False
    return True


def main(saved_dir, cases_file):
    with open(cases_file) as f:
        spec = json.load(f)
    model = tf.saved_model.load(saved_dir)
    names = sorted(model.signatures.keys())
    if names != sorted(spec["signatures"]):
        print(f"signatures differ: loaded {names}, expected {sorted(spec['signatures'])}")
        return 1
    for case in spec["cases"]:
        fn = model.signatures[case["signature"]]
        args = {k: tf.constant(np.array(v["values"], dtype=v["dtype"]).reshape(v["shape"]))
                for k, v in case["inputs"].items()}
        if not compare(case["signature"], fn(**args), case["outputs"]):
            return 1
        if "output_specs" in case:
            listed = [fn] + (list(getattr(model, spec["function"]).concrete_functions) if "function" in spec else [])
            for where in listed:
                for name, want in case["output_specs"].items():
                    got = where.structured_outputs[name]
                    shape = got.shape.as_list() if got.shape.rank is not None else None
                    if got.dtype.name != want["dtype"] or shape != want["shape"]:
                        print(f"{case['signature']}: output {name} is {got.dtype.name} {shape}, expected {want}")
                        return 1
        if "function" in spec and case["args"] is not None:
            restored = getattr(model, spec["function"])
            call = {k: structure(v, namedtuple_classes(restored)) for k, v in case["args"].items()}
            if not compare(f"{spec['function']}(**{sorted(call)})", restored(**call), case["outputs"]):
                return 1
    if "function" in spec:
        n = len(getattr(model, spec["function"]).concrete_functions)
        if n != len(spec["signatures"]):
            print(f"{spec['function']} lists {n} concrete functions, expected {len(spec['signatures'])}")
            return 1
    print(f"OK {len(spec['cases'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
