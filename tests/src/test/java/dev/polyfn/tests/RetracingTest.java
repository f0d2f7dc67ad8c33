package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Diagnostics;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.FunctionStatistics;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import dev.polyfn.TraceEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/** Retracing control: reduce-retracing, the bounded cache, explanations, warnings, statistics. */
class RetracingTest {

  private static MapFunction sizeOf(FunctionOptions options) {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("n", tf.size(x));
    }, options);
  }

  private static int size(MapFunction f, long... dims) {
    try (TFloat32 x = TFloat32.tensorOf(Shape.of(dims)); Outputs out = f.call(Map.of("x", x))) {
      return out.get("n", TInt32.class).getInt();
    }
  }

  private static List<String> tracedTypes(MapFunction f) {
    return f.concreteFunctions().stream().map(c -> c.functionType().toString()).collect(Collectors.toList());
  }

  @Test
  void reduceRetracingTracesThreeTimesForFourShapes() {
    try (MapFunction f = sizeOf(FunctionOptions.defaults().withReduceRetracing(true))) {
      assertEquals(2, size(f, 2));
      assertEquals(3, size(f, 3));
      assertEquals(4, size(f, 4));
      assertEquals(4, size(f, 2, 2));
      assertEquals(3, f.traceCount());
      assertEquals(List.of("(x: TensorSpec(FLOAT, [2]))", "(x: TensorSpec(FLOAT, [-1]))",
          "(x: TensorSpec(FLOAT, <unknown>))"), tracedTypes(f));
      assertEquals(27, size(f, 3, 3, 3)); // served by the unknown-rank trace
      assertEquals(3, f.traceCount());
    }
  }

  @Test
  void withoutReduceRetracingEachShapeTraces() {
    try (MapFunction f = sizeOf(FunctionOptions.defaults())) {
      size(f, 2);
      size(f, 3);
      size(f, 4);
      size(f, 2, 2);
      assertEquals(4, f.traceCount());
    }
  }

  @Test
  void theCacheBoundEvictsTheLeastRecentlyUsedAndFreesItsFunction() {
    long before = Diagnostics.liveConcreteFunctions();
    try (MapFunction f = sizeOf(FunctionOptions.defaults().withMaxConcreteFunctions(2))) {
      size(f, 1);
      size(f, 2);
      ConcreteFunctionInfo two = f.concreteFunctions().get(1);
      size(f, 1); // [2] is now the least recently used
      assertTrue(Diagnostics.isRegistered(two.name()));
      size(f, 3);
      assertEquals(List.of("(x: TensorSpec(FLOAT, [1]))", "(x: TensorSpec(FLOAT, [3]))"), tracedTypes(f));
      assertEquals(before + 2, Diagnostics.liveConcreteFunctions());
      assertFalse(Diagnostics.isRegistered(two.name()), "the evicted function is removed from the runtime");
      assertEquals(1, f.statistics().evictions());
      assertEquals(2, size(f, 2)); // the evicted signature traces again
      assertEquals(4, f.traceCount());
      assertEquals(before + 2, Diagnostics.liveConcreteFunctions());
    }
    assertEquals(before, Diagnostics.liveConcreteFunctions());
  }

  @Test
  void clearCacheFreesEveryConcreteFunctionAndTheNextCallTracesAgain() {
    long before = Diagnostics.liveConcreteFunctions();
    try (MapFunction f = sizeOf(FunctionOptions.defaults())) {
      size(f, 1);
      size(f, 2);
      assertEquals(before + 2, Diagnostics.liveConcreteFunctions());
      f.clearCache();
      assertEquals(before, Diagnostics.liveConcreteFunctions());
      assertTrue(f.concreteFunctions().isEmpty());
      assertEquals("(x: TensorSpec(FLOAT, *))", f.functionType().toString());
      assertEquals(2, size(f, 2));
      assertEquals(3, f.traceCount());
    }
  }

  @Test
  void everyRetraceExplainsWhatChanged() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          List<Operand<?>> xs = in.list("xs");
          Map<String, Operand<?>> m = in.map("m");
          int n = in.javaInput("n", Integer.class);
          return Map.of("y", tf.math.mul(x, tf.constant((float) (n + xs.size() + m.size()))));
        });
        TFloat32 v2 = TFloat32.vectorOf(1f, 2f);
        TFloat32 v3 = TFloat32.vectorOf(1f, 2f, 3f);
        TFloat32 s = TFloat32.scalarOf(1f)) {
      f.call(Map.of("x", v2, "xs", List.of(s), "m", Map.of("a", s), "n", 1)).close();
      f.call(Map.of("x", v3, "xs", List.of(s), "m", Map.of("a", s), "n", 1)).close();
      f.call(Map.of("x", v2, "xs", List.of(s, s), "m", Map.of("a", s), "n", 1)).close();
      f.call(Map.of("x", v2, "xs", List.of(s), "m", Map.of("a", s, "b", s), "n", 1)).close();
      f.call(Map.of("x", v2, "xs", List.of(s), "m", Map.of("a", s), "n", 2)).close();
      f.call(Map.of("x", v2, "xs", List.of(s), "m", Map.of("a", s), "n", 3)).close();
      List<String> reasons = f.traceHistory().stream().map(TraceEvent::reason).collect(Collectors.toList());
      assertEquals("first call", reasons.get(0));
      assertEquals("x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0", reasons.get(1));
      assertTrue(reasons.get(2).startsWith("xs: list of length 2 does not match list of length 1"), reasons.get(2));
      assertTrue(reasons.get(3).startsWith("m: map keys ['a', 'b'] do not match traced keys ['a']"), reasons.get(3));
      assertEquals("n: new value 2 (traced: 1)", reasons.get(4));
      assertEquals("n: new value 3 (traced: 1, 2)", reasons.get(5));
      assertEquals(List.of("", "x", "xs", "m", "n", "n"),
          f.traceHistory().stream().map(TraceEvent::parameter).collect(Collectors.toList()));
    }
  }

  @Test
  void aDtypeChangeIsExplained() {
    try (MapFunction f = Function.define((tf, in) ->
            Map.of("y", in.input("x", org.tensorflow.types.family.TNumber.class)));
        TFloat32 a = TFloat32.vectorOf(1f, 2f);
        TInt32 b = TInt32.vectorOf(1, 2)) {
      f.call(Map.of("x", a)).close();
      f.call(Map.of("x", b)).close();
      String reason = f.traceHistory().get(1).reason();
      assertTrue(reason.startsWith("x: TensorSpec(INT32, [2]) does not match TensorSpec(FLOAT, [2])")
          && reason.contains("dtype"), reason);
    }
  }

  @Test
  void statisticsCountHitsMissesAndTraceTime() {
    try (MapFunction f = sizeOf(FunctionOptions.defaults().withReduceRetracing(true))) {
      size(f, 2);
      size(f, 2);
      size(f, 3);
      size(f, 5);
      FunctionStatistics s = f.statistics();
      assertEquals(2, s.traces());
      assertEquals(2, s.misses()); // [2] and [3] traced
      assertEquals(1, s.exactHits()); // [2] again
      assertEquals(1, s.inexactHits()); // [5], served by [-1]
      assertTrue(s.totalTraceTime().compareTo(s.lastTraceTime()) >= 0);
      assertTrue(s.lastTraceTime().toNanos() > 0);
    }
  }

  /**
   * The dev.polyfn logger's warnings naming function {@code name}, captured while {@code run}
   * runs (it gets the list as it grows).
   */
  private static List<String> warningsOf(String name, Consumer<List<String>> run) {
    Logger logger = Logger.getLogger("dev.polyfn");
    List<String> warnings = new ArrayList<>();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue() && r.getMessage().contains("'" + name + "'")) {
          warnings.add(r.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(capture);
    try {
      run.accept(warnings);
    } finally {
      logger.removeHandler(capture);
    }
    return warnings;
  }

  @Test
  void frequentRetracingWarnsOncePerBurst() {
    List<String> warnings = warningsOf("bursty", seen -> {
      try (MapFunction f = sizeOf(FunctionOptions.defaults().withName("bursty"))) {
        for (int n = 1; n <= 4; n++) {
          size(f, n);
        }
        assertEquals(0, seen.size());
        size(f, 5); // 5 of the last 5 calls traced
        assertEquals(1, seen.size());
        for (int n = 6; n <= 9; n++) {
          size(f, n); // same burst
        }
        assertEquals(1, seen.size());
        for (int i = 0; i < 20; i++) {
          size(f, 1); // calm
        }
        for (int n = 20; n <= 24; n++) {
          size(f, n); // a new burst
        }
      }
    });
    assertEquals(2, warnings.size(), warnings.toString());
    String w = warnings.get(0);
    assertTrue(w.contains("5 of the last 5 calls") && w.contains("keep changing: x")
        && w.contains("withReduceRetracing(true)"), w);
  }

  @Test
  void signaturesTracedAheadOfCallsDoNotWarn() {
    // As Python's get_concrete_function: tracing ahead is what a user asks for, not retracing by
    // calls. This warned "5 of the last 0 calls traced a new concrete function".
    List<String> warnings = warningsOf("ahead", seen -> {
      try (MapFunction f = sizeOf(FunctionOptions.defaults().withName("ahead"))) {
        for (int k = 1; k <= 10; k++) {
          f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(k))));
        }
        assertEquals(10, f.traceCount());
        for (int k = 1; k <= 10; k++) {
          assertEquals(k, size(f, k)); // hits
        }
        assertEquals(10, f.traceCount());
      }
    });
    assertEquals(List.of(), warnings);
  }
}
