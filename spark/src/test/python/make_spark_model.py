"""Writes a SavedModel for PolyfnTransformerTest and prints what Python's TensorFlow answers.

Usage: python make_spark_model.py OUT_DIR ROWS

OUT_DIR/model: a tf.Module with a tf.function `score` of a batch of rows, x: float64 [None] and
features: float32 [None, 3], returning {"y": float64 [None], "z": float32 [None]}, and capturing
variables (so the checkpoint's values must come back). Python then loads the model back and prints
"y <ROWS values>" and "z <ROWS values>" for the rows the test builds (row i: x = i * 0.5,
features = [i, 1, -2]): the test compares Spark's results with these numbers.
"""
import sys

import numpy as np
import tensorflow as tf


class Scorer(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(0.3, dtype=tf.float64)
        self.v = tf.Variable([0.5, -1.5, 2.0], dtype=tf.float32)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float64), tf.TensorSpec([None, 3], tf.float32)])
    def score(self, x, features):
        return {"y": tf.tanh(x * self.w) * 10.0 + 1.0,
                "z": tf.reduce_sum(tf.sigmoid(features * self.v), axis=1)}


def main():
    out, rows = sys.argv[1], int(sys.argv[2])
    path = out + "/model"
    tf.saved_model.save(Scorer(), path)
    loaded = tf.saved_model.load(path)
    i = np.arange(rows)
    x = (i * 0.5).astype(np.float64)
    features = np.stack([i, np.ones(rows), -2.0 * np.ones(rows)], axis=1).astype(np.float32)
    result = loaded.score(tf.constant(x), tf.constant(features))
    for name in ("y", "z"):
        print(name, " ".join(repr(float(v)) for v in result[name].numpy()))


if __name__ == "__main__":
    main()
