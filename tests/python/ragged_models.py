"""Ragged tensors between Python and Polyfn, for RaggedTensorsTest.

Usage: python ragged_models.py write OUT_DIR
  Writes OUT_DIR/ragged, a tf.Module whose tf.functions take tf.RaggedTensor arguments: `rows`
  (ragged rank 1, float values, int64 row splits, and a dense scale), `deep` (ragged rank 2, int32
  row splits), `words` (string values), `pairs` (flat values of shape [N, 2]), `shifted` (no input
  signature: traced for 2 and 3 rows) and `doubled` (returns a RaggedTensor and a SparseTensor); OUT_DIR/keras, a
  Keras 3 model with a ragged Input served by a tf.function `serve`. Then prints
  "<name> <values...>": what the restored functions return for the inputs the test passes.
python ragged_models.py call SAVED_DIR NAME
  Loads a SavedModel Polyfn wrote and calls its function NAME (`rows` or `words`) with
  tf.RaggedTensor arguments (m.rows(tf.ragged.constant(...), scale)), printing the outputs as
  above, then "concrete <n>": how many concrete functions the restored function lists.
"""
import sys

import keras
import tensorflow as tf

F32 = tf.float32


class Ragged(tf.Module):
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], F32, 1, tf.int64), tf.TensorSpec([], F32)])
    def rows(self, r, scale):
        return {"sums": tf.reduce_sum(r, axis=1) * scale, "lengths": tf.cast(r.row_lengths(), F32)}

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None, None], F32, 2, tf.int32)])
    def deep(self, r):
        return {"y": tf.reduce_sum(tf.reduce_sum(r, axis=2), axis=1) + tf.cast(tf.size(r.flat_values), F32)}

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.string, 1, tf.int64)])
    def words(self, r):
        return {"chars": tf.cast(tf.reduce_sum(tf.strings.length(r), axis=1), F32)}

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None, 2], F32, 1, tf.int64)])
    def pairs(self, r):
        return {"y": tf.reduce_sum(r, axis=1) * tf.constant([1.0, -1.0])}

    @tf.function
    def shifted(self, r):
        return {"y": tf.reduce_max(r, axis=1) + float(r.shape[0])}

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], F32, 1, tf.int64)])
    def doubled(self, r):
        return {"r": r * 2.0, "n": tf.cast(r.nrows(), F32), "s": r.to_sparse()}


class RowMean(keras.layers.Layer):
    """A Keras layer taking a ragged batch: each row's mean, as a [rows, 1] feature."""

    def call(self, x):
        return tf.expand_dims(tf.reduce_mean(x, axis=1), -1)


class Served(tf.Module):
    """A Keras 3 model with a ragged Input (keras.Input(ragged=True)), served by a tf.function."""

    def __init__(self):
        super().__init__()
        inp = keras.Input(shape=(None,), ragged=True, dtype="float32")
        self.model = keras.Model(inp, keras.layers.Dense(2)(RowMean()(inp)))

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], F32, 1, tf.int64)])
    def serve(self, r):
        return {"y": self.model(r)}


def show(name, t):
    print(name, " ".join(repr(float(v)) for v in t.numpy().reshape(-1)))


def write(out):
    m = Ragged()
    m.shifted.get_concrete_function(tf.RaggedTensorSpec([2, None], F32, 1, tf.int64))
    m.shifted.get_concrete_function(tf.RaggedTensorSpec([3, None], F32, 1, tf.int64))
    tf.saved_model.save(m, out + "/ragged")
    r = tf.saved_model.load(out + "/ragged")
    rows = r.rows(tf.ragged.constant([[1.5, 2.0], [], [3.0, -4.0, 0.5]]), tf.constant(2.0))
    show("rows_sums", rows["sums"])
    show("rows_lengths", rows["lengths"])
    show("deep", r.deep(tf.ragged.constant([[[1.0, 2.0], [3.0]], [[]], [[4.0], [5.0, 6.0], [7.0]]],
                                           row_splits_dtype=tf.int32))["y"])
    show("words", r.words(tf.ragged.constant([["ab", "cde"], ["f"], []]))["chars"])
    show("pairs", r.pairs(tf.ragged.constant([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]], ragged_rank=1))["y"])
    show("shifted2", r.shifted(tf.ragged.constant([[1.0, 7.0], [2.0]]))["y"])
    show("shifted3", r.shifted(tf.ragged.constant([[1.0], [2.0, -3.0], [0.5]]))["y"])
    d = r.doubled(tf.ragged.constant([[1.0, 2.0], [], [3.0]]))
    show("doubled_values", d["r"].flat_values)
    show("doubled_splits", d["r"].row_splits)
    show("doubled_sparse", d["s"].values)
    show("doubled_sparse_indices", d["s"].indices)
    tf.saved_model.save(Served(), out + "/keras")
    k = tf.saved_model.load(out + "/keras")  # held: its functions use the variables it owns
    show("keras", k.serve(tf.ragged.constant([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]]))["y"])


def call(saved, name):
    m = tf.saved_model.load(saved)
    if name == "rows":
        out = m.rows(tf.ragged.constant([[1.5, 2.0], [], [3.0, -4.0, 0.5]]), tf.constant(2.0))
        show("rows64_sums", out["sums"])
        show("rows64_count", out["count"])
        out = m.rows(tf.ragged.constant([[1.0], [2.0, 3.0]], row_splits_dtype=tf.int32), tf.constant(-1.0))
        show("rows32_sums", out["sums"])
        show("rows32_count", out["count"])
    else:
        out = m.words(tf.ragged.constant([[["ab", "cde"], ["f"]], [[]], [["ghij"]]]))
        show("words_lengths", out["lengths"])
        show("words_rows", out["rows"])
    print("concrete", len(getattr(m, name).concrete_functions))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        call(sys.argv[2], sys.argv[3])
