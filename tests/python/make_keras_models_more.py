"""Writes more SavedModels, models Polyfn was not written for, for its second real-model corpus test.

Usage: python make_keras_models_more.py OUT_DIR [MODEL...]   (only the models named, if any)

Keras 3 models exported for serving (model.export: a `serve` function and a `serving_default`
signature) and tf.Modules saved by tf.saved_model.save (a function `f` and a `serving_default`
signature), each built with a fixed seed, loaded back by Python's tf.saved_model.load and called on
a fixed input. For each model the script prints, and the Java test (KerasModelCorpusMoreTest)
parses:

    function <model> <function name> <signature name>
    stateful <model>                 (its calls assign its variables: a second call returns other values)
    input <model> <position>[/<key>] <signature key> <dtype> <dims> <values...>
    output <model> <output name> <dtype> <dims> <values...>

<position> is the argument's place in the function's parameters (0, 1...) and <key> a key of a
dict argument; <signature key> the input's key in the signature (serving_default but for a Keras
ExportArchive's second endpoint); <output name> both Polyfn's name of the output and the
signature's key. <dims> are comma-separated ("-" for a scalar); values
are floats (repr), ints, bools as 0/1, strings as "s" + the hex of their UTF-8 bytes. So the test
feeds Polyfn and SavedModelBundle the very input and compares with Python's numbers.

What failed in Polyfn before, while SavedModelBundle and Python ran it (fixed, and in the corpus):
- narrow_variables, quantized_int8: Function.load refused variables of int8, int16, uint32 and complex64
  ("'i8/.ATTRIBUTES/VARIABLE_VALUE' is DT_INT8, which TensorFlow Java has no tensor class for"): it made each
  variable from a TensorFlow Java tensor of the checkpoint's value. It now restores and assigns the value
  without one (a Variable whose type() is TType).
- unknown_shape_variable: a variable declared with shape=None was restored with its value's shape, so the
  call matched no saved signature ("VariableSpec(FLOAT, [2, 2]) does not match VariableSpec(FLOAT,
  <unknown>)"). A restored variable now keeps its declared shape.
- sharded_checkpoint: a checkpoint written with a MaxShardSizePolicy holds large variables in slices, which
  Function.load refused ("'w/.ATTRIBUTES/VARIABLE_VALUE' is saved in slices (a partitioned variable)"). Each
  slice's entry is now checked, and TensorFlow's RestoreV2 reads the whole tensor.

What neither SavedModelBundle nor Polyfn runs (the test checks that both refuse, saying why):
- int16_output: an int16 output, which TensorFlow Java has no tensor class for.
- py_function: a tf.py_function, whose Python body no SavedModel holds (no kernel for EagerPyFunc).

Where they disagree with each other: unknown_shape_variable first returned tf.reduce_sum of the variable
read (rank unknown): Python 2.21 and Polyfn returned the sums of its columns ([4, 6]), SavedModelBundle
(TensorFlow 2.18, a session) the sum of all (10); the model now returns the reshaped value instead.
"""
import sys

import numpy as np
import tensorflow as tf
import keras

L = keras.layers


def calibrated(model, x):
    """Sets every BatchNorm's moving statistics to those of batch x (as make_keras_models.py does):
    with the initial statistics a deep network's activations fade to nothing that would compare."""
    for layer in model._flatten_layers():
        if isinstance(layer, L.BatchNormalization):
            layer.momentum = 0.0
    model(x.astype(np.float32), training=True)
    return model


def seq(*layers, shape, dtype="float32"):
    return keras.Sequential([keras.Input(shape, dtype=dtype), *layers])


