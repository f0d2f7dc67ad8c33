package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
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
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Six threads at once on one function with Java-value parameters ({@code in.javaInput}): calling
 * it with values it has and has not traced (so tracing, interning and dispatch by value race),
 * bodies that fail for one value, saves of it (each value's text written while others trace),
 * loads of those saves with and without the body (values interned again in the loading function),
 * a trace cache written by every function and read by every new one, {@code clearCache}, and
 * closing it to put a new one in its place. Run in a child JVM, so a crash fails this test
 * instead of ending the suite.
 *
 * <p>Allowed outcomes: the right answer; the body's own refusal of {@code act="boom"}; a function
 * loaded without a body refusing a value no save holds; a closed function's refusal; a save of a
 * function whose cache was just cleared. Every other exception, a wrong answer, a crash or a hang
 * fails; each kind of outcome is counted, and each must have happened.
 */
class JavaValuesRaceTest {
  private static final int THREADS = 6;
  private static final String[] ACTS = {"relu", "neg", "boom"};

  @Test
  void sixThreadsTracingSavingLoadingAndClosingJavaValueFunctionsNeverAnswerWrong(@TempDir Path dir) throws Exception {
    String out = ChildJvm.run(JavaValuesRaceTest.class, dir.toString(), "400");
    System.out.println(out); // the outcome counts, in the test report
    assertTrue(out.contains("wrong=0 unexpected=0"), out);
    // Every function wrote the values it traced (6 modes, 2 acts, 2 training flags); a fresh one restored them all.
    assertTrue(out.contains("cache entries=24 fresh traces=0"), out);
    for (String op : List.of("call.ok", "call.boom", "save.ok", "load.ok", "loadBodyless.saved", "loadBodyless.refused",
        "close.ok", "clearCache.ok", "call.closed")) {
      assertTrue(out.matches("(?s).*\\b" + op.replace(".", "\\.") + "=[1-9].*"), op + " never happened:\n" + out);
    }
  }

  /** y = x + mode (+ 100 when training), then relu or negated; {@code act="boom"} fails the trace. */
  static final MapBody BODY = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
    int mode = in.javaInput("mode", Integer.class);
    String act = in.javaInput("act", String.class);
    // No default: a function with one is not trace-cached, and this one must be.
    boolean training = in.javaInput("training", Boolean.class);
    if (act.equals("boom")) {
      throw new IllegalArgumentException("the body refuses act boom");
    }
    Operand<TFloat32> y = tf.math.add(x, tf.constant(mode + (training ? 100f : 0f)));
    return Map.of("y", act.equals("relu") ? tf.nn.relu(y) : tf.math.neg(y));
  };

  static float expected(float x, int mode, String act, boolean training) {
    float y = x + mode + (training ? 100f : 0f);
    return act.equals("relu") ? Math.max(0f, y) : -y;
  }

  /** A saved directory and (mode, act, training) triples its function had traced, with no clear since, when it saved. */
  record Saved(Path dir, List<String> traced) {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int opsPerThread = Integer.parseInt(args[1]);
    FunctionOptions options = FunctionOptions.defaults().withName("lit").withTraceCache(dir.resolve("cache"));
    AtomicReference<MapFunction> slot = new AtomicReference<>(Function.define(BODY, options));
    // Values each live function has served, with the count of its cache clears around the call
    // (odd while a clear runs): a save with the same even count before and after it holds them.
    Map<MapFunction, List<String>> served = new ConcurrentHashMap<>();
    Map<MapFunction, AtomicInteger> clears = new ConcurrentHashMap<>();
    Map<String, Integer> counts = new ConcurrentHashMap<>();
    AtomicInteger wrong = new AtomicInteger();
    AtomicInteger unexpected = new AtomicInteger();
    AtomicInteger saves = new AtomicInteger();
    List<Saved> saved = new CopyOnWriteArrayList<>();
    List<String> problems = Collections.synchronizedList(new ArrayList<>());
    // Daemon threads: a hung worker fails the child by the timeout below instead of keeping it alive.
    ExecutorService pool = Executors.newFixedThreadPool(THREADS, r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      return t;
    });
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Random random = new Random(104729L * t + 3);
      futures.add(pool.submit(() -> {
        for (int i = 0; i < opsPerThread; i++) {
          int roll = random.nextInt(100);
          String op = roll < 62 ? "call" : roll < 68 ? "clearCache" : roll < 74 ? "close" : roll < 82 ? "save"
              : roll < 91 ? "load" : "loadBodyless";
          MapFunction f = slot.get();
          int mode = random.nextInt(6);
          String act = ACTS[random.nextInt(10) == 0 ? 2 : random.nextInt(2)];
          Boolean training = random.nextBoolean();
          try {
            switch (op) {
              case "call" -> {
                AtomicInteger cleared = clears.computeIfAbsent(f, g -> new AtomicInteger());
                int c0 = cleared.get();
                check(f, mode, act, training, random, wrong, problems, "call");
                if (c0 % 2 == 0 && cleared.get() == c0) {
                  served.computeIfAbsent(f, g -> new CopyOnWriteArrayList<>()).add(c0 + ";" + key(mode, act, training));
                }
              }
              case "clearCache" -> {
                AtomicInteger cleared = clears.computeIfAbsent(f, g -> new AtomicInteger());
                synchronized (cleared) { // one clear at a time, so the count is odd exactly while one runs
                  cleared.incrementAndGet();
                  try {
                    f.clearCache();
                  } finally {
                    cleared.incrementAndGet();
                  }
                }
              }
              case "close" -> replace(slot, f, Function.define(BODY, options));
              case "save" -> {
                AtomicInteger cleared = clears.computeIfAbsent(f, g -> new AtomicInteger());
                int s0 = cleared.get();
                List<String> before = List.copyOf(served.getOrDefault(f, List.of()));
                Path target = dir.resolve("s" + saves.incrementAndGet());
                f.save(target);
                List<String> held = new ArrayList<>();
                if (s0 % 2 == 0 && cleared.get() == s0) {
                  for (String v : before) {
                    if (v.startsWith(s0 + ";")) {
                      held.add(v.substring(v.indexOf(';') + 1));
                    }
                  }
                }
                saved.add(new Saved(target, held));
              }
              case "load" -> {
                if (saved.isEmpty()) {
                  op = "load.skipped";
                  break;
                }
                Saved s = saved.get(random.nextInt(saved.size()));
                try (MapFunction g = Function.load(s.dir(), BODY)) {
                  check(g, mode, act, training, random, wrong, problems, "load");
                }
              }
              case "loadBodyless" -> {
                if (saved.isEmpty()) {
                  op = "loadBodyless.skipped";
                  break;
                }
                Saved s = saved.get(random.nextInt(saved.size()));
                try (MapFunction g = (MapFunction) Function.load(s.dir())) {
                  // A value its function had served before the save began is saved: served again.
                  if (!s.traced().isEmpty()) {
                    String[] k = s.traced().get(random.nextInt(s.traced().size())).split(",", -1);
                    check(g, Integer.parseInt(k[0]), k[1], k[2].isEmpty() ? null : Boolean.valueOf(k[2]), random,
                        wrong, problems, "loadBodyless.saved");
                    counts.merge("loadBodyless.saved", 1, Integer::sum);
                  }
                  op = "loadBodyless.other";
                  check(g, mode, act, training, random, wrong, problems, "loadBodyless");
                  op = "loadBodyless";
                }
              }
              default -> throw new AssertionError(op);
            }
            counts.merge(op + ".ok", 1, Integer::sum);
          } catch (IllegalStateException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("closed") && (op.equals("call") || op.equals("save") || op.equals("clearCache"))) {
              counts.merge(op + ".closed", 1, Integer::sum);
            } else if (op.equals("save") && m.contains("no concrete function yet")) {
              counts.merge("save.empty", 1, Integer::sum); // its cache was just cleared
            } else {
              unexpected.incrementAndGet();
              problems.add(op + " " + key(mode, act, training) + ": " + e);
            }
          } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            if (act.equals("boom") && m.contains("refuses act boom") && !op.startsWith("loadBodyless")) {
              counts.merge(op + ".boom", 1, Integer::sum);
            } else if (op.equals("loadBodyless.other") && m.contains("no saved signature")) {
              counts.merge("loadBodyless.refused", 1, Integer::sum);
            } else {
              unexpected.incrementAndGet();
              problems.add(op + " " + key(mode, act, training) + ": " + e);
            }
          } catch (RuntimeException | Error e) {
            unexpected.incrementAndGet();
            problems.add(op + " " + key(mode, act, training) + ": " + e);
          }
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get(8, TimeUnit.MINUTES);
    }
    pool.shutdown();
    // After it all, the function in the slot and a fresh one (warm-started from the cache every
    // function wrote) still answer every value right.
    // The cache's writer thread may still be writing the last entries: wait for the 24 values.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (FileFixtures.entries(dir.resolve("cache")).size() < 24 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    try (MapFunction last = slot.get(); MapFunction fresh = Function.define(BODY, options)) {
      Random random = new Random(5);
      for (int mode = 0; mode < 6; mode++) {
        check(last, mode, "relu", true, random, wrong, problems, "final");
        check(fresh, mode, "neg", false, random, wrong, problems, "final");
      }
      System.out.println("cache entries=" + FileFixtures.entries(dir.resolve("cache")).size() + " fresh traces="
          + fresh.traceCount());
    }
    System.out.println(new TreeMap<>(counts));
    problems.stream().limit(20).forEach(System.out::println);
    System.out.println("wrong=" + wrong.get() + " unexpected=" + unexpected.get());
  }

  static String key(int mode, String act, Boolean training) {
    return mode + "," + act + "," + (training == null ? "" : training);
  }

  /** Calls {@code f} on a random x with these values and counts a wrong element. */
  static void check(PolymorphicFunction f, int mode, String act, Boolean training, Random random, AtomicInteger wrong,
      List<String> problems, String where) {
    int n = 1 + random.nextInt(3);
    float[] xs = new float[n];
    for (int j = 0; j < n; j++) {
      xs[j] = random.nextInt(200) - 100;
    }
    try (TFloat32 x = TFloat32.vectorOf(xs)) {
      Map<String, Object> a = new HashMap<>(Map.of("x", x, "mode", mode, "act", act));
      if (training != null) {
        a.put("training", training);
      }
      try (Outputs o = ((MapFunction) f).call(a)) {
        TFloat32 y = o.get("y", TFloat32.class);
        for (int j = 0; j < n; j++) {
          float want = expected(xs[j], mode, act, training != null && training);
          if (y.getFloat(j) != want) {
            wrong.incrementAndGet();
            problems.add(where + " " + key(mode, act, training) + ": " + y.getFloat(j) + " for x=" + xs[j] + ", want " + want);
          }
        }
      }
    }
  }

  /** Puts {@code next} in the slot in place of {@code f} and closes {@code f} (or {@code next}, if another thread was first). */
  private static void replace(AtomicReference<MapFunction> slot, MapFunction f, MapFunction next) {
    if (slot.compareAndSet(f, next)) {
      f.close();
    } else {
      next.close();
    }
  }
}
