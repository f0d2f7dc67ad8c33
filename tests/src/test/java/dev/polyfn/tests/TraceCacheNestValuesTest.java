package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.types.TFloat32;

/**
 * Java values inside a nest that Java tells apart but whose texts look alike, through the trace
 * cache: Integer 3, Long 3, Short 3, the string "3", 3.0, 3.0f; 0.0 and -0.0; NaN; true and
 * "true"; a string of non-ASCII characters. One JVM traces each; the next, warm-started, calls
 * them in the reverse order (so it interns them in another order) and must serve each its own
 * trace, with no trace at all; a third calls values no entry holds (4, "4", false) and traces each.
 */
class TraceCacheNestValuesTest {
  /** y = x + what the value stands for: a different number for each value Java tells apart. */
  static final MapBody BODY = (tf, in) -> {
    Object v = in.nest("v").get("k").value(Object.class);
    return Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(code(v))));
  };

  static float code(Object v) {
    if (v instanceof Integer i) {
      return i;
    } else if (v instanceof Long l) {
      return 10f * l;
    } else if (v instanceof Short s) {
      return 100f * s;
    } else if (v instanceof Double d) {
      return d.isNaN() ? 7000f : Double.doubleToRawLongBits(d) == Double.doubleToRawLongBits(-0.0) ? -0.5f
          : 1000f * d.floatValue() + 0.25f;
    } else if (v instanceof Float f) {
      return 2000f * f + 0.75f;
    } else if (v instanceof Boolean b) {
      return b ? 5000f : 6000f;
    } else if (v instanceof String s) {
      return 300f + s.length() + (s.equals("true") ? 40000f : 0f) + (s.equals("é€😀") ? 80000f : 0f);
    }
    throw new IllegalArgumentException("unexpected value " + v);
  }

  static final List<Object> TRACED = List.of(3, 3L, (short) 3, "3", 3.0, 3.0f, 0.0, -0.0, Double.NaN, true, "true",
      "é€😀");
  static final List<Object> NEW = List.of(4, "4", false);

  /** Child JVM: args = cache dir, "traced", "reversed" or "new". Prints each call's result and the trace count. */
  public static void main(String[] args) {
    List<Object> values = new ArrayList<>(args[1].equals("new") ? NEW : TRACED);
    if (args[1].equals("reversed")) {
      Collections.reverse(values);
    }
    try (MapFunction f = Function.define(BODY, FunctionOptions.defaults().withName("values")
        .withTraceCache(Path.of(args[0])))) {
      for (Object v : values) {
        try (TFloat32 x = TFloat32.scalarOf(1f); Outputs out = f.call(Map.of("x", x, "v", Map.of("k", v)))) {
          float y = out.get("y", TFloat32.class).getFloat();
          System.out.println("value " + v.getClass().getSimpleName() + " " + v + " -> " + (y == 1f + code(v) ? "right" : "WRONG " + y));
        }
      }
      System.out.println("traceCount " + f.traceCount());
    }
  }

  private static List<String> results(String out) {
    return out.lines().filter(l -> l.startsWith("value ")).sorted().toList();
  }

  @Test
  void valuesJavaTellsApartEachGetTheirOwnRestoredTrace(@TempDir Path cache) throws Exception {
    String first = ChildJvm.run(TraceCacheNestValuesTest.class, cache.toString(), "traced");
    assertTrue(first.contains("traceCount " + TRACED.size()), first);
    assertEquals(TRACED.size(), FileFixtures.entries(awaitEntries(cache, TRACED.size())).size(), first);
    String second = ChildJvm.run(TraceCacheNestValuesTest.class, cache.toString(), "reversed");
    assertTrue(second.contains("traceCount 0"), "every value restored, none traced: " + second);
    assertEquals(results(first), results(second));
    assertTrue(results(second).stream().allMatch(l -> l.endsWith("right")), second);
    String third = ChildJvm.run(TraceCacheNestValuesTest.class, cache.toString(), "new");
    assertTrue(third.contains("traceCount " + NEW.size()), "values no entry holds trace: " + third);
    assertTrue(results(third).stream().allMatch(l -> l.endsWith("right")), third);
  }

  /** {@code dir}, once its writer has written {@code n} entries (it writes on a thread of its own). */
  private static Path awaitEntries(Path dir, int n) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (FileFixtures.entries(dir).size() < n && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    return dir;
  }
}