def keras_models(rng):
    """(name, model, [positional arguments]): exported with model.export."""
    f = np.float32
    yield "conv1d", seq(L.Conv1D(4, 3, activation="relu"), L.MaxPooling1D(2), L.Conv1D(3, 2),
                        L.GlobalMaxPooling1D(), L.Dense(2), shape=(10, 3)), [rng.rand(2, 10, 3).astype(f)]
    yield "separable", seq(L.SeparableConv2D(4, 3, padding="same"), L.DepthwiseConv2D(3, depth_multiplier=2),
                           L.GlobalAveragePooling2D(), shape=(8, 8, 2)), [rng.rand(2, 8, 8, 2).astype(f)]
    yield "transpose", seq(L.Conv2DTranspose(3, 3, strides=2), L.UpSampling2D(2), L.Conv2D(2, 3),
                           L.UpSampling2D(2, interpolation="bilinear"), L.Flatten(), shape=(3, 3, 2)), \
        [rng.rand(2, 3, 3, 2).astype(f)]
    yield "pooling", seq(L.ZeroPadding2D(((1, 2), (0, 1))), L.AveragePooling2D(2), L.Cropping2D(((1, 0), (0, 1))),
                         L.MaxPooling2D(1), L.Flatten(), shape=(6, 6, 2)), [rng.rand(2, 6, 6, 2).astype(f)]
    x = np.linspace(-1.0, 1.0, 2 * 5 * 3).reshape(2, 5, 3).astype(f)
    yield "simple_rnn", seq(L.SimpleRNN(4), L.Dense(2), shape=(5, 3)), [x]
    yield "gru_reset_before", seq(L.GRU(4, reset_after=False), shape=(5, 3)), [x]
    yield "stacked_lstm", seq(L.LSTM(4, return_sequences=True), L.LSTM(3, return_sequences=True), shape=(5, 3)), [x]
    masked = x.copy()
    masked[0, 3:] = 0.0  # the first sequence's last two steps are masked
    yield "masking_lstm", seq(L.Masking(0.0), L.LSTM(4), shape=(5, 3)), [masked]
    yield "embedding_mask_gru", seq(L.Embedding(10, 3, mask_zero=True), L.GRU(4), shape=(5,), dtype="int32"), \
        [np.array([[3, 1, 4, 0, 0], [5, 9, 2, 6, 5]], dtype=np.int32)]
    yield "conv_lstm", seq(L.ConvLSTM1D(3, 2, return_sequences=False), L.Flatten(), shape=(4, 6, 2)), \
        [rng.rand(2, 4, 6, 2).astype(f)]
    inp = keras.Input((4, 6))
    q = L.Dense(6)(inp)
    a = L.Attention(use_scale=True)([q, inp])
    b = L.AdditiveAttention()([q, inp, inp])
    yield "attention", keras.Model(inp, L.Concatenate()([a, b])), [rng.rand(2, 4, 6).astype(f)]
    yield "group_norm", seq(L.Conv2D(4, 1), L.GroupNormalization(groups=2), L.Flatten(), L.UnitNormalization(),
                            shape=(3, 3, 2)), [rng.rand(2, 3, 3, 2).astype(f)]
    norm = L.Normalization()
    norm.adapt(rng.rand(20, 3).astype(f) * 5.0 + 1.0)
    yield "normalization", seq(norm, shape=(3,)), [rng.rand(2, 3).astype(f) * 5.0]
    yield "discretization", seq(L.Discretization(bin_boundaries=[0.0, 0.5, 1.0]), shape=(3,)), \
        [np.array([[-1.0, 0.2, 0.7], [0.5, 1.5, 0.0]], dtype=f)]
    yield "hashing", seq(L.Hashing(num_bins=16), shape=(2,), dtype="string"), \
        [np.array([["cat", "dog"], ["", "größe"]])]
    yield "hashing_salted", seq(L.Hashing(num_bins=16, salt=[133, 137]), shape=(2,), dtype="int64"), \
        [np.array([[7, 12], [-3, 1 << 40]], dtype=np.int64)]
    yield "category_encoding", seq(L.CategoryEncoding(num_tokens=6, output_mode="count"), shape=(4,), dtype="int32"), \
        [np.array([[0, 5, 5, 2], [1, 1, 1, 3]], dtype=np.int32)]
    yield "image_preprocessing", seq(L.Rescaling(1.0 / 255, offset=-0.5), L.Resizing(6, 8), L.CenterCrop(4, 5),
                                     shape=(9, 7, 3)), [(rng.rand(2, 9, 7, 3) * 255).astype(f)]
    a = keras.Input((3,), name="a")
    b = keras.Input((2,), name="b")
    h = L.Dense(4, activation="tanh")(L.Concatenate()([a, b]))
    two = keras.Model({"a": a, "b": b}, {"score": L.Dense(1)(h), "probs": L.Dense(3, activation="softmax")(h)})
    yield "two_inputs_two_outputs", two, [{"a": rng.rand(2, 3).astype(f), "b": rng.rand(2, 2).astype(f)}]
    yield "list_outputs", keras.Model(a, [L.Dense(2)(a), L.Dense(1, activation="sigmoid")(a)]), \
        [rng.rand(2, 3).astype(f)]
    quantized = seq(L.Dense(6, activation="relu"), L.Dense(3), shape=(4,))
    quantized.quantize("int8")  # int8 kernels (variables TensorFlow Java has no tensor class for) and float scales
    yield "quantized_int8", quantized, [rng.rand(2, 4).astype(f)]
    yield "mixed_precision", seq(L.Dense(5, activation="relu", dtype="mixed_float16"), L.LayerNormalization(dtype="mixed_float16"),
                                 L.Dense(2, dtype="float32"), shape=(3,)), [rng.rand(2, 3).astype(f)]
    yield "time_distributed", seq(L.TimeDistributed(L.Dense(3)), L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="sum"),
                                  shape=(4, 2)), [rng.rand(2, 4, 2).astype(f)]
    tfidf = L.TextVectorization(max_tokens=12, output_mode="tf_idf", ngrams=2)
    tfidf.adapt(["the cat sat", "the dog ran far", "a cat ran"])
    yield "text_tf_idf", seq(tfidf, shape=(), dtype="string"), [np.array(["the cat ran", "a dog sat sat"])]
    yield "string_one_hot", seq(L.StringLookup(vocabulary=["a", "b", "c"], output_mode="one_hot"), shape=(), dtype="string"), \
        [np.array(["b", "z", "a"])]
    # Two of the big applications (ResNet50's 25M parameters would cost the test more time than both).
    yield "efficientnet_b0", calibrated(keras.applications.EfficientNetB0(
        input_shape=(32, 32, 3), weights=None, classes=4, classifier_activation=None), rng.rand(4, 32, 32, 3) * 255), \
        [(rng.rand(2, 32, 32, 3) * 255).astype(f)]
    yield "densenet121", calibrated(keras.applications.DenseNet121(
        input_shape=(32, 32, 3), weights=None, classes=4, classifier_activation=None), rng.rand(4, 32, 32, 3)), \
        [rng.rand(2, 32, 32, 3).astype(f)]


