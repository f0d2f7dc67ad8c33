package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Variable;
import dev.polyfn.tests.PromotionErrorRaceTest.Scenario;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.TFloat32;

/**
 * A log handler that, on a record a call writes from inside the native call (a promotion to the
 * session path, the start or the verdict of a trial), calls the same function again on that thread
 * (a good and a failing call), clears its cache and calls once more, while another thread calls
 * it too. No call may deadlock, answer wrong or fail unexpectedly. Run in a child JVM with a
 * timeout, so a deadlock fails this test instead of hanging the suite.
 */
class PromotionReentrancyTest {
  @Test
  void aLogHandlerCallingAndClearingTheFunctionBeingPromotedNeitherDeadlocksNorAnswersWrong() throws Exception {
    for (String kind : List.of("session", "reads")) {
      ChildJvm.Outcome o = ChildJvm.outcome(240, List.of(), PromotionReentrancyTest.class, kind, "300");
      System.out.println(o.output());
      assertFalse(o.timedOut(), kind + ": timed out (a deadlock?)\n" + o.output());
      assertTrue(o.exit() == 0 && o.output().contains("wrong=0 unexpected=0"), kind + ":\n" + o.output());
      // Without promotions (a count of 0: the suite's eager caller-thread run) no call logs.
      boolean promotes = !"0".equals(System.getProperty("dev.polyfn.sessionPathAfter"));
      assertTrue(!promotes || o.output().matches("(?s).*\\binner=[1-9].*"), kind + ": no record came from inside a call\n" + o.output());
    }
  }

  private static final List<String> INSIDE_A_CALL = List.of("keeps its session path", "goes back to the eager path",
      "stays on the eager call path", "tries TensorFlow's single-threaded executor", "keeps the single-threaded executor",
      "goes back to the thread pool");

  public static void main(String[] args) throws Exception {
    String kind = args[0];
    int calls = Integer.parseInt(args[1]);
    Map<String, Integer> counts = new ConcurrentHashMap<>();
    ThreadLocal<Boolean> inHandler = ThreadLocal.withInitial(() -> false);
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(3f));
        Variable<TFloat32> counter = Variable.create(TFloat32.scalarOf(0f));
        MapFunction f = Function.define(PromotionErrorRaceTest.body(kind, v, counter))) {
      Scenario s = PromotionErrorRaceTest.scenario(kind, f, counter);
      PromotionErrorRaceTest.onRecords(record -> {
        String m = String.valueOf(record.getMessage());
        if (inHandler.get() || INSIDE_A_CALL.stream().noneMatch(m::contains)) {
          return;
        }
        inHandler.set(true);
        try {
          tally(counts, "inner", s.good(1_000_000 + counts.getOrDefault("inner", 0)));
          tally(counts, "innerBad", s.bad(2_000_000));
          s.clearCache();
          tally(counts, "innerAfterClear", s.good(3_000_000 + counts.getOrDefault("inner", 0)));
        } catch (RuntimeException e) {
          counts.merge("unexpected", 1, Integer::sum);
          System.out.println("inside the handler: " + e);
        } finally {
          inHandler.set(false);
        }
      });
      ExecutorService pool = Executors.newFixedThreadPool(2);
      List<Future<?>> threads = new java.util.ArrayList<>();
      for (int t = 0; t < 2; t++) {
        final int thread = t;
        threads.add(pool.submit(() -> {
          for (int i = 0; i < calls; i++) {
            int seed = thread * 100_000 + i;
            try {
              boolean failing = i % 5 == 4;
              tally(counts, failing ? "bad" : "good", failing ? s.bad(seed) : s.good(seed));
            } catch (RuntimeException e) {
              counts.merge("unexpected", 1, Integer::sum);
              System.out.println("call " + seed + ": " + e);
            }
          }
          return null;
        }));
      }
      for (Future<?> t : threads) {
        t.get(200, TimeUnit.SECONDS);
      }
      pool.shutdown();
    }
    System.out.println(kind + ": " + new java.util.TreeMap<>(counts));
    System.out.println("inner=" + counts.getOrDefault("inner", 0) + " wrong=" + counts.getOrDefault("wrong", 0)
        + " unexpected=" + counts.getOrDefault("unexpected", 0));
  }

  /** Counts an outcome: {@code key} when {@code problem} is null, else a wrong answer (printed). */
  private static void tally(Map<String, Integer> counts, String key, String problem) {
    if (problem == null) {
      counts.merge(key, 1, Integer::sum);
    } else {
      counts.merge("wrong", 1, Integer::sum);
      System.out.println(problem);
    }
  }
}
