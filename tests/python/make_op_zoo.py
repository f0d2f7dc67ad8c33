"""Writes an "op zoo": small tf.Modules of raw TensorFlow ops and dtypes, for OpZooCorpusTest.

Usage: python make_op_zoo.py OUT_DIR [MODEL...]   (only the models named, if any)

Where make_keras_models_more.py covers Keras layers, this corpus covers ops one family at a time:
string ops, integer arithmetic on negatives, bitwise ops, segment and cumulative ops, sorting with
ties, reductions, einsum, linear algebra, complex intermediates, dynamic-shape ops (1-arg where,
unique, boolean_mask), gathers and scatters, padding, image and signal ops, uint8 / uint16 / bool /
float64 inputs and outputs, int8 / int16 / float16 / bfloat16 intermediates, stateless and
generator random ops, dict, nested and tuple outputs, inputs of unknown rank, unknown dims, scalars
and zero-size inputs. Each is a tf.Module with one function `f` (an input signature), saved with
tf.saved_model.save, loaded back by Python's tf.saved_model.load and called on a fixed input.

A model named <name>@<k> is model <name> saved again with another input (another shape, another
rank), which the test feeds to the first one's function after two calls with the first input.

The output protocol is make_keras_models_more.py's (its docstring); a stateful model's second and
third calls' outputs are those of model <name>#2 and <name>#3; and one more line:

    signature_output <model> <output name> <signature key>

for a function returning a nested structure, which a signature cannot return: its serving_default
signature is then a wrapper returning the same tensors in a flat dict, under these keys (out_0, out_1...).
Non-finite floats are written inf, -inf, nan.

What failed in Polyfn (fixed, and in the corpus):
- value_limits: 1 / x of a subnormal x was inf on the first calls (as in Python and SavedModelBundle)
  and 1e38 from the third call on: kernels on the caller's thread (the session path) kept
  subnormals, which TensorFlow's own threads flush to zero. A call now sets TensorFlow's float mode
  on its thread (native/tf/src/float_mode.rs).
Every other case matched Python and SavedModelBundle when written; the one other difference was
this script's (a scalar string's trailing NUL bytes dropped by numpy, fixed in
make_keras_models_more.encode).
"""
import sys

import numpy as np
import tensorflow as tf
from tensorflow.types.experimental import ConcreteFunction

import make_keras_models_more as more

more.DTYPES[np.dtype(np.uint16)] = "uint16"
S = tf.TensorSpec
f32, f64, i32, i64 = np.float32, np.float64, np.int32, np.int64

STATEFUL = {"generator_philox", "generator_full_int", "variable_dtypes", "function_attributes"}


def module(*specs, **attributes):
    """Decorator: a tf.Module whose `f` is the decorated function, with input signature specs."""

    def wrap(body):
        m = tf.Module()
        for k, v in attributes.items():
            setattr(m, k, v)
        m.f = tf.function(body, input_signature=list(specs))
        return m

    return wrap


