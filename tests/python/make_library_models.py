"""Writes SavedModels whose functions call other functions of their library, for Polyfn's import tests.

Usage: python make_library_models.py OUT_DIR

Each model is written by Python's own tf.saved_model.save (or Keras' model.export), then loaded
back by Python, which prints "<name> <values...>" for the inputs the Java test passes: the test
compares Polyfn's results with these numbers, not with hard-coded ones.

OUT_DIR/flow: a tf.Module whose functions use tf.cond (If), tf.while_loop (While), tf.switch_case
(Case), tf.map_fn and a nested tf.function (StatefulPartitionedCall), some capturing a variable.
OUT_DIR/nests: a function whose parameters are a dict of dicts and lists, and a tuple holding a list;
one with a keyword-only argument (and a keyword-only None default); one taking a namedtuple; one taking a SparseTensorSpec (a SparseTensor in Java); one taking a RaggedTensorSpec (a RaggedTensor in Java); one taking an
extension type (which Polyfn refuses, saying why).
(Keras models, whose RNN loops are library functions too: make_keras_models.py.)
"""
import collections
import sys

import numpy as np
import tensorflow as tf

X = np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], dtype=np.float32)


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


Pair = collections.namedtuple("Pair", ["b", "a"])


class Masked(tf.experimental.ExtensionType):
    """An extension type (a composite Polyfn has no counterpart for)."""
    __name__ = "polyfn_tests.Masked"
    values: tf.Tensor
    mask: tf.Tensor


class Nests(tf.Module):
    @tf.function
    def keywords(self, x, *, y, z=None):
        return {"y": x * 3.0 - y if z is None else x + y + z}

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
    def ragged(self, r):
        return {"y": tf.reduce_sum(r, axis=1)}

    @tf.function(input_signature=[Masked.Spec(values=tf.TensorSpec([None], tf.float32), mask=tf.TensorSpec([None], tf.bool))])
    def masked(self, m):
        return {"y": tf.where(m.mask, m.values, 0.0)}

    @tf.function(input_signature=[tf.SparseTensorSpec([None, 4], tf.float32)])
    def sparse(self, s):
        return {"y": tf.sparse.reduce_sum(s, axis=1) * 2.0 + tf.cast(s.dense_shape[1], tf.float32)}

    @tf.function
    def pair(self, p):
        return {"y": p.b * 2.0 - p.a}

    @tf.function(input_signature=[{"a": {"p": tf.TensorSpec([None], tf.float32), "q": tf.TensorSpec([None], tf.float32)},
                                   "lst": [tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.float32)]},
                                  (tf.TensorSpec([None], tf.float32), [tf.TensorSpec([None], tf.float32)])])
    def deep(self, d, t):
        return {"y": d["a"]["p"] * 2.0 - d["a"]["q"] + d["lst"][0] * d["lst"][1] + t[0] * 10.0 - t[1][0]}


def show(name, t):
    print(name, " ".join(repr(float(v)) for v in np.asarray(t).reshape(-1)))


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

    nests = Nests()
    s = tf.TensorSpec([None], tf.float32)
    nests.keywords.get_concrete_function(s, y=s)
    nests.pair.get_concrete_function(Pair(s, s))
    tf.saved_model.save(nests, out + "/nests")
    r = tf.saved_model.load(out + "/nests")
    v = lambda *xs: tf.constant(xs, tf.float32)
    show("deep", r.deep({"a": {"p": v(1.0, 2.0), "q": v(0.5, 4.0)}, "lst": [v(3.0, -1.0), tf.constant(2.0)]},
                        (v(0.25, 0.5), [v(7.0, 8.0)]))["y"])
    show("keywords", r.keywords(v(1.0, 2.0), y=v(0.5, -4.0))["y"])
    show("pair", r.pair(Pair(v(1.0, 2.0), v(0.5, -4.0)))["y"])
    show("sparse", r.sparse(tf.sparse.SparseTensor(indices=[[0, 1], [1, 3], [2, 0], [2, 2]], values=[1.5, -2.0, 4.0, 0.25],
                                                   dense_shape=[3, 4]))["y"])
    show("ragged", r.ragged(tf.ragged.constant([[1.0, 2.0], [], [3.5]]))["y"])


if __name__ == "__main__":
    main(sys.argv[1])
