package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.Inputs;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import dev.polyfn.Variable;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/** Odd callers: code that keeps or shares what it should not, or calls back from inside a call. */
class ReentrancyAndMisuseTest {

  @Test
  void theRawCallEntryPointRefusesBadCountsAndNullsWithExceptions() {
    // Native.call reads its arrays with raw JNI calls (no jni-rs checks): counts outside an array
    // and null arrays must be refused before any read, as exceptions, with the JVM unharmed.
    IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
        () -> Native.call(0, new long[1], 5, new long[0], 0, new long[4]));
    assertTrue(tooMany.getMessage().contains("facts: 5 elements asked of 1"), tooMany.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Native.call(0, new long[1], -1, new long[0], 0, new long[4]));
    IllegalArgumentException nullFacts = assertThrows(IllegalArgumentException.class,
        () -> Native.call(0, null, 0, new long[0], 0, new long[4]));
    assertTrue(nullFacts.getMessage().contains("facts is null"), nullFacts.getMessage());
    IllegalStateException noFunction = assertThrows(IllegalStateException.class,
        () -> Native.call(0, new long[0], 0, new long[0], 0, new long[4]));
    assertTrue(noFunction.getMessage().contains("null function handle"), noFunction.getMessage());
  }

  @Test
  void inputsKeptPastTheTraceOrUsedFromAnotherThreadAreRefused() throws Exception {
    AtomicReference<Inputs> kept = new AtomicReference<>();
    AtomicReference<Throwable> fromOtherThread = new AtomicReference<>();
    try (MapFunction f = Function.define((tf, in) -> {
      kept.set(in);
      Thread other = new Thread(() -> {
        try {
          in.input("y", TFloat32.class);
        } catch (Throwable t) {
          fromOtherThread.set(t);
        }
      });
      other.start();
      try {
        other.join();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.identity(x));
    }); TFloat32 x = TFloat32.scalarOf(1f); Outputs out = f.call(Map.of("x", x))) {
      assertTrue(fromOtherThread.get() instanceof IllegalStateException
          && fromOtherThread.get().getMessage().contains("another thread"), String.valueOf(fromOtherThread.get()));
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> kept.get().input("z", TFloat32.class));
      assertTrue(e.getMessage().contains("after its trace ended"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> kept.get().capture("c", () -> x));
      assertEquals(1f, out.get("y", TFloat32.class).getFloat(), 0f);
    }
  }

  @Test
  void aVariableClosedByTwoThreadsAtOnceIsReleasedOnce() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int i = 0; i < 200; i++) {
        Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(i));
        CyclicBarrier start = new CyclicBarrier(2);
        List<Future<?>> closers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
          closers.add(pool.submit(() -> {
            start.await();
            v.close();
            return null;
          }));
        }
        for (Future<?> c : closers) {
          c.get(10, TimeUnit.SECONDS);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aDeclarationThatFailsHalfWayKeepsNoReferenceOnTheArguments() {
    try (MapFunction f = Function.define((tf, in) -> {
      List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
      return Map.of("y", tf.math.addN(xs));
    })) {
      TFloat32 first = TFloat32.scalarOf(1f);
      List<Object> xs = new ArrayList<>();
      xs.add(first);
      xs.add("not a tensor");
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("xs", xs)));
      first.close();
      // Closed by its owner and referenced by nobody else: its memory is gone.
      assertThrows(IllegalStateException.class, () -> TensorFlowInternals.retainTensor(first));
    }
  }

  @Test
  void aLogHandlerThatCallsAFunctionFromInsideACallGetsItsOwnBuffers() throws Exception {
    try (SingleFunction f = Function.defineSingle((tf, in) ->
        tf.math.mul(in.input("x", TFloat32.class, Shape.of(-1)), tf.constant(2f)))) {
      AtomicReference<String> seen = new AtomicReference<>();
      Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
          if (!String.valueOf(r.getMessage()).contains("dispatch memo full") || seen.get() != null) {
            return;
          }
          // Inside the native call that logged: call the function again on this thread.
          try (TFloat32 x = TFloat32.vectorOf(5f); TFloat32 y = (TFloat32) f.call(Map.of("x", x))) {
            seen.set("inner call gave " + y.getFloat(0));
          } catch (RuntimeException e) {
            seen.set("inner call failed: " + e);
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };
      Logger logger = Logger.getLogger("dev.polyfn");
      Level before = logger.getLevel();
      logger.addHandler(handler);
      logger.setLevel(Level.FINE);
      try {
        // Each new length is served by the [-1] trace and memoized, until the memo is full.
        for (int n = 1; n <= 4200 && seen.get() == null; n++) {
          try (TFloat32 x = TFloat32.vectorOf(new float[n]); TFloat32 y = (TFloat32) f.call(Map.of("x", x))) {
            assertEquals(n, y.shape().size(0));
          }
        }
      } finally {
        logger.setLevel(before);
        logger.removeHandler(handler);
      }
      assertEquals("inner call gave 10.0", seen.get());
    }
  }

  @Test
  void aVariableClosedByAnotherThreadDuringCallsIsFreedOnlyAfterThem() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<?> h = in.variableInput("v", TFloat32.class);
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.add(tf.readVariableOp(h, TFloat32.class), x));
    })) {
      int ran = 0;
      int closed = 0;
      for (int i = 0; i < 100; i++) {
        Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(i));
        CyclicBarrier start = new CyclicBarrier(2);
        Future<?> closer = pool.submit(() -> {
          start.await();
          v.close();
          return null;
        });
        start.await();
        for (int c = 0; c < 3; c++) {
          try (TFloat32 x = TFloat32.scalarOf(1f); Outputs out = f.call(Map.of("v", v, "x", x))) {
            assertEquals(i + 1f, out.get("y", TFloat32.class).getFloat(), 0f);
            ran++;
          } catch (IllegalArgumentException | IllegalStateException e) {
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            closed++;
          }
        }
        closer.get(10, TimeUnit.SECONDS);
      }
      assertEquals(300, ran + closed);
    } finally {
      pool.shutdownNow();
    }
  }
}
