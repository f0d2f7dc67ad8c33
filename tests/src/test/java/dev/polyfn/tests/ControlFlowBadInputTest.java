package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.UnaryFunction;
import dev.polyfn.Variable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.EagerSession;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;

/** Misuse of Flow is refused with a message naming what is wrong, before anything reaches TensorFlow. */
class ControlFlowBadInputTest {

  private static String failure(java.util.function.BiFunction<Ops, Operand<TFloat32>, Operand<TFloat32>> body) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, body::apply);
          TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
        f.call(x).close();
      }
    });
    return e.getMessage();
  }

  @Test
  void eagerOpsAreRefused() {
    Ops eager = Ops.create(EagerSession.getDefault());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Flow.cond(eager, eager.constant(true), () -> eager.constant(1f), () -> eager.constant(2f)));
    assertTrue(e.getMessage().startsWith("cond builds TensorFlow control flow in a graph"), e.getMessage());
  }

  @Test
  void aPredicateMustBeAScalarBool() {
    assertEquals("cond: pred must be a scalar BOOL, got shape [2]", failure((tf, x) -> Flow.cond(tf,
        tf.math.greater(x, tf.constant(0f)), () -> x, () -> x)));
    @SuppressWarnings({"unchecked", "rawtypes"})
    Operand<TBool>[] notBool = new Operand[1];
    assertEquals("cond: pred must be a scalar BOOL, got dtype DT_FLOAT", failure((tf, x) -> {
      notBool[0] = (Operand) tf.constant(1f);
      return Flow.cond(tf, notBool[0], () -> x, () -> x);
    }));
    assertTrue(failure((tf, x) -> f32(Flow.whileLoop(tf, List.of(x), v -> null, v -> List.of(v.get(0))).get(0)))
        .contains("whileLoop: the result of cond is null"));
  }

  @Test
  void branchesMustMatch() {
    assertEquals("cond: the then branch returns 1 outputs but the else branch returns 2", failure((tf, x) -> f32(
        Flow.condList(tf, tf.constant(true), () -> List.of(x), () -> List.of(x, x)).get(0))));
    assertTrue(failure((tf, x) -> Flow.cond(tf, tf.constant(true), () -> x, () -> null))
        .contains("cond: else output 0 is null"));
  }

  @Test
  void aBranchMustUseOperandsOfTheBodysGraph() {
    try (Graph other = new Graph()) {
      Operand<TFloat32> foreign = Ops.create(other).constant(1f);
      assertEquals("cond: then output 0 belongs to another graph or is eager; use operands of the body being traced",
          failure((tf, x) -> Flow.cond(tf, tf.constant(true), () -> foreign, () -> x)));
    }
  }

  @Test
  void loopVariablesMustKeepTheirDtypeCountAndDeclaredShape() {
    assertEquals("whileLoop: the body must return 1 loop variables, returned 2", failure((tf, x) -> f32(
        Flow.whileLoop(tf, List.of(x), v -> tf.constant(false), v -> List.of(v.get(0), v.get(0))).get(0))));
    assertEquals("whileLoop: loop variable 0 enters as FLOAT but the body returns INT32", failure((tf, x) -> f32(
        Flow.whileLoop(tf, List.of(x), v -> tf.constant(false), v -> List.of(tf.constant(new int[] {1, 2}))).get(0))));
    assertEquals("whileLoop: a shape is declared for loop variable 3 but there are only 1 loop variables",
        failure((tf, x) -> f32(Flow.whileLoop(tf, List.of(x), Flow.loop().shape(3, Shape.of(-1)),
            v -> tf.constant(false), v -> List.of(v.get(0))).get(0))));
    assertEquals("whileLoop: loop variable 0 has shape [2], which does not fit its declared shape [3]",
        failure((tf, x) -> f32(Flow.whileLoop(tf, List.of(x), Flow.loop().shape(0, Shape.of(3)),
            v -> tf.constant(false), v -> List.of(v.get(0))).get(0))));
    assertThrows(IllegalArgumentException.class, () -> Flow.loop().maximumIterations(-1));
  }

  @Test
  void aFailedBranchCaughtByTheBodyLeavesNoEffectBehind() {
    try (TFloat32 zero = TFloat32.scalarOf(0f); Variable<TFloat32> v = Variable.create(zero);
        MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          try {
            Flow.cond(tf, tf.constant(true), () -> {
              v.assign(tf, tf.constant(99f)); // built, then the branch fails
              throw new IllegalStateException("a branch that fails");
            }, () -> x);
          } catch (IllegalStateException expected) {
            // the body goes on without the cond
          }
          return Map.of("y", tf.math.add(x, tf.constant(1f)));
        });
        TFloat32 x = TFloat32.scalarOf(1f); Outputs out = f.call(Map.of("x", x));
        TFloat32 now = v.value()) {
      assertEquals(2f, out.get("y", TFloat32.class).getFloat(), 0f);
      assertEquals(0f, now.getFloat(), 0f);
    }
  }

  @Test
  void mapFnOverAnEmptyBatchGivesAnEmptyResult() {
    try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class,
            (tf, x) -> Flow.mapFn(tf, x, row -> tf.math.mul(row, tf.constant(2f))));
        TFloat32 x = TFloat32.tensorOf(Shape.of(0, 3)); TFloat32 y = f.call(x)) {
      assertEquals(Shape.of(0, 3), y.shape());
    }
  }
  /**
   * A value made inside a branch lambda and used outside it (kept in a Java field, as Python's
   * "out of scope" tensors) is refused at trace time naming it, whether returned or read by an
   * operation of the body; the function stays usable.
   */
  @Test
  void aBranchValueUsedOutsideTheBranchIsRefusedNamingIt() {
    for (boolean returned : new boolean[] {true, false}) {
      Operand<?>[] escaped = new Operand<?>[1];
      String[] name = new String[1];
      boolean[] leak = {true};
      try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> {
            Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)), () -> {
              Operand<TFloat32> inner = tf.math.mul(x, tf.constant(2f));
              escaped[0] = inner;
              name[0] = inner.op().name();
              return inner;
            }, () -> x);
            if (!leak[0]) {
              return y;
            }
            return returned ? f32(escaped[0]) : tf.math.add(y, f32(escaped[0]));
          });
          TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(x).close());
        assertTrue(e.getMessage().contains("'" + name[0] + "'"), e.getMessage());
        assertTrue(e.getMessage().contains("made inside a Flow.cond, whileLoop or mapFn lambda"), e.getMessage());
        leak[0] = false;
        try (TFloat32 y = f.call(x)) {
          assertEquals(4f, y.getFloat(1), 0f);
        }
      }
    }
  }
}
