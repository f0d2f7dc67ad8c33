"""Loads a SavedModel Polyfn wrote with Python's tf.saved_model.load and checks every signature.

Usage: python check_saved.py SAVED_DIR CASES_JSON

CASES_JSON: {"signatures": [names...], "cases": [{"signature": name,
  "inputs": {key: {"dtype": "float32", "shape": [...], "values": [flat...]}},
  "outputs": {name: {"shape": [...], "values": [flat...]}}}]}
Exits 0 and prints "OK <n cases>" when the loaded signatures are exactly the expected ones and
each returns Polyfn's numbers; else prints what differs and exits 1.
"""
import json
import sys

import numpy as np
import tensorflow as tf


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
        out = fn(**args)
        for name, want in case["outputs"].items():
            got = out[name].numpy()
            if list(got.shape) != want["shape"] or not np.allclose(got.reshape(-1), want["values"]):
                print(f"{case['signature']}: output {name} is {got.tolist()}, Polyfn gave {want}")
                return 1
    print(f"OK {len(spec['cases'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
