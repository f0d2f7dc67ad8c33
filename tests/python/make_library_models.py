"""Writes SavedModels whose functions call other functions of their library, for Polyfn's import tests.

Usage: python make_library_models.py OUT_DIR

Each model is written by Python's own tf.saved_model.save (or Keras' model.export), then loaded
back by Python, which prints "<name> <values...>" for the inputs the Java test passes: the test
compares Polyfn's results with these numbers, not with hard-coded ones.

OUT_DIR/flow: a tf.Module whose functions use tf.cond (If), tf.while_loop (While), tf.switch_case
(Case), tf.map_fn and a nested tf.function (StatefulPartitionedCall), some capturing a variable.
OUT_DIR/nests: a function whose parameters are a dict of dicts and lists, and a tuple holding a list;
one with a keyword-only argument (and a keyword-only None default); one taking a namedtuple; one taking a
SparseTensorSpec (a SparseTensor in Java); one taking a RaggedTensorSpec (a RaggedTensor in Java); extension types
(a Map of their fields in Java): Masked (fields not in sorted order), Tagged (a RaggedTensor, a dict, a static
int, a nested extension type and a tuple; two concrete functions, mode 1 for any z, mode 2 for a z of 2 values, so
a z of 2 values dispatches by the static field), a function returning Masked; one returning Counted (a static
field in an output), one taking a packed Masked and one taking Shaped (a static TensorShape field): Polyfn refuses
these three, saying why.
OUT_DIR/ragged_pairs: a RaggedTensorSpec with a flat_values_spec (a TensorSpec; rewritten in, as TF 2.21's save drops
it); OUT_DIR/ragged_composite: one whose flat values are a SparseTensorSpec (which Polyfn refuses, saying why).
(Keras models, whose RNN loops are library functions too: make_keras_models.py.)
"""
import collections
import sys
import typing

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


class Tagged(tf.experimental.ExtensionType):
    """Fields in an unsorted order, Python flattening them in this order: the loaded function's inputs follow it."""
    __name__ = "polyfn_tests.Tagged"
    z: tf.Tensor
    rows: tf.RaggedTensor
    parts: typing.Mapping[str, tf.Tensor]
    mode: int
    inner: Masked
    pair: typing.Tuple[tf.Tensor, tf.Tensor]


class Shaped(tf.experimental.ExtensionType):
    """A static TensorShape field, which no Java value stands for."""
    __name__ = "polyfn_tests.Shaped"
    values: tf.Tensor
    shape: tf.TensorShape


class Counted(tf.experimental.ExtensionType):
    """An extension type with a static field, returned: a Java output cannot hold a Python value."""
    __name__ = "polyfn_tests.Counted"
    values: tf.Tensor
    n: int


def tagged_spec(mode, z):
    v = tf.TensorSpec([None], tf.float32)
    return Tagged.Spec(z=tf.TensorSpec(z, tf.float32), rows=tf.RaggedTensorSpec([None, None], tf.float32),
                       parts={"c": tf.TensorSpec([], tf.float32), "b": tf.TensorSpec([2], tf.float32)}, mode=mode,
                       inner=Masked.Spec(values=v, mask=tf.TensorSpec([None], tf.bool)),
                       pair=(tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.float32)))


class RaggedPairs(tf.Module):
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None, 2], tf.float32, ragged_rank=1,
                                                      flat_values_spec=tf.TensorSpec([None, 2], tf.float32))])
    def ragged_pairs(self, r):
        return {"y": tf.reduce_sum(r, axis=1) * 3.0}


