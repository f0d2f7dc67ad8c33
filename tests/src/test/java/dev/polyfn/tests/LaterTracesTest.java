package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.TFloat32;

/**
 * A function keeps its first trace's captures and parameter defaults and feeds them to every
 * concrete function. A later trace that captured another value under the same name, or declared
 * another default, was served the first trace's silently (a call for "fr" answered with the "en"
 * table); it is refused, and the function stays usable.
 */
class LaterTracesTest {
  @Test
  void aLaterTraceCapturingAnotherValueUnderTheSameNameIsRefused() {
    try (TFloat32 en = TFloat32.vectorOf(1f, 2f);
        TFloat32 fr = TFloat32.vectorOf(10f, 20f);
        TFloat32 x = TFloat32.vectorOf(1f, 1f)) {
      Map<String, TFloat32> tables = Map.of("en", en, "fr", fr);
      try (MapFunction f = Function.define((tf, in) -> {
        String lang = in.javaInput("lang", String.class);
        return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), in.capture("emb", () -> tables.get(lang))));
      })) {
        try (Outputs out = f.call(Map.of("x", x, "lang", "en"))) {
          assertEquals(2f, out.get("y", TFloat32.class).getFloat(1), 0f);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> f.call(Map.of("x", x, "lang", "fr")).close());
        assertTrue(e.getMessage().contains("capture 'emb'") && e.getMessage().contains("later trace"), e.getMessage());
        assertEquals(1, f.traceCount(), "nothing of the refused trace is kept");
        try (Outputs out = f.call(Map.of("x", x, "lang", "en"))) { // still usable
          assertEquals(2f, out.get("y", TFloat32.class).getFloat(1), 0f);
        }
      }
    }
  }

  @Test
  void aCaptureByReferenceStillReadsTheCurrentValueAcrossTraces() {
    TFloat32[] scale = {TFloat32.scalarOf(2f)};
    try (MapFunction f = Function.define((tf, in) ->
        Map.of("y", tf.math.mul(in.input("x", TFloat32.class), in.capture("s", () -> scale[0]))));
        TFloat32 one = TFloat32.vectorOf(1f);
        TFloat32 two = TFloat32.vectorOf(1f, 1f)) {
      f.call(Map.of("x", one)).close();
      scale[0].close();
      scale[0] = TFloat32.scalarOf(5f);
      try (Outputs out = f.call(Map.of("x", two))) { // a second trace, the same capture
        assertEquals(5f, out.get("y", TFloat32.class).getFloat(1), 0f);
      }
      assertEquals(2, f.traceCount());
    } finally {
      scale[0].close();
    }
  }

  /** A configuration whose equals, inherited by its subclass, accepts any Cfg of the same rate. */
  static class Cfg {
    final int rate;

    Cfg(int rate) {
      this.rate = rate;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Cfg c && c.rate == rate;
    }

    @Override
    public int hashCode() {
      return rate;
    }
  }

  static final class DebugCfg extends Cfg {
    DebugCfg(int rate) {
      super(rate);
    }
  }

  /**
   * Java values that are arrays dispatch by their elements (a reused array changed between calls
   * hit the trace of its old contents: stale constants), and by their own class (a subclass whose
   * inherited equals accepts its parent reused the parent's trace).
   */
  @Test
  void javaValuesDispatchByArrayElementsAndByTheirOwnClass() {
    try (MapFunction f = Function.define((tf, in) -> {
      long[] ids = in.javaInput("ids", long[].class);
      Cfg cfg = in.javaInput("cfg", Cfg.class);
      float debug = cfg instanceof DebugCfg ? 1000f : 0f;
      return Map.of("y", tf.constant(java.util.Arrays.stream(ids).sum() * cfg.rate + debug));
    })) {
      long[] ids = {1, 2};
      try (Outputs out = f.call(Map.of("ids", ids, "cfg", new Cfg(1)))) {
        assertEquals(3f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      ids[1] = 40; // the same array, changed
      try (Outputs out = f.call(Map.of("ids", ids, "cfg", new Cfg(1)))) {
        assertEquals(41f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      try (Outputs out = f.call(Map.of("ids", new long[] {1, 40}, "cfg", new Cfg(1)))) { // equal elements: no trace
        assertEquals(41f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(2, f.traceCount());
      try (Outputs out = f.call(Map.of("ids", ids, "cfg", new DebugCfg(1)))) {
        assertEquals(1041f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(3, f.traceCount(), "another class is another value");
    }
  }

  @Test
  void aLaterTraceDeclaringAnotherDefaultIsRefusedAndAnEqualOneAccepted() {
    try (TFloat32 big = TFloat32.scalarOf(100f);
        TFloat32 small = TFloat32.scalarOf(1f);
        TFloat32 x = TFloat32.vectorOf(1f)) {
      try (MapFunction f = Function.define((tf, in) -> {
        boolean large = in.javaInput("large", Boolean.class);
        return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), in.input("t", TFloat32.class, large ? big : small)));
      })) {
        try (Outputs out = f.call(Map.of("x", x, "large", false))) {
          assertEquals(1f, out.get("y", TFloat32.class).getFloat(0), 0f);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> f.call(Map.of("x", x, "large", true)).close());
        assertTrue(e.getMessage().contains("parameter 't'") && e.getMessage().contains("default"), e.getMessage());
        assertEquals(1, f.traceCount());
      }
      // A default made anew on each trace, with the same value: accepted.
      try (MapFunction f = Function.define((tf, in) -> {
        in.javaInput("k", Integer.class);
        return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), in.input("t", TFloat32.class, TFloat32.scalarOf(3f))));
      })) {
        f.call(Map.of("x", x, "k", 1)).close();
        try (Outputs out = f.call(Map.of("x", x, "k", 2))) {
          assertEquals(3f, out.get("y", TFloat32.class).getFloat(0), 0f);
        }
        assertEquals(2, f.traceCount());
      }
    }
  }

  /** Whether {@code t} is still open: a closed tensor's data cannot be read. */
  private static boolean open(TFloat32 t) {
    try {
      t.asRawTensor().data();
      return true;
    } catch (IllegalStateException closed) {
      return false;
    }
  }

  /**
   * The values a later trace's suppliers and defaults return are the caller's (as the docs say of
   * every capture and default): comparing them with the first trace's, refused or found equal,
   * closes none of them, which the caller may still use (closing them would be a use after close
   * of the caller's tensors); the function goes on with the first trace's, open too.
   */
  @Test
  void aLaterTraceComparedWithTheFirstClosesNoneOfTheCallersTensors() {
    try (TFloat32 en = TFloat32.scalarOf(3f);
        TFloat32 fr = TFloat32.scalarOf(10f);
        TFloat32 twoA = TFloat32.scalarOf(2f);
        TFloat32 twoB = TFloat32.scalarOf(2f);
        TFloat32 x = TFloat32.vectorOf(1f, 1f);
        TFloat32 x3 = TFloat32.vectorOf(1f, 1f, 1f)) {
      Map<String, TFloat32> tables = Map.of("en", en, "fr", fr);
      TFloat32[] defaults = {twoA};
      try (MapFunction f = Function.define((tf, in) -> {
        String lang = in.javaInput("lang", String.class);
        return Map.of("y", tf.math.mul(tf.math.mul(in.input("x", TFloat32.class),
            in.capture("emb", () -> tables.get(lang))), in.input("s", TFloat32.class, defaults[0])));
      })) {
        try (Outputs out = f.call(Map.of("x", x, "lang", "en"))) {
          assertEquals(6f, out.get("y", TFloat32.class).getFloat(1), 0f);
        }
        assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", x, "lang", "fr")).close());
        defaults[0] = twoB; // an equal default on a later trace: accepted, the first one's kept
        try (Outputs out = f.call(Map.of("x", x3, "lang", "en"))) {
          assertEquals(6f, out.get("y", TFloat32.class).getFloat(2), 0f);
        }
        assertEquals(2, f.traceCount());
        for (TFloat32 t : java.util.List.of(en, fr, twoA, twoB)) {
          assertTrue(open(t), "the caller's tensor is left open");
        }
        assertEquals(10f, fr.getFloat(), 0f);
        try (Outputs out = f.call(Map.of("x", x, "lang", "en"))) {
          assertEquals(6f, out.get("y", TFloat32.class).getFloat(1), 0f);
        }
      }
    }
  }
}
