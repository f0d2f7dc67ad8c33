package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Eight threads misusing shared functions at once: calling, closing, clearing the cache, saving,
 * loading and defining, on functions that other threads use, across the session-path promotion.
 * Run in a child JVM, so a crash fails this test instead of ending the suite. Allowed outcomes: a
 * right answer, or a clear exception of the documented kind (a closed function); never a wrong
 * answer, another exception, a crash or a hang. Outcomes are counted and printed.
 */
class ConcurrentMisuseTest {
  private static final int SLOTS = 3;
  private static final int THREADS = 8;

  @Test
  void eightThreadsClosingCallingSavingLoadingAndDefiningNeverCrashOrAnswerWrong(@TempDir Path dir) throws Exception {
    String out = ChildJvm.run(ConcurrentMisuseTest.class, dir.toString(), "400");
    System.out.println(out); // the outcome counts, in the test report
    assertTrue(out.contains("wrong=0 unexpected=0"), out);
    for (String op : List.of("call.ok", "close.ok", "clearCache.ok", "save.ok", "load.ok", "define.ok", "call.closed")) {
      assertTrue(out.matches("(?s).*\\b" + op.replace(".", "\\.") + "=[1-9].*"), op + " never happened:\n" + out);
    }
  }

  /** y = 2 x + k: slot k always holds a function computing this, however it was made. */
  static MapBody body(int k) {
    return (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(2f)), tf.constant((float) k)));
    };
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int opsPerThread = Integer.parseInt(args[1]);
    AtomicReferenceArray<MapFunction> slots = new AtomicReferenceArray<>(SLOTS);
    for (int k = 0; k < SLOTS; k++) {
      slots.set(k, Function.define(body(k)));
    }
    Map<String, Integer> counts = new ConcurrentHashMap<>();
    AtomicInteger wrong = new AtomicInteger();
    AtomicInteger unexpected = new AtomicInteger();
    AtomicInteger saves = new AtomicInteger();
    Map<Integer, List<Path>> saved = new ConcurrentHashMap<>();
    List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Random random = new Random(7919L * t + 1);
      futures.add(pool.submit(() -> {
        for (int i = 0; i < opsPerThread; i++) {
          int k = random.nextInt(SLOTS);
          int roll = random.nextInt(100);
          String op = roll < 70 ? "call" : roll < 76 ? "clearCache" : roll < 82 ? "close" : roll < 88 ? "save"
              : roll < 94 ? "load" : "define";
          MapFunction f = slots.get(k);
          try {
            switch (op) {
              case "call" -> {
                int n = 1 + random.nextInt(3);
                float[] xs = new float[n];
                for (int j = 0; j < n; j++) {
                  xs[j] = random.nextInt(100);
                }
                try (TFloat32 x = TFloat32.vectorOf(xs); Outputs o = f.call(Map.of("x", x))) {
                  TFloat32 y = o.get("y", TFloat32.class);
                  for (int j = 0; j < n; j++) {
                    if (y.getFloat(j) != 2 * xs[j] + k) {
                      wrong.incrementAndGet();
                      problems.add("slot " + k + ": " + y.getFloat(j) + " for x=" + xs[j]);
                    }
                  }
                }
              }
              case "clearCache" -> f.clearCache();
              case "close" -> replace(slots, k, f, Function.define(body(k)));
              case "save" -> {
                Path target = dir.resolve("s" + saves.incrementAndGet());
                f.save(target);
                saved.computeIfAbsent(k, x -> new CopyOnWriteArrayList<>()).add(target);
              }
              case "load" -> {
                List<Path> mine = saved.getOrDefault(k, List.of());
                if (mine.isEmpty()) {
                  op = "load.skipped";
                  break;
                }
                MapFunction loaded = Function.load(mine.get(random.nextInt(mine.size())), body(k));
                replace(slots, k, f, loaded);
              }
              case "define" -> {
                try (MapFunction g = Function.define(body(k)); TFloat32 x = TFloat32.vectorOf(5f);
                     Outputs o = g.call(Map.of("x", x))) {
                  if (o.get("y", TFloat32.class).getFloat(0) != 10f + k) {
                    wrong.incrementAndGet();
                  }
                }
              }
              default -> throw new AssertionError(op);
            }
            counts.merge(op + ".ok", 1, Integer::sum);
          } catch (IllegalStateException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("closed")) {
              counts.merge(op + ".closed", 1, Integer::sum);
            } else if (op.equals("save") && m.contains("no concrete function yet")) {
              counts.merge("save.empty", 1, Integer::sum); // its cache was just cleared
            } else {
              unexpected.incrementAndGet();
              problems.add(op + ": " + e);
            }
          } catch (RuntimeException | Error e) {
            unexpected.incrementAndGet();
            problems.add(op + ": " + e);
          }
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get(5, TimeUnit.MINUTES);
    }
    pool.shutdown();
    for (int k = 0; k < SLOTS; k++) {
      try (TFloat32 x = TFloat32.vectorOf(1f, 2f); Outputs o = slots.get(k).call(Map.of("x", x))) {
        if (o.get("y", TFloat32.class).getFloat(1) != 4f + k) {
          wrong.incrementAndGet();
        }
      }
      slots.get(k).close();
    }
    System.out.println(new TreeMap<>(counts));
    problems.stream().limit(20).forEach(System.out::println);
    System.out.println("wrong=" + wrong.get() + " unexpected=" + unexpected.get());
  }

  /** Puts {@code next} in slot {@code k} in place of {@code f} and closes {@code f} (or {@code next}, if another thread was first). */
  private static void replace(AtomicReferenceArray<MapFunction> slots, int k, MapFunction f, MapFunction next) {
    if (slots.compareAndSet(k, f, next)) {
      f.close();
    } else {
      next.close();
    }
  }
}
