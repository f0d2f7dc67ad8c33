package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Introspection racing a close: every answer is either the whole answer or the closed error,
 * never an empty one that reads as "never traced". A close empties the native state that the
 * queries read (the parameter list, the table, the call profile); a query that read it after the
 * close returned empty lists, a null suggestion, and {@code writeSignatureProfile} overwrote the
 * user's profile with one of no calls.
 */
class IntrospectionCloseRaceTest {
  private static final int SIGNATURES = 3;
  private static final int ROUNDS = 150;

  @Test
  void aQueryRacingACloseAnswersInFullOrSaysClosed(@TempDir Path dir) throws Exception {
    List<String> queries = List.of("functionType", "concreteFunctions", "suggestedSignature", "writeSignatureProfile",
        "traceHistory");
    ExecutorService pool = Executors.newFixedThreadPool(queries.size() + 1);
    Map<String, Integer> outcomes = new ConcurrentSkipListMap<>();
    List<String> wrong = new CopyOnWriteArrayList<>();
    try {
      for (int round = 0; round < ROUNDS; round++) {
        MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.neg(in.input("x", TFloat32.class))),
            FunctionOptions.defaults().withName("introspected"));
        for (int n = 1; n <= SIGNATURES; n++) {
          try (TFloat32 x = TFloat32.tensorOf(Shape.of(n))) {
            f.call(Map.of("x", x)).close();
          }
        }
        CountDownLatch asking = new CountDownLatch(queries.size());
        List<Future<?>> askers = new ArrayList<>();
        for (String query : queries) {
          Path profile = dir.resolve("profile-" + query + ".json");
          askers.add(pool.submit(() -> {
            asking.countDown();
            while (true) {
              String problem;
              try {
                problem = ask(f, query, profile);
              } catch (IllegalStateException e) {
                assertTrue(e.getMessage().contains("closed"), e.getMessage());
                outcomes.merge(query + ".closed", 1, Integer::sum);
                return null;
              }
              if (problem != null) {
                wrong.add(query + ": " + problem);
              } else {
                outcomes.merge(query + ".whole", 1, Integer::sum);
              }
            }
          }));
        }
        asking.await();
        Thread.sleep(0, (int) (Math.random() * 200_000)); // lands somewhere among the queries
        f.close();
        for (Future<?> a : askers) {
          a.get(10, TimeUnit.SECONDS);
        }
        assertTrue(f.toString().contains("closed"), f.toString()); // toString never throws
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(List.of(), wrong, "answers that read as a function never traced; outcomes: " + outcomes);
    assertEquals(ROUNDS * queries.size(), outcomes.entrySet().stream().filter(e -> e.getKey().endsWith(".closed"))
        .mapToInt(Map.Entry::getValue).sum(), outcomes.toString());
    for (String query : queries) { // each query also answered before a close: the race was run, not only its end
      assertTrue(outcomes.getOrDefault(query + ".whole", 0) > 0, query + " never answered in full: " + outcomes);
    }
  }

  /** Asks {@code query}; null when the answer is whole, else what is missing from it. */
  private static String ask(MapFunction f, String query, Path profile) {
    switch (query) {
      case "functionType":
        return f.functionType().parameters().isEmpty() ? "empty" : null;
      case "concreteFunctions": {
        int n = f.concreteFunctions().size();
        return n == SIGNATURES ? null : "size " + n;
      }
      case "suggestedSignature":
        return f.suggestedSignature() == null ? "null" : null;
      case "traceHistory": {
        int n = f.traceHistory().size();
        return n == SIGNATURES ? null : "size " + n;
      }
      default: {
        f.writeSignatureProfile(profile);
        String text = readQuietly(profile);
        return text.contains("\"calls\": 0,") ? "no calls: " + text : null;
      }
    }
  }

  private static String readQuietly(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      return "unreadable: " + e;
    }
  }
}
