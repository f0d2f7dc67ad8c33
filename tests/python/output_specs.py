"""Prints the static output specs Python's loader sees in a SavedModel, for Polyfn's tests.

Usage: python output_specs.py SAVED_DIR FUNCTION

One line per output: "signature <key> <output> <dtype> <shape as JSON>" for each signature, then
"function <index> <output> <dtype> <shape as JSON>" for each concrete function of the loaded
object's attribute FUNCTION (a shape of unknown rank is null, an unknown dim null).
"""
import json
import sys

import tensorflow as tf


def shape(spec):
    return json.dumps(spec.shape.as_list() if spec.shape.rank is not None else None).replace(" ", "")


def main(saved_dir, function):
    m = tf.saved_model.load(saved_dir)
    for key, fn in sorted(m.signatures.items()):
        for name, spec in sorted(fn.structured_outputs.items()):
            print("signature", key, name, spec.dtype.name, shape(spec))
    for i, c in enumerate(getattr(m, function).concrete_functions):
        for name, spec in sorted(c.structured_outputs.items()):
            print("function", i, name, spec.dtype.name, shape(spec))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