def zoo():
    """(name, module, [positional arguments])."""
    # --- strings ---
    @module(S([None], tf.string, "s"))
    def str_regex(s):
        return {"swapped": tf.strings.regex_replace(s, r"(\w+)@(\w+)", r"\2 at \1"),
                "first_only": tf.strings.regex_replace(s, "[0-9]", "#", replace_global=False),
                "substr_chars": tf.strings.substr(s, 1, 2, unit="UTF8_CHAR"),
                "substr_negative": tf.strings.substr(s, -3, 2),
                "chars": tf.strings.length(s, unit="UTF8_CHAR"), "bytes": tf.strings.length(s),
                "upper": tf.strings.upper(s), "lower": tf.strings.lower(s),
                "upper_utf8": tf.strings.upper(s, encoding="utf-8"),
                "stripped": tf.strings.strip(s), "full_match": tf.strings.regex_full_match(s, r"\w+@\w+")}
    yield "str_regex", str_regex, [np.array(["ab@cd x1y2", "  Größe 3 ", "é12", "émile@zola"])]

    @module(S([None], tf.string, "s"), S([None], tf.float32, "x"), S([None], tf.int32, "i"))
    def str_numbers(s, x, i):
        return {"float": tf.strings.to_number(s, tf.float32), "double": tf.strings.to_number(s, tf.float64),
                "precision": tf.strings.as_string(x, precision=3),
                "scientific": tf.strings.as_string(x, scientific=True, precision=2),
                "shortest": tf.strings.as_string(x), "padded": tf.strings.as_string(i, width=5, fill="0"),
                "int64": tf.strings.to_number(tf.strings.as_string(i), tf.int64)}
    yield "str_numbers", str_numbers, [np.array(["1.5", "-2e3", "0.1", "7"]),
                                       np.array([3.14159, -0.5, 1e-4, 12345.678], f32),
                                       np.array([7, -42, 0, 123456], i32)]

    @module(S([None, 3], tf.string, "s"), S([None], tf.float32, "x"))
    def str_join_format(s, x):
        return {"rows": tf.strings.reduce_join(s, axis=1, separator="|"),
                "cols": tf.strings.reduce_join(s, axis=0, keepdims=True),
                "all": tf.strings.reduce_join(s, axis=[0, 1]),
                "formatted": tf.strings.format("x={} first={}", (x, s[0, 0])),
                "joined": tf.strings.join([s[:, 0], s[:, 2]], separator="-")}
    yield "str_join_format", str_join_format, [np.array([["a", "bb", "c"], ["dd", "", "f"]]),
                                               np.array([1.5, 2.0, -3.25], f32)]

    @module(S([], tf.string, "s"), S([None], tf.int32, "codes"))
    def str_unicode(s, codes):
        return {"decoded": tf.strings.unicode_decode(s, "UTF-8"),
                "encoded": tf.strings.unicode_encode(codes, "UTF-8"),
                "split": tf.strings.unicode_split(s, "UTF-8"), "bytes": tf.strings.bytes_split(s),
                "transcoded": tf.strings.unicode_transcode(s, "UTF-8", "UTF-16-BE"),
                "script": tf.strings.unicode_script(codes)}
    yield "str_unicode", str_unicode, [np.array("aé€😀"), np.array([104, 233, 8364, 128512, 1488], i32)]

    @module(S([None], tf.string, "a"), S([None], tf.string, "b"))
    def str_hash_compare(a, b):
        return {"fast": tf.strings.to_hash_bucket_fast(a, 1000),
                "strong": tf.strings.to_hash_bucket_strong(a, 1000, key=[1, 2]),
                "legacy": tf.strings.to_hash_bucket(a, 1000), "equal": tf.equal(a, b), "not_equal": a != b,
                "dense_split": tf.strings.split(a, " ").to_tensor(default_value="?")}
    yield "str_hash_compare", str_hash_compare, [np.array(["the cat", "", "naïve x y"]), np.array(["the cat", "x", "naive x y"])]

    # --- integer arithmetic ---
    @module(S([None], tf.int32, "a"), S([None], tf.int32, "b"), S([None], tf.int64, "c"), S([None], tf.float32, "x"))
    def int_division(a, b, c, x):
        return {"floordiv": a // b, "floormod": a % b, "truncatediv": tf.truncatediv(a, b),
                "truncatemod": tf.truncatemod(a, b), "floordiv64": c // 3, "floormod64": c % -3,
                "float_floormod": x % 2.5, "float_floordiv": x // 2.5, "truncatemod_float": tf.truncatemod(x, 2.5),
                "cast_truncates": tf.cast(x, tf.int32), "round_even": tf.round(x), "rint": tf.math.rint(x)}
    yield "int_division", int_division, [np.array([7, -7, 7, -7, 0], i32), np.array([2, 2, -2, -2, 5], i32),
                                         np.array([-10, 10, -(1 << 40), 5, -1], i64),
                                         np.array([-3.5, 3.5, -0.5, 2.5, -7.25], f32)]

    @module(S([None], tf.int32, "i"), S([None], tf.uint8, "u"), S([None], tf.int64, "j"))
    def bitwise(i, u, j):
        return {"and": tf.bitwise.bitwise_and(i, 0x0F0F), "or": tf.bitwise.bitwise_or(i, 3), "xor": i ^ -1,
                "invert": tf.bitwise.invert(i), "invert_u8": tf.bitwise.invert(u),
                "shl_u8": tf.bitwise.left_shift(u, tf.constant(3, tf.uint8)),
                "shr": tf.bitwise.right_shift(i, 2), "shr64": tf.bitwise.right_shift(j, 33),
                "shl64": tf.bitwise.left_shift(j, 4), "popcount": tf.cast(tf.bitwise.bitwise_and(i, 255), tf.int32),
                "u8_and": u & tf.constant(0xF0, tf.uint8)}
    yield "bitwise", bitwise, [np.array([-1, 1 << 30, 12345, -99999], i32), np.array([0, 1, 128, 255], np.uint8),
                               np.array([-(1 << 40), 1 << 40, 7, -1], i64)]

    @module(S([None], tf.int32, "i"), S([None], tf.int64, "j"), S([None], tf.uint8, "u"))
    def clip_ints(i, j, u):
        return {"i": tf.clip_by_value(i, -5, 5), "j": tf.clip_by_value(j, tf.constant(0, tf.int64), 1 << 35),
                "u": tf.clip_by_value(u, tf.constant(10, tf.uint8), tf.constant(200, tf.uint8)),
                "max": tf.maximum(i, -3), "abs": tf.abs(i), "neg": -j, "sign": tf.sign(i),
                "square": tf.square(i), "u_wraps": u + tf.constant(100, tf.uint8), "u_sub": u - tf.constant(1, tf.uint8)}
    yield "clip_ints", clip_ints, [np.array([-100, -5, 0, 3, 1 << 20], i32),
                                   np.array([-1, 0, 1 << 36, 5, 1 << 34], i64), np.array([0, 10, 150, 255, 200], np.uint8)]

    # --- segments, cumulative, counting ---
    @module(S([None, 2], tf.float32, "data"), S([None], tf.int32, "ids"), S([], tf.int32, "n"),
            S([None], tf.int64, "sorted_ids"))
    def segments(data, ids, n, sorted_ids):
        return {"unsorted_max": tf.math.unsorted_segment_max(data, ids, n),
                "unsorted_min": tf.math.unsorted_segment_min(data, ids, n),
                "unsorted_mean": tf.math.unsorted_segment_mean(data, ids, n),
                "unsorted_sqrt_n": tf.math.unsorted_segment_sqrt_n(data, ids, n),
                "unsorted_prod": tf.math.unsorted_segment_prod(data, ids, tf.cast(n, tf.int64)),
                "segment_sum": tf.math.segment_sum(data, sorted_ids), "segment_max": tf.math.segment_max(data, sorted_ids),
                "segment_mean": tf.math.segment_mean(data, sorted_ids)}
    yield "segments", segments, [np.arange(10, dtype=f32).reshape(5, 2) - 4.0, np.array([2, 0, 2, -1, 0], i32),
                                 np.int32(4), np.array([0, 0, 2, 2, 3], i64)]

    @module(S([None, 4], tf.float32, "x"), S([None], tf.int32, "i"))
    def cumulative(x, i):
        return {"exclusive": tf.math.cumsum(x, axis=1, exclusive=True),
                "reverse": tf.math.cumsum(x, axis=-1, reverse=True),
                "both": tf.math.cumsum(x, axis=0, exclusive=True, reverse=True),
                "prod_exclusive": tf.math.cumprod(x, axis=1, exclusive=True),
                "logsumexp": tf.math.cumulative_logsumexp(x, axis=1),
                "logsumexp_reverse": tf.math.cumulative_logsumexp(x, axis=1, reverse=True, exclusive=True),
                "int_cumsum": tf.math.cumsum(i), "int_cumprod": tf.math.cumprod(i, reverse=True)}
    yield "cumulative", cumulative, [np.array([[1.0, -2.0, 3.0, 0.5], [0.0, 10.0, -1.0, 2.0]], f32),
                                     np.array([3, -1, 2, 5], i32)]

    @module(S([None], tf.int32, "v"), S([None], tf.float32, "w"), S([None, 3], tf.int32, "m"))
    def bincount(v, w, m):
        return {"plain": tf.math.bincount(v), "weighted": tf.math.bincount(v, weights=w, minlength=7),
                "capped": tf.math.bincount(v, maxlength=3), "binary": tf.math.bincount(v, binary_output=True, minlength=6),
                "rows": tf.math.bincount(m, axis=-1, minlength=4), "int64": tf.math.bincount(v, dtype=tf.int64)}
    yield "bincount", bincount, [np.array([1, 4, 4, 0, 1, 1], i32), np.array([0.5, 1.0, 2.0, 3.0, -1.0, 0.25], f32),
                                 np.array([[0, 1, 1], [3, 3, 2]], i32)]

    # --- sorting ---
    @module(S([None, 6], tf.float32, "x"), S([None], tf.int32, "i"))
    def sort_ties(x, i):
        top = tf.math.top_k(x, k=3)
        top_unsorted = tf.math.top_k(x, k=3, sorted=True)
        return {"top_values": top.values, "top_indices": top.indices, "top_indices2": top_unsorted.indices,
                "descending": tf.sort(x, direction="DESCENDING"),
                "argsort_desc": tf.argsort(x, direction="DESCENDING", stable=True),
                "argsort_asc": tf.argsort(x, stable=True), "int_sort": tf.sort(i),
                "int_argsort": tf.argsort(i, direction="DESCENDING", stable=True),
                "argmax": tf.argmax(x, axis=1), "argmin": tf.argmin(x, axis=1, output_type=tf.int32),
                "in_top_k": tf.math.in_top_k(tf.constant([1, 5]), x[:2], 2)}
    yield "sort_ties", sort_ties, [np.array([[1, 3, 3, -1, 3, 0], [2, 2, 2, 2, 2, 2]], f32),
                                   np.array([5, -1, 5, 0, -1, 7], i32)]

    # --- reductions ---
    @module(S([None, 3, 4], tf.float32, "x"), S([None, 3], tf.int32, "i"), S([None, 3], tf.bool, "b"))
    def reductions(x, i, b):
        return {"sum_keep": tf.reduce_sum(x, axis=-1, keepdims=True), "max_neg": tf.reduce_max(x, axis=[-1, -3]),
                "mean_keep": tf.reduce_mean(x, axis=[0, 2], keepdims=True), "std": tf.math.reduce_std(x, axis=1),
                "variance": tf.math.reduce_variance(x), "logsumexp": tf.reduce_logsumexp(x, axis=-2),
                "euclid": tf.math.reduce_euclidean_norm(x, axis=2), "prod": tf.reduce_prod(i, axis=-1),
                "int_mean": tf.reduce_mean(i, axis=0), "int_min": tf.reduce_min(i),
                "all": tf.reduce_all(b, axis=-1), "any_keep": tf.reduce_any(b, axis=0, keepdims=True),
                "count": tf.math.count_nonzero(i, axis=1)}
    yield "reductions", reductions, [np.linspace(-2, 2, 24).astype(f32).reshape(2, 3, 4),
                                     np.array([[1, -3, 4], [2, 5, -7]], i32), np.array([[True, True, False], [True, True, True]])]

    @module(S([None, 2, 3], tf.float32, "a"), S([None, 3, 2], tf.float32, "b"), S([3, 3], tf.float32, "m"))
    def einsum(a, b, m):
        return {"batch_matmul": tf.einsum("bij,bjk->bik", a, b), "diag": tf.einsum("ii->i", m),
                "trace": tf.einsum("ii", m), "outer": tf.einsum("i,j->ij", m[0], m[1]),
                "ellipsis_t": tf.einsum("...ij->...ji", a), "sum": tf.einsum("bij->b", a),
                "bilinear": tf.einsum("bij,jk,bki->b", a, m, b)}
    yield "einsum", einsum, [np.arange(12, dtype=f32).reshape(2, 2, 3) / 5.0, np.arange(12, dtype=f32).reshape(2, 3, 2) - 6.0,
                             np.array([[1, 2, 3], [0, -1, 4], [2, 2, 2]], f32)]

    @module(S([None, 3, 3], tf.float32, "a"), S([None, 3, 2], tf.float32, "b"))
    def linalg(a, b):
        spd = tf.matmul(a, a, adjoint_b=True) + 2.0 * tf.eye(3)
        lower = tf.linalg.band_part(spd, -1, 0)
        sign, logdet = tf.linalg.slogdet(spd)
        return {"adjoint": tf.matmul(a, b, adjoint_a=True), "band": tf.linalg.band_part(a, 0, 1),
                "diag_part": tf.linalg.diag_part(a), "set_diag": tf.linalg.set_diag(a, tf.zeros([tf.shape(a)[0], 3])),
                "tri_solve": tf.linalg.triangular_solve(lower, b, lower=True),
                "tri_solve_adjoint": tf.linalg.triangular_solve(lower, b, lower=True, adjoint=True),
                "det": tf.linalg.det(spd), "sign": sign, "logdet": logdet, "cholesky": tf.linalg.cholesky(spd),
                "diag": tf.linalg.diag(tf.linalg.diag_part(a), k=1), "norm": tf.norm(a, ord="fro", axis=[-2, -1]),
                "lstsq": tf.linalg.lstsq(spd, b), "expm": tf.linalg.expm(a * 0.1)}
    yield "linalg", linalg, [np.array([[[1, 2, 0], [0, 1, 3], [1, 0, 1]], [[0.5, -1, 2], [1, 1, 1], [0, 2, -1]]], f32),
                             np.arange(12, dtype=f32).reshape(2, 3, 2) / 3.0]

    @module(S([None], tf.float32, "re"), S([None], tf.float32, "im"))
    def complex_math(re, im):
        z = tf.complex(re, im)
        w = z * tf.math.conj(z) + z / tf.complex(2.0, -1.0)
        return {"abs": tf.abs(z), "angle": tf.math.angle(z), "real": tf.math.real(w), "imag": tf.math.imag(w),
                "sqrt_abs": tf.abs(tf.sqrt(z)), "exp_real": tf.math.real(tf.exp(z * 0.5)),
                "c128": tf.math.imag(tf.cast(z, tf.complex128) ** 2), "sum_real": tf.math.real(tf.reduce_sum(z))}
    yield "complex_math", complex_math, [np.array([1.0, -2.0, 0.0, 3.0], f32), np.array([0.5, 1.0, -1.0, 0.0], f32)]

    @module(S([None], tf.float64, "x"))
    def special_f64(x):
        return {"lgamma": tf.math.lgamma(x), "digamma": tf.math.digamma(x), "erf": tf.math.erf(x - 2.0),
                "erfinv": tf.math.erfinv(x / 10.0), "igamma": tf.math.igamma(x, 1.5), "xlogy": tf.math.xlogy(x - 1.0, x),
                "bessel_i0e": tf.math.bessel_i0e(x), "log1p": tf.math.log1p(x), "expm1": tf.math.expm1(-x),
                "zeta": tf.math.zeta(x + 1.5, 2.0), "betainc": tf.math.betainc(x, 2.0, 0.3),
                "ndtri": tf.math.ndtri(x / 10.0), "polyval": tf.math.polyval([tf.constant(c, tf.float64) for c in (1.0, -2.0, 0.5)], x)}
    yield "special_f64", special_f64, [np.array([0.5, 1.0, 2.5, 7.0], f64)]

    @module(S([None], tf.float32, "x"), S([None], tf.float32, "y"))
    def safe_division(x, y):
        return {"no_nan": tf.math.divide_no_nan(x, y), "reciprocal": tf.math.reciprocal_no_nan(y),
                "multiply": tf.math.multiply_no_nan(x, y), "floor": tf.floor(x), "ceil": tf.math.ceil(x),
                "sign": tf.sign(x), "div": x / y, "atan2": tf.math.atan2(x, y), "is_inf": tf.math.is_inf(x / y),
                "is_nan": tf.math.is_nan(x / y)}
    yield "safe_division", safe_division, [np.array([1.5, -2.5, 0.0, 3.0], f32), np.array([0.0, 2.0, 0.0, -4.0], f32)]

    # --- shapes: dynamic outputs ---
    @module(S([None, 3], tf.float32, "x"))
    def where_dynamic(x):
        return {"indices": tf.where(x > 0), "indices_empty": tf.where(x > 100),
                "selected": tf.where(x > 0, x, tf.zeros_like(x)), "broadcast": tf.where(x[:, :1] > 0, x, -1.0),
                "nonzero_values": tf.gather_nd(x, tf.where(x > 0))}
    yield "where_dynamic", where_dynamic, [np.array([[1, -1, 2], [-3, 0, 4]], f32)]
    yield "where_dynamic@1", where_dynamic, [-np.arange(12, dtype=f32).reshape(4, 3)]
    yield "where_dynamic@2", where_dynamic, [np.zeros((0, 3), f32)]

    @module(S([None], tf.int64, "v"), S([None], tf.string, "s"))
    def unique(v, s):
        u = tf.unique(v, out_idx=tf.int64)
        su = tf.unique_with_counts(s)
        return {"values": u.y, "idx": u.idx, "strings": su.y, "string_idx": su.idx, "string_counts": su.count}
    yield "unique", unique, [np.array([5, -1, 5, 1 << 40, -1, 0], i64), np.array(["b", "a", "b", "", "a"])]

    @module(S([None, 3], tf.float32, "x"), S([None, 3], tf.bool, "mask"), S([3], tf.bool, "cols"))
    def boolean_mask(x, mask, cols):
        return {"flat": tf.boolean_mask(x, mask), "columns": tf.boolean_mask(x, cols, axis=1),
                "rows": tf.boolean_mask(x, tf.reduce_any(mask, axis=1)), "none": tf.boolean_mask(x, tf.zeros_like(mask))}
    yield "boolean_mask", boolean_mask, [np.arange(9, dtype=f32).reshape(3, 3), np.array([[1, 0, 1], [0, 0, 0], [0, 1, 1]], bool),
                                         np.array([True, False, True])]

    @module(S([None, 3, 2], tf.float32, "params"), S([None, 2, 1], tf.int32, "idx"), S([None, 2], tf.int64, "idx64"))
    def gathers(params, idx, idx64):
        return {"nd_batch": tf.gather_nd(params, idx, batch_dims=1), "gather_batch": tf.gather(params, idx64, axis=1, batch_dims=1),
                "neg_axis": tf.gather(params, [1, 0, 1], axis=-1), "nd_pairs": tf.gather_nd(params, idx64),
                "nd_full": tf.gather_nd(params, tf.constant([[0, 2, 1], [1, 0, 0]]))}
    yield "gathers", gathers, [np.arange(12, dtype=f32).reshape(2, 3, 2), np.array([[[2], [0]], [[1], [1]]], i32),
                               np.array([[1, 2], [0, 1]], i64)]

    @module(S([None, 1], tf.int32, "idx"), S([None], tf.float32, "upd"), S([4, 2], tf.float32, "base"))
    def scatters(idx, upd, base):
        rows = tf.stack([upd, -upd], axis=1)
        return {"scatter_nd_dupes": tf.scatter_nd(idx, upd, [5]),
                "update": tf.tensor_scatter_nd_update(base, idx % 4, rows),
                "max": tf.tensor_scatter_nd_max(base, idx % 4, rows), "min": tf.tensor_scatter_nd_min(base, idx % 4, rows),
                "sub": tf.tensor_scatter_nd_sub(base, idx % 4, rows),
                "int_scatter": tf.scatter_nd(idx, tf.cast(upd * 10, tf.int32), tf.constant([6]))}
    yield "scatters", scatters, [np.array([[1], [3], [1]], i32), np.array([1.0, 2.0, 5.0], f32), np.arange(8, dtype=f32).reshape(4, 2)]

    @module(S([None, 3], tf.float32, "x"), S([2], tf.int32, "multiples"))
    def tile_pad(x, multiples):
        return {"tile": tf.tile(x, multiples), "reflect": tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"),
                "symmetric": tf.pad(x, [[2, 0], [0, 3]], mode="SYMMETRIC"),
                "constant": tf.pad(x, [[0, 1], [1, 0]], constant_values=-7.0),
                "int_pad": tf.pad(tf.cast(x, tf.int32), [[1, 0], [0, 1]], mode="REFLECT"),
                "mirror_pad_dynamic": tf.pad(x, tf.stack([multiples - 1, [0, 1]]), mode="SYMMETRIC")}
    yield "tile_pad", tile_pad, [np.arange(6, dtype=f32).reshape(2, 3), np.array([2, 1], i32)]

    @module(S([None, 4, 2], tf.float32, "x"), S([None], tf.int64, "lengths"))
    def reverse_roll(x, lengths):
        return {"reverse_seq": tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0),
                "roll": tf.roll(x, shift=[1, -1], axis=[1, 2]), "roll_neg": tf.roll(x, shift=-5, axis=1),
                "reverse": tf.reverse(x, axis=[-1, 1]), "transpose": tf.transpose(x, [2, 0, 1])}
    yield "reverse_roll", reverse_roll, [np.arange(16, dtype=f32).reshape(2, 4, 2), np.array([3, 1], i64)]

    @module(S([None, None, None, 3], tf.float32, "image"))
    def image_resize(image):
        return {"bilinear_aa": tf.image.resize(image, [3, 4], method="bilinear", antialias=True),
                "bilinear": tf.image.resize(image, [9, 7], method="bilinear"),
                "nearest": tf.image.resize(image, [3, 5], method="nearest"),
                "area": tf.image.resize(image, [2, 3], method="area"),
                "lanczos3_aa": tf.image.resize(image, [4, 3], method="lanczos3", antialias=True),
                "mitchell": tf.image.resize(image, [5, 5], method="mitchellcubic"),
                "with_pad": tf.image.resize_with_pad(image, 8, 4),
                "v1_align": tf.compat.v1.image.resize_bilinear(image, [4, 4], align_corners=True)}
    yield "image_resize", image_resize, [np.random.RandomState(3).rand(1, 6, 5, 3).astype(f32)]

    @module(S([None, 4, 6, 3], tf.float32, "image"), S([None, 4, 6, 3], tf.uint8, "pixels"))
    def image_misc(image, pixels):
        return {"flip_ud": tf.image.flip_up_down(image), "flip_lr": tf.image.flip_left_right(image),
                "rot90": tf.image.rot90(image, k=3), "crop": tf.image.crop_to_bounding_box(image, 1, 2, 2, 3),
                "pad_box": tf.image.pad_to_bounding_box(image, 1, 0, 6, 7),
                "gray": tf.image.rgb_to_grayscale(image), "hsv": tf.image.rgb_to_hsv(image),
                "yuv": tf.image.rgb_to_yuv(image), "standardized": tf.image.per_image_standardization(image),
                "central": tf.image.central_crop(image, 0.5), "contrast": tf.image.adjust_contrast(image, 2.0),
                "saturation": tf.image.adjust_saturation(image, 0.5), "hue": tf.image.adjust_hue(image, 0.2),
                "to_float": tf.image.convert_image_dtype(pixels, tf.float32),
                "to_u8": tf.image.convert_image_dtype(image * 1.2, tf.uint8, saturate=True),
                "gray_u8": tf.image.rgb_to_grayscale(pixels), "patches": tf.image.extract_patches(
                    image, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")}
    rng = np.random.RandomState(4)
    yield "image_misc", image_misc, [rng.rand(1, 4, 6, 3).astype(f32), (rng.rand(1, 4, 6, 3) * 255).astype(np.uint8)]

    @module(S([None, 16], tf.float32, "x"))
    def signal(x):
        return {"frames": tf.signal.frame(x, 5, 3, pad_end=True, pad_value=-1.0),
                "frames_axis0": tf.signal.frame(x, 2, 1, axis=0),
                "rfft_mag": tf.abs(tf.signal.rfft(x)), "rfft_padded": tf.abs(tf.signal.rfft(x, fft_length=[20])),
                "stft_mag": tf.abs(tf.signal.stft(x, 8, 4, fft_length=8)),
                "dct": tf.signal.dct(x, type=2, norm="ortho"), "hann": tf.signal.hann_window(7),
                "overlap_add": tf.signal.overlap_and_add(tf.reshape(x, [-1, 4, 4]), 2),
                "fft2d_mag": tf.abs(tf.signal.fft2d(tf.cast(tf.reshape(x, [-1, 4, 4]), tf.complex64)))}
    yield "signal", signal, [np.sin(np.arange(32, dtype=f32) * 0.7).reshape(2, 16)]

    @module(S([None], tf.int32, "ids"), S([None], tf.int64, "ids64"), S([None, 1], tf.float32, "col"))
    def one_hot_broadcast(ids, ids64, col):
        return {"axis0": tf.one_hot(ids, 4, axis=0), "int_values": tf.one_hot(ids, 3, on_value=5, off_value=-1),
                "int64_ids": tf.one_hot(ids64, 3, dtype=tf.float64), "broadcast": tf.broadcast_to(col, [tf.shape(col)[0], 3]),
                "ensured": tf.ensure_shape(col, [None, 1]) * 2.0, "reshape": tf.reshape(tf.tile(col, [1, 4]), [-1, 2]),
                "dynamic_shape": tf.broadcast_dynamic_shape(tf.shape(col), [1, 5])}
    yield "one_hot_broadcast", one_hot_broadcast, [np.array([0, 3, -1, 1], i32), np.array([2, 0, 7], i64),
                                                   np.array([[1.5], [-2.0]], f32)]

    @module(S(None, tf.float32, "x"))
    def unknown_rank(x):
        return {"double": x * 2.0, "rank": tf.rank(x), "shape": tf.shape(x), "size": tf.size(x, out_type=tf.int64),
                "flat": tf.reshape(x, [-1]), "sum": tf.reduce_sum(x), "expanded": tf.expand_dims(x, -1)}
    yield "unknown_rank", unknown_rank, [np.arange(24, dtype=f32).reshape(2, 3, 1, 4)]
    yield "unknown_rank@1", unknown_rank, [np.float32(2.5)]
    yield "unknown_rank@2", unknown_rank, [np.array([1.0, -1.0, 3.0], f32)]

    @module(S([None, None], tf.float32, "x"))
    def unknown_dims(x):
        return {"gram": tf.matmul(x, x, transpose_b=True), "reshaped": tf.reshape(x, [-1, 1, tf.shape(x)[1]]),
                "squeezed": tf.squeeze(tf.expand_dims(x, 0), axis=0), "split": tf.split(x, 2, axis=1)[1],
                "concat": tf.concat([x, -x], axis=0), "stacked": tf.stack([x, x * 2], axis=-1),
                "slice": tf.slice(x, [0, 1], [-1, 2]), "strided": x[::-1, 1::2]}
    yield "unknown_dims", unknown_dims, [np.arange(8, dtype=f32).reshape(2, 4)]
    yield "unknown_dims@1", unknown_dims, [np.arange(18, dtype=f32).reshape(3, 6) / 7.0]
    yield "unknown_dims@2", unknown_dims, [np.zeros((0, 4), f32)]

    @module(S([], tf.float32, "x"), S([], tf.int32, "n"), S([], tf.string, "s"), S([], tf.bool, "flag"))
    def scalars(x, n, s, flag):
        return {"range": tf.range(n), "float_range": tf.range(x, 10.0, 2.5), "linspace": tf.linspace(0.0, x, n),
                "fill": tf.fill([n, 2], x), "eye": tf.eye(n, dtype=tf.int32), "repeat": tf.repeat(s, n),
                "flag": tf.logical_not(flag), "seq_mask": tf.sequence_mask([1, n, 0], maxlen=4),
                "cond": tf.cond(flag, lambda: x * 2.0, lambda: -x)}
    yield "scalars", scalars, [np.float32(1.5), np.int32(3), np.array("hi"), np.array(True)]

    @module(S([None, 3], tf.float32, "x"), S([None], tf.int32, "i"), S([None], tf.string, "s"))
    def zero_size(x, i, s):
        return {"sum0": tf.reduce_sum(x, axis=0), "max1": tf.reduce_max(x, axis=1), "matmul": tf.matmul(x, tf.ones([3, 2])),
                "concat": tf.concat([x, tf.ones([1, 3])], axis=0), "mean": tf.reduce_mean(x, axis=0),
                "ints": i * 2, "strings": tf.strings.join([s, "!"]), "where": tf.where(x > 0),
                "sorted": tf.sort(i), "shape": tf.shape(x), "segment": tf.math.unsorted_segment_sum(x, i, 2)}
    yield "zero_size", zero_size, [np.zeros((0, 3), f32), np.zeros((0,), i32), np.array([], dtype=object).astype(bytes)]

    # --- dtypes ---
    @module(S([None], tf.uint8, "u"), S([None], tf.float32, "x"))
    def uint8_io(u, x):
        return {"plus": u + tf.constant(10, tf.uint8), "as_float": tf.cast(u, tf.float32) / 255.0,
                "saturate": tf.dtypes.saturate_cast(x, tf.uint8), "cast_wraps": tf.cast(tf.cast(x, tf.int32), tf.uint8),
                "max": tf.reduce_max(u), "bitcast": tf.bitcast(tf.constant([1.0], tf.float32), tf.uint8),
                "compare": u > tf.constant(100, tf.uint8)}
    yield "uint8_io", uint8_io, [np.array([0, 100, 250, 255], np.uint8), np.array([-5.0, 3.7, 255.9, 300.0], f32)]

    @module(S([None], tf.uint16, "u"), S([None], tf.int32, "i"))
    def uint16_io(u, i):
        return {"from_int": tf.cast(i, tf.uint16), "doubled": tf.cast(tf.cast(u, tf.int32) * 2, tf.uint16),
                "as_int": tf.cast(u, tf.int64), "identity": tf.identity(u), "reversed": tf.reverse(u, [0]),
                "gathered": tf.gather(u, [2, 0])}
    yield "uint16_io", uint16_io, [np.array([0, 1000, 65535], np.uint16), np.array([-1, 70000, 42], i32)]

    @module(S([None], tf.int32, "i"), S([None], tf.float32, "x"))
    def narrow_intermediates(i, x):
        i8 = tf.cast(i, tf.int8)
        i16 = tf.cast(i, tf.int16)
        u32 = tf.cast(i, tf.uint32)
        u64 = tf.cast(i, tf.uint64)
        h = tf.cast(x, tf.float16)
        b = tf.cast(x, tf.bfloat16)
        return {"i8": tf.cast(i8 * tf.constant(2, tf.int8), tf.int32), "i16": tf.cast(i16 + 1, tf.int32),
                "u32": tf.cast(u32 // 3, tf.int64), "u64": tf.cast(tf.bitwise.right_shift(u64, tf.constant(1, tf.uint64)), tf.int64),
                "f16": tf.cast(h * h, tf.float32), "bf16": tf.cast(b + tf.constant(0.001, tf.bfloat16), tf.float32),
                "f16_overflow": tf.cast(h * tf.constant(1000.0, tf.float16), tf.float32),
                "bf16_sum": tf.cast(tf.reduce_sum(b), tf.float32)}
    yield "narrow_intermediates", narrow_intermediates, [np.array([100, 200, -129, 70000], i32),
                                                         np.array([1.001, 3.14159, 70.3, -0.333], f32)]

    @module(S([None, 2], tf.float64, "x"))
    def float64_io(x):
        return {"sqrt": tf.sqrt(tf.abs(x)), "exp": tf.exp(x), "tanh": tf.tanh(x), "matmul": tf.matmul(x, x, transpose_a=True),
                "softmax": tf.nn.softmax(x), "mean": tf.reduce_mean(x, axis=0), "pow": tf.pow(tf.abs(x), 1.0 / 3.0),
                "to_f32": tf.cast(x, tf.float32), "precise": x + 1e-12}
    yield "float64_io", float64_io, [np.array([[0.1, -2.5], [1e-8, 3.0], [7.25, -1e3]], f64)]

    @module(S([None], tf.float16, "h"), S([None], tf.bfloat16, "b"))
    def half_io(h, b):
        return {"h_exp": tf.exp(h), "h_sum": tf.reduce_sum(h), "h_matmul": tf.matmul(h[None], h[:, None]),
                "b_tanh": tf.tanh(b), "b_max": tf.reduce_max(b), "b_to_h": tf.cast(b, tf.float16),
                "h_softmax": tf.nn.softmax(h)}
    yield "half_io", half_io, [np.array([0.5, -1.25, 3.0, 0.0], np.float16),
                               np.array([1.0, 2.5, -3.0, 100.0], tf.bfloat16.as_numpy_dtype)]

    @module(S([None], tf.bool, "a"), S([None], tf.bool, "b"), S([None], tf.float32, "x"))
    def bool_io(a, b, x):
        return {"xor": tf.math.logical_xor(a, b), "and": a & b, "or": a | b, "eq": tf.equal(a, b),
                "finite": tf.math.is_finite(x), "cast": tf.cast(a, tf.int32) + tf.cast(b, tf.int32),
                "from_float": tf.cast(x, tf.bool), "select": tf.where(a, x, -x)}
    yield "bool_io", bool_io, [np.array([True, False, True, False]), np.array([True, True, False, False]),
                               np.array([0.0, -0.0, 2.0, 0.5], f32)]

    @module(S([None, 3], tf.float32, "x"), S([None], tf.int64, "idx"), S([None], tf.int64, "seg"))
    def int64_indices(x, idx, seg):
        return {"gather": tf.gather(x, idx), "argmax": tf.argmax(x, axis=1, output_type=tf.int64),
                "range": tf.range(tf.size(idx, out_type=tf.int64)), "segment": tf.math.unsorted_segment_sum(x, seg, 3),
                "one_hot": tf.one_hot(idx, 3), "shape64": tf.shape(x, out_type=tf.int64),
                "slice": tf.slice(x, tf.constant([1, 0], tf.int64), tf.constant([1, -1], tf.int64)),
                "range_i64": tf.range(tf.constant(1 << 33, tf.int64), (1 << 33) + 3)}
    yield "int64_indices", int64_indices, [np.arange(9, dtype=f32).reshape(3, 3), np.array([2, 0, 2], i64), np.array([1, 1, 0], i64)]

    # --- random ---
    @module(S([None, 3], tf.float32, "logits"))
    def stateless_random(logits):
        seed = tf.constant([11, 22], tf.int64)
        return {"uniform": tf.random.stateless_uniform([2, 3], seed=seed, minval=-1.0, maxval=1.0),
                "normal64": tf.random.stateless_normal([4], seed=[1, 2], dtype=tf.float64),
                "categorical": tf.random.stateless_categorical(logits, 5, seed=seed),
                "truncated": tf.random.stateless_truncated_normal([3], seed=[3, 4]),
                "int_full": tf.random.stateless_uniform([3], seed=[5, 6], minval=None, maxval=None, dtype=tf.int64),
                "int_range": tf.random.stateless_uniform([4], seed=[7, 8], minval=-5, maxval=5, dtype=tf.int32),
                "binomial": tf.random.stateless_binomial([3], seed=[9, 10], counts=[10.0, 20.0, 30.0], probs=0.5),
                "gamma": tf.random.stateless_gamma([2], seed=[1, 1], alpha=[0.5, 2.0]),
                "poisson": tf.random.stateless_poisson([3], seed=[2, 2], lam=3.0, dtype=tf.int32),
                "shaped_by_input": tf.random.stateless_uniform(tf.shape(logits), seed=seed),
                "philox": tf.random.stateless_uniform([3], seed=[1, 2], alg="philox"),
                "shuffle": tf.random.experimental.stateless_shuffle(tf.range(6), seed=[3, 3]),
                "flip": tf.image.stateless_random_flip_left_right(tf.reshape(logits, [1, -1, 3, 1]), seed=[4, 4])}
    yield "stateless_random", stateless_random, [np.array([[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]], f32)]

    g1 = tf.random.Generator.from_seed(5, alg="philox")

    @module(S([None], tf.float32, "x"), g=g1)
    def generator_philox(x):
        return {"normal": x + g1.normal(tf.shape(x)), "uniform": g1.uniform([3], 0, 10, dtype=tf.int32),
                "truncated": g1.truncated_normal([2], dtype=tf.float64), "binomial": g1.binomial([2], [4.0, 8.0], 0.25)}
    yield "generator_philox", generator_philox, [np.array([1.0, 2.0], f32)]

    g2 = tf.random.Generator.from_seed(9)

    @module(S([None], tf.float32, "x"), g=g2)
    def generator_full_int(x):
        return {"uniform": x * g2.uniform(tf.shape(x)), "normal": g2.normal([2], dtype=tf.float64),
                "full_int": g2.uniform_full_int([3], dtype=tf.int64)}
    yield "generator_full_int", generator_full_int, [np.array([1.0, 2.0, 3.0], f32)]

    # --- structures ---
    @module(S([None, 2], tf.float32, "x"))
    def nested_outputs(x):
        return {"pair": (x * 2.0, tf.reduce_sum(x)), "inner": {"q": tf.cast(x > 0.5, tf.int32), "p": x[0]},
                "list": [tf.shape(x), tf.strings.as_string(x[:, 0], precision=2)]}
    yield "nested_outputs", nested_outputs, [np.array([[0.25, 1.0], [2.0, -1.0]], f32)]

    @module(S([None], tf.float32, "x"))
    def nested_tuple(x):
        return x + 1.0, (x * 2.0, (tf.size(x), tf.reduce_max(x)))
    yield "nested_tuple", nested_tuple, [np.array([3.0, -1.0, 0.5], f32)]

    @module(S([None], tf.float32, "x"), S([None], tf.int32, "parts"))
    def partition_stitch(x, parts):
        pieces = tf.dynamic_partition(x, parts, 3)
        idx = tf.dynamic_partition(tf.range(tf.size(x)), parts, 3)
        return {"pieces": pieces, "stitched": tf.dynamic_stitch(idx, [p * 10.0 for p in pieces])}
    yield "partition_stitch", partition_stitch, [np.array([1.0, 2.0, 3.0, 4.0, 5.0], f32), np.array([2, 0, 2, 1, 0], i32)]

    @module(S([None, 3], tf.float32, "x"))
    def single_output(x):
        return tf.nn.log_softmax(x, axis=0)
    yield "single_output", single_output, [np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]], f32)]

    # --- nn and misc ---
    @module(S([None, 4, 4, 2], tf.float32, "x"))
    def nn_ops(x):
        pooled, argmax = tf.nn.max_pool_with_argmax(x, 2, 2, "VALID", include_batch_in_index=True)
        mean, variance = tf.nn.moments(x, axes=[0, 1, 2])
        return {"pooled": pooled, "argmax": argmax, "space_to_depth": tf.nn.space_to_depth(x, 2),
                "depth_to_space": tf.nn.depth_to_space(tf.tile(x, [1, 1, 1, 2]), 2), "mean": mean, "variance": variance,
                "l2": tf.nn.l2_normalize(x, axis=-1), "relu6": tf.nn.relu6(x * 10.0 - 3.0),
                "gelu": tf.nn.gelu(x, approximate=True), "lrn": tf.nn.local_response_normalization(x, 1),
                "dilated": tf.nn.conv2d(x, tf.ones([2, 2, 2, 1]), 1, "SAME", dilations=2),
                "avg_pool3": tf.nn.avg_pool2d(x, 3, 1, "SAME"), "fake_quant": tf.quantization.fake_quant_with_min_max_args(x, -0.5, 0.5)}
    yield "nn_ops", nn_ops, [np.random.RandomState(5).rand(1, 4, 4, 2).astype(f32) - 0.3]

    @module(S([None], tf.float32, "x"), S([None], tf.float32, "edges"))
    def bucketize_search(x, edges):
        return {"bucketize": tf.raw_ops.Bucketize(input=x, boundaries=[0.0, 1.0, 2.5]),
                "left": tf.searchsorted(edges, x, side="left"), "right": tf.searchsorted(edges, x, side="right", out_type=tf.int64),
                "histogram": tf.histogram_fixed_width(x, [-1.0, 3.0], nbins=4),
                "confusion": tf.math.confusion_matrix(tf.constant([0, 1, 2, 1]), tf.constant([0, 2, 2, 1]), num_classes=3)}
    yield "bucketize_search", bucketize_search, [np.array([-0.5, 0.0, 1.0, 2.4, 9.0], f32), np.array([0.0, 1.0, 1.0, 3.0], f32)]

    @module(S([None], tf.float32, "x"))
    def asserts_and_print(x):
        tf.debugging.assert_non_negative(x + 10.0, message="x too small")
        tf.print("op zoo print", x, output_stream=sys.stderr)
        with tf.control_dependencies([tf.debugging.assert_less(tf.reduce_max(x), 100.0)]):
            y = tf.identity(x) * 3.0
        return {"y": tf.debugging.check_numerics(y, "y is finite")}
    yield "asserts_and_print", asserts_and_print, [np.array([1.0, -2.0], f32)]

    @module(S([None, 3], tf.float32, "x"))
    def sparse_dense(x):
        sp = tf.sparse.from_dense(x)
        return {"to_dense": tf.sparse.to_dense(tf.sparse.reorder(sp)) * 2.0, "reduce": tf.sparse.reduce_sum(sp, axis=1),
                "matmul": tf.sparse.sparse_dense_matmul(sp, tf.ones([3, 2])), "indices": sp.indices,
                "nnz": tf.size(sp.values)}
    yield "sparse_dense", sparse_dense, [np.array([[0, 1.5, 0], [2, 0, -1]], f32)]

    # --- edge cases of the call itself ---
    @module(S([None], tf.float32, "x"), S([None], tf.int32, "y"))
    def passthrough(x, y):
        z = x * 2.0
        return {"x": x, "x_again": x, "y": y, "z": z, "z_again": z, "const": tf.constant([1, 2, 3]),
                "const_str": tf.constant("fixed")}
    yield "passthrough", passthrough, [np.array([1.5, -2.0], f32), np.array([7, 8, 9], i32)]

    @module(S([None], tf.string, "s"))
    def string_bytes(s):
        return {"same": s, "lengths": tf.strings.length(s), "hex": tf.strings.regex_replace(s, "\x00", "<0>"),
                "joined": tf.strings.reduce_join(s, separator="|"), "upper": tf.strings.upper(s)}
    yield "string_bytes", string_bytes, [np.array([b"a\x00b", b"\xff\xfe", b"x" * 22, b"y" * 23, b"z" * 5000, b"",
                                                   b"end\x00"], dtype=object)]

    @module(S(None, tf.string, "s"), S(None, tf.int32, "i"))
    def unknown_rank_others(s, i):
        return {"s": tf.strings.join([s, "."]), "i": i + 1, "rank": tf.rank(i), "flat": tf.reshape(s, [-1])}
    yield "unknown_rank_others", unknown_rank_others, [np.array([["a", "b"], ["c", "d"]]), np.int32(4)]
    yield "unknown_rank_others@1", unknown_rank_others, [np.array("solo"), np.arange(6, dtype=i32).reshape(1, 2, 3)]

    @module(S([None, 3], tf.float32, "x"))
    def control_flow(x):
        n = tf.shape(x, out_type=tf.int64)[0]
        ta = tf.TensorArray(tf.string, size=0, dynamic_size=True)
        i = tf.constant(0, tf.int64)
        total = tf.constant(0.0)
        while i < n:
            ta = ta.write(tf.cast(i, tf.int32), tf.strings.as_string(tf.reduce_sum(x[i]), precision=1))
            total += tf.reduce_max(x[i])
            i += 1
        label = tf.cond(total > 0.0, lambda: tf.constant("positive"), lambda: tf.constant("negative"))
        branch = tf.switch_case(tf.cast(n, tf.int32) % 3, [lambda: tf.constant(0), lambda: tf.constant(10),
                                                            lambda: tf.constant(20)])
        return {"sums": ta.stack(), "total": total, "label": label, "branch": branch,
                "mapped": tf.map_fn(lambda r: tf.strings.as_string(tf.reduce_min(r)), x, fn_output_signature=tf.string),
                "vectorized": tf.vectorized_map(lambda r: tf.reduce_sum(r * r), x)}
    yield "control_flow", control_flow, [np.array([[1, 2, 3], [-4, -5, -6], [0.5, 0, 0]], f32)]

    v_u8 = tf.Variable([1, 2, 255], dtype=tf.uint8)
    v_bool = tf.Variable([True, False])
    v_str = tf.Variable(["a", "bb"])
    v_f64 = tf.Variable([0.25, -1.5], dtype=tf.float64)
    v_i64 = tf.Variable(1 << 40, dtype=tf.int64)

    @module(S([], tf.int32, "k"), u8=v_u8, flag=v_bool, words=v_str, f64=v_f64, i64=v_i64)
    def variable_dtypes(k):
        v_u8.assign_add(tf.constant([1, 1, 1], tf.uint8))
        v_bool.assign(tf.logical_not(v_bool))
        v_str.assign(tf.strings.join([v_str, tf.strings.as_string(k)]))
        v_i64.assign_add(tf.cast(k, tf.int64))
        return {"u8": v_u8.read_value(), "flag": v_bool.read_value(), "words": v_str.read_value(),
                "f64": v_f64 * tf.cast(k, tf.float64), "i64": v_i64.read_value(), "handle_read": v_f64}
    yield "variable_dtypes", variable_dtypes, [np.int32(3)]

    @tf.function(input_signature=[S([None], tf.float32, "a")])
    def inner(a):
        return tf.cast(a * 2.0, tf.float64), tf.strings.as_string(a)

    @module(S([None], tf.float32, "x"))
    def nested_functions(x):
        d, s = inner(x)
        d2, _ = inner(x + 1.0)
        return {"d": d + d2, "s": s}
    yield "nested_functions", nested_functions, [np.array([0.5, 1.0], f32)]

    # --- serving-side decoding ---
    features = {"age": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
                "score": tf.io.FixedLenFeature([2], tf.float32),
                "name": tf.io.FixedLenFeature([], tf.string, default_value="anon")}

    @module(S([None], tf.string, "examples"), S([None], tf.string, "raw"), S([None], tf.string, "csv"))
    def io_decode(examples, raw, csv):
        parsed = tf.io.parse_example(examples, features)
        cols = tf.io.decode_csv(csv, [[0], [0.0], ["none"]], field_delim=";")
        return {"age": parsed["age"], "score": parsed["score"], "name": parsed["name"],
                "raw_u16": tf.io.decode_raw(raw, tf.uint16, fixed_length=4), "raw_f32": tf.io.decode_raw(raw, tf.float32, fixed_length=4),
                "b64": tf.io.encode_base64(raw, pad=True), "b64_back": tf.io.decode_base64(tf.io.encode_base64(raw)),
                "csv_int": cols[0], "csv_float": cols[1], "csv_str": cols[2],
                "serialized_back": tf.io.parse_tensor(tf.io.serialize_tensor(parsed["score"]), tf.float32),
                "fingerprint": tf.bitcast(tf.fingerprint(tf.reshape(parsed["age"], [-1, 1])), tf.uint8),
                "zlib": tf.io.decode_compressed(tf.constant(zlib_bytes), compression_type="ZLIB")}

    def example(**kv):
        f = {}
        for k, v in kv.items():
            if isinstance(v, int):
                f[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=[v]))
            elif isinstance(v, list):
                f[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
            else:
                f[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode()]))
        return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()

    import zlib
    zlib_bytes = zlib.compress(b"compressed text " * 3)
    yield "io_decode", io_decode, [np.array([example(age=41, score=[0.5, 1.5], name="ann"), example(score=[-1.0, 2.0])], dtype=object),
                                   np.array([b"\x00\x00\x80\x3f", b"\xff\xff\x00\x40"], dtype=object),
                                   np.array(["1;2.5;x", "-7;;", ";0.25;\"q;uoted\""])]

    @module(S([None, None, 3], tf.uint8, "image"))
    def image_codecs(image):
        png = tf.io.encode_png(image)
        back = tf.io.decode_png(png, channels=3)
        wav = tf.audio.encode_wav(tf.reshape(tf.cast(image[:, :, :1], tf.float32) / 255.0, [-1, 1]), 8000)
        audio = tf.audio.decode_wav(wav)
        return {"back": back, "same": tf.reduce_all(back == image), "gray": tf.io.decode_png(png, channels=1),
                "audio": audio.audio, "rate": audio.sample_rate, "jpeg_shape": tf.shape(tf.io.decode_jpeg(tf.io.encode_jpeg(image))),
                "adjusted": tf.image.adjust_jpeg_quality(image, 90), "is_png": tf.io.is_jpeg(png)}
    yield "image_codecs", image_codecs, [(np.random.RandomState(6).rand(4, 5, 3) * 255).astype(np.uint8)]

    @module(S([None, 3, 3], tf.float32, "a"))
    def linalg_decompositions(a):
        sv = tf.linalg.svd(a, compute_uv=False)
        q, r = tf.linalg.qr(a)
        lu, perm = tf.linalg.lu(a)
        eig = tf.linalg.eigvals(a)
        return {"singular": sv, "qr_abs_r": tf.abs(r), "qr_product": tf.matmul(q, r), "lu": lu, "perm": perm,
                "eig_abs_sorted": tf.sort(tf.abs(eig), axis=-1), "rank": tf.linalg.matrix_rank(a),
                "pinv": tf.linalg.pinv(a), "inv": tf.linalg.inv(a), "sqrtm_sym": tf.linalg.sqrtm(
                    tf.matmul(a, a, transpose_b=True) + tf.eye(3)), "logm_abs": tf.abs(tf.linalg.logm(
                        tf.cast(tf.matmul(a, a, transpose_b=True) + tf.eye(3), tf.complex64)))}
    yield "linalg_decompositions", linalg_decompositions, [np.array([[[4, 1, 0], [1, 3, 1], [0, 1, 2]], [[1, 2, 3], [0, 1, 4], [5, 6, 0]]], f32)]

    @module(S([None, 8, 8, 3], tf.float32, "a"), S([None, 8, 8, 3], tf.float32, "b"), S([None, 4, 1, 4], tf.float32, "boxes"),
            S([None, 4, 2], tf.float32, "scores"))
    def image_metrics(a, b, boxes, scores):
        nms = tf.image.combined_non_max_suppression(boxes, scores, 3, 4, iou_threshold=0.5, score_threshold=0.1)
        return {"ssim": tf.image.ssim(a, b, 1.0, filter_size=3), "psnr": tf.image.psnr(a, b, 1.0),
                "tv": tf.image.total_variation(a), "drawn": tf.image.draw_bounding_boxes(a, boxes[:, :, 0], [[1.0, 0.0, 0.0]]),
                "nms_boxes": nms.nmsed_boxes, "nms_scores": nms.nmsed_scores, "nms_classes": nms.nmsed_classes,
                "nms_valid": nms.valid_detections, "sobel": tf.image.sobel_edges(a[..., :1])}
    rng6 = np.random.RandomState(7)
    yield "image_metrics", image_metrics, [rng6.rand(1, 8, 8, 3).astype(f32), rng6.rand(1, 8, 8, 3).astype(f32),
                                           np.array([[[[0, 0, .5, .5]], [[0, 0, .55, .5]], [[.5, .5, 1, 1]], [[.1, .2, .9, .8]]]], f32),
                                           rng6.rand(1, 4, 2).astype(f32)]

    @module(S([None], tf.string, "s"), S([None], tf.int32, "seg"))
    def string_segments(s, seg):
        return {"segment_join": tf.strings.unsorted_segment_join(s, seg, 3, separator=","),
                "ngrams": tf.strings.ngrams(tf.strings.split(s[0]), 2, separator="_"),
                "offsets": tf.strings.unicode_decode_with_offsets(s[1], "UTF-8")[1],
                "sets": tf.sparse.to_dense(tf.sets.intersection(tf.strings.split(s[:1]).to_sparse(),
                                                               tf.strings.split(s[2:3]).to_sparse()), default_value="")}
    yield "string_segments", string_segments, [np.array(["a b c d", "größe", "c a z", "q"]), np.array([2, 0, 2, 1], i32)]

    # --- what Polyfn rebuilds itself: captured constants, function attributes, traced variants ---
    consts = dict(u8=tf.constant([0, 7, 255], tf.uint8), i8=tf.constant([-128, 5, 127], tf.int8),
                  u16=tf.constant([1, 65535], tf.uint16), i16=tf.constant([-300, 300], tf.int16),
                  flags=tf.constant([True, False, True]), z=tf.constant([1 + 2j, -3j], tf.complex64),
                  z128=tf.constant([0.5 - 1j], tf.complex128), h=tf.constant([0.1, 65504.0], tf.float16),
                  bf=tf.constant([1.5, -2.25], tf.bfloat16), nul=tf.constant([b"a\x00b", b"", b"\xff"]),
                  empty=tf.zeros([0, 3]), i64=tf.constant(-(1 << 50), tf.int64), f64=tf.constant([1e-300, 3.5], tf.float64),
                  big=tf.constant(np.arange(300000, dtype=f32) / 1000.0), u32=tf.constant([4000000000], tf.uint32),
                  u64=tf.constant([1 << 63], tf.uint64), scalar_str=tf.constant("ünï"))

    @module(S([], tf.float32, "x"), **{"c_" + k: v for k, v in consts.items()})
    def captured_constants(x):
        c = consts
        return {"u8": c["u8"], "i8": tf.cast(c["i8"], tf.int32), "u16": c["u16"] + tf.constant(0, tf.uint16),
                "i16": tf.cast(c["i16"], tf.int32), "flags": tf.logical_and(c["flags"], x > 0),
                "z": tf.abs(c["z"]) * x, "z128": tf.math.imag(c["z128"]), "h": c["h"], "bf": c["bf"],
                "nul": c["nul"], "empty": c["empty"] + x, "i64": c["i64"] + 1, "f64": c["f64"] * 2.0,
                "big": tf.reduce_sum(c["big"]) + x, "big_slice": c["big"][-3:], "u32": tf.cast(c["u32"], tf.int64),
                "u64": tf.cast(tf.bitwise.right_shift(c["u64"], tf.constant(60, tf.uint64)), tf.int64),
                "scalar_str": c["scalar_str"]}
    yield "captured_constants", captured_constants, [np.float32(2.0)]

    @module(S([None], tf.float32, "x"))
    def dataset_in_function(x):
        ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2.0).filter(lambda v: v > 0.0)
        total = ds.reduce(tf.constant(0.0), lambda a, b: a + b)
        batches = tf.data.Dataset.range(5).batch(2).map(lambda b: tf.reduce_sum(b)).reduce(
            tf.constant(0, tf.int64), lambda a, b: a * 10 + b)
        return {"total": total, "batches": batches}
    yield "dataset_in_function", dataset_in_function, [np.array([1.0, -2.0, 3.5], f32)]

    @tf.custom_gradient
    def clipped_square(v):
        return v * v, lambda dy: tf.clip_by_value(dy * 2.0 * v, -1.0, 1.0)

    @tf.function
    def inner_cube(v):
        return v * v * v

    @module(S([None], tf.float32, "x"))
    def gradients_in_function(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            custom = tf.reduce_sum(clipped_square(x))
            looped = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), (0, tf.ones_like(x)))[1]
            branched = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x), lambda: tf.cos(x))
            nested = inner_cube(x)
        return {"custom": tape.gradient(custom, x), "looped": tape.gradient(looped, x),
                "branched": tape.gradient(branched, x), "nested": tape.gradient(nested, x)}
    yield "gradients_in_function", gradients_in_function, [np.array([0.3, -2.0, 1.5], f32)]

    @module(S([None], tf.float32, "first"), S([None], tf.float32, "second"), S([], tf.int32, "third"))
    def varargs(*xs):
        return {"sum": xs[0] + xs[1], "n": xs[2] * len(xs)}
    yield "varargs", varargs, [np.array([1.0, 2.0], f32), np.array([0.5, 0.25], f32), np.int32(4)]

    # Keys whose UTF-16 order (Java's String.compareTo) differs from their code point order (Python's sort).
    high, astral, plain = "\uff5e", "\U0001f600", "a"

    @module({high: S([None], tf.float32, "high"), astral: S([None], tf.float32, "astral"), plain: S([], tf.int32, "plain")})
    def unicode_keys(d):
        return {high: d[high] * 2.0, astral: d[astral] - 1.0, plain: d[plain],
                "mixed": d[high] * 10.0 + d[astral], "nest": {astral: d[astral], high: d[high]}}
    yield "unicode_keys", unicode_keys, [{high: np.array([1.0, 2.0], f32), astral: np.array([5.0, 7.0], f32), plain: np.int32(3)}]

    @module({f"in{i:02d}": S([2], tf.float32, f"in{i:02d}") for i in range(40)})
    def many_io(d):
        total = tf.add_n(list(d.values()))
        return {f"out{i:03d}": total * float(i) + d[f"in{i % 40:02d}"] for i in range(300)}
    yield "many_io", many_io, [{f"in{i:02d}": np.array([i, -i], f32) for i in range(40)}]

    counter = tf.Variable(0.0)

    @tf.function(experimental_implements="polyfn.test.scaled_add")
    def implemented(a, b):
        return a * 3.0 + b

    @tf.function(jit_compile=True)
    def compiled_inner(a):
        return tf.nn.softmax(a) * tf.reduce_max(a)

    @tf.function
    def bump(a):
        counter.assign_add(tf.reduce_sum(a))
        return counter.read_value()

    @module(S([None], tf.float32, "x"), counter=counter)
    def function_attributes(x):
        return {"implemented": implemented(x, x), "compiled": compiled_inner(x), "bumped": bump(x),
                "after": counter.read_value() * 1.0}
    yield "function_attributes", function_attributes, [np.array([1.0, 2.0, -0.5], f32)]

    @module(S([None], tf.int64, "j"), S([None], tf.float32, "x"), S([None], tf.string, "s"), S(None, tf.float32, "deep"))
    def value_limits(j, x, s, deep):
        return {"j": j, "j_neg": -j, "j_max": tf.reduce_max(j), "x_tiny": x * 0.5, "x_recip": 1.0 / x,
                "s_len": tf.strings.length(s), "s_tail": tf.strings.substr(s, -4, 4), "empty_bool": tf.zeros([0, 2], tf.bool),
                "deep": tf.reduce_sum(deep, axis=[0, 2, 4, 6]), "deep_t": tf.transpose(deep, [7, 6, 5, 4, 3, 2, 1, 0])}
    yield "value_limits", value_limits, [np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min + 1, 0], i64),
                                         np.array([1e-45, -0.0, 3.4e38, 1e-38], f32),
                                         np.array([b"x" * 1000000 + b"tail", b""], dtype=object)[:1],
                                         np.arange(256, dtype=f32).reshape(2, 2, 2, 2, 2, 2, 2, 2)]

    poly = tf.Module()
    poly.f = tf.function(lambda x: {"y": x * 2, "traced_shape": tf.constant(str(x.shape))})  # which trace serves
    poly.f.get_concrete_function(S([None], tf.float32, "x"))
    poly.f.get_concrete_function(S([2, 2], tf.int32, "x"))
    poly.f.get_concrete_function(S([None, 2], tf.int32, "x"))
    poly.serving = poly.f.get_concrete_function(S([2, 2], tf.int32, "x"))  # the trace Python's restored f runs
    yield "traced_variants", poly, [np.array([[1, 2], [3, 4]], i32)]


