package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.polyfn.Diagnostics;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.exceptions.TFInvalidArgumentException;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * The invariant behind every error: after an exception on any path, the function and the thread
 * are as before. A good call (same or new signature) succeeds, no trace record stays on the
 * thread, and nothing is cached for the failure. Checked as a property over seeded random mixes of
 * every kind of bad call in the README's errors table with good ones, on one thread and on a pool.
 */
class FailureLeavesNoStateTest {

  /** x * scale + offset(mode); the mode (a Java value) picks the signature and the failures. */
  private static MapFunction define() {
    return Function.define((Ops tf, dev.polyfn.Inputs in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
      String mode = in.javaInput("mode", String.class);
      switch (mode) {
        case "boom" -> throw new IllegalStateException("the body refuses mode boom");
        case "extra" -> in.input("surprise", TFloat32.class); // a parameter the call lacks
        case "variable" -> in.variable("late", TFloat32.scalarOf(1f)); // a variable on a later trace
        case "gather" -> {
          return Map.of("y", tf.gather(x, tf.constant(5), tf.constant(0))); // traces; fails at run time
        }
        default -> { }
      }
      float offset = mode.length();
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(2f)), tf.constant(offset)));
    });
  }

  @Test
  void aCallThatFailsAtBindingLeavesTheFunctionUsableOnThisThread() {
    try (MapFunction f = define(); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", x))); // missing mode, first call
      assertEquals(0, Diagnostics.tracesInProgressOnThisThread());
      assertOk(f, x, "ab");
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("mode", "ab")));
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", x, "mode", "ab", "z", x)));
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", x, "mode", "abc", "z", x)));
      assertEquals(0, Diagnostics.tracesInProgressOnThisThread());
      assertOk(f, x, "ab");
      assertOk(f, x, "abc"); // and a new signature traces
      assertEquals(2, f.traceCount());
    }
  }

  @Test
  void aRecursionOverAJavaValueTracesEachLevelAsPythonDoes() {
    MapFunction[] self = new MapFunction[1];
    // power(x, n) = x * power(x, n - 1), power(x, 0) = x: a new signature (n) at every level
    self[0] = Function.define((Ops tf, dev.polyfn.Inputs in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      int n = in.javaInput("n", Integer.class);
      if (n == 0) {
        return Map.of("y", x);
      }
      @SuppressWarnings("unchecked")
      Operand<TFloat32> inner = (Operand<TFloat32>) self[0].apply(tf, Map.of("x", x, "n", n - 1)).get("y");
      return Map.of("y", tf.math.mul(x, inner));
    });
    try (MapFunction f = self[0]; TFloat32 x = TFloat32.scalarOf(2f)) {
      try (Outputs out = f.call(Map.of("x", x, "n", 20))) {
        assertEquals(Math.pow(2, 21), out.get("y", TFloat32.class).getFloat(), 0.0);
      }
      assertEquals(21, f.traceCount());
      try (Outputs out = f.call(Map.of("x", x, "n", 3))) { // cached by the recursion
        assertEquals(16f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(21, f.traceCount());
      assertEquals(0, Diagnostics.tracesInProgressOnThisThread());
    }
  }

  @Test
  void aRecursionThatNeverEndsIsRefusedAndTheFunctionStaysUsable() {
    MapFunction[] self = new MapFunction[1];
    self[0] = Function.define((Ops tf, dev.polyfn.Inputs in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      int n = in.javaInput("n", Integer.class);
      if (n < 0) {
        return Map.of("y", self[0].apply(tf, Map.of("x", x, "n", n - 1)).get("y")); // no base case
      }
      return Map.of("y", x);
    });
    try (MapFunction f = self[0]; TFloat32 x = TFloat32.scalarOf(2f)) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", x, "n", -1)));
      assertTrue(e.getMessage().contains("nested"), e.getMessage());
      assertEquals(0, Diagnostics.tracesInProgressOnThisThread());
      try (Outputs out = f.call(Map.of("x", x, "n", 1))) {
        assertEquals(2f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
    }
  }

  /**
   * A recursion on threads with small stacks: refused with an exception before native code runs
   * out of stack (which aborted the JVM), and the thread and function stay usable. In a child
   * JVM, so that a regression fails this test rather than ending the suite.
   */
  @Test
  void aRecursionOnASmallStackIsRefusedBeforeNativeCodeRunsOutOfStack() throws Exception {
    String out = ChildJvm.run(FailureLeavesNoStateTest.class, "small-stacks");
    assertTrue(out.contains("small stacks: 6 refused, 6 usable after"), out);
  }

  public static void main(String[] args) throws Exception {
    MapFunction[] self = new MapFunction[1];
    self[0] = Function.define((Ops tf, dev.polyfn.Inputs in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      int n = in.javaInput("n", Integer.class);
      return Map.of("y", n < 0 ? self[0].apply(tf, Map.of("x", x, "n", n - 1)).get("y") : x); // n < 0: no base case
    });
    int refused = 0;
    int usable = 0;
    try (MapFunction f = self[0]; TFloat32 x = TFloat32.scalarOf(2f)) {
      for (int kib : new int[] {192, 256, 384, 512, 768, 1024}) {
        Throwable[] thrown = new Throwable[1];
        boolean[] ok = new boolean[1];
        Thread t = new Thread(null, () -> {
          try {
            f.call(Map.of("x", x, "n", -1)).close();
          } catch (Throwable e) {
            thrown[0] = e;
          }
          try (Outputs out = f.call(Map.of("x", x, "n", 1))) {
            ok[0] = Diagnostics.tracesInProgressOnThisThread() == 0 && out.get("y", TFloat32.class).getFloat() == 2f;
          }
        }, "stack-" + kib, kib * 1024L);
        t.start();
        t.join();
        System.out.println(kib + " KiB: " + thrown[0]);
        // Polyfn's own refusal (no headroom left, or the nesting limit), not any IllegalStateException:
        // a panic in native code also surfaces as one ("internal error in Polyfn's native code").
        String m = thrown[0] instanceof IllegalStateException ? String.valueOf(thrown[0].getMessage()) : "";
        refused += m.contains("stack is nearly used up") || m.contains("never reaches its base case") ? 1 : 0;
        usable += ok[0] ? 1 : 0;
      }
    }
    System.out.println("small stacks: " + refused + " refused, " + usable + " usable after");
  }

  @Test
  void thousandsOfBadCallsOfEveryKindInterleavedWithGoodOnesOnOneThread() {
    try (MapFunction f = define()) {
      Map<String, Integer> counts = new TreeMap<>();
      run(f, new Random(23), 3000, counts);
      assertEquals(Kind.values().length, counts.size(), "every kind ran: " + counts);
      // Only good signatures are cached, and the one that traced but failed at run time (as Python).
      assertEquals(GOOD_MODES.size() + 1, f.traceCount(), "traced: " + f.concreteFunctions());
      assertEquals(GOOD_MODES.size() + 1, f.concreteFunctions().size());
    }
  }

  @Test
  void badCallsOfEveryKindFromAPoolLeaveEveryThreadAndTheFunctionUsable() throws Exception {
    try (MapFunction f = define()) {
      Map<String, Integer> counts = new ConcurrentHashMap<>();
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          long seed = 1000 + t;
          futures.add(pool.submit(() -> {
            Map<String, Integer> mine = new TreeMap<>();
            run(f, new Random(seed), 500, mine);
            mine.forEach((k, v) -> counts.merge(k, v, Integer::sum));
            return null;
          }));
        }
        for (Future<?> fu : futures) {
          fu.get(5, TimeUnit.MINUTES);
        }
        // The pool's threads, reused after their failures, still call well.
        List<Future<?>> after = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          after.add(pool.submit(() -> {
            try (TFloat32 x = TFloat32.vectorOf(1f)) {
              assertOk(f, x, "a");
            }
            assertEquals(0, Diagnostics.tracesInProgressOnThisThread());
            return null;
          }));
        }
        for (Future<?> fu : after) {
          fu.get(1, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
      assertEquals(Kind.values().length, counts.size(), "every kind ran: " + counts);
      assertEquals(GOOD_MODES.size() + 1, f.traceCount(), "traced: " + f.concreteFunctions());
      assertEquals(GOOD_MODES.size() + 1, f.concreteFunctions().size());
    }
  }

  private static final List<String> GOOD_MODES = List.of("a", "ab", "abc");

  /** The kinds of call: one good, the others each a row of the README's errors table. */
  private enum Kind {
    GOOD, MISSING, UNEXPECTED, NULL_VALUE, NOT_A_TENSOR, WRONG_DTYPE, WRONG_RANK, CLOSED_TENSOR, SPEC_IN_CALL,
    BODY_THROWS, OTHER_PARAMETERS, LATE_VARIABLE, RUNTIME_ERROR
  }

  /**
   * {@code n} calls of random kinds after a good one (the first trace may create variables); after
   * every failure the thread holds no trace and a good call works.
   */
  private static void run(MapFunction f, Random random, int n, Map<String, Integer> counts) {
    try (TFloat32 x = TFloat32.vectorOf(3f)) {
      assertOk(f, x, GOOD_MODES.get(0));
    }
    Kind[] kinds = Kind.values();
    for (int i = 0; i < n; i++) {
      Kind kind = kinds[random.nextInt(kinds.length)];
      String mode = GOOD_MODES.get(random.nextInt(GOOD_MODES.size()));
      counts.merge(kind.name(), 1, Integer::sum);
      try (TFloat32 x = TFloat32.vectorOf(1f, 2f); TInt32 wrong = TInt32.vectorOf(1, 2);
           TFloat32 matrix = TFloat32.tensorOf(Shape.of(1, 2))) {
        switch (kind) {
          case GOOD -> assertOk(f, x, mode);
          case MISSING -> expect(IllegalArgumentException.class, f, Map.of("mode", mode));
          case UNEXPECTED -> expect(IllegalArgumentException.class, f, Map.of("x", x, "mode", mode, "q", x));
          case NULL_VALUE -> {
            Map<String, Object> args = new HashMap<>();
            args.put("x", null);
            args.put("mode", mode);
            expect(IllegalArgumentException.class, f, args);
          }
          case NOT_A_TENSOR -> expect(IllegalArgumentException.class, f, Map.of("x", "text", "mode", mode));
          case WRONG_DTYPE -> expect(IllegalArgumentException.class, f, Map.of("x", wrong, "mode", mode));
          case WRONG_RANK -> expect(IllegalArgumentException.class, f, Map.of("x", matrix, "mode", mode));
          case CLOSED_TENSOR -> {
            TFloat32 closed = TFloat32.vectorOf(1f);
            closed.close();
            expect(IllegalArgumentException.class, f, Map.of("x", closed, "mode", mode));
          }
          case SPEC_IN_CALL -> expect(IllegalArgumentException.class, f,
              Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(2)), "mode", mode));
          case BODY_THROWS -> expect(IllegalStateException.class, f, Map.of("x", x, "mode", "boom"));
          case OTHER_PARAMETERS -> { // refused at binding or as another parameter list, by timing
            Throwable e = assertThrows(RuntimeException.class, () -> f.call(Map.of("x", x, "mode", "extra")).close());
            assertTrue(e.getMessage().contains("surprise"), e.getMessage());
          }
          case LATE_VARIABLE -> expect(IllegalStateException.class, f, Map.of("x", x, "mode", "variable"));
          case RUNTIME_ERROR -> expect(TFInvalidArgumentException.class, f, Map.of("x", x, "mode", "gather"));
          default -> fail(kind.name());
        }
      }
      assertEquals(0, Diagnostics.tracesInProgressOnThisThread(), "after " + kind);
    }
  }

  private static void expect(Class<? extends Throwable> type, MapFunction f, Map<String, ?> args) {
    Throwable e = assertThrows(Throwable.class, () -> f.call(args).close());
    if (!type.isInstance(e)) {
      throw new AssertionError("expected " + type.getSimpleName() + " for " + args.keySet() + ", got " + e, e);
    }
  }

  private static void assertOk(MapFunction f, TFloat32 x, String mode) {
    try (Outputs out = f.call(Map.of("x", x, "mode", mode))) {
      TFloat32 y = out.get("y", TFloat32.class);
      for (int i = 0; i < x.shape().size(0); i++) {
        assertEquals(x.getFloat(i) * 2 + mode.length(), y.getFloat(i), 0f, "mode " + mode);
      }
    }
  }
}
