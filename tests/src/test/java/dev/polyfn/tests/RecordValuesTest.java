package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.RecordInput;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/** Java records as parameters and outputs. */
class RecordValuesTest {

  record Batch(TFloat32 features, TInt64 labels, int size) {}

  /** Two components of one type, to check each accessor gets its own placeholder. */
  record Pair(TFloat32 left, TFloat32 right) {}

  /** Output records are generic in their leaves: operands in the body, tensors for the caller. */
  record Heads<T>(T sum, T count) {}

  record Other(TFloat32 features, TInt64 labels, int size) {}

  private static MapFunction scaled() {
    return scaled(FunctionOptions.defaults());
  }

  private static MapFunction scaled(FunctionOptions options) {
    return Function.define((tf, in) -> {
      RecordInput<Batch> b = in.record("batch", Batch.class);
      Operand<TFloat32> f = b.get(Batch::features);
      Operand<TInt64> l = b.get(Batch::labels);
      int size = b.value(Batch::size);
      return Map.of("y", tf.math.mul(f, tf.constant((float) size)), "n", tf.math.add(l, tf.constant(1L)));
    }, options);
  }

  @Test
  void exampleRecordsOfDifferentBatchSizesCoalesceIntoOneTrace() {
    try (TFloat32 x2 = TFloat32.vectorOf(1, 2);
        TInt64 l2 = TInt64.vectorOf(7, 8);
        TFloat32 x5 = TFloat32.vectorOf(1, 2, 3, 4, 5);
        TInt64 l5 = TInt64.vectorOf(1, 2, 3, 4, 5);
        MapFunction f = scaled(FunctionOptions.defaults().withExampleInputs(
            Map.of("batch", new Batch(x2, l2, 3)), Map.of("batch", new Batch(x5, l5, 3))));
        TFloat32 x7 = TFloat32.vectorOf(1, 2, 3, 4, 5, 6, 7);
        TInt64 l7 = TInt64.vectorOf(1, 2, 3, 4, 5, 6, 7);
        Outputs out = f.call(Map.of("batch", new Batch(x7, l7, 3)))) {
      assertEquals(1, f.traceCount(), "a third batch size is served by the coalesced trace");
      assertEquals(21f, out.get("y", TFloat32.class).getFloat(6), 0f);
      assertEquals(8L, out.get("n", TInt64.class).getLong(6));
      String report = String.join("\n", f.inferenceReport());
      assertTrue(report.contains("batch: Batch(features: TensorSpec(FLOAT, [-1]), labels: TensorSpec(INT64, [-1]), size: Literal(3))"
          + " (inferred from 2 examples)"), report);
      // Another Java value in the record is not generalized: it traces, and the report of
      // examples that differ there names the component.
      try (MapFunction g = scaled(FunctionOptions.defaults().withExampleInputs(
          Map.of("batch", new Batch(x2, l2, 3)), Map.of("batch", new Batch(x5, l5, 4))))) {
        assertEquals(2, g.traceCount());
        String why = String.join("\n", g.inferenceReport());
        assertTrue(why.contains("batch.size: Java values 3, 4 are traced one per value"), why);
      }
    }
  }

  @Test
  void aRecordIsOneParameterReadThroughItsAccessors() {
    try (MapFunction f = scaled();
        TFloat32 x = TFloat32.vectorOf(1, 2);
        TInt64 l = TInt64.vectorOf(7, 8);
        Outputs out = f.call(Map.of("batch", new Batch(x, l, 3)))) {
      assertEquals(6f, out.get("y", TFloat32.class).getFloat(1), 0f);
      assertEquals(9L, out.get("n", TInt64.class).getLong(1));
      assertEquals("(batch: Batch(features: TensorSpec(FLOAT, [2]), labels: TensorSpec(INT64, [2]), size: Literal(3)))",
          f.concreteFunctions().get(0).functionType().toString());
    }
  }

  @Test
  void theSignatureIsTheClassTheJavaValuesAndEachTensorsType() {
    try (MapFunction f = scaled();
        TFloat32 x = TFloat32.vectorOf(1, 2);
        TFloat32 y = TFloat32.vectorOf(3, 4);
        TInt64 l = TInt64.vectorOf(7, 8)) {
      f.call(Map.of("batch", new Batch(x, l, 3))).close();
      f.call(Map.of("batch", new Batch(y, l, 3))).close();
      assertEquals(1, f.traceCount());
      f.call(Map.of("batch", new Batch(y, l, 4))).close();
      assertEquals(2, f.traceCount(), "another Java value traces");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> f.call(Map.of("batch", new Other(x, l, 3))).close());
      assertTrue(e.getMessage().startsWith("argument 'batch': expected a record " + Batch.class.getName()), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("batch", new Batch(x, null, 3))).close());
      assertTrue(e.getMessage().startsWith("argument 'batch.labels': expected a tensor"), e.getMessage());
    }
  }

  @Test
  void theSameTensorInTwoComponentsStillGivesTwoPlaceholders() {
    try (MapFunction f = Function.define((tf, in) -> {
          RecordInput<Pair> p = in.record("p", Pair.class);
          return Map.of("d", tf.math.sub(p.get(Pair::left), p.get(Pair::right)));
        });
        TFloat32 a = TFloat32.scalarOf(5);
        TFloat32 b = TFloat32.scalarOf(2)) {
      try (Outputs out = f.call(Map.of("p", new Pair(a, a)))) {
        assertEquals(0f, out.get("d", TFloat32.class).getFloat(), 0f);
      }
      try (Outputs out = f.call(Map.of("p", new Pair(a, b)))) {
        assertEquals(3f, out.get("d", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(1, f.traceCount());
    }
  }

  @Test
  void aRecordOfOperandsComesBackAsARecordOfTensors() {
    try (NestFunction f = Function.defineNested((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return new Heads<>(tf.sum(x, tf.constant(0)), tf.dtypes.cast(tf.size(x), TFloat32.class));
        }, FunctionOptions.defaults());
        TFloat32 x = TFloat32.vectorOf(1, 2, 3);
        NestOutputs out = f.call(x)) {
      @SuppressWarnings("unchecked")
      Heads<TFloat32> h = out.value(Heads.class);
      assertEquals(6f, h.sum().getFloat(), 0f);
      assertEquals(3f, h.count().getFloat(), 0f);
    }
  }

  @Test
  void aRecordAndListsNestInEachOther() {
    try (MapFunction f = Function.define((tf, in) -> {
          var xs = in.nest("xs");
          Operand<TFloat32> total = tf.constant(0f);
          for (var e : xs.elements()) {
            total = tf.math.add(total, e.get("features").operand(TFloat32.class));
          }
          return Map.of("t", total);
        });
        TFloat32 a = TFloat32.scalarOf(1);
        TFloat32 b = TFloat32.scalarOf(2);
        TInt64 l = TInt64.scalarOf(0);
        Outputs out = f.call(Map.of("xs", List.of(new Batch(a, l, 1), new Batch(b, l, 1))))) {
      assertEquals(3f, out.get("t", TFloat32.class).getFloat(), 0f);
    }
  }
}
