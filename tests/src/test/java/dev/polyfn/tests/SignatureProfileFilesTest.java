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
}
