package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Composites;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.SparseOperand;
import dev.polyfn.tests.ragged.Ragged;
import dev.polyfn.tests.ragged.RaggedOperand;
import dev.polyfn.tests.ragged.RaggedType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/** SparseTensor (built in) and a user composite type (a ragged tensor) through the protocol. */
class CompositeValuesTest {

  @BeforeAll
  static void register() {
    try {
      Composites.register(RaggedType.INSTANCE);
    } catch (IllegalArgumentException alreadyRegistered) {
      // another test class of this JVM registered it
    }
  }

  /** Each row's sum: a cumulative sum read at the row splits. */
  static Operand<TFloat32> rowSums(Ops tf, RaggedOperand r) {
    Operand<TFloat32> cs = tf.concat(List.of(tf.constant(new float[] {0f}), tf.math.cumsum(r.values(), tf.constant(0))),
        tf.constant(0));
    Operand<TFloat32> at = tf.gather(cs, r.rowSplits(), tf.constant(0));
    Operand<TInt32> rows = tf.reshape(tf.math.sub(tf.size(at), tf.constant(1)), tf.constant(new int[] {1}));
    return tf.math.sub(tf.slice(at, tf.constant(new int[] {1}), rows), tf.slice(at, tf.constant(new int[] {0}), rows));
  }

  private static MapFunction summer(FunctionOptions options) {
    return Function.define((tf, in) -> Map.of("sums", rowSums(tf, in.composite("r", RaggedType.INSTANCE))), options);
  }

  private static float[] sums(MapFunction f, float[] values, long... splits) {
    try (TFloat32 v = TFloat32.vectorOf(values);
        TInt64 s = TInt64.vectorOf(splits);
        Outputs out = f.call(Map.of("r", new Ragged(v, s)))) {
      TFloat32 y = out.get("sums", TFloat32.class);
      float[] r = new float[(int) y.shape().get(0)];
      for (int i = 0; i < r.length; i++) {
        r[i] = y.getFloat(i);
      }
      return r;
    }
  }

  @Test
  void aRaggedTensorIsTwoGraphInputsAndItsCountsAreTheSignature() {
    try (MapFunction f = summer(FunctionOptions.defaults())) {
      assertEquals(List.of(3f, 12f), box(sums(f, new float[] {1, 2, 3, 4, 5}, 0, 2, 5)));
      assertEquals(List.of(30f, 30f), box(sums(f, new float[] {10, 20, 30, 0, 0}, 0, 2, 5)));
      assertEquals(1, f.traceCount());
      sums(f, new float[] {1, 2, 3}, 0, 1, 3);
      assertEquals(2, f.traceCount(), "exact tracing: a new value count traces");
      assertEquals("(r: Ragged(FLOAT, [2, -1]; values: [5], row_splits: [3]))",
          f.concreteFunctions().get(0).functionType().toString());
    }
  }

  @Test
  void rowAndValueCountsGeneralizeIndependently() {
    try (MapFunction f = summer(FunctionOptions.defaults().withReduceRetracing(true))) {
      sums(f, new float[] {1, 2, 3, 4, 5}, 0, 2, 5);
      sums(f, new float[] {1, 2, 3}, 0, 1, 3);
      assertEquals(2, f.traceCount());
      assertEquals(List.of(10f, 11f), box(sums(f, new float[] {1, 2, 3, 4, 5, 6}, 0, 4, 6)), "served by values: [-1]");
      assertEquals(2, f.traceCount());
      assertEquals(List.of(1f, 2f, 3f), box(sums(f, new float[] {1, 2, 3}, 0, 1, 2, 3)));
      assertEquals(3, f.traceCount(), "a new row count traces once more, generalizing the rows too");
      assertEquals(List.of(3f, 0f, 4f, 5f), box(sums(f, new float[] {1, 2, 4, 5}, 0, 2, 2, 3, 4)));
      assertEquals(3, f.traceCount());
      String last = f.concreteFunctions().get(f.concreteFunctions().size() - 1).functionType().toString();
      assertEquals("(r: Ragged(FLOAT, [-1, -1]; values: [-1], row_splits: [-1]))", last);
      String reason = f.traceHistory().get(2).reason();
      assertTrue(reason.startsWith("r: Ragged(FLOAT, [3, -1]"), reason);
    }
  }

  @Test
  void aRaggedOutputComesBackAsARaggedValue() {
    try (NestFunction f = Function.defineNested((tf, in) -> {
          RaggedOperand r = in.composite("r", RaggedType.INSTANCE);
          return List.of(new RaggedOperand(tf.math.mul(r.values(), tf.constant(2f)), r.rowSplits()), rowSums(tf, r));
        });
        TFloat32 v = TFloat32.vectorOf(1, 2, 3);
        TInt64 s = TInt64.vectorOf(0, 1, 3);
        NestOutputs out = f.call(Map.of("r", new Ragged(v, s)))) {
      List<Object> both = out.value();
      Ragged doubled = (Ragged) both.get(0);
      assertEquals(6f, doubled.values().getFloat(2), 0f);
      assertEquals(3L, doubled.rowSplits().getLong(2));
      assertEquals(5f, ((TFloat32) both.get(1)).getFloat(1), 0f);
    }
  }

