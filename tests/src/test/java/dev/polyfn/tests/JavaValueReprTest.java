package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.SingleFunction;
import dev.polyfn.TraceEvent;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.TFloat32;

/**
 * Java-value arguments are dispatched by {@code equals}/{@code hashCode}; their {@code toString()}
 * only feeds explanations. A {@code toString()} that throws, returns null or returns a huge text
 * must neither break the call nor bloat the explanations.
 */
class JavaValueReprTest {
  /** A value with proper equality and a broken, or odd, {@code toString()}. */
  static final class Mode {
    final int level;
    final String text; // what toString returns; null with throwIt: throw

    Mode(int level, String text) {
      this.level = level;
      this.text = text;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Mode && ((Mode) o).level == level;
    }

    @Override
    public int hashCode() {
      return Objects.hash(level);
    }

    @Override
    public String toString() {
      if ("throw".equals(text)) {
        throw new IllegalStateException("toString is broken");
      }
      if ("error".equals(text)) {
        throw new AssertionError("toString fails hard");
      }
      return text;
    }
  }

  private static SingleFunction scaled() {
    return Function.defineSingle((tf, in) -> {
      Mode m = in.javaInput("mode", Mode.class);
      return tf.math.mul(in.input("x", TFloat32.class), tf.constant((float) m.level));
    });
  }

  private static float call(SingleFunction f, Mode m, TFloat32 x) {
    try (TFloat32 y = (TFloat32) f.call(Map.of("mode", m, "x", x))) {
      return y.getFloat();
    }
  }

  @Test
  void aThrowingToStringBreaksNeitherTheCallNorTheExplanations() {
    try (SingleFunction f = scaled(); TFloat32 x = TFloat32.scalarOf(2f)) {
      assertEquals(6f, call(f, new Mode(3, "throw"), x), 0f);
      assertEquals(8f, call(f, new Mode(4, "error"), x), 0f);
      assertEquals(6f, call(f, new Mode(3, "throw"), x), 0f); // equal by equals: the first trace
      assertEquals(2, f.traceCount());
      List<TraceEvent> history = f.traceHistory();
      assertEquals(2, history.size());
      String text = history.get(1).toString() + " " + f.functionType() + " " + f.concreteFunctions();
      assertTrue(text.contains(Mode.class.getName() + "@"), text); // the fallback: class and identity hash
      assertTrue(f.statistics().toString().length() > 0);
    }
  }

  @Test
  void aNullOrHugeToStringIsBoundedInExplanations() {
    String huge = "x".repeat(1_000_000);
    try (SingleFunction f = scaled(); TFloat32 x = TFloat32.scalarOf(1f)) {
      assertEquals(1f, call(f, new Mode(1, null), x), 0f);
      assertEquals(2f, call(f, new Mode(2, huge), x), 0f);
      assertEquals(5f, call(f, new Mode(5, "\uD83D\uDE00".repeat(500)), x), 0f); // surrogate pairs
      assertEquals(3, f.traceCount());
      for (TraceEvent e : f.traceHistory()) {
        assertTrue(e.toString().length() < 600, e.toString().length() + " chars: " + e);
        assertTrue(e.functionType().length() < 400, e.functionType());
      }
      String second = f.traceHistory().get(1).functionType();
      assertTrue(second.contains("xxx...") || second.contains("xxx\u2026"), second);
      assertTrue(f.traceHistory().get(0).functionType().contains("null"), f.traceHistory().get(0).functionType());
      String third = f.traceHistory().get(2).functionType();
      assertTrue(!third.contains("\uFFFD") && !third.contains("?\u2026") && !third.contains("?..."), third);
    }
  }
}
