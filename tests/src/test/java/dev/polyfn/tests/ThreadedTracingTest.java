package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/** Tracing under concurrency: each new signature traces once, failures do not poison. */
class ThreadedTracingTest {

  @Test
  void eightThreadsCallingFourNewSignaturesTraceExactlyFourTimes() throws Exception {
    AtomicInteger bodyRuns = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try (MapFunction f = Function.define((tf, in) -> {
      bodyRuns.incrementAndGet();
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("n", tf.size(x), "s", tf.sum(x, tf.range(tf.constant(0), tf.rank(x), tf.constant(1))));
    })) {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        final int length = 1 + t % 4; // 4 signatures, 2 threads each
        results.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < 50; i++) {
            try (TFloat32 x = TFloat32.tensorOf(Shape.of(length), d -> {
                  for (int k = 0; k < length; k++) {
                    d.setFloat(k + 1, k);
                  }
                });
                Outputs out = f.call(Map.of("x", x))) {
              assertEquals(length, out.get("n", TInt32.class).getInt());
              assertEquals(length * (length + 1) / 2f, out.get("s", TFloat32.class).getFloat(), 0f);
            }
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> r : results) {
        r.get();
      }
      assertEquals(4, f.traceCount());
      assertEquals(4, bodyRuns.get());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aBodyThatThrowsForOneSignatureDoesNotAffectOthers() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          if (x.shape().numDimensions() == 2) {
            throw new UnsupportedOperationException("matrices are not supported");
          }
          return Map.of("y", tf.math.neg(x));
        });
        TFloat32 v = TFloat32.vectorOf(1f, 2f);
        TFloat32 m = TFloat32.tensorOf(Shape.of(2, 2))) {
      List<Future<?>> results = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        final boolean matrix = t % 2 == 0;
        results.add(pool.submit(() -> {
          for (int i = 0; i < 20; i++) {
            if (matrix) {
              assertThrows(UnsupportedOperationException.class, () -> f.call(Map.of("x", m)));
            } else {
              try (Outputs out = f.call(Map.of("x", v))) {
                assertEquals(-2f, out.get("y", TFloat32.class).getFloat(1), 0f);
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> r : results) {
        try {
          r.get();
        } catch (ExecutionException e) {
          throw new AssertionError(e.getCause());
        }
      }
      assertEquals(1, f.traceCount());
      assertEquals(1, f.concreteFunctions().size());
    } finally {
      pool.shutdownNow();
    }
  }
}
