"""Calls a SavedModel Polyfn saved (a function that captures lookup tables) with Python's loader.

Usage: python check_tables.py DIR FUNCTION DTYPE DIMS VALUES

Builds the input (DTYPE string, int64 or float32; DIMS comma-separated; VALUES joined by '|'),
then, each on a fresh tf.saved_model.load(DIR) (a mutable table starts from the saved contents),
calls m.FUNCTION(x) and each signature with x as its one keyword argument, and prints one line
per call: "call <values...>" and "signature_<key> <values...>" (the one output, flattened), which
the Java test compares with Polyfn's results.
"""
import sys

import numpy as np
import tensorflow as tf


def flat(out):
    if isinstance(out, dict):
        assert len(out) == 1, out
        out = next(iter(out.values()))
    return " ".join(repr(float(v)) for v in np.asarray(out).reshape(-1))


def main(path, function, dtype, dims, values):
    shape = [int(d) for d in dims.split(",")] if dims else []
    items = values.split("|")
    x = tf.constant(np.array(items if dtype == "string" else [float(v) for v in items],
                             dtype={"string": object, "int64": np.int64, "float32": np.float32}[dtype]).reshape(shape))
    m = tf.saved_model.load(path)
    print("call", flat(getattr(m, function)(x)))
    for key in sorted(tf.saved_model.load(path).signatures.keys()):
        m = tf.saved_model.load(path)
        sig = m.signatures[key]
        (name,) = sig.structured_input_signature[1].keys()
        print("signature_" + key, flat(sig(**{name: x})))


if __name__ == "__main__":
    main(*sys.argv[1:])