def spec(shape, dtype, name):
    return tf.TensorSpec(shape, dtype, name=name)


class TensorArrayLoop(tf.Module):
    @tf.function(input_signature=[spec([None], tf.float32, "x"), spec([], tf.int32, "n")])
    def f(self, x, n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        acc = x
        for i in tf.range(n):
            acc = acc * 0.5 + tf.cast(i, tf.float32)
            ta = ta.write(i, acc)
        return {"steps": ta.stack(), "last": acc}


class SwitchEinsum(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.reshape(tf.range(12, dtype=tf.float32) / 10.0, [3, 4]))

    @tf.function(input_signature=[spec([None, 3], tf.float32, "x"), spec([], tf.int32, "k")])
    def f(self, x, k):
        y = tf.switch_case(k, [lambda: tf.einsum("bi,ij->bj", x, self.w),
                               lambda: tf.einsum("bi,bi->b", x, x)[:, None] * tf.ones([1, 4]),
                               lambda: tf.einsum("ij->ji", self.w)[:1] + tf.reduce_sum(x)])
        return {"y": y, "outer": tf.einsum("bi,bj->bij", x, x)}


class Sorting(tf.Module):
    @tf.function(input_signature=[spec([None, 5], tf.float32, "x")])
    def f(self, x):
        top = tf.math.top_k(x, k=2)
        return {"sorted": tf.sort(x, direction="DESCENDING"), "order": tf.argsort(x, stable=True),
                "top_values": top.values, "top_indices": top.indices, "unique_count": tf.size(tf.unique(tf.reshape(
                    tf.round(x * 2.0), [-1])).y)}


class Segments(tf.Module):
    @tf.function(input_signature=[spec([None, 2], tf.float32, "data"), spec([None], tf.int32, "ids")])
    def f(self, data, ids):
        return {"sum": tf.math.unsorted_segment_sum(data, ids, 4), "max": tf.math.unsorted_segment_max(data, ids, 4),
                "cumsum": tf.math.cumsum(data, axis=0, reverse=True),
                "gathered": tf.gather(data, tf.argsort(ids)), "one_hot": tf.one_hot(ids, 4),
                "scattered": tf.tensor_scatter_nd_add(tf.zeros([4, 2]), ids[:, None], data)}


class Strings(tf.Module):
    @tf.function(input_signature=[spec([None], tf.string, "s")])
    def f(self, s):
        words = tf.strings.split(s)
        return {"length": tf.strings.length(s), "chars": tf.strings.length(s, unit="UTF8_CHAR"),
                "prefix": tf.strings.substr(s, 0, 3), "replaced": tf.strings.regex_replace(s, "[aeiou]+", "_"),
                "upper": tf.strings.upper(s), "joined": tf.strings.reduce_join(s, separator="+"),
                "word_count": words.row_lengths(), "number": tf.strings.to_number(
                    tf.strings.join(["0", tf.strings.regex_replace(s, "[^0-9]", "")]), tf.float32),
                "formatted": tf.strings.join([s, tf.strings.as_string(tf.strings.length(s))], separator="#"),
                "matches": tf.strings.regex_full_match(s, ".*a.*"), "bucket": tf.strings.to_hash_bucket_fast(s, 10)}


class Spectral(tf.Module):
    @tf.function(input_signature=[spec([None, 8], tf.float32, "x")])
    def f(self, x):
        z = tf.signal.rfft(x)  # complex64: TensorFlow Java has no complex type, so magnitudes and angles
        back = tf.signal.irfft(z * tf.cast(tf.range(5) < 3, tf.complex64))
        return {"magnitude": tf.abs(z), "angle": tf.math.angle(z), "low_pass": back,
                "frames": tf.signal.frame(x, 4, 2)}


class LinearAlgebra(tf.Module):
    @tf.function(input_signature=[spec([None, 3, 3], tf.float64, "a"), spec([None, 3, 1], tf.float64, "b")])
    def f(self, a, b):
        spd = tf.matmul(a, a, transpose_b=True) + 3.0 * tf.eye(3, dtype=tf.float64)
        return {"inv": tf.linalg.inv(spd), "det": tf.linalg.det(spd), "solve": tf.linalg.solve(spd, b),
                "cholesky": tf.linalg.cholesky(spd), "eigenvalues": tf.linalg.eigvalsh(spd),
                "trace": tf.linalg.trace(a)}


class StatelessRandom(tf.Module):
    @tf.function(input_signature=[spec([None, 3], tf.float32, "x")])
    def f(self, x):
        seed = tf.constant([7, 42], tf.int64)
        noise = tf.random.stateless_normal(tf.shape(x), seed=seed)
        return {"noisy": x + noise, "uniform": tf.random.stateless_uniform([4], seed=seed + 1, minval=0, maxval=100,
                                                                            dtype=tf.int32),
                "dropped": tf.nn.experimental.stateless_dropout(x, 0.5, seed=seed)}


class IntsAndBools(tf.Module):
    @tf.function(input_signature=[spec([None], tf.int32, "i"), spec([None], tf.int64, "j"),
                                  spec([None], tf.bool, "flag"), spec([None], tf.uint8, "u")])
    def f(self, i, j, flag, u):
        return {"bits": tf.bitwise.bitwise_xor(i, tf.bitwise.left_shift(i, 2)), "div": tf.math.floordiv(j, 3),
                "mod": tf.math.floormod(j, 3), "where": tf.where(flag, i, -i), "not": tf.logical_not(flag),
                "any": tf.reduce_any(flag), "positive": tf.greater(i, 0), "u_sum": u + tf.constant(200, tf.uint8),
                "cast": tf.cast(j, tf.int32) * i, "count": tf.math.count_nonzero(flag, dtype=tf.int64),
                "indices": tf.where(flag)}


class Int16Output(tf.Module):
    """Returns an int16, a dtype TensorFlow Java has no tensor type for."""

    @tf.function(input_signature=[spec([None], tf.int32, "i")])
    def f(self, i):
        return {"i16": tf.cast(i, tf.int16) * 3, "i32": i * 3}


class TupleOutputs(tf.Module):
    """Returns a tuple (output_0, output_1, output_2 for Polyfn and the signature)."""

    @tf.function(input_signature=[spec([None, 2], tf.float32, "x")])
    def f(self, x):
        return tf.reduce_sum(x, axis=1), tf.cast(tf.argmax(x, axis=1), tf.int32), x > 0.5


class Stateful(tf.Module):
    """Adds x to a variable at each call: one call after a fresh load gives 2 * (v + x)."""

    def __init__(self):
        super().__init__()
        self.v = tf.Variable([1.0, 2.0])
        self.calls = tf.Variable(0, dtype=tf.int64)

    @tf.function(input_signature=[spec([2], tf.float32, "x")])
    def f(self, x):
        self.calls.assign_add(1)
        self.v.assign_add(x)
        return {"y": self.v * 2.0, "calls": self.calls.read_value()}


class NarrowVariables(tf.Module):
    """Variables of dtypes TensorFlow Java has no tensor class for: int8, int16, uint32, complex64."""

    def __init__(self):
        super().__init__()
        self.i8 = tf.Variable([1, -2, 3], dtype=tf.int8)
        self.i16 = tf.Variable([300, -400, 500], dtype=tf.int16)
        self.u32 = tf.Variable([7, 8, 4000000000], dtype=tf.uint32)
        self.z = tf.Variable([1 + 2j, 3 - 1j, 0.5j], dtype=tf.complex64)

    @tf.function(input_signature=[spec([3], tf.float32, "x")])
    def f(self, x):
        self.i8.assign_add(tf.constant([1, 1, 1], tf.int8))
        return {"y": x * (tf.cast(self.i8, tf.float32) + tf.cast(self.i16, tf.float32)
                          + tf.math.real(self.z) * tf.math.imag(self.z)), "u": tf.cast(self.u32, tf.int64)}


class HalfAndStringVariables(tf.Module):
    """float16, bfloat16 and string variables, held in a list and a dict attribute."""

    def __init__(self):
        super().__init__()
        self.halves = [tf.Variable([0.5, 1.5, -2.0], dtype=tf.float16), tf.Variable([1.0, 2.0, 3.0], dtype=tf.bfloat16)]
        self.named = {"words": tf.Variable(["alpha", "", "gamma"])}

    @tf.function(input_signature=[spec([3], tf.float32, "x")])
    def f(self, x):
        return {"y": x * tf.cast(self.halves[1], tf.float32), "half": self.halves[0] * tf.cast(x, tf.float16),
                "words": tf.strings.join([self.named["words"], tf.strings.as_string(x, precision=1)], "=")}


class UnknownShapeVariable(tf.Module):
    """A variable of unknown shape (tf.TensorShape(None)), assigned another shape by the call."""

    def __init__(self):
        super().__init__()
        self.free = tf.Variable([[1.0, 2.0], [3.0, 4.0]], shape=tf.TensorShape(None))

    @tf.function(input_signature=[spec([None], tf.float32, "x")])
    def f(self, x):
        before = tf.reshape(self.free, [-1])
        self.free.assign(x)
        return {"before": before, "now": self.free.read_value() * 2.0}


class Captured(tf.Module):
    """A function capturing eager tensors (saved as constants of the object graph), a float and a string one."""

    def __init__(self):
        super().__init__()
        self.table = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4) / 7.0)
        self.names = tf.constant(["zero", "one", "two"])

    @tf.function(input_signature=[spec([None], tf.int32, "i")])
    def f(self, i):
        return {"rows": tf.gather(self.table, i), "names": tf.gather(self.names, i)}