def flat_named(result, path=None):
    """(Polyfn's output name, tensor) of a result, in Python's flattening order (docs/save-load.md)."""
    if path is None:
        if isinstance(result, dict):
            for k in sorted(result):
                yield from flat_named(result[k], str(k))
        else:
            for i, leaf in enumerate(tf.nest.flatten(result)):
                yield f"output_{i}", leaf
    elif isinstance(result, dict):
        for k in sorted(result):
            yield from flat_named(result[k], f"{path}['{k}']")
    elif isinstance(result, (list, tuple)):
        for i, v in enumerate(result):
            yield from flat_named(v, f"{path}[{i}]")
    else:
        yield path, result


def nested(result):
    if isinstance(result, dict):
        return any(isinstance(v, (dict, list, tuple)) for v in result.values())
    return isinstance(result, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in result)


def flat_signature(f, keys):
    """A function returning f's outputs in a flat dict, under keys (Polyfn's names → signature keys)."""
    return tf.function(lambda *a: {keys[n]: t for n, t in flat_named(f(*a))}, input_signature=f.input_signature)


def main(out, only):
    for name, m, args in zoo():
        if only and name not in only:
            continue
        # A module traced without an input signature names the concrete function its signature serves.
        signature = getattr(m, "serving", m.f)
        concrete = signature if isinstance(signature, ConcreteFunction) else m.f.get_concrete_function()
        keys = {}
        if nested(concrete.structured_outputs):
            # A signature returns a flat dict: the same tensors under keys derived from Polyfn's names.
            keys = {n: f"out_{i}" for i, (n, _) in enumerate(flat_named(concrete.structured_outputs))}
            signature = flat_signature(m.f, keys)
        tf.saved_model.save(m, out + "/" + name, signatures={"serving_default": signature})
        restored = tf.saved_model.load(out + "/" + name)
        print("function", name, "f", "serving_default")
        if name in STATEFUL:
            print("stateful", name)
        sig_keys = restored.signatures["serving_default"].structured_input_signature[1]
        for path, value in more.flat_inputs(args):
            position, _, key = path.partition("/")
            spec = concrete.structured_input_signature[0][int(position)]
            spec = spec[key] if key else spec
            print("input", name, path, spec.name if spec.name in sig_keys else next(iter(sig_keys)), *more.encode(value))
        result = restored.f(*[tf.nest.map_structure(tf.constant, a) for a in args])
        for n, value in flat_named(result):
            if keys:
                print("signature_output", name, n, keys[n])
            print("output", name, n, *more.encode(value.numpy()))
        for call in (2, 3) if name in STATEFUL else ():  # what later calls return, after the assignments
            result = restored.f(*[tf.nest.map_structure(tf.constant, a) for a in args])
            for n, value in flat_named(result):
                print("output", f"{name}#{call}", n, *more.encode(value.numpy()))


if __name__ == "__main__":
    main(sys.argv[1], set(sys.argv[2:]))
