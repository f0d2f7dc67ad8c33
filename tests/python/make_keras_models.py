"""Writes Keras 3 models as SavedModels (model.export), for Polyfn's real-model corpus test.

Usage: python make_keras_models.py OUT_DIR

Each model is built with a fixed seed, exported for serving (a `serve` function and a
`serving_default` signature), loaded back by Python's tf.saved_model.load, and called on a fixed
input. For each model the script prints two lines, which the Java test parses:

    input <model> <dtype> <dims,comma,separated> <values...>    (strings joined by '|')
    output <model> <values...>                                  (Python's result, flattened)

so the test feeds Polyfn the very input and compares numbers, not hard-coded results.
"""
import sys

import numpy as np
import tensorflow as tf
import keras


def calibrated(model, x):
    """Sets every BatchNorm's moving statistics to those of batch x: untrained, with the initial
    statistics, a deep network's activations fade to ~1e-11, which would compare nothing."""
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.momentum = 0.0
    model(x.astype(np.float32), training=True)
    return model


def models():
    rng = np.random.RandomState(0)
    yield "mlp", keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                                   keras.layers.Dense(3, activation="softmax")]), rng.rand(2, 4)
    yield "cnn", keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(4, 3), keras.layers.BatchNormalization(),
                                   keras.layers.ReLU(), keras.layers.Dropout(0.5), keras.layers.Flatten(),
                                   keras.layers.Dense(3)]), rng.rand(2, 8, 8, 1)
    yield "mobilenet_v2", calibrated(keras.applications.MobileNetV2(
        input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=5, classifier_activation=None), rng.rand(8, 32, 32, 3)), \
        rng.rand(2, 32, 32, 3)
    seq = np.linspace(-1.0, 1.0, 2 * 5 * 3).reshape(2, 5, 3)
    yield "lstm", keras.Sequential([keras.Input((5, 3)), keras.layers.LSTM(4), keras.layers.Dense(2)]), seq
    yield "gru", keras.Sequential([keras.Input((5, 3)), keras.layers.GRU(4), keras.layers.Dense(2)]), seq
    yield "bilstm", keras.Sequential([keras.Input((5, 3)), keras.layers.Bidirectional(keras.layers.LSTM(4)),
                                      keras.layers.Dense(2)]), seq
    inp = keras.Input((6, 8))
    att = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)(inp, inp)
    h = keras.layers.LayerNormalization()(inp + att)
    ff = keras.layers.Dense(8)(keras.layers.Dense(16, activation="relu")(h))
    yield "transformer", keras.Model(inp, keras.layers.LayerNormalization()(h + ff)), rng.rand(2, 6, 8)
    text = keras.layers.TextVectorization(max_tokens=20, output_sequence_length=4)
    text.adapt(["the cat sat", "the dog ran far", "a cat ran"])
    yield "text", keras.Sequential([keras.Input((), dtype="string"), text, keras.layers.Embedding(20, 3),
                                    keras.layers.GlobalAveragePooling1D()]), np.array(["the cat ran", "a dog"])
    yield "string_lookup", keras.Sequential([keras.Input((2,), dtype="string"),
                                             keras.layers.StringLookup(vocabulary=["cat", "dog", "bird"]),
                                             keras.layers.Embedding(5, 3), keras.layers.Flatten()]), \
        np.array([["dog", "fish"], ["bird", "cat"]])
    yield "integer_lookup", keras.Sequential([keras.Input((2,), dtype="int64"),
                                              keras.layers.IntegerLookup(vocabulary=[12, 36, 7]),
                                              keras.layers.Embedding(5, 3), keras.layers.Flatten()]), \
        np.array([[36, 5], [7, 12]], dtype=np.int64)


def main(out):
    keras.utils.set_random_seed(7)
    for name, model, x in models():
        x = x if x.dtype.kind in "Ui" else x.astype(np.float32)
        model.export(out + "/" + name, format="tf_saved_model", verbose=False)
        restored = tf.saved_model.load(out + "/" + name)  # held: its variables live as long as it
        y = np.asarray(restored.serve(tf.constant(x)))
        values = "|".join(x.reshape(-1)) if x.dtype.kind == "U" else " ".join(
            str(int(v)) if x.dtype.kind == "i" else repr(float(v)) for v in x.reshape(-1))
        dtype = {"U": "string", "i": "int64"}.get(x.dtype.kind, "float32")
        print("input", name, dtype, ",".join(map(str, x.shape)), values)
        print("output", name, " ".join(repr(float(v)) for v in y.reshape(-1)))


if __name__ == "__main__":
    main(sys.argv[1])
