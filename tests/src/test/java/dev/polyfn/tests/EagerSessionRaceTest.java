package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Variable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.TFloat32;

/**
 * Threads using Polyfn's eager operations at once: creating, reading, assigning and closing
 * variables. TensorFlow Java 1.1's eager session records every eager operation's native pointers
 * in a map nothing synchronizes, so these threads corrupted it and one of them looped forever
 * (the JVM hung, found by PromotionErrorRaceTest's first version); Polyfn now builds its own eager
 * operations one thread at a time. Run in a child JVM with a timeout, so a hang fails this test.
 */
class EagerSessionRaceTest {
  private static final int THREADS = 6;

  @Test
  void threadsCreatingReadingAndAssigningVariablesNeitherHangNorGetWrongValues() throws Exception {
    ChildJvm.Outcome o = ChildJvm.outcome(180, List.of(), EagerSessionRaceTest.class, "400");
    assertTrue(!o.timedOut() && o.exit() == 0, (o.timedOut() ? "timed out (a hang)\n" : "failed\n") + o.output());
    int expected = THREADS * 400;
    assertTrue(o.output().contains("right=" + expected + " wrong=0 failed=0"), o.output());
  }

  /** Child: {@code THREADS} threads, each {@code args[0]} rounds of create, read, assign, read, close. */
  public static void main(String[] args) throws Exception {
    int rounds = Integer.parseInt(args[0]);
    AtomicInteger right = new AtomicInteger();
    AtomicInteger wrong = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      final int thread = t;
      done.add(pool.submit(() -> {
        for (int i = 0; i < rounds; i++) {
          float first = thread * 1000 + i;
          try (TFloat32 init = TFloat32.scalarOf(first); TFloat32 next = TFloat32.scalarOf(-first)) {
            Variable<TFloat32> v = Variable.create(init);
            try {
              float a = v.value().getFloat();
              v.assign(next);
              float b = v.value().getFloat();
              if (a == first && b == -first) {
                right.incrementAndGet();
              } else {
                wrong.incrementAndGet();
              }
            } finally {
              v.close();
            }
          } catch (RuntimeException e) {
            failed.incrementAndGet();
            System.out.println("failed: " + e);
          }
        }
      }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
    System.out.println("right=" + right + " wrong=" + wrong + " failed=" + failed);
  }
}
