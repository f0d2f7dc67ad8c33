"""Writes SavedModels whose functions use lookup tables, for Polyfn's import tests.

Usage: python make_table_models.py OUT_DIR

Each model is written by Python's own tf.saved_model.save, then loaded back by Python, which
prints "<name> <values...>" for the inputs the Java test passes: the test compares Polyfn's
results with these numbers, not with hard-coded ones.

OUT_DIR/static: a tf.lookup.StaticHashTable (KeyValueTensorInitializer, string -> int64).
OUT_DIR/vocab: a tf.lookup.StaticVocabularyTable from a TextFileInitializer (an asset file,
    assets/vocab.txt) with 2 OOV buckets.
OUT_DIR/mutable: a tf.lookup.experimental.MutableHashTable filled before saving (its contents
    live in the checkpoint).
OUT_DIR/dense: a tf.lookup.experimental.DenseHashTable filled before saving.
OUT_DIR/counter: a MutableHashTable that its function changes: add(words) returns the words'
    values, then sets each word's value to its length (so a second call sees the lengths).
OUT_DIR/keras: a Keras StringLookup (a table) and an Embedding (a variable), exported by Keras
    (model.export: a `serve` function); "keras" prints its flattened result.
OUT_DIR/keras_text: a Keras TextVectorization (adapted: its vocabulary is a table), exported.
"""
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

WORDS = ["cat", "dog", "bird", "fish", "zebra"]
STRING = tf.TensorSpec([None], tf.string)


class Static(tf.Module):
    def __init__(self):
        super().__init__()
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(["cat", "dog", "bird"]),
                                                tf.constant([3, 5, 7], tf.int64)), default_value=-1)

    @tf.function(input_signature=[STRING])
    def lookup(self, words):
        return {"ids": self.table.lookup(words)}


class Vocab(tf.Module):
    def __init__(self, path):
        super().__init__()
        self.table = tf.lookup.StaticVocabularyTable(
            tf.lookup.TextFileInitializer(path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                          tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), num_oov_buckets=2)

    @tf.function(input_signature=[STRING])
    def lookup(self, words):
        return {"ids": self.table.lookup(words)}


class Mutable(tf.Module):
    def __init__(self):
        super().__init__()
        self.table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
        self.table.insert(tf.constant(["cat", "fish"]), tf.constant([11, 13], tf.int64))

    @tf.function(input_signature=[STRING])
    def lookup(self, words):
        return {"ids": self.table.lookup(words)}


class Dense(tf.Module):
    def __init__(self):
        super().__init__()
        self.table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0,
                                                           deleted_key=-1)
        self.table.insert(tf.constant([3, 9], tf.int64), tf.constant([30, 90], tf.int64))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int64)])
    def lookup(self, keys):
        return {"ids": self.table.lookup(keys)}


class Counter(tf.Module):
    def __init__(self):
        super().__init__()
        self.table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
        self.table.insert(tf.constant(["cat"]), tf.constant([11], tf.int64))

    @tf.function(input_signature=[STRING])
    def add(self, words):
        old = self.table.lookup(words)
        with tf.control_dependencies([old]):
            self.table.insert(words, tf.cast(tf.strings.length(words), tf.int64))
        return {"ids": old}


def keras_model(out):
    import keras
    keras.utils.set_random_seed(7)
    model = keras.Sequential([keras.Input((2,), dtype="string"),
                              keras.layers.StringLookup(vocabulary=["cat", "dog", "bird"]),
                              keras.layers.Embedding(5, 3), keras.layers.Flatten()])
    model.export(out, format="tf_saved_model", verbose=False)
    restored = tf.saved_model.load(out)  # held: its variables live as long as it
    y = restored.serve(tf.constant([["dog", "fish"], ["bird", "cat"]]))
    print("keras", " ".join(repr(float(v)) for v in np.asarray(y).reshape(-1)))
    text = keras.layers.TextVectorization(max_tokens=20, output_sequence_length=4)
    text.adapt(["the cat sat", "the dog ran far", "a cat ran"])
    keras.Sequential([keras.Input((), dtype="string"), text]).export(out + "_text", format="tf_saved_model",
                                                                    verbose=False)
    restored = tf.saved_model.load(out + "_text")
    y = restored.serve(tf.constant(["the cat ran", "a dog flew"]))
    print("keras_text", " ".join(repr(float(v)) for v in np.asarray(y).reshape(-1)))


def show(name, t):
    print(name, " ".join(str(int(v)) for v in np.asarray(t).reshape(-1)))


def main(out):
    words = tf.constant(WORDS)
    tf.saved_model.save(Static(), out + "/static")
    show("static", tf.saved_model.load(out + "/static").lookup(words)["ids"])

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vocab.txt")
        with open(path, "w") as f:
            f.write("dog\ncat\nbird\n")
        tf.saved_model.save(Vocab(path), out + "/vocab")
    show("vocab", tf.saved_model.load(out + "/vocab").lookup(words)["ids"])

    tf.saved_model.save(Mutable(), out + "/mutable")
    show("mutable", tf.saved_model.load(out + "/mutable").lookup(words)["ids"])

    tf.saved_model.save(Dense(), out + "/dense")
    show("dense", tf.saved_model.load(out + "/dense").lookup(tf.constant([3, 4, 9], tf.int64))["ids"])

    tf.saved_model.save(Counter(), out + "/counter")
    show("counter", tf.saved_model.load(out + "/counter").add(words)["ids"])

    keras_model(out + "/keras")


if __name__ == "__main__":
    main(sys.argv[1])