class ReadsAsset(tf.Module):
    """A function reading a file of the SavedModel's assets (a tf.saved_model.Asset it captures)."""

    def __init__(self, path):
        super().__init__()
        self.asset = tf.saved_model.Asset(path)

    @tf.function(input_signature=[spec([], tf.string, "prefix")])
    def f(self, prefix):
        text = tf.io.read_file(self.asset)
        return {"text": tf.strings.join([prefix, text]), "lines": tf.size(tf.strings.split(text, "\n"))}


def asset_file(rng):
    import tempfile
    path = tempfile.mkdtemp() + "/notes.txt"
    with open(path, "w") as f:
        f.write("first line\nsecond line\n")
    return path


class NoInputs(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = tf.Variable([1.5, -2.5])

    @tf.function(input_signature=[])
    def f(self):
        return {"v": self.v * 2.0, "n": tf.size(self.v)}


class Compiled(tf.Module):
    """jit_compile=True: the function must be compiled by XLA (its FunctionDef says _XlaMustCompile)."""

    @tf.function(input_signature=[spec([None, 3], tf.float32, "x")], jit_compile=True)
    def f(self, x):
        return {"y": tf.nn.softmax(x * 2.0) + tf.reduce_max(x)}


class Half(tf.Module):
    @tf.function(input_signature=[spec([None], tf.float16, "h"), spec([None], tf.bfloat16, "b")])
    def f(self, h, b):
        return {"h2": h * h + tf.constant(1.0, tf.float16), "b2": b * tf.constant(2.0, tf.bfloat16),
                "sum": tf.cast(h, tf.float32) + tf.cast(b, tf.float32)}


class RandomGenerator(tf.Module):
    """A stateful tf.random.Generator (its state a variable): a fresh load draws what Python's fresh load drew."""

    def __init__(self):
        super().__init__()
        self.g = tf.random.Generator.from_seed(1234)

    @tf.function(input_signature=[spec([None], tf.float32, "x")])
    def f(self, x):
        return {"y": x + self.g.normal(tf.shape(x)), "k": self.g.uniform([3], 0, 10, dtype=tf.int64)}


class Images(tf.Module):
    @tf.function(input_signature=[spec([None, 8, 8, 1], tf.float32, "image"), spec([None, 4], tf.float32, "boxes"),
                                  spec([None], tf.float32, "scores")])
    def f(self, image, boxes, scores):
        keep = tf.image.non_max_suppression(boxes, scores, 3, iou_threshold=0.5)
        return {"keep": keep, "crops": tf.image.crop_and_resize(image, boxes, tf.zeros([tf.shape(boxes)[0]], tf.int32), [3, 3]),
                "bicubic": tf.image.resize(image, [5, 5], method="bicubic"),
                "sobel": tf.image.sobel_edges(image), "flipped": tf.image.flip_left_right(image)}


class Counting(tf.Module):
    @tf.function(input_signature=[spec([None], tf.int32, "v"), spec([None], tf.float32, "sorted")])
    def f(self, v, sorted):
        u = tf.unique_with_counts(v)
        return {"bincount": tf.math.bincount(v, minlength=6), "unique": u.y, "counts": u.count,
                "search": tf.searchsorted(sorted, tf.constant([0.0, 0.5, 2.0])),
                "histogram": tf.histogram_fixed_width(tf.cast(v, tf.float32), [0.0, 6.0], nbins=3)}


class PyFunction(tf.Module):
    """A tf.py_function: its body is Python code, which no SavedModel holds (EagerPyFunc)."""

    @tf.function(input_signature=[spec([None], tf.float32, "x")])
    def f(self, x):
        return {"y": tf.py_function(lambda t: t * 2.0, [x], tf.float32)}


class Sharded(tf.Module):
    """Variables saved across five data files (a MaxShardSizePolicy)."""

    def __init__(self, rng):
        super().__init__()
        self.w = tf.Variable(rng.rand(3000).astype(np.float32))
        self.b = tf.Variable(rng.rand(2000).astype(np.float32))

    @tf.function(input_signature=[spec([None], tf.float32, "x")])
    def f(self, x):
        return {"y": x * tf.reduce_sum(self.w) + tf.reduce_max(self.b)}


def archives(rng):
    """(name, write(path), function, signature, [positional arguments]): Keras ExportArchives of several endpoints."""
    a = keras.Input((3,), name="a")
    model = keras.Model(a, L.Dense(2, activation="tanh")(a))

    def write(path):
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.add_endpoint("serve", model.call, input_signature=[tf.TensorSpec([None, 3], tf.float32, name="a")])
        archive.add_endpoint("scaled", lambda x, k: {"scaled": model(x) * k, "norm": tf.norm(model(x), axis=1)},
                             input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                              tf.TensorSpec([], tf.float32, name="k")])
        archive.write_out(path, verbose=False)

    # The second endpoint, loaded by name (Function.load(dir, "scaled")) and run as its own signature.
    yield "export_archive", write, "scaled", "scaled", [rng.rand(2, 3).astype(np.float32), np.float32(-1.5)]


