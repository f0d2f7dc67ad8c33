package dev.polyfn.tests;

import static dev.polyfn.tests.StatefulPorts.asF32;
import static dev.polyfn.tests.StatefulPorts.check;
import static dev.polyfn.tests.StatefulPorts.f;
import static dev.polyfn.tests.StatefulPorts.f32;
import static dev.polyfn.tests.StatefulPorts.fin;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.Variable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.family.TType;

/**
 * Stateful programs against Python's tf.function (tests/python/stateful_ports.py): variables
 * passed as arguments, a nested call whose writes the caller reads, a variable created on the
 * first trace, a retrace for a new shape seeing the variable's current value, and a function
 * saved and loaded in the middle of a run (the loaded one continues from the saved values; the
 * original variables stay as they were).
 */
class StatefulPortsCallsTest {

  @Test
  void variablesPassedAsArguments() {
    check("variable_argument", vars -> f((tf, in) -> {
      Operand<? extends TType> h = in.variableInput("var", TFloat32.class);
      tf.assignAddVariableOp(h, fin(in, "x"));
      return List.of(tf.math.mul(tf.readVariableOp(h, TFloat32.class), tf.constant(2f)));
    }));
  }

  @Test
  void aNestedCallsWritesAreSeenByTheCaller() {
    Variable<?>[] shared = new Variable<?>[1];
    try (ListFunction inner = Function.defineList((tf, in) -> {
      @SuppressWarnings("unchecked")
      Variable<TFloat32> v = (Variable<TFloat32>) shared[0];
      tf.assignAddVariableOp(v.handle(tf), fin(in, "x"));
      return List.of(v.read(tf));
    })) {
      check("nested_call_effects", vars -> {
        shared[0] = vars.get(0);
        return Map.of("outer", (tf, in) -> {
          Variable<TFloat32> v = f32(vars, 0);
          Operand<?> a = inner.apply(tf, Map.of("x", fin(in, "x"))).get(0);
          Operand<TFloat32> b = v.read(tf);
          v.assign(tf, tf.math.mul(b, tf.constant(10f)));
          return List.of(a, b, v.read(tf));
        });
      });
    }
  }

  @Test
  void aNestedCallsReadIsNotOvertakenByTheCallersLaterWrite() {
    Variable<?>[] shared = new Variable<?>[1];
    try (ListFunction reader = Function.defineList((tf, in) -> List.of(((Variable<?>) shared[0]).read(tf)))) {
      check("nested_reader_then_write", vars -> {
        shared[0] = vars.get(0);
        return f((tf, in) -> {
          Operand<?> a = reader.apply(tf, Map.of()).get(0);
          f32(vars, 0).assign(tf, fin(in, "x"));
          return List.of(tf.math.mul(asF32(a), tf.constant(1f)), f32(vars, 0).read(tf));
        });
      });
    }
  }

  @Test
  void aReadBeforeANestedWriteDoesNotSeeIt() {
    Variable<?>[] shared = new Variable<?>[1];
    try (ListFunction writer = Function.defineList((tf, in) -> {
      @SuppressWarnings("unchecked")
      Variable<TFloat32> v = (Variable<TFloat32>) shared[0];
      v.assign(tf, fin(in, "x"));
      return List.of(tf.constant(0f));
    })) {
      check("read_before_nested_write", vars -> {
        shared[0] = vars.get(0);
        return f((tf, in) -> {
          Operand<TFloat32> r = f32(vars, 0).read(tf);
          writer.apply(tf, Map.of("x", fin(in, "x")));
          return List.of(tf.math.mul(r, tf.constant(1f)), f32(vars, 0).read(tf));
        });
      });
    }
  }

  /**
   * The nested_call_effects and nested_reader_then_write programs, called many times: TensorFlow inlines a nested call and a caller's
   * write after it waited only for the callee's writes (its control outputs), so the callee's
   * read, returned or used, raced with that write and saw it about every other call. A callee's
   * used and returned reads are control outputs now, as in Python.
   */
  @Test
  void nestedReadsNeverSeeTheCallersLaterWrite() {
    try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(1f));
         ListFunction addThenRead = Function.defineList((tf, in) -> {
           tf.assignAddVariableOp(v.handle(tf), fin(in, "x"));
           return List.of(v.read(tf));
         });
         ListFunction reader = Function.defineList((tf, in) -> List.of(v.read(tf)));
         ListFunction outer = Function.defineList((tf, in) -> {
           Operand<?> added = addThenRead.apply(tf, Map.of("x", fin(in, "x"))).get(0);
           Operand<?> read = reader.apply(tf, Map.of()).get(0);
           v.assign(tf, tf.math.mul(v.read(tf), tf.constant(10f)));
           return List.of(added, read);
         });
         TFloat32 two = TFloat32.scalarOf(2f);
         TFloat32 one = TFloat32.scalarOf(1f)) {
      for (int i = 0; i < 40; i++) {
        v.assign(one);
        try (ListOutputs out = outer.call(Map.of("x", two))) {
          assertEquals(3f, ((TFloat32) out.get(0)).getFloat(), "call " + i + ": the callee's returned read");
          assertEquals(3f, ((TFloat32) out.get(1)).getFloat(), "call " + i + ": the second callee's read");
        }
        assertEquals(30f, v.value().getFloat());
      }
    }
  }

  /**
   * Python traces such a function twice (a trace that creates variables is followed by another,
   * tf.function's check that later traces create none); Polyfn traces once and creates the
   * variable then, refusing creation on later traces instead.
   */
  @Test
  void aVariableCreatedOnTheFirstTrace() {
    check("variable_created_on_first_trace", vars -> f((tf, in) -> {
      Variable<TFloat32> v;
      try (TFloat32 zero = TFloat32.scalarOf(0f)) {
        v = in.variable("v", zero);
      }
      tf.assignAddVariableOp(v.handle(tf), fin(in, "x"));
      return List.of(v.read(tf));
    }), Map.of("f", 1));
  }

  @Test
  void aRetraceForANewShapeSeesTheCurrentValue() {
    check("retrace_new_shape_sees_value", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      tf.assignAddVariableOp(v.handle(tf), tf.constant(1f));
      return List.of(tf.math.mul(fin(in, "x"), v.read(tf)));
    }));
  }

  @Test
  void aSavedAndLoadedCounterContinuesFromTheSavedValue() {
    check("save_load_counter", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      tf.assignAddVariableOp(v.handle(tf), fin(in, "x"));
      return List.of(tf.math.mul(v.read(tf), tf.constant(1f)));
    }));
  }

  @Test
  void aSavedAndLoadedSgdStepContinuesTraining() {
    check("save_load_sgd", vars -> Map.of("step", (tf, in) -> {
      Operand<TFloat32> loss = StatefulPortsTrainingTest.sgdStep(tf, fin(in, "x"), fin(in, "y"), f32(vars, 0), f32(vars, 1));
      return List.of(loss, f32(vars, 0).read(tf), f32(vars, 1).read(tf));
    }));
  }
}
