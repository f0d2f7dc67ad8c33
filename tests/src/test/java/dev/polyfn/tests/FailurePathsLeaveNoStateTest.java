package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Diagnostics;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import dev.polyfn.tests.FaultyPairType.Fault;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * {@link FailureLeavesNoStateTest}'s invariant on the paths other than a call: after an exception
 * while defining (a body that throws on an example, examples that conflict with the declaration,
 * bad options), saving, loading a damaged SavedModel, loading a bad signature profile, or in a
 * composite type, the thread holds no trace, the functions involved still call (and save), a good
 * definition or load works, and failed loads and definitions leave no concrete function alive.
 */
class FailurePathsLeaveNoStateTest {

  @TempDir
  static Path dir;

  private static Path good;
  private static Path truncatedPb;
  private static Path truncatedJson;
  private static Path contradictoryJson;
  private static Path unwritable;
  private static Path goodProfile;
  private static Path malformedProfile;
  private static Path unknownParameterProfile;
  private static final AtomicLong SAVES = new AtomicLong();
  private static final int ITERATIONS = Integer.getInteger("polyfn.failurePaths.iterations", 1500);

  @BeforeAll
  static void files() throws Exception {
    good = FileFixtures.save(dir.resolve("good"), "plus");
    truncatedPb = copy(good, "truncated-pb");
    Path pb = truncatedPb.resolve("saved_model.pb");
    byte[] bytes = Files.readAllBytes(pb);
    Files.write(pb, java.util.Arrays.copyOf(bytes, bytes.length / 2));
    truncatedJson = copy(good, "truncated-json");
    String json = Files.readString(metadata(good));
    Files.writeString(metadata(truncatedJson), json.substring(0, json.length() / 2));
    contradictoryJson = copy(good, "contradictory-json");
    Files.writeString(metadata(contradictoryJson), json.replace("\"kind\":\"TENSOR\"", "\"kind\":\"LIST\""));
    Path file = Files.writeString(dir.resolve("a-file"), "not a directory");
    unwritable = file.resolve("model");
    goodProfile = Files.writeString(dir.resolve("good-profile.json"), profile("{\"x\": {\"dtype\": \"FLOAT\", \"shape\": [-1]}}"));
    malformedProfile = Files.writeString(dir.resolve("malformed-profile.json"), "{\"format\": \"polyfn-signature-profile\", \"versi");
    unknownParameterProfile = Files.writeString(dir.resolve("unknown-profile.json"),
        profile("{\"x\": {\"dtype\": \"FLOAT\", \"shape\": [2]}, \"z\": {\"dtype\": \"FLOAT\", \"shape\": [2]}}"));
  }

  private static String profile(String parameters) {
    return "{\"format\": \"polyfn-signature-profile\", \"version\": 1, \"function\": \"plus\", \"calls\": 10,"
        + " \"signatures\": [{\"count\": 10, \"parameters\": " + parameters + "}]}";
  }

  private static Path metadata(Path saved) {
    return saved.resolve("assets.extra").resolve("polyfn.json");
  }

  private static Path copy(Path from, String name) throws Exception {
    Path to = dir.resolve(name);
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : all.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
    return to;
  }