def modules(rng):
    """(name, module, [positional arguments]): saved with tf.saved_model.save."""
    x = rng.rand(3).astype(np.float32)
    yield "tensor_array_loop", TensorArrayLoop(), [x, np.int32(4)]
    yield "switch_einsum_0", SwitchEinsum(), [rng.rand(2, 3).astype(np.float32), np.int32(0)]
    yield "switch_einsum_2", SwitchEinsum(), [rng.rand(2, 3).astype(np.float32), np.int32(2)]
    yield "sorting", Sorting(), [np.array([[0.3, -1.0, 0.3, 2.0, 0.1], [5.0, 4.0, 3.0, 2.0, 1.0]], np.float32)]
    yield "segments", Segments(), [rng.rand(5, 2).astype(np.float32), np.array([3, 0, 3, 1, 0], np.int32)]
    yield "strings", Strings(), [np.array(["banana split", "größe 42", "", "queue a9"])]
    yield "spectral", Spectral(), [rng.rand(2, 8).astype(np.float32)]
    yield "linear_algebra", LinearAlgebra(), [rng.rand(2, 3, 3), rng.rand(2, 3, 1)]
    yield "stateless_random", StatelessRandom(), [rng.rand(2, 3).astype(np.float32)]
    yield "ints_and_bools", IntsAndBools(), [np.array([3, -7, 1 << 20], np.int32), np.array([10, -10, 1 << 40], np.int64),
                                             np.array([True, False, True]), np.array([1, 56, 255], np.uint8)]
    yield "int16_output", Int16Output(), [np.array([3, -7, 1 << 20], np.int32)]
    yield "py_function", PyFunction(), [np.array([1.0, 2.0], np.float32)]
    yield "tuple_outputs", TupleOutputs(), [rng.rand(3, 2).astype(np.float32)]
    yield "stateful", Stateful(), [np.array([0.5, -1.0], np.float32)]
    yield "narrow_variables", NarrowVariables(), [np.array([1.0, 2.0, -0.5], np.float32)]
    yield "half_and_string_variables", HalfAndStringVariables(), [np.array([1.0, 2.0, -0.5], np.float32)]
    yield "unknown_shape_variable", UnknownShapeVariable(), [np.array([1.0, 2.0, -0.5], np.float32)]
    yield "captured", Captured(), [np.array([2, 0, 2], np.int32)]
    yield "reads_asset", ReadsAsset(asset_file(rng)), [np.array("notes: ")]
    yield "no_inputs", NoInputs(), []
    yield "compiled", Compiled(), [rng.rand(2, 3).astype(np.float32)]
    yield "half", Half(), [np.array([0.5, -1.25, 3.0], np.float16), np.array([1.0, 2.5, -3.0], tf.bfloat16.as_numpy_dtype)]
    yield "random_generator", RandomGenerator(), [np.array([1.0, 2.0], np.float32)]
    yield "images", Images(), [rng.rand(1, 8, 8, 1).astype(np.float32),
                               np.array([[0, 0, .5, .5], [0, 0, .55, .5], [.5, .5, 1, 1], [.1, .2, .9, .8]], np.float32),
                               np.array([0.9, 0.8, 0.7, 0.95], np.float32)]
    yield "sharded_checkpoint", Sharded(rng), [np.array([1.0, -1.0], np.float32)], tf.saved_model.SaveOptions(
        experimental_sharding_callback=tf.train.experimental.MaxShardSizePolicy(max_shard_size=4000))
    yield "counting", Counting(), [np.array([1, 3, 3, 5, 1, 1], np.int32), np.array([-1.0, 0.0, 1.0, 3.0], np.float32)]


