package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.UnaryFunction;
import dev.polyfn.internal.Names;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.types.TFloat32;

/**
 * A function's name is shown as given (any non-blank text); the op that calls it in a graph gets a
 * valid TensorFlow name derived from it.
 */
class FunctionNamesTest {
  /** TensorFlow's op name rule; TensorFlow Java's is the same without {@code /}. */
  private static final Pattern TF_OP_NAME = Pattern.compile("[A-Za-z0-9.][A-Za-z0-9_.\\-/]*");
  private static final Pattern TF_JAVA_NAME = Pattern.compile("[A-Za-z0-9.][A-Za-z0-9_.\\-]*");
  private static final List<String> ODD_NAMES = List.of("\u00fc-\u540d\u524d", "_private", "-dash", ".", "..",
      "a b/c", "\uD83D\uDE00", " x", "x".repeat(10_000), "ok_name-1.2");

  @Test
  void opNamesAreValidForTensorFlowAndNeverEmpty() {
    for (String name : ODD_NAMES) {
      String op = Names.opName(name);
      assertTrue(TF_OP_NAME.matcher(op).matches(), name + " -> " + op);
      assertTrue(TF_JAVA_NAME.matcher(op).matches(), name + " -> " + op);
      assertTrue(Character.isLetterOrDigit(op.charAt(0)), name + " -> " + op);
      assertTrue(op.length() <= 130, name + " -> " + op.length() + " chars");
    }
    assertEquals("ok_name-1.2", Names.opName("ok_name-1.2")); // valid names are kept
    assertEquals("fn_private", Names.opName("_private"));
    assertEquals("fn-dash", Names.opName("-dash"));
    assertEquals("fn_-__", Names.opName("\u00fc-\u540d\u524d"));
    assertEquals("fn_", Names.opName("\uD83D\uDE00")); // one character, one '_'
    assertEquals("fn", Names.opName(""));
  }

  @Test
  void displayNamesAreKeptAsGivenAndBlankOnesRejected() {
    for (String name : ODD_NAMES) {
      try (UnaryFunction<TFloat32, TFloat32> f =
          Function.unary(TFloat32.class, (tf, x) -> tf.math.neg(x), FunctionOptions.defaults().withName(name))) {
        assertEquals(name, f.name());
      }
    }
    for (String blank : new String[] {"", "   ", "\t\n"}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> FunctionOptions.defaults().withName(blank));
      assertTrue(e.getMessage().contains("blank") && e.getMessage().contains("any"), e.getMessage());
    }
    assertThrows(NullPointerException.class, () -> FunctionOptions.defaults().withName(null));
  }

  @Test
  void functionsWithOddNamesCanBeAppliedInAUserGraphAndInsideABody() {
    for (String name : List.of("\u00fc-\u540d\u524d", "_private", "-dash")) {
      try (UnaryFunction<TFloat32, TFloat32> neg =
              Function.unary(TFloat32.class, (tf, x) -> tf.math.neg(x), FunctionOptions.defaults().withName(name));
          UnaryFunction<TFloat32, TFloat32> twiceNeg = Function.unary(TFloat32.class,
              (tf, x) -> tf.math.mul(neg.apply(tf, x), tf.constant(2f)), FunctionOptions.defaults().withName(name));
          Graph g = new Graph();
          Session session = new Session(g);
          TFloat32 x = TFloat32.scalarOf(3f)) {
        Ops tf = Ops.create(g);
        Placeholder<TFloat32> input = tf.placeholder(TFloat32.class);
        Operand<TFloat32> y = neg.apply(tf, input);
        Operand<TFloat32> z = neg.apply(tf, input); // a second call op: a unique name too
        try (Result r = session.runner().feed(input, x).fetch(y).fetch(z).run()) {
          assertEquals(-3f, ((TFloat32) r.get(0)).getFloat(), 0f);
          assertEquals(-3f, ((TFloat32) r.get(1)).getFloat(), 0f);
        }
        try (TFloat32 out = twiceNeg.call(x)) {
          assertEquals(-6f, out.getFloat(), 0f);
        }
      }
    }
  }
}
