package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.FunctionStatistics;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * Eight threads on one function for a few seconds: new and cached signatures, a cache bound that
 * evicts, another thread clearing the cache, a thread closing the function at the end. Every value
 * is checked; the only failure a call may see is the function being closed.
 */
class StressTest {
  private static final int THREADS = 8;
  private static final long MILLIS = 3_000;

  @Test
  void eightThreadsWithTracesEvictionsClearsAndACloseGetEveryValueRight() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong calls = new AtomicLong();
    MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      int k = in.javaInput("k", Integer.class);
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant((float) k)), tf.constant(1f)));
    }, FunctionOptions.defaults().withName("stress").withMaxConcreteFunctions(6));
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        workers.add(pool.submit(() -> {
          ThreadLocalRandom r = ThreadLocalRandom.current();
          while (!stop.get()) {
            int len = 1 + r.nextInt(r.nextBoolean() ? 2 : 8); // mostly cached shapes, some new
            int k = r.nextInt(3);
            float[] v = new float[len];
            for (int i = 0; i < len; i++) {
              v[i] = r.nextInt(1000);
            }
            try (TFloat32 x = TFloat32.vectorOf(v); Outputs out = f.call(Map.of("x", x, "k", k))) {
              TFloat32 y = out.get("y", TFloat32.class);
              assertEquals(len, y.shape().size(0));
              for (int i = 0; i < len; i++) {
                assertEquals(v[i] * k + 1f, y.getFloat(i), 0f);
              }
              calls.incrementAndGet();
            } catch (IllegalStateException e) {
              assertTrue(e.getMessage().contains("closed"), e.getMessage());
              return null; // the closing thread got there first
            }
          }
          return null;
        }));
      }
      Future<Integer> clearer = pool.submit(() -> {
        // Clearing starts after a second, so evictions happen first even on a slow machine
        // (with a clear every 50 ms from the start, a loaded machine may never trace seven
        // signatures between two clears).
        Thread.sleep(1_000);
        int clears = 0;
        while (!stop.get()) {
          Thread.sleep(50);
          try {
            f.clearCache();
            clears++;
          } catch (IllegalStateException closed) {
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
            return clears;
          }
        }
        return clears;
      });
      Thread.sleep(MILLIS);
      long done = calls.get();
      FunctionStatistics s = f.statistics();
      assertTrue(s.exactHits() + s.inexactHits() + s.misses() >= done, s + " for " + done + " calls");
      assertTrue(s.evictions() > 0, s.toString());
      f.close(); // while the workers still call
      stop.set(true);
      for (Future<?> w : workers) {
        w.get(60, TimeUnit.SECONDS);
      }
      int clears = clearer.get(60, TimeUnit.SECONDS);
      assertTrue(clears > 0, "no clear ran among the calls"); // the name promises clears
      assertTrue(calls.get() > 100, calls.get() + " calls");
    } finally {
      stop.set(true);
      f.close();
      pool.shutdownNow();
    }
  }
}
