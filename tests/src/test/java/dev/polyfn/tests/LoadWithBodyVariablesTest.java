package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.SingleBody;
import dev.polyfn.SingleFunction;
import dev.polyfn.Variable;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * A function whose body creates a variable ({@code in.variable("acc", ...)}), saved, then loaded
 * with its body in another JVM ({@code Function.loadSingle(dir, body)}): a call of a saved
 * signature uses the restored variable, and a call no saved signature accepts traces the body,
 * whose {@code in.variable("acc")} is that same restored variable, so the state carries on. Before,
 * every such trace failed ("creates a variable on a trace other than its first"): the loader did
 * not know the restored variable's name. Found by an outside tester.
 */
class LoadWithBodyVariablesTest {
  /** acc += sum(x); returns acc. */
  static final SingleBody ACCUMULATE = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class);
    Variable<TFloat32> acc = in.variable("acc", TFloat32.scalarOf(0f));
    Operand<TFloat32> n = tf.math.add(acc.read(tf), tf.sum(x, tf.constant(new int[] {0})));
    acc.assign(tf, n);
    return n;
  };

  /** Another body: its "acc" is an INT32 vector, not the saved FLOAT scalar. */
  static final SingleBody OTHER = (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class);
    Variable<org.tensorflow.types.TInt32> acc = in.variable("acc", org.tensorflow.types.TInt32.vectorOf(0, 0));
    return tf.math.add(x, tf.dtypes.cast(tf.sum(acc.read(tf), tf.constant(0)), TFloat32.class));
  };

  static float call(SingleFunction f, float... xs) {
    try (TFloat32 x = TFloat32.vectorOf(xs); TFloat32 y = (TFloat32) f.call(Map.of("x", x))) {
      return y.getFloat();
    }
  }

  /** Child JVM: args = "save" or "load", directory. */
  public static void main(String[] args) {
    Path dir = Path.of(args[1]);
    if (args[0].equals("save")) {
      try (SingleFunction f = Function.defineSingle(ACCUMULATE, FunctionOptions.defaults().withName("acc"))) {
        System.out.println("calls " + call(f, 1f) + " " + call(f, 2f));
        f.save(dir);
      }
      return;
    }
    if (args[0].equals("other")) {
      try (SingleFunction f = Function.loadSingle(dir, OTHER)) {
        System.out.println("saved signature " + call(f, 1f));
        try {
          call(f, 1f, 1f);
          System.out.println("new signature traced");
        } catch (IllegalStateException e) {
          System.out.println("refused: " + e.getMessage());
        }
        System.out.println("saved again " + call(f, 5f));
      }
      return;
    }
    try (SingleFunction f = Function.loadSingle(dir, ACCUMULATE)) {
      System.out.println("saved signature " + call(f, 1f));
      System.out.println("new signature " + call(f, 1f, 1f) + " traces " + f.traceCount());
      System.out.println("saved again " + call(f, 5f));
    }
  }

  @Test
  void aNewSignatureOfAFunctionLoadedWithItsBodyUsesTheRestoredVariable(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("acc");
    String first = ChildJvm.run(LoadWithBodyVariablesTest.class, "save", saved.toString());
    assertTrue(first.contains("calls 1.0 3.0"), first);
    String second = ChildJvm.run(LoadWithBodyVariablesTest.class, "load", saved.toString());
    assertTrue(second.contains("saved signature 4.0"), second);
    assertTrue(second.contains("new signature 6.0 traces 2"), "traced with the body, on the restored variable: " + second);
    assertTrue(second.contains("saved again 11.0"), second);
  }

  /**
   * A body whose "acc" is another dtype and shape than the saved variable: its new trace is
   * refused naming the variable, instead of running the body on a variable it did not declare;
   * the saved signatures still run.
   */
  @Test
  void aBodyDeclaringTheRestoredVariableOtherwiseIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("acc");
    ChildJvm.run(LoadWithBodyVariablesTest.class, "save", saved.toString());
    String out = ChildJvm.run(LoadWithBodyVariablesTest.class, "other", saved.toString());
    assertTrue(out.contains("saved signature 4.0"), out);
    assertTrue(out.contains("refused: function 'acc': variable 'acc' is Variable(TFloat32, [])")
        && out.contains("but the body creates it as TInt32 of shape [2]"), out);
    assertTrue(out.contains("saved again 9.0"), out);
  }
}
