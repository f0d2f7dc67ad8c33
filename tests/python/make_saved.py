"""Writes SavedModels with Python's tf.saved_model.save, for Polyfn's import tests.

Usage: python make_saved.py OUT_DIR

OUT_DIR/function: a tf.Module whose one tf.function `scale` is traced on two signatures (a float
vector of any length, a float [2, 3] matrix), both capturing the variable w = [1, 2, 3].
OUT_DIR/module: a tf.Module with three functions: `add` (two float vectors), `mul` (a float
scalar) and `combine` (a list of two float vectors and a dict of two).
OUT_DIR/literals: a tf.function `apply(x, training, k, mode, scale, extra=None, flag=False)` traced
with Python literals (bool, int, str, float; None and a default filled in by Python).
Prints one line per check, "<name> <values...>": what Python's own restored functions return for
the inputs the test passes, so the test compares numbers, not hard-coded results.
"""
import sys

import tensorflow as tf


class Scale(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def scale(self, x):
        if x.shape.rank == 1:
            return {"y": x * self.w[0] + 1.0}
        return {"y": x * self.w, "total": tf.reduce_sum(x * self.w)}


class Module(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def add(self, a, b):
        return {"sum": a + b}

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def mul(self, a):
        return {"product": a * 4.0}

    @tf.function(input_signature=[[tf.TensorSpec([2], tf.float32), tf.TensorSpec([2], tf.float32)],
                                  {"a": tf.TensorSpec([2], tf.float32), "b": tf.TensorSpec([2], tf.float32)}])
    def combine(self, xs, feats):
        return {"z": xs[0] + xs[1] * feats["a"] - feats["b"]}


class Literals(tf.Module):
    @tf.function
    def apply(self, x, training, k, mode, scale, extra=None, flag=False):
        y = x * float(k) * scale
        if training:
            y = y + 1.0
        if mode == "neg":
            y = -y
        if flag:
            y = y * 10.0
        return {"y": y}


def show(name, t):
    print(name, " ".join(repr(float(v)) for v in t.numpy().reshape(-1)))


def main(out):
    m = Scale()
    m.scale.get_concrete_function(tf.TensorSpec([None], tf.float32))
    m.scale.get_concrete_function(tf.TensorSpec([2, 3], tf.float32))
    tf.saved_model.save(m, out + "/function")
    tf.saved_model.save(Module(), out + "/module")

    f = tf.saved_model.load(out + "/function")
    show("vector", f.scale(tf.constant([1.0, 2.0, 3.0, 4.0]))["y"])
    r = f.scale(tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    show("matrix", r["y"])
    show("total", r["total"])
    mod = tf.saved_model.load(out + "/module")
    show("add", mod.add(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))["sum"])
    show("mul", mod.mul(tf.constant(2.5))["product"])
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    show("combine", mod.combine([a, b], {"a": a, "b": b})["z"])

    lit = Literals()
    v = tf.TensorSpec([None], tf.float32)
    calls = {"lit_train": (True, 2, "pos", 0.5, False), "lit_infer": (False, 2, "pos", 0.5, False),
             "lit_neg": (True, 3, "neg", 0.5, False), "lit_flag": (False, 2, "pos", 0.5, True),
             "lit_scale": (False, 2, "pos", 0.25, False)}
    for training, k, mode, scale, flag in calls.values():
        lit.apply.get_concrete_function(v, training, k, mode, scale, flag=flag)
    tf.saved_model.save(lit, out + "/literals")
    restored = tf.saved_model.load(out + "/literals")
    x = tf.constant([1.0, 2.0])
    for name, (training, k, mode, scale, flag) in calls.items():
        show(name, restored.apply(x, training, k, mode, scale, flag=flag)["y"])


if __name__ == "__main__":
    main(sys.argv[1])
