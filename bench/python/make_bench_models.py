"""Writes the real Keras 3 models of bench/run.sh's "Real models" block as SavedModels
(model.export, as tests/python/make_keras_models.py writes the test corpus), with their inputs and
Python's results for them, for ModelBench (Polyfn, SavedModelBundle) and bench_models.py (Python).

Usage: python make_bench_models.py OUT_DIR [IMAGE_SIZE]

Models (fixed seeds; the first dimension of every input is the batch, None in the SavedModel):
  mobilenet_v2  keras.applications.MobileNetV2(weights=None, classifier_activation=None: logits),
                IMAGE_SIZE x IMAGE_SIZE x 3 (default 128)
  lstm          LSTM(128) over 32 steps of 32 features, then Dense(10)
  transformer   an encoder block on 64 tokens of width 128: MultiHeadAttention (4 heads of 32),
                residual + LayerNormalization, FFN (512 relu, 128), residual + LayerNormalization

Writes OUT_DIR/<model>/ (the SavedModel), OUT_DIR/<row>.in and OUT_DIR/<row>.out (the input and
Python's result of the restored `serve` function, raw little-endian float32) and OUT_DIR/rows.txt,
one line per row:  <row> <model> <dims,comma,separated>
"""
import os
import sys

import numpy as np
import tensorflow as tf
import keras


def calibrated(model, x):
    """Sets every BatchNorm's moving statistics to those of batch x: with the initial statistics an
    untrained MobileNetV2's activations fade to ~1e-11, and comparing results would check nothing."""
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.momentum = 0.0
    model(x, training=True)
    return model


def transformer_block(tokens=64, width=128, heads=4, ffn=512):
    inp = keras.Input((tokens, width))
    att = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=width // heads)(inp, inp)
    h = keras.layers.LayerNormalization()(inp + att)
    ff = keras.layers.Dense(width)(keras.layers.Dense(ffn, activation="relu")(h))
    return keras.Model(inp, keras.layers.LayerNormalization()(h + ff))


def models(size):
    """(model name, model, [(row name, input)])."""
    rng = np.random.RandomState(0)
    f32 = lambda a: a.astype(np.float32)
    images = f32(rng.rand(32, size, size, 3))
    mobilenet = calibrated(keras.applications.MobileNetV2(input_shape=(size, size, 3), weights=None, classifier_activation=None), images)
    yield "mobilenet_v2", mobilenet, [("mobilenet_v2_b1", images[:1]), ("mobilenet_v2_b32", images)]
    lstm = keras.Sequential([keras.Input((32, 32)), keras.layers.LSTM(128), keras.layers.Dense(10)])
    yield "lstm", lstm, [("lstm_b1", f32(rng.uniform(-1, 1, (1, 32, 32))))]
    yield "transformer", transformer_block(), [("transformer_b1", f32(rng.uniform(-1, 1, (1, 64, 128))))]


def main(out, size):
    keras.utils.set_random_seed(7)
    os.makedirs(out, exist_ok=True)
    lines = []
    for name, model, rows in models(size):
        model.export(os.path.join(out, name), format="tf_saved_model", verbose=False)
        restored = tf.saved_model.load(os.path.join(out, name))  # held: its variables live as long as it
        for row, x in rows:
            y = np.asarray(restored.serve(tf.constant(x)), dtype=np.float32)
            x.astype("<f4").tofile(os.path.join(out, row + ".in"))
            y.astype("<f4").tofile(os.path.join(out, row + ".out"))
            lines.append("%s %s %s" % (row, name, ",".join(map(str, x.shape))))
    with open(os.path.join(out, "rows.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 128)
