package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.ByteDataBuffer;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/**
 * The caller-thread call paths (the default where Polyfn finds them safe) give bitwise the same
 * outputs as TensorFlow's thread-pool path ({@code withFastPath(false)}) on a broad set of
 * functions: both are run on the same inputs, alternating, past the promotion and its trial, and
 * Polyfn's log must show that calls of the first left the pool.
 */
class CallPathParityTest {
  /** Calls of each function: past the promotion to the session path (64) and a trial (16). */
  static final int CALLS = 100;

  /** What Polyfn logs when a trial of a caller-thread path ends: calls ran on it. */
  static final List<String> TRIAL_VERDICTS = List.of("keeps its session path", "goes back to the eager path",
      "keeps the single-threaded executor", "goes back to the thread pool");

  /**
   * Fails unless the records show that some of the function's calls ran off the thread pool (a
   * trial's verdict), so that the comparison was not of the pool with itself. Under the opt-in
   * path ({@code dev.polyfn.eagerOpAsFunction}, the suite's second run) every call of these
   * functions takes it from the first, and nothing is logged.
   */
  static void assertLeftThePool(String name, List<String> records) {
    if (Boolean.getBoolean("dev.polyfn.eagerOpAsFunction")) {
      return;
    }
    assertTrue(records.stream().anyMatch(r -> TRIAL_VERDICTS.stream().anyMatch(r::contains)),
        name + ": no call left the thread pool: " + records);
  }

  /** One function of the set: a body and the arguments of its calls (made afresh per call). */
  record Case(String name, MapBody body, Supplier<Map<String, Tensor>> args) {}

