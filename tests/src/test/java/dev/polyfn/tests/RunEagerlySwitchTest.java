package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.types.TFloat32;

/**
 * The JVM-wide debug-mode switch: set at start by the system property {@code
 * dev.polyfn.runEagerly}, and left without effect on a function loaded without a body (it has
 * nothing to run eagerly: its saved concrete functions serve its calls).
 */
class RunEagerlySwitchTest {

  /** In a child JVM: a function called twice; prints whether the switch is on, body runs and traces. */
  public static void main(String[] args) {
    AtomicInteger runs = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
      runs.incrementAndGet();
      return Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(1f)));
    }); TFloat32 x = TFloat32.scalarOf(2f)) {
      float y = 0;
      for (int i = 0; i < 2; i++) {
        try (Outputs out = f.call(Map.of("x", x))) {
          y = out.get("y", TFloat32.class).getFloat();
        }
      }
      System.out.println("eager " + Function.functionsRunEagerly() + " runs " + runs.get() + " traces "
          + f.traceCount() + " y " + y);
    }
  }

  @Test
  void theSystemPropertyTurnsTheSwitchOnAtStart() throws Exception {
    String on = ChildJvm.runWith(List.of("-Ddev.polyfn.runEagerly=true"), RunEagerlySwitchTest.class);
    assertTrue(on.contains("eager true runs 2 traces 0 y 3.0"), on);
    String off = ChildJvm.run(RunEagerlySwitchTest.class);
    assertTrue(off.contains("eager false runs 1 traces 1 y 3.0"), off);
  }

  @Test
  void aFunctionLoadedWithoutABodyRunsItsSavedFunctions(@TempDir Path dir) {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class),
        tf.constant(3f)))); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      f.call(Map.of("x", x)).close();
      f.save(dir);
      Function.runFunctionsEagerly(true);
      try (MapFunction loaded = (MapFunction) Function.load(dir); Outputs out = loaded.call(Map.of("x", x))) {
        assertEquals(6f, out.get("y", TFloat32.class).getFloat(1), 0f);
        assertEquals(1, ((PolymorphicFunction) loaded).traceCount());
        assertEquals(1, loaded.statistics().exactHits(), "served by the saved concrete function");
      } finally {
        Function.runFunctionsEagerly(false);
      }
    }
  }
}
