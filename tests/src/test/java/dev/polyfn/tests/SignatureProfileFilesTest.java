package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/** Signature profile files Polyfn writes: every Java value read back exactly, and whole files only. */
class SignatureProfileFilesTest {

  /** A string longer than the 80 characters of explanations, with every character JSON escapes. */
  private static final String LONG = "quote \" backslash \\ tab \t newline \n nul \u0000 é \uD83D\uDE00 (an emoji, outside the BMP) "
      + "x".repeat(150) + " end";

  enum Mode { FAST, SLOW }

  /** y = x + a number computed from every Java value, so each value is part of the signature. */
  private static MapFunction allKinds(FunctionOptions options) {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      String s = in.javaInput("s", String.class);
      Integer i = in.javaInput("i", Integer.class);
      Long l = in.javaInput("l", Long.class);
      Double d = in.javaInput("d", Double.class);
      Float f = in.javaInput("f", Float.class);
      Short sh = in.javaInput("sh", Short.class);
      Byte b = in.javaInput("b", Byte.class);
      Boolean flag = in.javaInput("flag", Boolean.class);
      long n = in.javaInput("n", long.class); // declared primitive: the call passes its box
      double k = s.length() + i + (double) l + d + f + sh + b + (flag ? 1 : 0) + n;
      return Map.of("y", tf.math.add(x, tf.constant((float) k)));
    }, options);
  }

  private static Map<String, Object> values() {
    Map<String, Object> v = new HashMap<>();
    v.put("s", LONG);
    v.put("i", Integer.MIN_VALUE);
    v.put("l", Long.MAX_VALUE);
    v.put("d", 0.1 + 0.2); // 0.30000000000000004: exact only if every digit survives
    v.put("f", 1.1f);
    v.put("sh", (short) -7);
    v.put("b", (byte) 3);
    v.put("flag", true);
    v.put("n", -5L);
    return v;
  }

  private static void call(MapFunction f, Map<String, Object> values) {
    try (TFloat32 x = TFloat32.scalarOf(1f)) {
      Map<String, Object> args = new HashMap<>(values);
      args.put("x", x);
      try (Outputs out = f.call(args)) {
        out.get("y", TFloat32.class).getFloat();
      }
    }
  }

  @Test
  void everyRestorableJavaValueRoundTripsExactlyThroughAProfile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("profile.json");
    try (MapFunction f = allKinds(FunctionOptions.defaults())) {
      call(f, values());
      call(f, values()); // the first call is not recorded
      f.writeSignatureProfile(file);
      String type = f.concreteFunctions().get(0).functionType().toString();
      assertTrue(type.contains("...") && !type.contains("x".repeat(150)), "explanations keep the short text: " + type);
    }
    String json = Files.readString(file);
    assertTrue(json.contains("x".repeat(150) + " end"), json);
    try (MapFunction later = allKinds(FunctionOptions.defaults().withSignatureProfile(file))) {
      assertEquals(1, later.traceCount(), "traced at definition");
      call(later, values());
      assertEquals(1, later.traceCount(), "the values read back equal the values of the call: no retrace");
    }
  }

  @Test
  void javaValuesAProfileCannotRestoreFailTheLoadNamingTheParameter(@TempDir Path dir) {
    // An enum and a string that is not well-formed UTF-16 (an unpaired surrogate) cannot be read back exactly.
    for (Object value : List.<Object>of(Mode.SLOW, "half \uD83D of a pair")) {
      Path file = dir.resolve("profile-" + value.getClass().getSimpleName() + ".json");
      FunctionOptions base = FunctionOptions.defaults();
      try (MapFunction f = withValue(value.getClass(), base)) {
        callWithValue(f, value);
        callWithValue(f, value);
        f.writeSignatureProfile(file);
      }
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> withValue(value.getClass(), base.withSignatureProfile(file)));
      assertTrue(e.getMessage().startsWith("signature profile " + file + ": parameter 'v': "), e.getMessage());
      assertTrue(e.getMessage().contains("cannot be restored from a profile"), e.getMessage());
    }
  }

  private static MapFunction withValue(Class<?> type, FunctionOptions options) {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      in.javaInput("v", type);
      return Map.of("y", tf.identity(x));
    }, options);
  }

  private static void callWithValue(MapFunction f, Object value) {
    try (TFloat32 x = TFloat32.scalarOf(1f); Outputs out = f.call(Map.of("x", x, "v", value))) {
      out.get("y", TFloat32.class).getFloat();
    }
  }

  @Test
  void aProfileRecordedForAnotherFunctionNameLoadsWithAWarningNamingBothNamesAndTheFile(@TempDir Path dir) {
    Path file = dir.resolve("profile.json");
    try (MapFunction f = withValue(Integer.class, FunctionOptions.defaults().withName("recorded"))) {
      callWithValue(f, 1);
      callWithValue(f, 1);
      f.writeSignatureProfile(file);
    }
    FunctionOptions recorded = FunctionOptions.defaults().withName("recorded").withSignatureProfile(file);
    List<String> same = LoggedWarnings.during(() -> {
      try (MapFunction g = withValue(Integer.class, recorded)) {
        assertEquals(1, g.traceCount());
      }
    });
    assertEquals(List.of(), profileWarnings(same, file), "loaded into the function it was recorded for");
    List<String> renamed = profileWarnings(LoggedWarnings.during(() -> {
      try (MapFunction g = withValue(Integer.class, recorded.withName("renamed"))) {
        assertEquals(1, g.traceCount(), "a warning, not a refusal: the profile is applied");
      }
    }), file);
    assertEquals(1, renamed.size(), renamed.toString());
    String w = renamed.get(0);
    assertTrue(w.contains("'recorded'") && w.contains("'renamed'"), w);
  }

  /** The warnings naming the profile {@code file} (other tests may log theirs meanwhile). */
  private static List<String> profileWarnings(List<String> warnings, Path file) {
    return warnings.stream().filter(m -> m.contains("signature profile " + file)).collect(Collectors.toList());
  }

  @Test
  void aProfileIsReplacedWholeSoAReaderNeverSeesHalfAFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("profile.json");
    try (MapFunction f = withValue(Integer.class, FunctionOptions.defaults())) {
      for (int v = 0; v < 200; v++) { // a profile of some kilobytes
        callWithValue(f, v);
        callWithValue(f, v);
      }
      f.writeSignatureProfile(file);
      String whole = Files.readString(file);
      AtomicReference<Throwable> failed = new AtomicReference<>();
      Thread writer = new Thread(() -> {
        try {
          for (int i = 0; i < 300; i++) {
            f.writeSignatureProfile(file);
          }
        } catch (Throwable t) {
          failed.set(t);
        }
      });
      writer.start();
      List<Integer> partial = new ArrayList<>();
      while (writer.isAlive()) {
        String seen = Files.readString(file);
        if (!seen.equals(whole) && partial.size() < 5) {
          partial.add(seen.length());
        }
      }
      writer.join();
      assertEquals(null, failed.get());
      assertEquals(List.of(), partial, "lengths of the first partial files read (the whole file has " + whole.length() + ")");
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(file), files.collect(Collectors.toList()), "no temporary file is left behind");
    }
  }

  private static final dev.polyfn.MapBody PLUS_ONE = (tf, in) ->
      Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(1f)));

  private static String shapeCall(MapFunction f, long... shape) {
    try (TFloat32 x = TFloat32.tensorOf(org.tensorflow.ndarray.Shape.of(shape)); Outputs o = f.call(Map.of("x", x))) {
      return "ok";
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  /**
   * The first call, which traces before a parameter list exists to type it, is in the profile:
   * before, a run whose first call was [2, 4] and the others [n, 3] wrote a profile of 3 calls
   * that a later run inferred [-1, 3] from and refused [2, 4] with, and a run of one call wrote
   * a profile of none, which a later definition refused ("it records no signature").
   */
  @Test
  void theFirstCallIsRecordedSoThatTheNextRunAcceptsIt(@TempDir Path dir) {
    Path profile = dir.resolve("first.json");
    try (MapFunction f = Function.define(PLUS_ONE, FunctionOptions.defaults().withName("first"))) {
      for (long[] shape : new long[][] {{2, 4}, {2, 3}, {5, 3}, {1, 3}}) {
        assertEquals("ok", shapeCall(f, shape));
      }
      f.writeSignatureProfile(profile);
      assertTrue(f.suggestedSignature().toString().startsWith("4 calls recorded"), f.suggestedSignature().toString());
    }
    try (MapFunction g = Function.define(PLUS_ONE, FunctionOptions.defaults().withName("first").withSignatureProfile(profile))) {
      assertEquals("ok", shapeCall(g, 2, 4), "the recording run's first call type");
      assertEquals("ok", shapeCall(g, 7, 3));
    }
    Path one = dir.resolve("one.json");
    try (MapFunction f = Function.define(PLUS_ONE, FunctionOptions.defaults().withName("one"))) {
      assertEquals("ok", shapeCall(f, 2, 3));
      f.writeSignatureProfile(one);
    }
    try (MapFunction g = Function.define(PLUS_ONE, FunctionOptions.defaults().withName("one").withSignatureProfile(one))) {
      assertEquals(1, g.traceCount(), "the profile of one call traces its signature at definition");
      assertEquals("ok", shapeCall(g, 2, 3));
      assertEquals(1, g.traceCount());
    }
  }

  /** Serializable: the trace cache keys it by its method, wherever it is defined from (see FileFixtures). */
  private static final dev.polyfn.MapBody ROW_SUM = (dev.polyfn.MapBody & java.io.Serializable) (tf, in) ->
      Map.of("y", tf.reduceSum(in.input("x", TFloat32.class), tf.constant(new int[] {0, 1})));

  /** A profile of calls of shapes [2, cols] and [5, cols]: inferred [-1, cols]. */
  private static String rows(int cols) {
    return "{\"format\":\"polyfn-signature-profile\",\"version\":1,\"function\":\"rows\",\"calls\":2,\"signatures\":["
        + "{\"count\":1,\"parameters\":{\"x\":{\"dtype\":\"FLOAT\",\"shape\":[2," + cols + "]}}},"
        + "{\"count\":1,\"parameters\":{\"x\":{\"dtype\":\"FLOAT\",\"shape\":[5," + cols + "]}}}]}";
  }

  private static MapFunction defineRows(Path profile, Path cache) {
    return Function.define(ROW_SUM, FunctionOptions.defaults().withName("rows").withSignatureProfile(profile)
        .withTraceCache(cache));
  }

  /**
   * A profile rewritten by another process while a function is defined with it and a trace cache
   * (a fleet writing profiles to one shared file): the cache's key and the declarations its
   * entries carry come from one read of the file. Before, the key hashed the file once and the
   * declarations were read again, so profile A's key filed profile B's declarations: every later
   * definition with A restored [-1, 4] and refused A's [7, 3] calls, until the cache was deleted.
   * The rewrite lands, as the outside tester's reproducer made it land, while a damaged entry of
   * A's key is skipped (its WARNING is logged between the two reads of old).
   */
  @Test
  void aProfileRewrittenDuringTheDefinitionNeverFilesItsDeclarationsUnderTheOtherKey(@TempDir Path dir) throws Exception {
    Path profile = dir.resolve("profile.json");
    Files.writeString(profile, rows(3));
    Path probe = dir.resolve("probe");
    try (MapFunction f = defineRows(profile, probe)) {
      assertEquals(1, f.traceCount());
    }
    String prefix = null;
    for (int i = 0; i < 200 && prefix == null; i++) {
      Thread.sleep(25);
      try (Stream<Path> files = Files.isDirectory(probe) ? Files.list(probe) : Stream.empty()) {
        prefix = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".polyfn-trace") && !n.startsWith("."))
            .map(n -> n.substring(0, n.indexOf('-'))).findFirst().orElse(null);
      }
    }
    assertTrue(prefix != null, "the probe wrote no entry");
    Path cache = dir.resolve("cache");
    Files.createDirectories(cache);
    Files.setPosixFilePermissions(cache, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    Path damaged = cache.resolve(prefix + "-0000000000000000.polyfn-trace");
    Files.writeString(damaged, "damaged");
    Files.setPosixFilePermissions(damaged, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger("dev.polyfn");
    java.util.concurrent.atomic.AtomicBoolean rewritten = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.logging.Handler rewriter = new java.util.logging.Handler() {
      @Override
      public void publish(java.util.logging.LogRecord r) {
        if (String.valueOf(r.getMessage()).startsWith("ignoring trace cache entry") && !rewritten.getAndSet(true)) {
          try {
            Files.writeString(profile, rows(4)); // another writer: profile B
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    java.util.logging.Level before = logger.getLevel();
    logger.setLevel(java.util.logging.Level.ALL);
    logger.addHandler(rewriter);
    try (MapFunction f = defineRows(profile, cache)) {
      assertTrue(rewritten.get(), "the rewrite landed during the definition");
      assertEquals("ok", shapeCall(f, 7, 3), "the definition used the profile it read: A");
    } finally {
      logger.removeHandler(rewriter);
      logger.setLevel(before);
    }
    Thread.sleep(500); // the cache's writer thread writes the definition's entry
    Files.writeString(profile, rows(3));
    try (MapFunction g = defineRows(profile, cache)) {
      assertEquals("ok", shapeCall(g, 7, 3), "A's key holds A's declarations");
      assertTrue(shapeCall(g, 7, 4).contains("expected TensorSpec(FLOAT, [-1, 3])"), "and refuses what A leaves out");
    }
  }

  /** A record parameter: written, as profiles write every call, but not restorable. */
  public record Batch(TFloat32 features, int size) {}

  private static final dev.polyfn.MapBody BATCH = (tf, in) ->
      Map.of("y", tf.shape(in.record("b", Batch.class).get(Batch::features)));

  /**
   * A profile of a record parameter (written with the record's type as "unknown") is refused at
   * load naming the parameter, where in the file, and why; before, the reason read "[unknown]
   * cannot be restored" (the JSON key set). Found by an outside tester.
   */
  @Test
  void aRecordInAProfileIsRefusedNamingTheParameterThePlaceAndWhy(@TempDir Path dir) {
    Path file = dir.resolve("batch.json");
    try (MapFunction f = Function.define(BATCH, FunctionOptions.defaults().withName("batch"))) {
      for (int n = 1; n <= 2; n++) {
        try (TFloat32 t = TFloat32.tensorOf(org.tensorflow.ndarray.Shape.of(n, 2)); Outputs o = f.call(Map.of("b", new Batch(t, 3)))) {
          assertTrue(o.names().contains("y"));
        }
      }
      f.writeSignatureProfile(file);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Function.define(BATCH, FunctionOptions.defaults().withName("batch").withSignatureProfile(file)).close());
    assertTrue(e.getMessage().contains("parameter 'b' (at signatures[0].parameters.b)")
        && e.getMessage().contains("cannot be restored from a profile") && e.getMessage().contains("a record"),
        e.getMessage());
  }
}
