package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.UnaryFunction;
import dev.polyfn.Variable;
import java.util.List;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * Flow.gradients traces branch and loop lambdas again to differentiate them (as a gradient of
 * values saved from the forward pass is not available): a region whose values would differ when
 * traced again (it reads a variable it writes, draws random numbers its results depend on, or has
 * an effect the replay could not leave out) is refused with a message saying what to do, never
 * differentiated into a silently wrong gradient. Regions that are pure or only read variables
 * they do not write keep their gradients.
 */
class ControlFlowGradientEffectsTest {

  /** The message of the failure of a function returning the gradient of {@code y(tf, x)} with respect to x. */
  private static String refused(BiFunction<Ops, Operand<TFloat32>, Operand<TFloat32>> y) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
      try (UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class,
          (tf, x) -> f32(Flow.gradients(tf, y.apply(tf, x), List.of(x)).get(0)));
          TFloat32 x = TFloat32.scalarOf(3f);
          TFloat32 d = f.call(x)) {
        throw new AssertionError("not refused: the gradient is " + d.getFloat());
      }
    });
    String m = e.getMessage();
    assertTrue(m.startsWith("Flow.gradients through "), m);
    assertTrue(m.contains("move"), m);
    return m;
  }

  /** r = v; v = 0; x * r: traced again, the read would see 0 (the forward pass's write), dx = 0 instead of v. */
  @Test
  void aBranchReadingAVariableItWritesIsRefused() {
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(5f))) {
      String m = refused((tf, x) -> Flow.cond(tf, tf.constant(true), () -> {
        Operand<TFloat32> r = v.read(tf);
        v.assign(tf, tf.constant(0f));
        return tf.math.mul(x, r);
      }, () -> x));
      assertTrue(m.contains("cond") && m.contains("ReadVariableOp") && m.contains("AssignVariableOp"), m);
    }
  }

  /** x * v in a branch, then v = 0 before the gradient: the gradient's read would run after that write. */
  @Test
  void aBranchReadingAVariableWrittenAfterTheCondIsRefused() {
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(5f))) {
      String m = refused((tf, x) -> {
        Operand<TFloat32> y = Flow.cond(tf, tf.constant(true), () -> tf.math.mul(x, v.read(tf)), () -> x);
        v.assign(tf, tf.constant(0f));
        return y;
      });
      assertTrue(m.contains("written after") && m.contains("AssignVariableOp"), m);
    }
  }

  /** Each iteration adds 1 to v and multiplies by it: every recorded iteration would see the final value. */
  @Test
  void aLoopBodyReadingAVariableItWritesIsRefused() {
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(1f))) {
      String m = refused((tf, x) -> f32(Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(3),
          vars -> tf.constant(true), vars -> {
            tf.assignAddVariableOp(v.handle(tf), tf.constant(1f));
            return List.of(tf.math.mul(f32(vars.get(0)), v.read(tf)));
          }).get(0)));
      assertTrue(m.contains("loop") && m.contains("AssignAddVariableOp"), m);
    }
  }

  /** A dropout-like mask drawn in the branch: traced again, it would be a new mask. */
  @Test
  void randomNumbersTheResultsDependOnAreRefused() {
    String m = refused((tf, x) -> Flow.cond(tf, tf.constant(true),
        () -> tf.math.mul(x, tf.random.randomUniform(tf.constant(new int[0]), TFloat32.class)), () -> x));
    assertTrue(m.contains("RandomUniform"), m);
    m = refused((tf, x) -> f32(Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(2),
        vars -> tf.constant(true),
        vars -> List.of(tf.math.mul(f32(vars.get(0)), tf.random.randomUniform(tf.constant(new int[0]),
            TFloat32.class)))).get(0)));
    assertTrue(m.contains("RandomUniform"), m);
  }

  /** A write something waits for (a control dependency) could not be left out: it would run again. */
  @Test
  void aWriteWithAControlConsumerIsRefused() {
    try (Variable<TFloat32> c = Variable.create(TFloat32.scalarOf(0f))) {
      String m = refused((tf, x) -> Flow.cond(tf, tf.constant(true), () -> {
        var add = tf.assignAddVariableOp(c.handle(tf), tf.constant(1f));
        return tf.withControlDependencies(List.of(add)).math.mul(x, x);
      }, () -> x));
      assertTrue(m.contains("AssignAddVariableOp"), m);
    }
  }

  /** A call of a Polyfn function that writes a variable would run (and write) again. */
  @Test
  void aCallOfAFunctionWithEffectsIsRefused() {
    try (Variable<TFloat32> c = Variable.create(TFloat32.scalarOf(0f));
        UnaryFunction<TFloat32, TFloat32> g = Function.unary(TFloat32.class, (tf, x) -> {
          tf.assignAddVariableOp(c.handle(tf), tf.constant(1f));
          return tf.math.mul(x, x);
        })) {
      String m = refused((tf, x) -> Flow.cond(tf, tf.constant(true), () -> g.apply(tf, x), () -> x));
      assertTrue(m.contains("StatefulPartitionedCall"), m);
    }
  }

  /**
   * Reading a variable the region does not write keeps its gradient. (The loop hands the captured
   * variable on as a resource output, which used to get a ZerosLike gradient seed that has no
   * kernel for resources: the call failed.)
   */
  @Test
  void readsOfVariablesTheRegionDoesNotWriteKeepTheirGradient() {
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(5f));
        UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> {
          Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(x, tf.constant(0f)),
              () -> tf.math.mul(x, v.read(tf)), () -> x);
          Operand<TFloat32> z = f32(Flow.whileLoop(tf, List.of(y), Flow.loop().maximumIterations(2),
              vars -> tf.constant(true), vars -> List.of(tf.math.mul(f32(vars.get(0)), v.read(tf)))).get(0));
          return f32(Flow.gradients(tf, z, List.of(x)).get(0));
        });
        TFloat32 x = TFloat32.scalarOf(3f);
        TFloat32 d = f.call(x)) {
      assertEquals(125f, d.getFloat(), 1e-4); // z = x v^3
    }
  }
}
