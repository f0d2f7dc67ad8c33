"""Writes SavedModels at the edges of what Polyfn's Function.load reads from Python, for its import tests.

Usage: python make_load_edge_models.py OUT_DIR

Each model is written by Python's own tf.saved_model.save (some then edited as older TensorFlow
versions wrote them), then loaded back by Python, which prints "<function>:<output> <values...>"
for the input X: the test compares Polyfn's results with these numbers.

OUT_DIR/outputs: f returns {"extras": (x+1, x+2), "logits": x*3, "state": None} (a tuple and a None
in the dict: Python's FunctionDef returns extras[0], extras[1], logits); g returns
(x+1, None, {"b": x*2, "a": x-1}) (a tuple holding a None and a dict).
OUT_DIR/self_method: f(x) returns {"y": 2x+1}, its saved argspec edited to ["this", "x"] with
is_method set; OUT_DIR/self_named: edited to ["self", "x"] with is_method unset. Python's loader
drops the first argument of both (function_deserialization.py: is_method or a first argument
named self), as older SavedModels need.
OUT_DIR/private_tables: lookup(words) returns {"a": table a's values, "b": table b's}, two
StaticHashTables whose create functions are edited to make private tables (shared_name "", as
TensorFlow 1's tables were; both nodes are named hash_table): Python's loader keeps them two.
OUT_DIR/order: three functions of x, any (2x for a vector of any length), three (3x for 3 values),
four (4x for 3 values), their saved lists of concrete functions edited: any lists [any's, three's]
(a general one before a more specific one), three lists [three's, four's] (two of one signature).
Python's loader calls the first that accepts the call: 2x and 3x for 3 values.
"""
import shutil
import sys

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

X = np.array([1.0, -2.0, 3.0], dtype=np.float32)


class Outputs(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def f(self, x):
        return {"extras": (x + 1.0, x + 2.0), "logits": x * 3.0, "state": None}

    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def g(self, x):
        return (x + 1.0, None, {"b": x * 2.0, "a": x - 1.0})


class Plain(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def f(self, x):
        return {"y": x * 2.0 + 1.0}


class TwoTables(tf.Module):
    def __init__(self):
        super().__init__()
        self.a = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant(["cat", "dog"]), tf.constant([1, 2], tf.int64)), -1)
        self.b = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant(["cat", "bird"]), tf.constant([10, 30], tf.int64)), -5)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def lookup(self, words):
        return {"a": self.a.lookup(words), "b": self.b.lookup(words)}


WORDS = ["cat", "dog", "bird", "fish"]


class Order(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def any(self, x):
        return {"y": x * 2.0}

    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def three(self, x):
        return {"y": x * 3.0}

    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def four(self, x):
        return {"y": x * 4.0}


def reorder(path):
    pb = path + "/saved_model.pb"
    model = saved_model_pb2.SavedModel()
    with open(pb, "rb") as f:
        model.ParseFromString(f.read())
    graph = model.meta_graphs[0].object_graph_def
    nodes = {c.local_name: graph.nodes[c.node_id] for c in graph.nodes[0].children}
    concrete = {name: list(nodes[name].function.concrete_functions) for name in ["any", "three", "four"]}
    for name, listed in [("any", concrete["any"] + concrete["three"]), ("three", concrete["three"] + concrete["four"])]:
        del nodes[name].function.concrete_functions[:]
        nodes[name].function.concrete_functions.extend(listed)
    with open(pb, "wb") as f:
        f.write(model.SerializeToString())


def show(name, t):
    print(name + " " + " ".join(repr(float(v)) for v in np.ravel(t.numpy())))


def make_private(path):
    pb = path + "/saved_model.pb"
    model = saved_model_pb2.SavedModel()
    with open(pb, "rb") as f:
        model.ParseFromString(f.read())
    names = []
    for function in model.meta_graphs[0].graph_def.library.function:
        for node in function.node_def:
            if node.op == "HashTableV2":
                node.attr["shared_name"].s = b""
                node.attr["use_node_name_sharing"].b = False
                names.append(node.name)
    assert len(names) == 2 and names[0] == names[1], names
    with open(pb, "wb") as f:
        f.write(model.SerializeToString())


def edit_argspec(path, args, is_method):
    pb = path + "/saved_model.pb"
    model = saved_model_pb2.SavedModel()
    with open(pb, "rb") as f:
        model.ParseFromString(f.read())
    graph = model.meta_graphs[0].object_graph_def
    for child in graph.nodes[0].children:
        node = graph.nodes[child.node_id]
        if child.local_name == "f" and node.HasField("function"):
            spec = node.function.function_spec
            spec.is_method = is_method
            for pair in spec.fullargspec.named_tuple_value.values:
                if pair.key == "args":
                    del pair.value.list_value.values[:]
                    for a in args:
                        pair.value.list_value.values.add().string_value = a
    with open(pb, "wb") as f:
        f.write(model.SerializeToString())


def main(out):
    tf.saved_model.save(Outputs(), out + "/outputs")
    r = tf.saved_model.load(out + "/outputs")
    d = r.f(tf.constant(X))
    assert d["state"] is None
    show("f:extras[0]", d["extras"][0])
    show("f:extras[1]", d["extras"][1])
    show("f:logits", d["logits"])
    t = r.g(tf.constant(X))
    assert t[1] is None
    show("g:output_0", t[0])
    show("g:output_1", t[2]["a"])
    show("g:output_2", t[2]["b"])

    tf.saved_model.save(Plain(), out + "/plain")
    for name, args, is_method in [("self_method", ["this", "x"], True), ("self_named", ["self", "x"], False)]:
        shutil.copytree(out + "/plain", out + "/" + name)
        edit_argspec(out + "/" + name, args, is_method)
        show(name + ":y", tf.saved_model.load(out + "/" + name).f(x=tf.constant(X))["y"])

    tf.saved_model.save(TwoTables(), out + "/private_tables")
    make_private(out + "/private_tables")
    d = tf.saved_model.load(out + "/private_tables").lookup(tf.constant(WORDS))
    show("private_tables:a", d["a"])
    show("private_tables:b", d["b"])

    tf.saved_model.save(Order(), out + "/order")
    reorder(out + "/order")
    r = tf.saved_model.load(out + "/order")
    show("order_any:y", r.any(tf.constant(X))["y"])
    show("order_three:y", r.three(tf.constant(X))["y"])


if __name__ == "__main__":
    main(sys.argv[1])