# Models whose calls assign their variables.
STATEFUL = {"stateful", "narrow_variables", "random_generator", "unknown_shape_variable"}

DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64", np.dtype(np.int32): "int32",
          np.dtype(np.int64): "int64", np.dtype(np.bool_): "bool", np.dtype(np.uint8): "uint8",
          np.dtype(np.int16): "int16", np.dtype(np.float16): "float16",
          np.dtype(tf.bfloat16.as_numpy_dtype): "bfloat16"}


def encode(a):
    """dtype, dims and values of array a as the test reads them."""
    # A scalar string tensor's numpy() is bytes, which np.asarray would make a fixed-width bytes
    # array, whose items lose their trailing NUL bytes (UTF-16 text ends with some).
    a = np.asarray(a, dtype=object) if isinstance(a, bytes) else np.asarray(a)
    dims = ",".join(map(str, a.shape)) or "-"
    flat = a.reshape(-1)
    if a.dtype.kind in "USO":
        return "string", dims, " ".join("s" + (v if isinstance(v, bytes) else str(v).encode()).hex() for v in flat)
    kind = DTYPES[a.dtype]
    if kind.startswith(("float", "bfloat")):
        return kind, dims, " ".join(repr(float(v)) for v in flat)
    return kind, dims, " ".join(str(int(v)) for v in flat)


