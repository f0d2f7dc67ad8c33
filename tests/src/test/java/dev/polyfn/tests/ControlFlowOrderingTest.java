package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowTest.f32;
import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.UnaryFunction;
import dev.polyfn.Variable;
import dev.polyfn.internal.flow.Effects;
import dev.polyfn.internal.flow.Regions;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;

/**
 * A While (or a call of a function) that uses a variable written before it waits for that write
 * through every one of its inputs: lowered to Switch/Merge (or inlined), TensorFlow starts each
 * input's part on its own, so a loop whose condition does not use the first input would otherwise
 * run its first iteration's write before the earlier one.
 */
class ControlFlowOrderingTest {

  /** v = 0, then a loop (its condition ignores loop variable 0) adding 1 to v three times. */
  private static Operand<TFloat32> assignThenLoop(Ops tf, Operand<?> handle, Operand<TFloat32> x) {
    tf.assignVariableOp(handle, tf.constant(0f));
    return f32(Flow.whileLoop(tf, List.of(x, tf.constant(0)), vars -> tf.math.less(i(vars.get(1)), tf.constant(3)),
        vars -> {
          tf.assignAddVariableOp(handle, tf.constant(1f));
          return List.of(vars.get(0), tf.math.add(i(vars.get(1)), tf.constant(1)));
        }).get(0));
  }

  @Test
  void everyInputOfALoopWaitsForTheWritesBeforeIt() {
    try (Graph g = new Graph()) {
      Ops tf = Ops.create(g);
      Operand<?> handle = tf.varHandleOp(TFloat32.class, Shape.scalar());
      assignThenLoop(tf, handle, tf.constant(1f));
      List<GraphOperation> own = new ArrayList<>();
      for (Iterator<GraphOperation> it = g.operations(); it.hasNext(); ) {
        GraphOperation op = it.next();
        if (!Regions.isAbsorbed(g, op.name())) {
          own.add(op);
        }
      }
      Effects.order(g, own);
      GraphOperation assign = own.stream().filter(o -> o.type().equals("AssignVariableOp")).findFirst().orElseThrow();
      GraphOperation loop = own.stream().filter(o -> o.type().equals("While")).findFirst().orElse(null);
      assertNotNull(loop, "the loop writes, so it is a While");
      for (int k = 0; k < loop.numInputs(); k++) {
        GraphOperation in = (GraphOperation) loop.input(k).op();
        assertTrue(in.type().equals("Identity") && in.controlInputs().contains(assign),
            "input " + k + " of the While (" + in.type() + " '" + in.name() + "') does not wait for the assignment");
      }
    }
  }

  /**
   * The same in a function, called many times: the loop's writes always follow the assignment.
   * (Before every input was gated this could fail only now and then, as it is a race.)
   */
  @Test
  void aLoopsWritesFollowAnEarlierAssignmentEveryTime() {
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(7f));
        UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class,
            (tf, x) -> tf.math.add(assignThenLoop(tf, v.handle(tf), x), v.read(tf)));
        TFloat32 x = TFloat32.scalarOf(1f)) {
      for (int k = 0; k < 200; k++) {
        try (TFloat32 y = f.call(x); TFloat32 now = v.value()) {
          assertEquals(3f, now.getFloat(), 0f, "call " + k);
          assertEquals(4f, y.getFloat(), 0f, "call " + k);
        }
      }
    }
  }
}