  private static float[] ramp(int n, float scale) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) Math.sin(i * 0.37) * scale;
    }
    return v;
  }

  private static TFloat32 matrix(int rows, int cols, float scale) {
    float[] v = ramp(rows * cols, scale);
    TFloat32 t = TFloat32.tensorOf(Shape.of(rows, cols));
    for (int i = 0; i < v.length; i++) {
      t.setFloat(v[i], i / cols, i % cols);
    }
    return t;
  }

  private static Operand<TFloat32> constant(Ops tf, int rows, int cols, float scale) {
    try (TFloat32 value = matrix(rows, cols, scale)) {
      return tf.constantOf(value);
    }
  }

  static List<Case> cases() {
    List<Case> cases = new ArrayList<>();
    cases.add(new Case("add2", (tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(2f))),
        () -> Map.of("x", TFloat32.scalarOf(1.25f))));
    cases.add(new Case("mlp", (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> w1 = constant(tf, 64, 64, 0.1f);
      Operand<TFloat32> w2 = constant(tf, 64, 10, 0.1f);
      Operand<TFloat32> h = tf.nn.relu(tf.math.add(tf.linalg.matMul(x, w1), tf.constant(ramp(64, 0.05f))));
      Operand<TFloat32> logits = tf.linalg.matMul(h, w2);
      return Map.of("logits", logits, "softmax", tf.nn.softmax(logits), "tanh", tf.math.tanh(h));
    }, () -> Map.of("x", matrix(3, 64, 1f))));
    cases.add(new Case("int32", (tf, in) -> {
      Operand<TInt32> x = in.input("x", TInt32.class);
      return Map.of("y", tf.math.floorMod(tf.math.add(tf.math.mul(x, tf.constant(3)), tf.constant(7)), tf.constant(5)),
          "neg", tf.math.neg(x));
    }, () -> Map.of("x", TInt32.vectorOf(-4, -1, 0, 3, 11))));
    cases.add(new Case("float64", (tf, in) -> {
      Operand<TFloat64> x = in.input("x", TFloat64.class);
      return Map.of("y", tf.math.add(tf.math.exp(x), tf.math.log1p(tf.math.square(x))), "r", tf.math.sqrt(tf.math.abs(x)));
    }, () -> Map.of("x", TFloat64.vectorOf(-1.5, 0.1, 0.7, 3.3))));
    cases.add(new Case("int64 cumsum", (tf, in) -> Map.of("y", tf.math.cumsum(in.input("x", TInt64.class), tf.constant(0))),
        () -> Map.of("x", TInt64.vectorOf(5L, -2L, 1L << 40, 9L))));
    cases.add(new Case("reductions", (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("sum", tf.sum(x, tf.constant(0)), "mean", tf.math.mean(x, tf.constant(1)),
          "max", tf.max(x, tf.constant(new int[] {0, 1})));
    }, () -> Map.of("x", matrix(7, 33, 3f))));
    cases.add(new Case("shape outputs", (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("shape", tf.shape(x), "size", tf.size(x), "doubled", tf.math.mul(x, tf.constant(2f)));
    }, () -> Map.of("x", matrix(2, 5, 1f))));
    cases.add(new Case("reshape concat gather transpose", (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> t = tf.linalg.transpose(x, tf.constant(new int[] {1, 0}));
      Operand<TFloat32> c = tf.concat(List.of(x, tf.math.neg(x)), tf.constant(0));
      return Map.of("t", t, "c", tf.reshape(c, tf.constant(new int[] {-1})),
          "g", tf.gather(x, tf.constant(new int[] {1, 0, 1}), tf.constant(0)));
    }, () -> Map.of("x", matrix(4, 6, 2f))));
    cases.add(new Case("booleans and select", (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TBool> positive = tf.math.greater(x, tf.constant(0f));
      return Map.of("mask", positive, "relu6", tf.select(positive, tf.math.minimum(x, tf.constant(6f)), tf.zerosLike(x)));
    }, () -> Map.of("x", TFloat32.vectorOf(-3f, 0f, 2.5f, 9f))));
    cases.add(new Case("stateless random", (tf, in) -> Map.of("u", tf.math.add(in.input("x", TFloat32.class),
            tf.random.statelessRandomUniform(tf.constant(new int[] {16}), tf.constant(new long[] {7L, 11L}), TFloat32.class))),
        () -> Map.of("x", TFloat32.scalarOf(0.5f))));
    cases.add(new Case("outputs aliasing the input", (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("same", tf.identity(x), "also", x, "sq", tf.math.square(x));
    }, () -> Map.of("x", TFloat32.vectorOf(1f, -2f, 3f))));
    cases.add(new Case("matmul 128", (tf, in) -> {
      Operand<TFloat32> a = in.input("a", TFloat32.class);
      Operand<TFloat32> b = in.input("b", TFloat32.class);
      return Map.of("ab", tf.linalg.matMul(a, b), "ba", tf.linalg.matMul(b, a));
    }, () -> Map.of("a", matrix(128, 128, 1f), "b", matrix(128, 128, 0.5f))));
    return cases;
  }

  /** Each output's dtype, shape and bytes, by name. */
  private static Map<String, String> fingerprint(MapFunction f, Map<String, Tensor> args) {
    Map<String, String> out = new LinkedHashMap<>();
    try (Outputs o = f.call(args)) {
      for (String name : o.names()) {
        Tensor t = o.get(name);
        ByteDataBuffer data = t.asRawTensor().data();
        byte[] bytes = new byte[(int) data.size()];
        data.read(bytes);
        out.put(name, t.dataType() + " " + t.shape() + " " + java.util.HexFormat.of().formatHex(bytes));
      }
    } finally {
      args.values().forEach(Tensor::close);
    }
    return out;
  }

  @Test
  void bothPathsGiveBitwiseEqualOutputs() {
    for (Case c : cases()) {
      List<String> records;
      try (MapFunction fast = Function.define(c.body(), FunctionOptions.defaults().withName(c.name()));
          MapFunction pooled = Function.define(c.body(), FunctionOptions.defaults().withName(c.name()).withFastPath(false))) {
        Map<String, String> reference = fingerprint(pooled, c.args().get());
        records = LoggedWarnings.atLeast(Level.FINE, () -> {
          for (int i = 0; i < CALLS; i++) {
            assertEquals(reference, fingerprint(fast, c.args().get()), c.name() + ", call " + i);
            assertEquals(reference, fingerprint(pooled, c.args().get()), c.name() + ", call " + i);
          }
        });
      }
      System.out.println(c.name() + ": " + records);
      assertLeftThePool(c.name(), records);
    }
  }

  @Test
  void variablesAdvanceTheSameOnBothPaths() {
    try (TFloat32 zero = TFloat32.scalarOf(0f);
        Variable<TFloat32> a = Variable.create(zero);
        Variable<TFloat32> b = Variable.create(zero)) {
      try (MapFunction fast = Function.define((tf, in) -> {
            Operand<TFloat32> next = tf.math.add(tf.math.mul(a.read(tf), tf.constant(1.1f)), in.input("x", TFloat32.class));
            a.assign(tf, next);
            return Map.of("v", next);
          });
          MapFunction pooled = Function.define((tf, in) -> {
            Operand<TFloat32> next = tf.math.add(tf.math.mul(b.read(tf), tf.constant(1.1f)), in.input("x", TFloat32.class));
            b.assign(tf, next);
            return Map.of("v", next);
          }, FunctionOptions.defaults().withFastPath(false))) {
        List<String> records = LoggedWarnings.atLeast(Level.FINE, () -> {
          for (int i = 0; i < CALLS; i++) {
            float x = 0.3f * (i % 20) - 1f;
            String viaFast = fingerprint(fast, Map.of("x", TFloat32.scalarOf(x))).get("v");
            String viaPool = fingerprint(pooled, Map.of("x", TFloat32.scalarOf(x))).get("v");
            assertEquals(viaPool, viaFast, "step " + i);
          }
        });
        System.out.println("variables: " + records);
        assertLeftThePool("variables", records);
        assertArrayEquals(new float[] {b.value().getFloat()}, new float[] {a.value().getFloat()});
      }
    }
  }
}
