"""Writes SavedModels with Python's tf.saved_model.save, for Polyfn's import tests.

Usage: python make_saved.py OUT_DIR

OUT_DIR/function: a tf.function `scale` traced on several signatures (a float vector of any
length, an int32 matrix [2, 2], a list of two float vectors), capturing a variable w = [1, 2, 3].
OUT_DIR/module: a tf.Module with two functions, `add` and `mul`.
Prints, as JSON on the last line, the outputs Python's own restored functions return for the
inputs the test uses, so the test compares numbers, not hard-coded results.
"""
import json
import sys

import tensorflow as tf


class Scale(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def scale(self, x):
        if isinstance(x, (list, tuple)):
            return {"y": x[0] * self.w + x[1]}
        if x.dtype == tf.int32:
            return {"y": tf.cast(x, tf.float32) * 10.0}
        return {"y": x * self.w[0] + 1.0}


class Two(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def add(self, a, b):
        return {"sum": a + b}

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def mul(self, a):
        return {"product": a * 4.0}


def main(out):
    m = Scale()
    m.scale.get_concrete_function(tf.TensorSpec([None], tf.float32))
    m.scale.get_concrete_function(tf.TensorSpec([2, 2], tf.int32))
    m.scale.get_concrete_function([tf.TensorSpec([3], tf.float32), tf.TensorSpec([3], tf.float32)])
    tf.saved_model.save(m, out + "/function")
    two = Two()
    tf.saved_model.save(two, out + "/module")
    loaded = tf.saved_model.load(out + "/function")
    expect = {
        "vector": loaded.scale(tf.constant([1.0, 2.0, 3.0, 4.0]))["y"].numpy().tolist(),
        "matrix": loaded.scale(tf.constant([[1, 2], [3, 4]]))["y"].numpy().reshape(-1).tolist(),
        "list": loaded.scale([tf.constant([1.0, 1.0, 1.0]), tf.constant([0.5, 0.5, 0.5])])["y"].numpy().tolist(),
    }
    mod = tf.saved_model.load(out + "/module")
    expect["add"] = mod.add(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))["sum"].numpy().tolist()
    expect["mul"] = [float(mod.mul(tf.constant(2.5))["product"].numpy())]
    print(json.dumps(expect))


if __name__ == "__main__":
    main(sys.argv[1])
