package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Diagnostics;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * Threads calling one concrete function while it moves to its session path (a function of
 * stateless ops) or tries TensorFlow's single-threaded executor (one reading or writing a
 * variable), with calls that fail in TensorFlow mixed in and the cache cleared meanwhile, so that
 * promotion and trial happen again and again under load. Every good call must give its own right
 * answer (the first one after each failure too), every bad one a clear error naming its cause, and
 * Java's floating-point arithmetic (subnormals kept) must be intact on the calling thread after
 * every call and inside Polyfn's log records, which a call may write mid-promotion; afterwards no
 * variable a call took and no concrete function may be left live. Outcomes are counted and
 * printed; run in a child JVM, so a crash fails this test instead of the suite.
 */
class PromotionErrorRaceTest {
  private static final int THREADS = 4;

  /**
   * session: a function of stateless ops, which moves to its session path; reads, writes: one
   * reading (and writing) a captured variable, which tries the single-threaded executor; passed:
   * one taking a variable each call makes and closes after it (kept resource handles replaced and
   * released).
   */
  @ParameterizedTest
  @ValueSource(strings = {"session", "reads", "writes", "passed"})
  void threadsCallingAcrossPromotionWithFailingCallsAndClears(String kind) throws Exception {
    ChildJvm.Outcome o = ChildJvm.outcome(300, List.of(), PromotionErrorRaceTest.class, kind, "300");
    assertTrue(!o.timedOut() && o.exit() == 0, kind + (o.timedOut() ? ": timed out\n" : ": failed\n") + o.output());
    check(o.output());
  }

  private static void check(String out) {
    System.out.println(out); // the outcome counts, in the test report
    assertTrue(out.contains("wrong=0 unexpected=0 flushed=0 lost=0"), out);
    assertTrue(out.matches("(?s).*\\bgood=[1-9].*") && out.matches("(?s).*\\bbad=[1-9].*"), out);
    assertTrue(out.matches("(?s).*\\brecords=[1-9].*"), "the log handler saw no record:\n" + out);
    assertTrue(out.contains("leaked variables=0 functions=0"), out);
  }

  /** What the log records say about the call paths taken (counted, printed). */
  private static final List<String> PATHS = List.of("keeps its session path", "goes back to the eager path",
      "stays on the eager call path", "tries TensorFlow's single-threaded executor", "keeps the single-threaded executor",
      "goes back to the thread pool", "stays on TensorFlow's thread pool", "keeps TensorFlow's thread pool");

  /** Java arithmetic on a subnormal float, which TensorFlow's float mode would flush to zero. */
  private static volatile float tiny = 1e-40f;

  static boolean subnormalsKept() {
    return tiny * 2f != 0f;
  }

  /** A scenario: a function, a good call, a bad call. */
  interface Scenario {
    /** Makes a good call with seed {@code i}; returns null if right, else what was wrong. */
    String good(int i);

    /** Makes a call that must fail; returns null if it failed as it should, else what happened. */
    String bad(int i);

    /** The function called. */
    MapFunction f();

    default void clearCache() {
      f().clearCache();
    }

    /** After the run: null if the state the calls left is right, else what is wrong. */
    default String after(int goods) {
      return null;
    }
  }

