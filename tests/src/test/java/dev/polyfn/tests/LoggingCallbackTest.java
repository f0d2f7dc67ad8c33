package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * Polyfn logs to the application's logger, whose handlers are user code: a handler that calls
 * back into the function must not deadlock, and a slow one must not hold up cached calls.
 */
class LoggingCallbackTest {
  @Test
  void aLogHandlerThatCallsBackAndWaitsForACachedCallNeitherDeadlocksNorBlocksIt() throws Exception {
    MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.add(x, tf.constant(1f)));
    }, FunctionOptions.defaults().withName("logged_callback"));
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch cachedDone = new CountDownLatch(1);
    AtomicReference<String> failure = new AtomicReference<>();
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (!String.valueOf(r.getMessage()).contains("'logged_callback'") || inHandler.getCount() == 0) {
          return;
        }
        f.statistics(); // calls back into the function that is logging
        inHandler.countDown();
        try {
          if (!cachedDone.await(20, TimeUnit.SECONDS)) {
            failure.set("a cached call waited for the log handler");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger logger = Logger.getLogger("dev.polyfn");
    logger.addHandler(handler);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (TFloat32 one = TFloat32.vectorOf(1f)) {
      f.call(Map.of("x", one)).close();
      // Five traces in a row: the fifth logs tf.function's frequent-retracing warning.
      Future<?> tracer = pool.submit(() -> {
        for (int n = 2; n <= 6; n++) {
          try (TFloat32 x = TFloat32.vectorOf(new float[n]); var out = f.call(Map.of("x", x))) {
            assertEquals(1f, out.get("y", TFloat32.class).getFloat(n - 1), 0f);
          }
        }
        return null;
      });
      assertTrue(inHandler.await(60, TimeUnit.SECONDS), "the warning reached the handler");
      try (var out = f.call(Map.of("x", one))) { // a cached signature, while the handler runs
        assertEquals(2f, out.get("y", TFloat32.class).getFloat(0), 0f);
      }
      cachedDone.countDown();
      tracer.get(60, TimeUnit.SECONDS);
      assertEquals(null, failure.get());
    } finally {
      cachedDone.countDown();
      logger.removeHandler(handler);
      pool.shutdownNow();
      f.close();
    }
  }
}
