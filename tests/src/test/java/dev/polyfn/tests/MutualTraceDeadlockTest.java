package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * Functions that call each other (a recursion over a Java value down to a base case), first traced
 * from several threads at once: each thread's trace holds its function's trace lock and waits for
 * the next one's. Before, two such threads waited for each other forever (the outside tester's
 * reproducer hung on its first attempt). Now one of them gives its trace up and traces again once
 * the other is done, and every call returns its right answer. Run in a child JVM, so a hang fails
 * this test after a timeout instead of stalling the suite.
 */
class MutualTraceDeadlockTest {
  /**
   * A ring of {@code size} functions: function i adds i + 1 to x and calls function i + 1 (mod
   * size) with n - 1, until n is 0.
   */
  static MapFunction[] ring(int size) {
    MapFunction[] fs = new MapFunction[size];
    for (int i = 0; i < size; i++) {
      final int me = i;
      fs[i] = Function.define((tf, in) -> {
        Operand<TFloat32> x = in.input("x", TFloat32.class);
        int n = in.javaInput("n", Integer.class);
        if (n == 0) {
          return Map.of("y", x);
        }
        Operand<TFloat32> next = tf.math.add(x, tf.constant(me + 1f));
        return Map.of("y", fs[(me + 1) % size].apply(tf, Map.of("x", next, "n", n - 1)).get("y"));
      }, FunctionOptions.defaults().withName("ring" + size + "_" + i));
    }
    return fs;
  }

  /** What function {@code start} of a ring of {@code size} returns for x = 0 and {@code n}. */
  static float expected(int size, int start, int n) {
    float y = 0;
    for (int k = 0, i = start; k < n; k++, i = (i + 1) % size) {
      y += i + 1;
    }
    return y;
  }

  /** Child JVM: args = attempts. Prints "ok <attempts>" or the first hang or wrong answer, then exits. */
  public static void main(String[] args) throws Exception {
    int attempts = Integer.parseInt(args[0]);
    ExecutorService pool = Executors.newFixedThreadPool(3, r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      return t;
    });
    for (int attempt = 0; attempt < attempts; attempt++) {
      int size = 2 + attempt % 2; // rings of 2 and of 3 functions, one thread per function
      MapFunction[] fs = ring(size);
      CyclicBarrier start = new CyclicBarrier(size);
      List<Future<Float>> results = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        MapFunction f = fs[i];
        results.add(pool.submit(() -> {
          start.await();
          try (TFloat32 x = TFloat32.scalarOf(0f); Outputs o = f.call(Map.of("x", x, "n", 4))) {
            return o.get("y", TFloat32.class).getFloat();
          }
        }));
      }
      for (int i = 0; i < size; i++) {
        try {
          float y = results.get(i).get(30, TimeUnit.SECONDS);
          if (y != expected(size, i, 4)) {
            System.out.println("WRONG at attempt " + attempt + ": function " + i + " of " + size + " gave " + y
                + ", expected " + expected(size, i, 4));
            System.exit(0);
          }
        } catch (TimeoutException e) {
          System.out.println("HANG at attempt " + attempt + " (ring of " + size + ")");
          System.exit(0);
        }
      }
      for (MapFunction f : fs) {
        f.close();
      }
    }
    System.out.println("ok " + attempts);
    System.exit(0);
  }

  @Test
  void functionsCallingEachOtherTracedFromSeveralThreadsAtOnceAllAnswer() throws Exception {
    String out = ChildJvm.run(MutualTraceDeadlockTest.class, "30");
    assertTrue(out.contains("ok 30"), out);
  }
}
