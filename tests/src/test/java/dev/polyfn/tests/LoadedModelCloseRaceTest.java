package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;

/**
 * Loaded functions closed while four threads call them: one that owns a variable (saved by Polyfn,
 * restored by {@code Function.load}) and Python's lookup-table models (a {@code StaticHashTable}
 * and a {@code MutableHashTable}, restored as resources the function owns). A call in flight
 * holds what it feeds TensorFlow (the variable's and the tables' handles, kept across calls), so
 * a close frees them only after it. Allowed outcomes: the right answer, or the documented
 * {@link IllegalStateException} of a closed function; never a wrong answer, another error, a
 * crash or a hang. Then the same models load again and answer. Run in a child JVM; outcomes counted.
 */
class LoadedModelCloseRaceTest {
  private static final int THREADS = 4;
  private static final String[] WORDS = {"cat", "dog", "bird", "fish", "zebra"};

  @TempDir static Path dir;

  /** y = x * w, w a variable the function owns (3). */
  private static final MapBody SCALED = (tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class, Shape.of(-1)),
      in.variable("w", TFloat32.scalarOf(3f)).read(tf)));

  @Test
  void closingLoadedModelsWhileThreadsCallThemNeverCrashesOrAnswersWrong() throws Exception {
    String expected = PythonScripts.run("make_table_models.py", 300, dir.toString());
    try (MapFunction scaled = Function.define(SCALED, FunctionOptions.defaults().withName("scaled"));
         TFloat32 x = TFloat32.vectorOf(1f, 2f);
         Outputs o = scaled.call(Map.of("x", x))) {
      scaled.save(dir.resolve("scaled"));
    }
    String out = ChildJvm.run(LoadedModelCloseRaceTest.class, dir.toString(), "40", ids(expected, "static"), ids(expected, "mutable"));
    System.out.println(out);
    assertTrue(out.contains("wrong=0 unexpected=0"), out);
    for (String outcome : List.of("scaled.ok", "scaled.closed", "static.ok", "static.closed", "mutable.ok", "mutable.closed", "again.ok")) {
      assertTrue(out.matches("(?s).*\\b" + outcome.replace(".", "\\.") + "=[1-9].*"), outcome + " never happened:\n" + out);
    }
  }

  /** Python's ids for WORDS from the script's output ("name: [1, 2, ...]"), as "1,2,...". */
  private static String ids(String pythonOut, String model) {
    float[] v = PythonScripts.namedValues(pythonOut).get(model);
    StringBuilder s = new StringBuilder();
    for (float f : v) {
      s.append(s.length() == 0 ? "" : ",").append((long) f);
    }
    return s.toString();
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int rounds = Integer.parseInt(args[1]);
    Map<String, String> expected = Map.of("static", args[2], "mutable", args[3]);
    Map<String, Integer> counts = new ConcurrentHashMap<>();
    List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
    for (int round = 0; round < rounds; round++) {
      for (String model : List.of("scaled", "static", "mutable")) {
        MapFunction f = load(dir, model);
        CountDownLatch started = new CountDownLatch(THREADS);
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          Thread thread = new Thread(() -> {
            started.countDown();
            while (!stop.get()) {
              String outcome = callOnce(f, model, expected.get(model), problems);
              counts.merge(model + "." + outcome, 1, Integer::sum);
              if (outcome.equals("closed")) {
                return;
              }
            }
          });
          thread.start();
          threads.add(thread);
        }
        started.await();
        Thread.sleep(round % 5); // sometimes at the first calls, sometimes later
        f.close();
        stop.set(true);
        for (Thread thread : threads) {
          thread.join(60_000);
          if (thread.isAlive()) {
            problems.add(model + ": a caller hung after close");
            counts.merge("unexpected", 1, Integer::sum);
          }
        }
      }
    }
    // The same models load again and answer.
    for (String model : List.of("scaled", "static", "mutable")) {
      try (MapFunction f = load(dir, model)) {
        counts.merge("again." + callOnce(f, model, expected.get(model), problems), 1, Integer::sum);
      }
    }
    int wrong = counts.entrySet().stream().filter(e -> e.getKey().endsWith(".wrong")).mapToInt(Map.Entry::getValue).sum();
    int unexpected = counts.entrySet().stream().filter(e -> e.getKey().endsWith("unexpected")).mapToInt(Map.Entry::getValue).sum();
    System.out.println(new TreeMap<>(counts));
    problems.stream().limit(20).forEach(System.out::println);
    System.out.println("wrong=" + wrong + " unexpected=" + unexpected);
  }

  private static MapFunction load(Path dir, String model) {
    return model.equals("scaled") ? Function.load(dir.resolve(model), SCALED) : Function.load(dir.resolve(model), "lookup");
  }

  /** One call: "ok", "wrong", "closed" (the documented error) or "unexpected". */
  private static String callOnce(MapFunction f, String model, String want, List<String> problems) {
    try {
      if (model.equals("scaled")) {
        try (TFloat32 x = TFloat32.vectorOf(1f, 2f); Outputs o = f.call(Map.of("x", x))) {
          TFloat32 y = o.get("y", TFloat32.class);
          return y.getFloat(0) == 3f && y.getFloat(1) == 6f ? "ok" : wrong(problems, model, y.getFloat(0) + "," + y.getFloat(1));
        }
      }
      try (Tensor words = TString.vectorOf(WORDS); Outputs o = f.call(Map.of("words", words))) {
        TInt64 ids = o.get("ids", TInt64.class);
        StringBuilder got = new StringBuilder();
        for (int i = 0; i < ids.size(); i++) {
          got.append(i == 0 ? "" : ",").append(ids.getLong(i));
        }
        return got.toString().equals(want) ? "ok" : wrong(problems, model, got + " instead of " + want);
      }
    } catch (IllegalStateException e) {
      if (String.valueOf(e.getMessage()).contains("closed")) {
        return "closed";
      }
      problems.add(model + ": " + e);
      return "unexpected";
    } catch (RuntimeException | Error e) {
      problems.add(model + ": " + e);
      return "unexpected";
    }
  }

  private static String wrong(List<String> problems, String model, String what) {
    problems.add(model + ": wrong answer " + what);
    return "wrong";
  }
}
