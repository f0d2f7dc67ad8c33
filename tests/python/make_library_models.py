"""Writes SavedModels whose functions call other functions of their library, for Polyfn's import tests.

Usage: python make_library_models.py OUT_DIR

Each model is written by Python's own tf.saved_model.save (or Keras' model.export), then loaded
back by Python, which prints "<name> <values...>" for the inputs the Java test passes: the test
compares Polyfn's results with these numbers, not with hard-coded ones.

OUT_DIR/flow: a tf.Module whose functions use tf.cond (If), tf.while_loop (While), tf.switch_case
(Case), tf.map_fn and a nested tf.function (StatefulPartitionedCall), some capturing a variable.
OUT_DIR/lstm, OUT_DIR/gru: Keras 3 models (an LSTM or GRU layer, then Dense) exported for serving.
"""
import sys

import numpy as np
import tensorflow as tf

X = np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], dtype=np.float32)
SEQ = np.linspace(-1.0, 1.0, 2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3)


@tf.function
def inner(x, w):
    return tf.tanh(x * w) + 1.0


class Flow(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([2.0, 0.5, -1.0])

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def cond(self, x):
        return {"y": tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * self.w, lambda: x - self.w)}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([], tf.int32)])
    def loop(self, x, n):
        def body(i, acc):
            return i + 1, acc * 0.5 + x * self.w

        _, acc = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), tf.zeros_like(x)])
        return {"y": acc}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([], tf.int32)])
    def switch(self, x, k):
        return {"y": tf.switch_case(k, [lambda: x + 1.0, lambda: x * self.w, lambda: -x])}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def mapped(self, x):
        return {"y": tf.map_fn(lambda row: tf.reduce_sum(row * self.w), x)}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def nested(self, x):
        return {"y": inner(inner(x, self.w), self.w)}


def show(name, t):
    print(name, " ".join(repr(float(v)) for v in np.asarray(t).reshape(-1)))


def rnn(layer, out):
    import keras
    keras.utils.set_random_seed(7)
    model = keras.Sequential([keras.Input((5, 3)), layer, keras.layers.Dense(2)])
    model.export(out, format="tf_saved_model", verbose=False)
    return model


def main(out):
    flow = Flow()
    tf.saved_model.save(flow, out + "/flow")
    r = tf.saved_model.load(out + "/flow")
    x = tf.constant(X)
    show("cond_pos", r.cond(x)["y"])
    show("cond_neg", r.cond(-x)["y"])
    for n in (0, 1, 4):
        show("loop_%d" % n, r.loop(x, tf.constant(n))["y"])
    for k in (0, 1, 2, 7):
        show("switch_%d" % k, r.switch(x, tf.constant(k))["y"])
    show("mapped", r.mapped(x)["y"])
    show("nested", r.nested(x)["y"])

    import keras
    for name, layer in (("lstm", keras.layers.LSTM(4)), ("gru", keras.layers.GRU(4))):
        rnn(layer, out + "/" + name)
        served = tf.saved_model.load(out + "/" + name)
        show(name, served.serve(tf.constant(SEQ)))


if __name__ == "__main__":
    main(sys.argv[1])
