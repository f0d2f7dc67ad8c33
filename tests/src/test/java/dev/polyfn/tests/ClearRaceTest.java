package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.TensorSpec;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.types.TFloat32;

/**
 * {@code getConcreteFunction} and {@code apply} find a concrete function, then use it; a {@code
 * clearCache} from another thread in between must not make them fail (they trace again).
 */
class ClearRaceTest {
  private static final int ROUNDS = 1_500;

  @Test
  void getConcreteFunctionAndApplySurviveAConcurrentClear() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    AtomicBoolean stop = new AtomicBoolean();
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.mul(x, tf.constant(3f)));
    }, FunctionOptions.defaults().withName("cleared"))) {
      CountDownLatch clearing = new CountDownLatch(1);
      Future<?> clearer = pool.submit(() -> {
        clearing.countDown();
        while (!stop.get()) {
          f.clearCache();
        }
        return null;
      });
      clearing.await(); // the rounds run while clears do, not before the clearer starts
      TensorSpec spec = TensorSpec.of(TFloat32.class, Shape.of(2));
      for (int i = 0; i < ROUNDS; i++) {
        ConcreteFunctionInfo c = f.getConcreteFunction(Map.of("x", spec));
        assertEquals(c.outputNames(), List.of("y"));
        try (Graph g = new Graph()) {
          Ops tf = Ops.create(g);
          Operand<TFloat32> x = tf.placeholder(TFloat32.class, Placeholder.shape(Shape.of(2)));
          Map<String, Operand<?>> out = f.apply(tf, Map.of("x", x));
          assertTrue(out.containsKey("y"));
        }
      }
      stop.set(true);
      clearer.get(60, TimeUnit.SECONDS);
      // Clears landed among the rounds (they traced again), so the race was run, not skipped.
      assertTrue(f.traceCount() > 1, f.traceCount() + " traces in " + ROUNDS + " rounds");
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
  }
}
