package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/** cond and whileLoop over maps and records of operands: results rebuilt in the same structure, mismatches named. */
class StructuredControlFlowTest {

  public record State(Operand<TInt32> i, Operand<TFloat32> acc) {}

  public record Pair(Operand<TFloat32> a, Operand<TFloat32> b) {}

  public record Swapped(Operand<TFloat32> b, Operand<TFloat32> a) {}

  public record Counted(Operand<TInt32> i, int n) {}

  @Test
  void aMapLoopSumsItsCounterAndKeepsTheKeys() {
    // acc = 0 + 0.5 + 1 + ... while i < n: n = 5 gives 0.5 * (0+1+2+3+4) = 5, i = 5.
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TInt32> n = in.input("n", TInt32.class);
          Map<String, Operand<?>> out = Flow.whileLoop(tf, Map.of("i", tf.constant(0), "acc", tf.constant(0f)),
              v -> tf.math.less(i(v.get("i")), n),
              v -> Map.of("i", tf.math.add(i(v.get("i")), tf.constant(1)),
                  "acc", tf.math.add(f32(v.get("acc")), tf.math.mul(tf.dtypes.cast(i(v.get("i")), TFloat32.class),
                      tf.constant(0.5f)))));
          assertEquals(List.of("acc", "i"), List.copyOf(out.keySet()));
          return out;
        });
        TInt32 n = TInt32.scalarOf(5); Outputs o = f.call(Map.of("n", n))) {
      assertEquals(5, o.get("i", TInt32.class).getInt());
      assertEquals(5f, o.get("acc", TFloat32.class).getFloat(), 0f);
    }
  }

  @Test
  void aRecordLoopRebuildsTheRecordAndHonoursOptions() {
    // acc = 2 * acc + i from acc = 1: i = 0..3 gives 2, 5, 12, 27; bounded at 2 iterations, 5.
    for (int[] bound : new int[][] {{-1, 27}, {2, 5}}) {
      try (MapFunction f = Function.define((tf, in) -> {
            Operand<TInt32> n = in.input("n", TInt32.class);
            State start = new State(tf.constant(0), tf.constant(1f));
            java.util.function.Function<State, State> step = s -> new State(tf.math.add(s.i(), tf.constant(1)),
                tf.math.add(tf.math.mul(s.acc(), tf.constant(2f)), tf.dtypes.cast(s.i(), TFloat32.class)));
            State end = bound[0] < 0
                ? Flow.whileLoop(tf, start, s -> tf.math.less(s.i(), n), step)
                : Flow.whileLoop(tf, start, Flow.loop().maximumIterations(bound[0]), s -> tf.math.less(s.i(), n), step);
            return Map.of("acc", end.acc(), "i", end.i());
          });
          TInt32 n = TInt32.scalarOf(4); Outputs o = f.call(Map.of("n", n))) {
        assertEquals(bound[1], o.get("acc", TFloat32.class).getFloat(), 0f);
      }
    }
  }

  @Test
  void condReturnsMapsAndRecordsFromTheBranchTakenAtRunTime() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
          traces.incrementAndGet();
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          var positive = tf.math.greater(x, tf.constant(0f));
          Map<String, Operand<?>> m = Flow.condMap(tf, positive,
              () -> Map.of("y", tf.math.mul(x, tf.constant(2f)), "z", tf.math.add(x, tf.constant(1f))),
              () -> Map.of("z", tf.math.sub(x, tf.constant(1f)), "y", tf.math.neg(x)));
          Pair p = Flow.condRecord(tf, positive,
              () -> new Pair(x, tf.math.square(x)),
              () -> new Pair(tf.math.square(x), x));
          return Map.of("y", m.get("y"), "z", m.get("z"), "a", p.a(), "b", p.b());
        })) {
      // x = 3: y = 6, z = 4, (a, b) = (3, 9); x = -2: y = 2, z = -3, (a, b) = (4, -2).
      float[][] cases = {{3f, 6f, 4f, 3f, 9f}, {-2f, 2f, -3f, 4f, -2f}};
      for (float[] c : cases) {
        try (TFloat32 x = TFloat32.scalarOf(c[0]); Outputs o = f.call(Map.of("x", x))) {
          assertEquals(c[1], o.get("y", TFloat32.class).getFloat(), 0f);
          assertEquals(c[2], o.get("z", TFloat32.class).getFloat(), 0f);
          assertEquals(c[3], o.get("a", TFloat32.class).getFloat(), 0f);
          assertEquals(c[4], o.get("b", TFloat32.class).getFloat(), 0f);
        }
      }
      assertEquals(1, traces.get());
    }
  }

  @Test
  void gradientsGoThroughARecordLoop() {
    // acc = acc * w three times from 1: y = w^3, dy/dw = 3 w^2; w = 2 gives 8 and 12.
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> w = in.input("w", TFloat32.class);
          State end = Flow.whileLoop(tf, new State(tf.constant(0), tf.constant(1f)),
              s -> tf.math.less(s.i(), tf.constant(3)),
              s -> new State(tf.math.add(s.i(), tf.constant(1)), tf.math.mul(s.acc(), w)));
          return Map.of("y", end.acc(), "d", Flow.gradients(tf, end.acc(), List.of(w)).get(0));
        });
        TFloat32 w = TFloat32.scalarOf(2f); Outputs o = f.call(Map.of("w", w))) {
      assertEquals(8f, o.get("y", TFloat32.class).getFloat(), 1e-4f);
      assertEquals(12f, o.get("d", TFloat32.class).getFloat(), 1e-4f);
    }
  }

  @Test
  void mismatchedStructuresAreRefusedNamingTheKeyAndBothStructures() {
    assertEquals("cond: the then branch returns {a, b} but the else branch returns {a, c}: key 'b' is missing from "
        + "the else branch", failure((tf, x) -> Flow.condMap(tf, tf.constant(true),
            () -> Map.of("a", x, "b", x), () -> Map.of("a", x, "c", x))));
    assertEquals("cond: the then branch returns {a} but the else branch returns {a, c}: key 'c' is not in the then "
        + "branch", failure((tf, x) -> Flow.condMap(tf, tf.constant(true),
            () -> Map.of("a", x), () -> Map.of("a", x, "c", x))));
    assertEquals("cond: the then branch returns Pair(a, b) but the else branch returns Swapped(b, a): both must be "
        + "the same record class", failure((tf, x) -> Flow.<Record>condRecord(tf, tf.constant(true),
            () -> new Pair(x, x), () -> new Swapped(x, x))));
    assertEquals("cond: output 'y' is FLOAT in the then branch but INT32 in the else branch",
        failure((tf, x) -> Flow.condMap(tf, tf.constant(true), () -> Map.of("y", x), () -> Map.of("y", tf.constant(1)))));
    assertEquals("whileLoop: the loop variables are {acc, i} but the body returns {acc, j}: key 'i' is missing from "
        + "the body's result", failure((tf, x) -> Flow.whileLoop(tf, Map.of("i", tf.constant(0), "acc", x),
            v -> tf.constant(false), v -> Map.of("j", v.get("i"), "acc", v.get("acc")))));
    assertEquals("whileLoop: loop variable 'acc' enters as FLOAT but the body returns INT32",
        failure((tf, x) -> Flow.whileLoop(tf, Map.of("i", tf.constant(0), "acc", x),
            v -> tf.constant(false), v -> Map.of("i", v.get("i"), "acc", tf.constant(1)))));
    assertEquals("whileLoop: component 'n' of Counted is declared as int; every component of a record of operands "
        + "must be declared as an Operand", failure((tf, x) -> Flow.whileLoop(tf, new Counted(tf.constant(0), 3),
            s -> tf.constant(false), s -> s)));
    assertEquals("cond: the result of the else branch is null", failure((tf, x) -> Flow.condMap(tf,
        tf.constant(true), () -> Map.of("a", x), () -> null)));
  }

  /** The message of the IllegalArgumentException tracing {@code body} throws. */
  private static String failure(java.util.function.BiFunction<Ops, Operand<TFloat32>, Object> body) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (MapFunction f = Function.define((tf, in) -> {
            body.apply(tf, in.input("x", TFloat32.class));
            return Map.of("y", tf.constant(0f));
          });
          TFloat32 x = TFloat32.scalarOf(1f); Outputs o = f.call(Map.of("x", x))) {
        o.get("y", TFloat32.class);
      }
    });
    return e.getMessage();
  }

  @SuppressWarnings("unchecked")
  static Operand<TInt32> i(Operand<?> o) {
    return (Operand<TInt32>) o;
  }

  @SuppressWarnings("unchecked")
  static Operand<TFloat32> f32(Operand<?> o) {
    return (Operand<TFloat32>) o;
  }
}
