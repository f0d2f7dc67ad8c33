package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.TFloat32;

/**
 * The {@code dev.polyfn} logger's level, changed while the program runs, decides which of the
 * native side's records arrive (trace reports are DEBUG, java.util.logging's FINE). Runs in a
 * fresh JVM so that Polyfn loads while the level is the default INFO, as in an application that
 * turns debug logging on later.
 */
class NativeLogLevelTest {

  /** Child JVM: traces one new shape per level step and prints the trace records it received. */
  public static void main(String[] args) throws Exception {
    Logger logger = Logger.getLogger("dev.polyfn");
    List<String> traced = new ArrayList<>();
    Handler capture = new Handler() {
      @Override
      public synchronized void publish(LogRecord r) {
        if (r.getMessage().contains("'levels' traced")) {
          traced.add(r.getLevel() + " " + r.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    capture.setLevel(Level.ALL);
    logger.addHandler(capture);
    try (MapFunction f = Function.define(
        (tf, in) -> Map.of("y", tf.math.neg(in.input("x", TFloat32.class))),
        FunctionOptions.defaults().withName("levels"))) {
      String[] steps = {"default", "FINE", "INFO", "ALL"};
      for (int i = 0; i < steps.length; i++) {
        if (!steps[i].equals("default")) {
          logger.setLevel(Level.parse(steps[i]));
        }
        float[] values = new float[i + 1]; // a new shape each step: one trace each
        try (TFloat32 x = TFloat32.vectorOf(values)) {
          f.call(Map.of("x", x)).close();
        }
        synchronized (capture) {
          System.out.println("step " + steps[i] + " records " + traced.size());
        }
      }
      synchronized (capture) {
        traced.forEach(t -> System.out.println("record " + t));
      }
    }
  }

  @Test
  void aLevelChangedAtRunTimeTakesEffectForNativeRecords() throws Exception {
    String out = ChildJvm.run(NativeLogLevelTest.class);
    // Loaded at INFO: the first trace is not reported; FINE turns reports on, INFO off again,
    // ALL on again. Each step's count is cumulative.
    assertTrue(out.contains("step default records 0"), out);
    assertTrue(out.contains("step FINE records 1"), out);
    assertTrue(out.contains("step INFO records 1"), out);
    assertTrue(out.contains("step ALL records 2"), out);
    assertTrue(out.contains("record FINE function 'levels' traced (x: TensorSpec(FLOAT, [2]))"), out);
  }
}