def with_flat_values_spec(path, flat_values_spec):
    """Adds flat_values_spec to the saved RaggedTensorSpecs of shape [None, None, 2]: TF 2.21's save drops it
    (the signature is rebuilt from trace types), a spec whose flat values are composite keeps it."""
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    with open(path + "/saved_model.pb", "rb") as f:
        sm.ParseFromString(f.read())

    def visit(v):
        if v.HasField("type_spec_value"):
            state = v.type_spec_value.type_state.tuple_value.values
            if v.type_spec_value.type_spec_class_name == "RaggedTensorSpec" and len(state) == 4 \
                    and [d.size for d in state[0].tensor_shape_value.dim] == [-1, -1, 2]:
                state.add().CopyFrom(flat_values_spec)
        for child in list(v.tuple_value.values) + list(v.list_value.values) + list(v.dict_value.fields.values()):
            visit(child)

    for c in sm.meta_graphs[0].object_graph_def.concrete_functions.values():
        visit(c.canonicalized_input_signature)
    with open(path + "/saved_model.pb", "wb") as f:
        f.write(sm.SerializeToString())


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

    @tf.function
    def tagged(self, t, x):
        base = (t.z * t.parts["b"][0] + t.parts["c"] * t.parts["b"][1] + tf.reduce_sum(tf.where(t.inner.mask, t.inner.values, 0.0))
                + tf.cast(t.pair[0], tf.float32) * t.pair[1] + x)
        return {"y": base * 2.0 if t.mode == 1 else base - 1.0, "rows": tf.reduce_sum(t.rows, axis=1)}

    @tf.function(input_signature=[Masked.Spec(values=tf.TensorSpec([None], tf.float32),
                                              mask=tf.TensorSpec([None], tf.bool))._tf_extension_type_with_packed(True)])
    def packed(self, m):
        return {"y": tf.where(m.mask, m.values, 0.0)}

    @tf.function(input_signature=[Shaped.Spec(values=tf.TensorSpec([None], tf.float32), shape=tf.TensorShape([3]))])
    def shaped(self, s):
        return {"y": s.values * 2.0}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def make_masked(self, x):
        return Masked(values=x * 2.0, mask=x > 0.0)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def make_counted(self, x):
        return Counted(values=x, n=2)

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

    # Keys Python sorts by code point (U+FA0E before U+20000) and Java's String order the other
    # way (U+20000 is the surrogate pair D840 DC00): inputs and outputs must follow Python's order.
    @tf.function(input_signature=[{"\ufa0e": tf.TensorSpec([None], tf.float32),
                                   "\U00020000": tf.TensorSpec([None], tf.float32)}])
    def unicode_keys(self, d):
        return {"\ufa0e": d["\ufa0e"] * 2.0 - d["\U00020000"], "\U00020000": d["\U00020000"] + 100.0}


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
    # Python's save merges concrete functions whose tensors agree (static fields aside): z's shapes differ.
    nests.tagged.get_concrete_function(tagged_spec(1, [None]), tf.TensorSpec([], tf.float32))
    nests.tagged.get_concrete_function(tagged_spec(2, [2]), tf.TensorSpec([], tf.float32))
    tf.saved_model.save(nests, out + "/nests")
    r = tf.saved_model.load(out + "/nests")
    v = lambda *xs: tf.constant(xs, tf.float32)
    show("deep", r.deep({"a": {"p": v(1.0, 2.0), "q": v(0.5, 4.0)}, "lst": [v(3.0, -1.0), tf.constant(2.0)]},
                        (v(0.25, 0.5), [v(7.0, 8.0)]))["y"])
    show("keywords", r.keywords(v(1.0, 2.0), y=v(0.5, -4.0))["y"])
    u = r.unicode_keys({"\ufa0e": v(1.0, 2.0), "\U00020000": v(0.5, -4.0)})
    show("unicode_fa0e", u["\ufa0e"])
    show("unicode_20000", u["\U00020000"])
    show("pair", r.pair(Pair(v(1.0, 2.0), v(0.5, -4.0)))["y"])
    show("sparse", r.sparse(tf.sparse.SparseTensor(indices=[[0, 1], [1, 3], [2, 0], [2, 2]], values=[1.5, -2.0, 4.0, 0.25],
                                                   dense_shape=[3, 4]))["y"])
    show("ragged", r.ragged(tf.ragged.constant([[1.0, 2.0], [], [3.5]]))["y"])
    show("masked", r.masked(Masked(values=v(1.5, -2.0, 4.0), mask=tf.constant([True, False, True])))["y"])
    for mode in (1, 2):
        res = r.tagged(Tagged(z=v(1.0, 2.0), rows=tf.ragged.constant([[1.0, 2.0], [], [3.5]]), parts={"b": v(0.5, 3.0), "c": tf.constant(4.0)},
                              mode=mode, inner=Masked(values=v(1.5, -2.0), mask=tf.constant([True, False])),
                              pair=(tf.constant(3), tf.constant(0.25))), tf.constant(10.0))
        show("tagged_%d_y" % mode, res["y"])
        show("tagged_%d_rows" % mode, res["rows"])
    m = r.make_masked(v(1.0, -2.0, 0.5))
    show("make_masked_values", m.values)
    show("make_masked_mask", tf.cast(m.mask, tf.float32))
    # Python's loader matches no RaggedTensor with the rewritten spec: its numbers come from the model as saved.
    from tensorflow.python.saved_model import nested_structure_coder
    tf.saved_model.save(RaggedPairs(), out + "/ragged_pairs")
    tf.saved_model.save(RaggedPairs(), out + "/ragged_composite")
    r = tf.saved_model.load(out + "/ragged_pairs")
    with_flat_values_spec(out + "/ragged_pairs", nested_structure_coder.encode_structure(tf.TensorSpec([None, 2], tf.float32)))
    with_flat_values_spec(out + "/ragged_composite", nested_structure_coder.encode_structure(
        tf.SparseTensorSpec([None, 2], tf.float32)))
    show("ragged_pairs", r.ragged_pairs(tf.RaggedTensor.from_row_splits(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]]),
                                                                        tf.constant([0, 2, 2, 3], tf.int64)))["y"])


if __name__ == "__main__":
    main(sys.argv[1])
