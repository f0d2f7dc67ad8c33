package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.FunctionStatistics;
import dev.polyfn.MapFunction;
import dev.polyfn.PolymorphicFunction;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * Word on long work: a trace, a concrete function's first run (where TensorFlow prepares it), a
 * save and a load that take longer than {@code dev.polyfn.slowWorkMillis} are logged at INFO with
 * their phases; each concrete function reports its preparation and first-run times. The threshold
 * is 0 here, so that small functions cross it.
 */
class LongWorkLoggingTest {
  /** A time as the records write it: {@code 12.3 ms} or {@code 2.61 s}. */
  private static final String TIME = "\\d+\\.\\d+ (ms|s)";

  /** Held: java.util.logging keeps loggers weakly, and a collected one would lose the handler. */
  private final Logger logger = Logger.getLogger("dev.polyfn");
  private final List<String> info = new ArrayList<>();
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      if (r.getLevel() == Level.INFO) {
        synchronized (info) {
          info.add(r.getMessage());
        }
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  private String before;

  @BeforeEach
  void thresholdZero() {
    before = System.getProperty("dev.polyfn.slowWorkMillis");
    System.setProperty("dev.polyfn.slowWorkMillis", "0");
    logger.addHandler(capture);
  }

  @AfterEach
  void thresholdBack() {
    logger.removeHandler(capture);
    if (before == null) {
      System.clearProperty("dev.polyfn.slowWorkMillis");
    } else {
      System.setProperty("dev.polyfn.slowWorkMillis", before);
    }
  }

  private static MapFunction negate(String name) {
    return Function.define((tf, in) -> Map.of("y", tf.math.neg(in.input("x", TFloat32.class))),
        FunctionOptions.defaults().withName(name));
  }

  private List<String> recordsAbout(String function) {
    synchronized (info) {
      return info.stream().filter(m -> m.contains("function '" + function + "'")).toList();
    }
  }

  private static void assertRecord(List<String> records, String regex) {
    Pattern p = Pattern.compile(regex);
    assertTrue(records.stream().anyMatch(m -> p.matcher(m).find()), "no INFO record matches " + regex + " in " + records);
  }

  @Test
  void aTraceAndAFirstRunOverTheThresholdAreLoggedWithTheirPhases() {
    try (MapFunction f = negate("long_work"); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      f.call(Map.of("x", x)).close();
      List<String> records = recordsAbout("long_work");
      assertRecord(records, "function 'long_work' took " + TIME + " to trace \\(x: TensorSpec\\(FLOAT, \\[2\\]\\)\\): body "
          + TIME + ", graph to function " + TIME);
      assertRecord(records, "function 'long_work': first run of \\S*long_work\\S* \\(x: TensorSpec\\(FLOAT, \\[2\\]\\)\\) took "
          + TIME + " \\(TensorFlow's preparation: instantiation, Grappler, XLA if enabled, kernels; and the run\\);"
          + " prepared before in " + TIME + ": body " + TIME + ", graph to function " + TIME);
      assertEquals(2, records.size(), records.toString());

      // A concrete function runs for the first time once: later calls say nothing.
      f.call(Map.of("x", x)).close();
      f.call(Map.of("x", x)).close();
      assertEquals(2, recordsAbout("long_work").size(), recordsAbout("long_work").toString());

      // Under the default threshold (1 s) a small function's work is not worth a record.
      System.clearProperty("dev.polyfn.slowWorkMillis");
      try (TFloat32 three = TFloat32.vectorOf(1f, 2f, 3f)) {
        f.call(Map.of("x", three)).close();
      }
      assertEquals(2, recordsAbout("long_work").size(), recordsAbout("long_work").toString());
      // A negative threshold: never.
      System.setProperty("dev.polyfn.slowWorkMillis", "-1");
      try (TFloat32 four = TFloat32.vectorOf(1f, 2f, 3f, 4f)) {
        f.call(Map.of("x", four)).close();
      }
      assertEquals(2, recordsAbout("long_work").size(), recordsAbout("long_work").toString());
    }
  }

  @Test
  void concreteFunctionsReportTheirPreparationAndFirstRunTimes() {
    try (MapFunction f = negate("timed"); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      f.call(Map.of("x", x)).close();
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3)))); // traced, never called
      List<ConcreteFunctionInfo> concrete = f.concreteFunctions();
      assertEquals(2, concrete.size());
      ConcreteFunctionInfo called = concrete.get(0);
      ConcreteFunctionInfo uncalled = concrete.get(1);
      assertTrue(called.preparationTime().compareTo(Duration.ZERO) > 0, called.preparationTime().toString());
      assertTrue(called.firstRunTime().orElseThrow().compareTo(Duration.ZERO) > 0);
      assertTrue(uncalled.preparationTime().compareTo(Duration.ZERO) > 0, uncalled.preparationTime().toString());
      assertEquals(Optional.empty(), uncalled.firstRunTime());
      FunctionStatistics stats = f.statistics();
      assertEquals(called.firstRunTime().orElseThrow(), stats.totalFirstRunTime());

      try (TFloat32 three = TFloat32.vectorOf(1f, 2f, 3f)) {
        f.call(Map.of("x", three)).close();
      }
      ConcreteFunctionInfo ran = f.concreteFunctions().get(1);
      Duration firstRun = ran.firstRunTime().orElseThrow();
      assertTrue(firstRun.compareTo(Duration.ZERO) > 0);
      assertEquals(called.firstRunTime().orElseThrow().plus(firstRun), f.statistics().totalFirstRunTime());
      // The first run's time stays: later calls do not change it.
      try (TFloat32 three = TFloat32.vectorOf(4f, 5f, 6f)) {
        f.call(Map.of("x", three)).close();
      }
      assertEquals(Optional.of(firstRun), f.concreteFunctions().get(1).firstRunTime());
      assertRecord(recordsAbout("timed"), "function 'timed': first run of \\S*timed\\S* \\(x: TensorSpec\\(FLOAT, \\[3\\]\\)\\)");
    }
  }

  @Test
  void aSaveAndALoadOverTheThresholdAreLoggedWithTheirPhases(@TempDir Path dir) {
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f));
         MapFunction f = SavedModelTest.scale(w); TFloat32 x = TFloat32.vectorOf(1f, 1f, 1f)) {
      f.call(Map.of("x", x)).close();
      f.save(dir);
      assertRecord(recordsAbout("scale"), "function 'scale' saved to " + Pattern.quote(dir.toString()) + " in " + TIME
          + ": export " + TIME + ", graph " + TIME + ", variables " + TIME + ", files " + TIME);
    }
    synchronized (info) {
      info.clear();
    }
    try (PolymorphicFunction g = Function.load(dir); TFloat32 x = TFloat32.vectorOf(1f, 1f, 1f)) {
      assertRecord(recordsAbout("scale"), "function 'scale' loaded from " + Pattern.quote(dir.toString()) + " in " + TIME
          + ": reading " + TIME + ", variables " + TIME + ", functions " + TIME);
      ConcreteFunctionInfo restored = g.concreteFunctions().get(0);
      assertTrue(restored.preparationTime().compareTo(Duration.ZERO) > 0);
      assertFalse(restored.firstRunTime().isPresent());
      ((MapFunction) g).call(Map.of("x", x)).close();
      assertTrue(g.concreteFunctions().get(0).firstRunTime().isPresent());
      assertRecord(recordsAbout("scale"), "function 'scale': first run of \\S*scale\\S* \\(x: TensorSpec\\(FLOAT, \\[3\\]\\);"
          + " captures: \\S+: VariableSpec\\(FLOAT, \\[3\\], alias 0\\)\\) took "
          + TIME + " .*; prepared before in " + TIME + ": restore " + TIME);
    }
  }
}
