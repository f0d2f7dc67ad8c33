"""Writes SavedModels of tf.functions with default argument values, for Polyfn's import tests.

Usage: python make_defaults.py OUT_DIR

OUT_DIR/literal: `scale(x, factor=2.0)`, traced for a float vector with the default and with 3.0
(a Python literal: each value its own concrete function).
OUT_DIR/tensor: `scale(x, factor=tf.constant(2.0))`, traced for a float vector with the default
(a tensor default: the concrete function takes any float scalar).
Prints "<name> <values...>": what Python's restored functions return for x = [1, 2] without the
defaulted argument ("<model>_default") and with 3.0 ("<model>_three").
"""
import sys

import tensorflow as tf


class Literal(tf.Module):
    @tf.function
    def scale(self, x, factor=2.0):
        return {"y": x * factor + 1.0}


class Tensor(tf.Module):
    @tf.function
    def scale(self, x, factor=tf.constant(2.0)):
        return {"y": x * factor + 1.0}


def show(name, t):
    print(name, " ".join(repr(float(v)) for v in t.numpy().reshape(-1)))


def main(out):
    v = tf.TensorSpec([None], tf.float32)
    lit = Literal()
    lit.scale.get_concrete_function(v)
    lit.scale.get_concrete_function(v, 3.0)
    tf.saved_model.save(lit, out + "/literal")
    ten = Tensor()
    ten.scale.get_concrete_function(v)
    tf.saved_model.save(ten, out + "/tensor")
    x = tf.constant([1.0, 2.0])
    restored = tf.saved_model.load(out + "/literal")
    show("literal_default", restored.scale(x)["y"])
    show("literal_three", restored.scale(x, 3.0)["y"])
    restored = tf.saved_model.load(out + "/tensor")
    show("tensor_default", restored.scale(x)["y"])
    show("tensor_three", restored.scale(x, tf.constant(3.0))["y"])


if __name__ == "__main__":
    main(sys.argv[1])
