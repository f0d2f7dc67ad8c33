package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.Tensor;

/**
 * More real models, which Polyfn was not written for, built and saved by Python during the test
 * ({@code tests/python/make_keras_models_more.py}): Keras 3 layers and applications exported with
 * {@code model.export} (1-D, separable, depthwise and transposed convolutions, pooling, padding and
 * cropping, SimpleRNN, GRU with {@code reset_after=False}, stacked and masked LSTMs, a masking
 * Embedding before a GRU, ConvLSTM1D, dot-product and additive attention, group and unit
 * normalization, mixed precision, an int8-quantized model, the preprocessing layers
 * Normalization, Discretization, Hashing, CategoryEncoding, Rescaling, Resizing, CenterCrop,
 * TextVectorization (TF-IDF) and StringLookup (one-hot), a model with a dict of two inputs and two
 * outputs, one with a list of outputs, EfficientNetB0, DenseNet121, a Keras ExportArchive's second
 * endpoint) and {@code tf.Module}s saved with {@code tf.saved_model.save} (a TensorArray in a while
 * loop, switch_case and einsum, sorting, segment sums and scatters, string ops, FFTs, float64
 * linear algebra, stateless and generator random ops, image ops, int, uint8, bool, float16 and
 * bfloat16 dtypes, a tuple of outputs, no inputs, XLA, captured constants, an asset file, a
 * checkpoint in five data files, variables the call assigns, variables of int8, int16, uint32,
 * complex64 and of unknown shape).
 *
 * <p>{@code Function.load} runs each on Python's input, three times (the first run's execution
 * moves a function to its session path after two calls), and returns, for every output, what
 * Python's restored model returned and what TensorFlow Java's {@code SavedModelBundle} returns in
 * this JVM: the same dtype and shape, floats within 1e-5 (relative for large values: Python's
 * TensorFlow is 2.21, TensorFlow Java's 2.18), integers, bools and strings exactly. An output
 * neither can hand to Java and a {@code tf.py_function} are refused by Polyfn's load and by
 * {@code SavedModelBundle}'s call.
 */
class KerasModelCorpusMoreTest {
  @TempDir static Path dir;
  private static SavedModelCorpus corpus;

  @BeforeAll
  static void writeModels() throws Exception {
    corpus = SavedModelCorpus.parse(PythonScripts.run("make_keras_models_more.py", 600, dir.toString()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"conv1d", "separable", "transpose", "pooling", "simple_rnn", "gru_reset_before", "stacked_lstm",
      "masking_lstm", "embedding_mask_gru", "conv_lstm", "attention", "group_norm", "normalization", "discretization",
      "hashing", "hashing_salted", "category_encoding", "image_preprocessing", "two_inputs_two_outputs", "list_outputs",
      "quantized_int8", "mixed_precision", "time_distributed", "text_tf_idf", "string_one_hot",
      "efficientnet_b0", "densenet121", "tensor_array_loop", "switch_einsum_0", "switch_einsum_2", "sorting", "segments",
      "strings", "spectral", "linear_algebra", "stateless_random", "ints_and_bools", "tuple_outputs", "stateful", "narrow_variables", "half_and_string_variables", "unknown_shape_variable", "captured", "reads_asset", "no_inputs", "compiled", "half",
      "random_generator", "images", "counting", "sharded_checkpoint", "export_archive"})
  void loadsAndAnswersLikePythonAndSavedModelBundle(String model) {
    corpus.check(dir, model);
  }

  /**
   * An int16 output, which TensorFlow Java has no tensor class for: {@code SavedModelBundle} fails
   * on it at the call; Polyfn's load refuses it, naming the output and the dtype (a function that
   * loads and then fails every call would be worse than one refused with the reason).
   */
  @Test
  void refusesAnOutputOfADtypeTensorFlowJavaCannotHold() {
    Path saved = dir.resolve("int16_output");
    String[] in = corpus.inputs.get("int16_output").get(0);
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve");
         Tensor x = corpus.input("int16_output", 0)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
        try (Result r = bundle.function("serving_default").call(Map.of(in[1], x))) {
          r.get("i16");
        }
      });
      assertTrue(e.getMessage().contains("DT_INT16"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Function.load(saved, corpus.functions.get("int16_output")).close());
    assertTrue(e.getMessage().contains("no concrete function") && e.getMessage().contains("output 'i16'")
        && e.getMessage().contains("DT_INT16"), e.getMessage());
  }

  /**
   * A {@code tf.py_function}, whose Python body no SavedModel holds (an {@code EagerPyFunc} op, for
   * which no runtime outside Python has a kernel): {@code SavedModelBundle} loads it and fails at
   * the call, with TensorFlow's message naming the op; Polyfn's load refuses it, naming the op and
   * why (a function that loads and then fails every call would be worse).
   */
  @Test
  void refusesAPythonFunctionBody() {
    Path saved = dir.resolve("py_function");
    String[] in = corpus.inputs.get("py_function").get(0);
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve");
         Tensor x = corpus.input("py_function", 0)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> bundle.function("serving_default").call(Map.of(in[1], x)).close());
      assertTrue(e.getMessage().contains("EagerPyFunc"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Function.load(saved, corpus.functions.get("py_function")).close());
    assertTrue(e.getMessage().contains("op EagerPyFunc has no kernel") && e.getMessage().contains("tf.py_function"),
        e.getMessage());
  }
}