def flat_inputs(args):
    """(path, value) of each tensor of the positional arguments."""
    for i, arg in enumerate(args):
        if isinstance(arg, dict):
            yield from ((f"{i}/{k}", v) for k, v in sorted(arg.items()))
        else:
            yield str(i), arg


def report(name, out, function, args, signature_name="serving_default"):
    restored = tf.saved_model.load(out + "/" + name)  # held: its variables live as long as it
    signature = restored.signatures[signature_name]
    keys = signature.structured_input_signature[1]
    specs = getattr(restored, function).concrete_functions[0].structured_input_signature[0]
    print("function", name, function, signature_name)
    if name in STATEFUL:
        print("stateful", name)
    for path, value in flat_inputs(args):
        # The signature names an input as its TensorSpec does (a Keras Input's name, a dict's key).
        position, _, key = path.partition("/")
        spec = specs[int(position)][key] if key else specs[int(position)]
        key = spec.name if spec.name in keys else key if key in keys else next(iter(keys))
        print("input", name, path, key, *encode(value))
    result = getattr(restored, function)(*[tf.nest.map_structure(tf.constant, a) for a in args])
    if isinstance(result, dict):
        named = dict(result)
    elif isinstance(result, (list, tuple)):
        named = {f"output_{i}": v for i, v in enumerate(result)}
    else:
        named = {"output_0": result}
    assert sorted(named) == sorted(signature.structured_outputs), (name, sorted(named), signature.structured_outputs)
    for key, value in named.items():
        print("output", name, key, *encode(value.numpy()))


def main(out, only):
    keras.utils.set_random_seed(7)
    rng = np.random.RandomState(0)
    for name, model, args in keras_models(rng):
        if only and name not in only:
            continue
        model.export(out + "/" + name, format="tf_saved_model", verbose=False)
        report(name, out, "serve", args)
    for name, module, args, *options in modules(rng):
        if only and name not in only:
            continue
        tf.saved_model.save(module, out + "/" + name, signatures={"serving_default": module.f}, options=next(iter(options), None))
        report(name, out, "f", args)
    for name, write, function, signature, args in archives(rng):
        if only and name not in only:
            continue
        write(out + "/" + name)
        report(name, out, function, args, signature)


if __name__ == "__main__":
    main(sys.argv[1], set(sys.argv[2:]))
