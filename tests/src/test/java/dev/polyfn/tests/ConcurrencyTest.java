package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/** Many threads calling one function. */
class ConcurrencyTest {
  @Test
  void fourThreadsCallingAWarmFunctionGetTheirOwnResults() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (MapFunction scale = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> k = in.input("k", TFloat32.class);
      return Map.of("y", tf.math.mul(x, k));
    })) {
      try (TFloat32 x = TFloat32.vectorOf(1f, 2f); TFloat32 k = TFloat32.scalarOf(1f)) {
        scale.call(Map.of("x", x, "k", k)).close();
      }
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        final float factor = t + 2;
        results.add(pool.submit(() -> {
          int checked = 0;
          for (int i = 0; i < 500; i++) {
            try (TFloat32 x = TFloat32.vectorOf(i, -i);
                TFloat32 k = TFloat32.scalarOf(factor);
                Outputs out = scale.call(Map.of("x", x, "k", k))) {
              TFloat32 y = out.get("y", TFloat32.class);
              assertEquals(i * factor, y.getFloat(0), 0f);
              assertEquals(-i * factor, y.getFloat(1), 0f);
              checked++;
            }
          }
          return checked;
        }));
      }
      for (Future<Integer> r : results) {
        assertEquals(500, r.get());
      }
      assertEquals(1, scale.traceCount());
    } finally {
      pool.shutdownNow();
    }
  }
}
