package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Nest;
import dev.polyfn.Outputs;
import dev.polyfn.internal.structure.Nests;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * A nest parameter as deep as a call accepts ({@link Nests#MAX_DEPTH}) also saves and loads:
 * every file Polyfn writes for it, it reads back. Its type is written as JSON two levels per
 * nesting level, and the JSON readers' depth limits (Java's 64, serde_json's 128, the type
 * decoder's 48) once stopped at about 30 list levels: a save of 30 levels failed, one of 28 saved
 * and then could not be loaded. A trace cache entry holds the same type, and restores too.
 */
class DeepNestSaveLoadTest {
  @TempDir Path dir;

  /** The one tensor at the bottom of the nest, plus 1. */
  private static final MapBody BODY = (tf, in) -> {
    Nest n = in.nest("xs");
    while (n.isList()) {
      n = n.elements().get(0);
    }
    Operand<TFloat32> x = n.operand(TFloat32.class);
    return Map.of("y", tf.math.add(x, tf.constant(1f)));
  };

  private static Object nested(TFloat32 x, int depth) {
    Object v = x;
    for (int i = 0; i < depth; i++) {
      v = List.of(v);
    }
    return v;
  }

  private static float call(MapFunction f, Object xs) {
    try (Outputs out = f.call(Map.of("xs", xs))) {
      return out.get("y", TFloat32.class).getFloat();
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {20, 30, 45, Nests.MAX_DEPTH - 1})
  void aNestAsDeepAsACallAcceptsSavesAndLoads(int depth) {
    try (TFloat32 x = TFloat32.scalarOf(2f)) {
      Object xs = nested(x, depth);
      try (MapFunction f = Function.define(BODY, FunctionOptions.defaults().withName("deep"))) {
        assertEquals(3f, call(f, xs), 0f, "depth " + depth);
        f.save(dir.resolve("saved"));
      }
      try (MapFunction loaded = Function.load(dir.resolve("saved"), BODY)) {
        int restored = loaded.traceCount();
        assertEquals(3f, call(loaded, xs), 0f, "loaded, depth " + depth);
        assertEquals(restored, loaded.traceCount(), "the loaded function serves the call without tracing");
      }
    }
  }

  @Test
  void aNestAsDeepAsACallAcceptsRestoresFromTheTraceCache() throws Exception {
    Path cache = dir.resolve("cache");
    FunctionOptions cached = FunctionOptions.defaults().withName("deep").withTraceCache(cache);
    try (TFloat32 x = TFloat32.scalarOf(2f)) {
      Object xs = nested(x, Nests.MAX_DEPTH - 1);
      try (MapFunction f = Function.define(BODY, cached)) {
        assertEquals(3f, call(f, xs), 0f);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while ((!Files.isDirectory(cache) || FileFixtures.entries(cache).isEmpty()) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      try (MapFunction restored = Function.define(BODY, cached)) {
        assertEquals(3f, call(restored, xs), 0f);
        assertEquals(0, restored.traceCount(), "the entry serves the call");
      }
    }
  }
}