  /** y = x * 2 + len(mode); "boom" throws in the body. */
  private static MapFunction modeFunction(FunctionOptions options) {
    return Function.define((Ops tf, dev.polyfn.Inputs in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(-1));
      String mode = in.javaInput("mode", String.class);
      if (mode.equals("boom")) {
        throw new IllegalStateException("the body refuses mode boom");
      }
      return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(2f)), tf.constant((float) mode.length())));
    }, options);
  }

  private static Map<String, ?> example(Class<? extends org.tensorflow.types.family.TType> type, String mode, long... dims) {
    return Map.of("x", TensorSpec.of(type, Shape.of(dims)), "mode", mode);
  }

  /** The paths and what goes wrong on them; the GOOD_ kinds are the good calls between. */
  private enum Kind {
    GOOD_CALL, GOOD_DEFINE, GOOD_SAVE, GOOD_LOAD, GOOD_PROFILE,
    DEFINE_BODY_THROWS_ON_EXAMPLE, DEFINE_EXAMPLE_CONFLICTS, DEFINE_SECOND_EXAMPLE_THROWS, DEFINE_BAD_OPTIONS,
    SAVE_UNWRITABLE, SAVE_JAVA_VALUE_PARAMETER,
    LOAD_MISSING, LOAD_TRUNCATED_PB, LOAD_TRUNCATED_JSON, LOAD_CONTRADICTORY_JSON,
    PROFILE_MISSING, PROFILE_MALFORMED, PROFILE_UNKNOWN_PARAMETER,
    COMPOSITE_BROKEN
  }

  /** The functions a run shares: a mode function, a savable one and one taking a composite. */
  private record Shared(MapFunction modes, MapFunction plus, NestFunction swap) implements AutoCloseable {
    static Shared create() {
      MapFunction plus = Function.define(FileFixtures.PLUS_ONE, FunctionOptions.defaults().withName("plus"));
      plus.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1))));
      return new Shared(modeFunction(FunctionOptions.defaults()), plus, FaultyPairType.swap());
    }

    @Override
    public void close() {
      List.of(modes, plus, swap).forEach(dev.polyfn.PolymorphicFunction::close);
    }
  }

  private static final Fault[] COMPOSITE_FAULTS = Arrays.stream(Fault.values()).filter(Fault::breaksContract).toArray(Fault[]::new);
  /** {@code n} random kinds; after each failure the thread holds no trace and the path's good case works. */
  private static void run(Shared s, Random random, int n, Map<String, Integer> counts) throws Exception {
    Kind[] kinds = Kind.values();
    for (int i = 0; i < n; i++) {
      Kind kind = kinds[random.nextInt(kinds.length)];
      counts.merge(kind.name(), 1, Integer::sum);
      String mode = random.nextBoolean() ? "a" : "ab";
      switch (kind) {
        case GOOD_CALL -> assertModeCall(s.modes(), mode);
        case GOOD_DEFINE -> goodDefine(mode);
        case GOOD_SAVE -> goodSave(s.plus());
        case GOOD_LOAD -> goodLoad();
        case GOOD_PROFILE -> goodProfile();
        case DEFINE_BODY_THROWS_ON_EXAMPLE -> {
          expect(IllegalStateException.class, "boom", () -> modeFunction(examples(example(TFloat32.class, "boom", -1))).close());
          goodDefine(mode);
        }
        case DEFINE_EXAMPLE_CONFLICTS -> {
          Map<String, ?> conflict = random.nextBoolean() ? example(TInt32.class, mode, 2) : example(TFloat32.class, mode, 2, 2);
          expect(IllegalArgumentException.class, "conflicts with", () -> modeFunction(examples(conflict)).close());
          goodDefine(mode);
        }
        case DEFINE_SECOND_EXAMPLE_THROWS -> { // the first example traces, then the definition fails
          expect(IllegalStateException.class, "boom", () -> modeFunction(
              examples(example(TFloat32.class, mode, -1), example(TFloat32.class, "boom", -1))).close());
          goodDefine(mode);
        }
        case DEFINE_BAD_OPTIONS -> {
          Executable bad = switch (random.nextInt(3)) {
            case 0 -> () -> FunctionOptions.defaults().withName(" ");
            case 1 -> () -> FunctionOptions.defaults().withMaxConcreteFunctions(0);
            default -> () -> FunctionOptions.defaults().withExampleInputs(List.of());
          };
          expect(IllegalArgumentException.class, "", bad);
          goodDefine(mode);
        }
        case SAVE_UNWRITABLE -> {
          expect(UncheckedIOException.class, unwritable.toString(), () -> s.plus().save(unwritable));
          goodSave(s.plus());
        }
        case SAVE_JAVA_VALUE_PARAMETER -> {
          // A value with no text another JVM reads back (an unpaired surrogate): the save is refused.
          try (MapFunction m = modeFunction(FunctionOptions.defaults())) {
            assertModeCall(m, "x\uD800");
            expect(IllegalStateException.class, "parameter 'mode' was traced with", () -> m.save(dir.resolve("never")));
            assertModeCall(m, mode);
          }
          assertModeCall(s.modes(), mode);
        }
        case LOAD_MISSING -> {
          expect(IllegalArgumentException.class, "missing", () -> Function.load(dir.resolve("missing")).close());
          goodLoad();
        }
        case LOAD_TRUNCATED_PB -> {
          expect(IllegalArgumentException.class, "saved_model.pb", () -> Function.load(truncatedPb).close());
          goodLoad();
        }
        case LOAD_TRUNCATED_JSON -> {
          expect(IllegalArgumentException.class, metadata(truncatedJson).toString(), () -> Function.load(truncatedJson).close());
          goodLoad();
        }
        case LOAD_CONTRADICTORY_JSON -> {
          expect(IllegalArgumentException.class, metadata(contradictoryJson).toString(),
              () -> Function.load(contradictoryJson).close());
          goodLoad();
        }
        case PROFILE_MISSING -> {
          Path missing = dir.resolve("no-profile.json");
          expect(IllegalArgumentException.class, missing.toString(), () -> withProfile(missing).close());
          goodProfile();
        }
        case PROFILE_MALFORMED -> {
          expect(IllegalArgumentException.class, malformedProfile.toString(), () -> withProfile(malformedProfile).close());
          goodProfile();
        }
        case PROFILE_UNKNOWN_PARAMETER -> {
          expect(IllegalArgumentException.class, "'z'", () -> withProfile(unknownParameterProfile).close());
          goodProfile();
        }
        case COMPOSITE_BROKEN -> {
          Fault fault = COMPOSITE_FAULTS[random.nextInt(COMPOSITE_FAULTS.length)];
          FaultyPairType.breakOnThisThread(fault);
          try {
            // view and components run only while tracing: a length never traced well reaches them
            int length = fault.tracingOnly() ? 3 : 2;
            expect(IllegalStateException.class, "composite type '" + FaultyPairType.NAME + "'",
                () -> FaultyPairType.checkSwap(s.swap(), length));
          } finally {
            FaultyPairType.breakOnThisThread(Fault.NONE);
          }
          FaultyPairType.checkSwap(s.swap(), 2);
        }
        default -> throw new AssertionError(kind);
      }
      assertEquals(0, Diagnostics.tracesInProgressOnThisThread(), "after " + kind);
    }
  }

  @SafeVarargs
  private static FunctionOptions examples(Map<String, ?>... examples) {
    return FunctionOptions.defaults().withExampleInputs(examples);
  }

  private static MapFunction withProfile(Path profile) {
    return Function.define(FileFixtures.PLUS_ONE, FunctionOptions.defaults().withSignatureProfile(profile));
  }

  private static void expect(Class<? extends Throwable> type, String inMessage, Executable bad) {
    Throwable e = assertThrows(Throwable.class, bad);
    if (!type.isInstance(e) || !String.valueOf(e.getMessage()).contains(inMessage)) {
      throw new AssertionError("expected " + type.getSimpleName() + " naming " + inMessage + ", got " + e, e);
    }
    assertEquals(0, Diagnostics.tracesInProgressOnThisThread(), "after " + e);
  }

  private static void assertModeCall(MapFunction f, String mode) {
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f); Outputs out = f.call(Map.of("x", x, "mode", mode))) {
      TFloat32 y = out.get("y", TFloat32.class);
      assertEquals(2f + mode.length(), y.getFloat(0), 0f);
      assertEquals(4f + mode.length(), y.getFloat(1), 0f);
    }
  }

  private static void goodDefine(String mode) {
    try (MapFunction f = modeFunction(examples(example(TFloat32.class, mode, -1)))) {
      assertEquals(1, f.traceCount(), "traced when defined");
      assertModeCall(f, mode);
      assertEquals(1, f.traceCount());
    }
  }

  private static void goodSave(MapFunction plus) {
    Path target = dir.resolve("saves").resolve(Long.toString(SAVES.incrementAndGet()));
    plus.save(target);
    assertTrue(Files.isRegularFile(target.resolve("saved_model.pb")), target.toString());
    assertEquals(FileFixtures.ANSWER, FileFixtures.answer(plus));
  }

  private static void goodLoad() {
    try (MapFunction f = (MapFunction) Function.load(good)) {
      assertEquals(FileFixtures.ANSWER, FileFixtures.answer(f));
    }
  }

  private static void goodProfile() {
    try (MapFunction f = withProfile(goodProfile)) {
      assertEquals(1, f.traceCount(), "traced from the profile when defined");
      assertEquals(FileFixtures.ANSWER, FileFixtures.answer(f));
    }
  }

  @Test
  void failuresOnEveryPathInterleavedWithGoodCallsOnOneThread() throws Exception {
    Map<String, Integer> counts = new TreeMap<>();
    try (Shared s = Shared.create()) {
      run(s, new Random(23), ITERATIONS, counts);
      assertEquals(Kind.values().length, counts.size(), "every kind ran: " + counts);
      assertEquals(1, s.plus().traceCount(), "saves trace nothing");
      assertEquals(1, s.swap().concreteFunctions().size(), "no broken composite trace is cached");
      assertEquals(2, s.modes().concreteFunctions().size(), "only the good modes: " + s.modes().concreteFunctions());
    }
    System.out.println("FailurePathsLeaveNoStateTest one thread: " + counts);
  }

  @Test
  void failuresOnEveryPathFromAPoolLeaveEveryThreadUsable() throws Exception {
    Map<String, Integer> counts = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try (Shared s = Shared.create()) {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        long seed = 2000 + t;
        futures.add(pool.submit(() -> {
          Map<String, Integer> mine = new TreeMap<>();
          run(s, new Random(seed), ITERATIONS / 8, mine);
          mine.forEach((k, v) -> counts.merge(k, v, Integer::sum));
          return null;
        }));
      }
      for (Future<?> fu : futures) {
        fu.get(5, TimeUnit.MINUTES);
      }
      assertEquals(Kind.values().length, counts.size(), "every kind ran: " + counts);
      assertEquals(1, s.plus().traceCount());
      assertEquals(1, s.swap().concreteFunctions().size(), "no broken composite trace is cached");
      assertEquals(2, s.modes().concreteFunctions().size(), "only the good modes: " + s.modes().concreteFunctions());
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Failed loads and definitions keep no concrete function alive: 200 of each may not raise the
   * process-wide count by anything near one per failure (other tests' garbage may be freed
   * meanwhile, which only lowers it).
   */
  @Test
  void failedLoadsAndDefinitionsLeaveNoConcreteFunctionAlive() throws Exception {
    System.gc();
    Thread.sleep(200);
    long before = Diagnostics.liveConcreteFunctions();
    for (int i = 0; i < 200; i++) {
      Path damaged = switch (i % 3) {
        case 0 -> truncatedPb;
        case 1 -> truncatedJson;
        default -> contradictoryJson;
      };
      assertThrows(IllegalArgumentException.class, () -> Function.load(damaged).close());
    }
    long afterLoads = Diagnostics.liveConcreteFunctions();
    assertTrue(afterLoads - before < 100, "200 failed loads left " + (afterLoads - before) + " concrete functions");
    for (int i = 0; i < 200; i++) {
      assertThrows(IllegalStateException.class, () -> modeFunction(
          examples(example(TFloat32.class, "a", -1), example(TFloat32.class, "boom", -1))).close());
    }
    long afterDefines = Diagnostics.liveConcreteFunctions();
    assertTrue(afterDefines - afterLoads < 100,
        "200 definitions failing after a traced example left " + (afterDefines - afterLoads) + " concrete functions");
    for (int i = 0; i < 200; i++) {
      assertThrows(IllegalArgumentException.class, () -> withProfile(unknownParameterProfile).close());
    }
    long afterProfiles = Diagnostics.liveConcreteFunctions();
    assertTrue(afterProfiles - afterDefines < 100,
        "200 failed profile loads left " + (afterProfiles - afterDefines) + " concrete functions");
  }
}