  @Test
  void aClosedComponentIsRefusedNamingThePath() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("n",
            tf.size(in.nest("xs").get(0).composite(RaggedOperand.class).values())));
        TFloat32 v = TFloat32.vectorOf(1, 2);
        TInt64 s = TInt64.vectorOf(0, 2)) {
      f.call(Map.of("xs", List.of(new Ragged(v, s)))).close();
      TFloat32 closed = TFloat32.vectorOf(1, 2);
      closed.close();
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("xs", List.of(new Ragged(closed, s)))).close());
      assertTrue(e.getMessage().startsWith("argument 'xs[0]': component 'values' of a Ragged is closed"), e.getMessage());
    }
  }

  @Test
  void aSparseTensorIsThreeGraphInputsTypedByDtypeAndDenseShape() {
    try (MapFunction f = Function.define((tf, in) -> {
          SparseOperand<TFloat32> s = in.sparse("s", TFloat32.class);
          return Map.of("rows", tf.sparse.sparseReduceSum(s.indices(), s.values(), s.denseShape(), tf.constant(1)));
        })) {
      assertEquals(List.of(3f, 0f, 4f), box(rows(f, new long[][] {{0, 0}, {0, 2}, {2, 1}}, new float[] {1, 2, 4}, 3, 4)));
      assertEquals(List.of(0f, 9f, 0f), box(rows(f, new long[][] {{1, 3}}, new float[] {9}, 3, 4)));
      assertEquals(1, f.traceCount(), "the number of non-zeros is not in the signature");
      rows(f, new long[][] {{1, 3}}, new float[] {9}, 2, 4);
      assertEquals(2, f.traceCount(), "the dense shape is");
      assertEquals("(s: SparseTensor(FLOAT, [3, 4]; indices: [-1, 2], values: [-1], dense_shape: [2]))",
          f.concreteFunctions().get(0).functionType().toString());
    }
  }

  @Test
  void aSparseOutputComesBackAsASparseTensor() {
    try (NestFunction f = Function.defineNested((tf, in) -> {
          SparseOperand<TFloat32> s = in.sparse("s", TFloat32.class);
          return new SparseOperand<>(s.indices(), tf.math.mul(s.values(), tf.constant(10f)), s.denseShape());
        });
        TInt64 idx = TInt64.tensorOf(org.tensorflow.ndarray.StdArrays.ndCopyOf(new long[][] {{0, 1}, {1, 0}}));
        TFloat32 vals = TFloat32.vectorOf(1, 2);
        TInt64 dense = TInt64.vectorOf(2, 2);
        NestOutputs out = f.call(Map.of("s", SparseTensor.of(idx, vals, dense)))) {
      SparseTensor<?> s = out.value(SparseTensor.class);
      assertEquals(20f, ((TFloat32) s.values()).getFloat(1), 0f);
      assertEquals(1L, s.indices().getLong(0, 1));
      assertEquals(2L, s.denseShape().getLong(0));
    }
  }

  @Test
  void aSparseTensorWhereADenseOneIsDeclaredIsRefused() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", in.input("x", TFloat32.class)));
        TInt64 idx = TInt64.tensorOf(org.tensorflow.ndarray.StdArrays.ndCopyOf(new long[][] {{0}}));
        TFloat32 vals = TFloat32.vectorOf(1);
        TInt64 dense = TInt64.vectorOf(3)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("x", SparseTensor.of(idx, vals, dense))).close());
      assertTrue(e.getMessage().startsWith("argument 'x': got a SparseTensor where a dense tensor is declared"), e.getMessage());
    }
  }

  private static float[] rows(MapFunction f, long[][] indices, float[] values, long... dense) {
    try (TInt64 idx = TInt64.tensorOf(org.tensorflow.ndarray.StdArrays.ndCopyOf(indices));
        TFloat32 vals = TFloat32.vectorOf(values);
        TInt64 d = TInt64.vectorOf(dense);
        Outputs out = f.call(Map.of("s", SparseTensor.of(idx, vals, d)))) {
      TFloat32 y = out.get("rows", TFloat32.class);
      float[] r = new float[(int) y.shape().get(0)];
      for (int i = 0; i < r.length; i++) {
        r[i] = y.getFloat(i);
      }
      return r;
    }
  }

  private static List<Float> box(float[] a) {
    Float[] b = new Float[a.length];
    for (int i = 0; i < a.length; i++) {
      b[i] = a[i];
    }
    return List.of(b);
  }
}
