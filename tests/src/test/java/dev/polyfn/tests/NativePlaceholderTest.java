package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * A trace's placeholders are added natively ({@code Native.addPlaceholder}), named through the
 * trace's scope: they keep TensorFlow Java's names unique, carry the dtype and shape Rust chose,
 * and bad input is refused before TensorFlow sees it.
 */
class NativePlaceholderTest {

  @Test
  void aBodyThatNamesItsOwnOpPlaceholderStillGetsUniqueNames() {
    try (MapFunction f = Function.define((tf, in) -> {
      // Made before the parameters' placeholders: theirs must take other names.
      Operand<TFloat32> one = tf.withName("Placeholder").constant(1f);
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> y = in.input("y", TFloat32.class);
      return Map.of("z", tf.math.add(tf.math.mul(x, y), one));
    });
        TFloat32 x = TFloat32.vectorOf(2f, 3f);
        TFloat32 y = TFloat32.vectorOf(4f, 5f);
        Outputs out = f.call(Map.of("x", x, "y", y))) {
      TFloat32 z = (TFloat32) out.get("z");
      assertEquals(9f, z.getFloat(0));
      assertEquals(16f, z.getFloat(1));
    }
  }

  @Test
  void placeholdersCarryTheDtypeAndShapeOfTheirSpec() {
    try (Graph g = new Graph()) {
      long graph = TensorFlowInternals.graphAddress(g);
      // Two specs as declareParameter writes them: count, then dtype, rank, dims each.
      long[] spec = {2, 3, 2, 4, -1, 1, -1};
      GraphOperation known = TensorFlowInternals.graphOperation(g, Native.addPlaceholder(graph, "a", spec, 1));
      GraphOperation unknown = TensorFlowInternals.graphOperation(g, Native.addPlaceholder(graph, "b", spec, 5));
      assertEquals("Placeholder", known.type());
      assertEquals("a", known.name());
      assertEquals(TInt32.class, known.output(0).type());
      // (Shape.equals is false for shapes with unknown dimensions: compared by their dims.)
      assertArrayEquals(new long[] {4, -1}, known.output(0).shape().asArray());
      assertEquals(TFloat32.class, unknown.output(0).type());
      assertTrue(unknown.output(0).shape().isUnknown());
      // The operations are TensorFlow Java's own: ops built on them run.
      Ops tf = Ops.create(g);
      assertEquals("Add", tf.math.add(unknown.<TFloat32>output(0), tf.constant(1f)).op().type());
    }
  }

  @Test
  void badSpecsNamesAndGraphsAreRefusedBeforeTensorFlowSeesThem() {
    try (Graph g = new Graph()) {
      long graph = TensorFlowInternals.graphAddress(g);
      // Each refused by Polyfn's own check, saying what is wrong: not by TensorFlow, and not by a
      // panic (an IllegalStateException "internal error", which a bare RuntimeException accepted).
      Map<long[], String> badSpecs = Map.of(
          new long[] {1, 0, 0}, "dtype 0 is not a dtype a placeholder can have",
          new long[] {1, 99, 0}, "dtype 99 is not a dtype a placeholder can have",
          new long[] {1, 1, 2, 3, -2}, "dimension -2 in [3, -2]: only -1 (unknown) may be negative",
          new long[] {1, 1, 3, 1, 1}, "no placeholder spec at 1", // rank 3, two dims
          new long[] {1, 1, -7}, "no placeholder spec at 1", // a negative rank other than -1
          new long[] {1}, "no placeholder spec at 1"); // nothing at index 1
      badSpecs.forEach((spec, why) -> refused(why, () -> Native.addPlaceholder(graph, "p", spec, 1)));
      long[] ok = {1, 1, 0};
      refused("no placeholder spec at -1", () -> Native.addPlaceholder(graph, "p", ok, -1));
      refused("no placeholder spec at 5", () -> Native.addPlaceholder(graph, "p", ok, 5));
      for (String name : new String[] {"", "_p", "a b", "p\u0000", "\u00fc"}) {
        refused("is not a valid operation name", () -> Native.addPlaceholder(graph, name, ok, 1));
      }
      assertThrows(IllegalArgumentException.class, () -> Native.addPlaceholder(graph, null, ok, 1));
      assertThrows(IllegalArgumentException.class, () -> Native.addPlaceholder(0, "p", ok, 1));
      // Nothing was added by the refused calls; a name already taken is TensorFlow's error.
      assertEquals(0, count(g));
      Native.addPlaceholder(graph, "p", ok, 1);
      RuntimeException twice = assertThrows(RuntimeException.class, () -> Native.addPlaceholder(graph, "p", ok, 1));
      assertTrue(twice.getMessage().contains("p"), twice.getMessage());
      assertEquals(1, count(g));
    }
  }

  /** Fails unless {@code add} is refused with an IllegalArgumentException or TensorFlow's InvalidArgument saying {@code why}. */
  private static void refused(String why, org.junit.jupiter.api.function.Executable add) {
    RuntimeException e = assertThrows(RuntimeException.class, add, why);
    assertTrue((e instanceof IllegalArgumentException || e instanceof org.tensorflow.exceptions.TFInvalidArgumentException)
        && String.valueOf(e.getMessage()).contains(why), "expected a refusal saying \"" + why + "\", got " + e);
  }

  private static int count(Graph g) {
    int n = 0;
    for (var it = g.operations(); it.hasNext(); it.next()) {
      n++;
    }
    return n;
  }
}