  public static void main(String[] args) throws Exception {
    String kind = args[0];
    int callsPerThread = Integer.parseInt(args[1]);
    AtomicInteger flushed = new AtomicInteger();
    AtomicInteger records = new AtomicInteger();
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    onRecords(record -> {
      records.incrementAndGet();
      String m = String.valueOf(record.getMessage());
      for (String path : PATHS) {
        if (m.contains(path)) {
          seen.merge(path, 1, Integer::sum);
        }
      }
      if (!subnormalsKept()) {
        flushed.incrementAndGet();
      }
    });
    long variablesBefore = Diagnostics.liveVariables();
    long functionsBefore = Diagnostics.liveConcreteFunctions();
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(3f));
        Variable<TFloat32> counter = Variable.create(TFloat32.scalarOf(0f));
        MapFunction f = Function.define(body(kind, v, counter))) {
      Scenario s = scenario(kind, f, counter);
      Map<String, Integer> counts = new ConcurrentHashMap<>();
      List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
      AtomicInteger wrong = new AtomicInteger();
      AtomicInteger unexpected = new AtomicInteger();
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
      Future<?> clearer = pool.submit(() -> {
        while (!stop.get()) {
          Thread.sleep(15);
          s.clearCache();
          counts.merge("clear", 1, Integer::sum);
        }
        return null;
      });
      List<Future<?>> callers = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        final int thread = t;
        callers.add(pool.submit(() -> {
          for (int i = 0; i < callsPerThread; i++) {
            int seed = thread * 100_000 + i;
            // Failing calls in every other run of 50 calls: the trials between them can finish,
            // and a function that kept a path meets failures on it.
            boolean failing = (i + thread) % 3 == 0 && (i / 50) % 2 == 0;
            String problem;
            try {
              problem = failing ? s.bad(seed) : s.good(seed);
            } catch (RuntimeException e) {
              unexpected.incrementAndGet();
              problems.add((failing ? "bad" : "good") + " call " + seed + ": " + e);
              continue;
            }
            if (!subnormalsKept()) {
              flushed.incrementAndGet();
              problems.add("subnormals flushed on the calling thread after call " + seed);
            }
            if (problem != null) {
              wrong.incrementAndGet();
              problems.add(problem);
            } else {
              counts.merge(failing ? "bad" : "good", 1, Integer::sum);
            }
          }
          return null;
        }));
      }
      for (Future<?> c : callers) {
        c.get(300, TimeUnit.SECONDS);
      }
      stop.set(true);
      clearer.get(60, TimeUnit.SECONDS);
      pool.shutdown();
      int goods = counts.getOrDefault("good", 0);
      String after = s.after(goods);
      int lost = after == null ? 0 : 1;
      if (after != null) {
        problems.add(after);
      }
      System.out.println(kind + ": " + new java.util.TreeMap<>(counts) + " records=" + records.get() + " " + new java.util.TreeMap<>(seen));
      problems.stream().limit(20).forEach(System.out::println);
      System.out.println("good=" + goods + " bad=" + counts.getOrDefault("bad", 0) + " wrong=" + wrong.get()
          + " unexpected=" + unexpected.get() + " flushed=" + flushed.get() + " lost=" + lost);
    }
    // Every call, failed ones too, gave its variable's use back, and nothing kept a concrete function.
    System.out.println("leaked variables=" + (Diagnostics.liveVariables() - variablesBefore)
        + " functions=" + (Diagnostics.liveConcreteFunctions() - functionsBefore));
  }

  /** Held: java.util.logging keeps loggers weakly, and a collected one forgets its level and handler. */
  private static Logger polyfn;

  /** Sends every record of Polyfn's logger, at every level, to {@code handler} (only). */
  static void onRecords(java.util.function.Consumer<LogRecord> handler) {
    polyfn = Logger.getLogger("dev.polyfn");
    polyfn.setLevel(Level.FINEST);
    polyfn.setUseParentHandlers(false);
    polyfn.addHandler(new Handler() {
      @Override
      public void publish(LogRecord record) {
        handler.accept(record);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    });
  }

  /**
   * "session": y = reshape(x, s) * 2 + 1 (s from the caller: a bad s fails in TensorFlow);
   * "reads": y = x[i] * v + 1 (a bad index fails); "writes": the same, adding 1 to counter after
   * the gather, so that only calls that got past it count.
   */
  static dev.polyfn.MapBody body(String kind, Variable<TFloat32> v, Variable<TFloat32> counter) {
    return (tf, in) -> {
      if (kind.equals("session")) {
        Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(6));
        Operand<TInt32> shape = in.input("s", TInt32.class, Shape.of(2));
        return Map.of("y", tf.math.add(tf.math.mul(tf.reshape(x, shape), tf.constant(2f)), tf.constant(1f)));
      }
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(4));
      Operand<TInt32> i = in.input("i", TInt32.class, Shape.scalar());
      Operand<TFloat32> picked = tf.gather(x, i, tf.constant(0));
      Operand<TFloat32> k = kind.equals("passed")
          ? tf.readVariableOp(in.variableInput("v", TFloat32.class), TFloat32.class) : v.read(tf);
      Operand<TFloat32> y = tf.math.add(tf.math.mul(picked, k), tf.constant(1f));
      if (kind.equals("writes")) {
        Operand<TFloat32> one = tf.math.add(tf.math.mul(picked, tf.constant(0f)), tf.constant(1f));
        return Map.of("y", tf.withControlDependencies(List.of(
            tf.assignAddVariableOp(counter.handle(tf), one))).identity(y));
      }
      return Map.of("y", y);
    };
  }

  static Scenario scenario(String kind, MapFunction f, Variable<TFloat32> counter) {
    return switch (kind) {
      case "session" -> new ReshapeScenario(f);
      default -> new GatherScenario(f, counter, kind);
    };
  }

  /** y = reshape(x, s) * 2 + 1. */
  record ReshapeScenario(MapFunction f) implements Scenario {
    private static final int[][] GOOD = {{2, 3}, {3, 2}, {1, 6}, {6, 1}};

    @Override
    public String good(int seed) {
      int[] dims = GOOD[seed % GOOD.length];
      float[] xs = new float[6];
      for (int j = 0; j < 6; j++) {
        xs[j] = seed + j * 0.5f;
      }
      try (TFloat32 x = TFloat32.vectorOf(xs); TInt32 s = TInt32.vectorOf(dims);
          Outputs out = f.call(Map.of("x", x, "s", s))) {
        TFloat32 y = out.get("y", TFloat32.class);
        if (!y.shape().equals(Shape.of(dims[0], dims[1]))) {
          return "call " + seed + ": shape " + y.shape();
        }
        for (int j = 0; j < 6; j++) {
          float got = y.getFloat(j / dims[1], j % dims[1]);
          if (got != xs[j] * 2f + 1f) {
            return "call " + seed + ": element " + j + " is " + got + ", expected " + (xs[j] * 2f + 1f);
          }
        }
        return null;
      }
    }

    @Override
    public String bad(int seed) {
      try (TFloat32 x = TFloat32.vectorOf(1, 2, 3, 4, 5, 6); TInt32 s = TInt32.vectorOf(4, 4 + seed % 2)) {
        f.call(Map.of("x", x, "s", s)).close();
        return "call " + seed + " with shape [4, " + (4 + seed % 2) + "] did not fail";
      } catch (RuntimeException e) {
        return String.valueOf(e.getMessage()).contains("reshape") ? null : "call " + seed + ": " + e;
      }
    }
  }

  /**
   * y = x[i] * v + 1: v = 3 captured ("reads"), the same and counter += 1 ("writes"), or v a
   * variable made for the call (2 to 8) and closed after it ("passed").
   */
  record GatherScenario(MapFunction f, Variable<TFloat32> counter, String kind) implements Scenario {
    @Override
    public String good(int seed) {
      int i = seed % 4;
      float k = kind.equals("passed") ? 2 + seed % 7 : 3f;
      try (TFloat32 x = TFloat32.vectorOf(seed, seed + 1, seed + 2, seed + 3); TInt32 index = TInt32.scalarOf(i);
          TFloat32 value = TFloat32.scalarOf(k); Variable<TFloat32> v = variable(value);
          Outputs out = f.call(args(x, index, v))) {
        float got = out.get("y", TFloat32.class).getFloat();
        float want = (seed + i) * k + 1f;
        return got == want ? null : "call " + seed + ": " + got + ", expected " + want;
      }
    }

    @Override
    public String bad(int seed) {
      try (TFloat32 x = TFloat32.vectorOf(1, 2, 3, 4); TInt32 index = TInt32.scalarOf(7 + seed % 5);
          TFloat32 value = TFloat32.scalarOf(1f); Variable<TFloat32> v = variable(value)) {
        f.call(args(x, index, v)).close();
        return "call " + seed + " with index " + (7 + seed % 5) + " did not fail";
      } catch (RuntimeException e) {
        return String.valueOf(e.getMessage()).contains("not in [0, 4)") ? null : "call " + seed + ": " + e;
      }
    }

    /**
     * A variable for a call that passes one (null otherwise), made one thread at a time: creating
     * variables runs TensorFlow Java eager ops, whose session's scope (a WeakHashMap) is not
     * thread-safe; four threads creating them at once left one spinning in WeakHashMap.put.
     */
    private Variable<TFloat32> variable(TFloat32 value) {
      if (!kind.equals("passed")) {
        return null;
      }
      synchronized (GatherScenario.class) {
        return Variable.create(value);
      }
    }

    /** The call's arguments: v among them only when the function takes it. */
    private Map<String, Object> args(TFloat32 x, TInt32 index, Variable<TFloat32> v) {
      return kind.equals("passed") ? Map.of("x", x, "i", index, "v", v) : Map.of("x", x, "i", index);
    }

    @Override
    public String after(int goods) {
      if (!kind.equals("writes")) {
        return null;
      }
      try (TFloat32 n = counter.value()) {
        return n.getFloat() == goods ? null : "counter " + n.getFloat() + " after " + goods + " good calls";
      }
    }
  }
}
