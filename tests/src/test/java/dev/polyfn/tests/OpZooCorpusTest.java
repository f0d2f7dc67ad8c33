package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An "op zoo": small {@code tf.Module}s of raw TensorFlow ops and dtypes, built and saved by Python
 * during the test ({@code tests/python/make_op_zoo.py}), one op family each: string ops (regex,
 * substr by characters, case, numbers, joins and format, unicode, hashing), integer division and
 * modulo of negatives, bitwise ops and shifts, integer clipping and wrapping, segment ops with a
 * dynamic segment count, cumulative sums, products and logsumexp, bincount, sorting with ties,
 * reductions with negative axes and keepdims, einsum, linear algebra, complex intermediates,
 * float64 special functions, divisions by zero (inf, nan), dynamic-shape outputs (one-argument
 * where, unique, boolean_mask, dynamic_partition), gathers and scatters, padding modes, reversing
 * and rolling, image and signal ops, one_hot and broadcasting, uint8, uint16, bool, float64,
 * float16 and bfloat16 inputs and outputs, int8 / int16 / uint32 / uint64 intermediates, int64
 * indices, stateless random ops and captured {@code tf.random.Generator}s, nested, tuple and single
 * outputs, inputs of unknown rank and unknown dims, scalars, zero-size inputs, asserts and
 * {@code tf.print}, sparse intermediates; inputs returned as outputs, one tensor under two keys, constant
 * outputs, strings with NUL and non-UTF-8 bytes and of the lengths around TensorFlow's inline-string
 * limit, a while loop over a TensorArray of strings, cond, switch_case, map_fn and vectorized_map,
 * assigned variables of uint8, bool, string, int64 and float64, a nested {@code tf.function};
 * captured constants of every dtype (complex, int8, uint64, strings with NUL bytes, empty, 1.2 MB),
 * a tf.data pipeline reduced inside the function, gradients taken inside it (a custom gradient,
 * a while loop, a cond, a nested function), a function traced three times without a signature;
 * serving-side decoding (tf.Example protos, CSV, raw bytes, base64, serialized tensors, zlib, PNG,
 * JPEG, WAV), decompositions (SVD, QR, LU, eigenvalues, sqrtm, logm), image metrics and combined
 * non-max suppression, string segment joins, n-grams and set intersections; int64 limits, subnormal
 * floats (flushed to zero by TensorFlow on every call path), a 1 MB string, a rank-8 tensor.
 *
 * <p>{@code Function.load} runs each on Python's input and returns what Python's restored model
 * returned and what TensorFlow Java's {@code SavedModelBundle} returns ({@link SavedModelCorpus#check}).
 */
class OpZooCorpusTest {
  @TempDir static Path dir;
  private static SavedModelCorpus corpus;

  @BeforeAll
  static void writeModels() throws Exception {
    corpus = SavedModelCorpus.parse(PythonScripts.run("make_op_zoo.py", 600, dir.toString()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"str_regex", "str_numbers", "str_join_format", "str_unicode", "str_hash_compare", "int_division",
      "bitwise", "clip_ints", "segments", "cumulative", "bincount", "sort_ties", "reductions", "einsum", "linalg",
      "complex_math", "special_f64", "safe_division", "where_dynamic", "unique", "boolean_mask", "gathers", "scatters",
      "tile_pad", "reverse_roll", "image_resize", "image_misc", "signal", "one_hot_broadcast", "unknown_rank",
      "unknown_dims", "scalars", "zero_size", "uint8_io", "uint16_io", "narrow_intermediates", "float64_io", "half_io",
      "bool_io", "int64_indices", "stateless_random", "generator_philox", "generator_full_int", "nested_outputs",
      "nested_tuple", "partition_stitch", "single_output", "nn_ops", "bucketize_search", "asserts_and_print",
      "sparse_dense", "passthrough", "string_bytes", "unknown_rank_others", "control_flow", "variable_dtypes",
      "nested_functions", "captured_constants", "dataset_in_function", "gradients_in_function", "traced_variants", "varargs", "unicode_keys", "where_dynamic@1", "where_dynamic@2", "unknown_rank@1",
      "unknown_rank@2", "unknown_dims@1", "unknown_dims@2", "unknown_rank_others@1", "io_decode", "image_codecs", "linalg_decompositions", "image_metrics",
      "string_segments", "many_io", "function_attributes", "value_limits"})
  void loadsAndAnswersLikePythonAndSavedModelBundle(String model) {
    corpus.check(dir, model);
  }

  /**
   * One loaded function called with inputs of other shapes and ranks (empty outputs, a scalar after
   * a rank-4 tensor) after two calls, once it runs on its session path: each call answers as
   * Python's restored function did for that input.
   */
  @ParameterizedTest
  @ValueSource(strings = {"where_dynamic", "unknown_rank", "unknown_dims", "unknown_rank_others"})
  void answersInputsOfOtherShapesOnEitherPath(String model) {
    List<String> others = corpus.outputs.keySet().stream().filter(m -> m.startsWith(model + "@")).toList();
    assertFalse(others.isEmpty(), model);
    corpus.checkCalls(dir, model, others);
  }
}
