package dev.polyfn.tests;

import static dev.polyfn.tests.StatefulPorts.check;
import static dev.polyfn.tests.StatefulPorts.f;
import static dev.polyfn.tests.StatefulPorts.f32;
import static dev.polyfn.tests.StatefulPorts.f64;
import static dev.polyfn.tests.StatefulPorts.fin;
import static dev.polyfn.tests.StatefulPorts.i32;
import static dev.polyfn.tests.StatefulPorts.i64;
import static dev.polyfn.tests.StatefulPorts.iin;

import dev.polyfn.ListBody;
import dev.polyfn.Variable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/**
 * Stateful programs against Python's tf.function (tests/python/stateful_ports.py): reads and
 * writes of variables in program order within a call, several functions sharing variables with
 * their calls interleaved, counters and recurrences whose every call depends on the previous
 * call's writes, a variable reset eagerly between calls; int32, int64, float32 and float64.
 */
class StatefulPortsOrderTest {

  @Test
  void readWriteRead() {
    check("read_write_read", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> r0 = v.read(tf);
      v.assign(tf, fin(in, "x"));
      return List.of(r0, v.read(tf));
    }));
  }

  @Test
  void writeAfterReadUsesTheOldValue() {
    check("write_after_read_uses_old", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> r = v.read(tf);
      v.assign(tf, fin(in, "x"));
      return List.of(tf.math.mul(r, tf.constant(2f)));
    }));
  }

  @Test
  void assignChainWithReadsBetween() {
    check("assign_chain", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      v.assign(tf, fin(in, "x"));
      Operand<TFloat32> a = v.read(tf);
      tf.assignAddVariableOp(v.handle(tf), tf.constant(2f));
      Operand<TFloat32> b = v.read(tf);
      tf.assignSubVariableOp(v.handle(tf), tf.constant(5f));
      Operand<TFloat32> c = v.read(tf);
      v.assign(tf, tf.math.mul(c, c));
      return List.of(a, b, c, v.read(tf));
    }));
  }

  @Test
  void assignAddSubWithNoReadsBetween() {
    check("assign_add_sub_no_reads_between", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> x = fin(in, "x");
      tf.assignAddVariableOp(v.handle(tf), x);
      tf.assignSubVariableOp(v.handle(tf), tf.constant(1f));
      tf.assignAddVariableOp(v.handle(tf), tf.math.mul(x, x));
      return List.of(v.read(tf));
    }));
  }

  @Test
  void anOldReadUsedAfterTheWrite() {
    check("old_read_used_after_write", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> r = v.read(tf);
      v.assign(tf, fin(in, "x"));
      return List.of(tf.math.add(r, v.read(tf)), tf.math.mul(r, tf.constant(1f)));
    }));
  }

  @Test
  void readAddRead() {
    check("read_add_read", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> r1 = v.read(tf);
      tf.assignAddVariableOp(v.handle(tf), fin(in, "x"));
      return List.of(tf.math.mul(r1, v.read(tf)));
    }));
  }

  @Test
  void swapWithTemporaries() {
    check("swap_with_temporaries", vars -> f((tf, in) -> {
      Variable<TFloat32> a = f32(vars, 0);
      Variable<TFloat32> b = f32(vars, 1);
      Operand<TFloat32> ta = a.read(tf);
      Operand<TFloat32> tb = b.read(tf);
      a.assign(tf, tb);
      b.assign(tf, ta);
      return List.of(a.read(tf), b.read(tf));
    }));
  }

  /** {@code a = b; b = a} in program order: both end up holding b's old value, as in Python. */
  @Test
  void swapInProgramOrder() {
    check("swap_in_program_order", vars -> f((tf, in) -> {
      Variable<TFloat32> a = f32(vars, 0);
      Variable<TFloat32> b = f32(vars, 1);
      a.assign(tf, b.read(tf));
      b.assign(tf, a.read(tf));
      return List.of(a.read(tf), b.read(tf));
    }));
  }

  @Test
  void chainOfThreeVariables() {
    check("chain_three_variables", vars -> f((tf, in) -> {
      Variable<TFloat32> a = f32(vars, 0);
      Variable<TFloat32> b = f32(vars, 1);
      Variable<TFloat32> c = f32(vars, 2);
      a.assign(tf, tf.math.add(b.read(tf), tf.constant(1f)));
      b.assign(tf, tf.math.mul(c.read(tf), tf.constant(2f)));
      c.assign(tf, tf.math.add(a.read(tf), b.read(tf)));
      return List.of(a.read(tf), b.read(tf), c.read(tf));
    }));
  }

  @Test
  void assignFromAnotherVariableAfterItsWrite() {
    check("assign_from_other_after_its_write", vars -> f((tf, in) -> {
      Variable<TInt32> a = i32(vars, 0);
      Variable<TInt32> b = i32(vars, 1);
      tf.assignAddVariableOp(a.handle(tf), iin(in, "k"));
      b.assign(tf, tf.math.add(tf.math.mul(a.read(tf), tf.constant(10)), b.read(tf)));
      return List.of(a.read(tf), b.read(tf));
    }));
  }

  @Test
  void writtenInOneFunctionReadInAnother() {
    check("write_in_one_read_in_another", vars -> Map.of(
        "put", (ListBody) (tf, in) -> {
          f32(vars, 0).assign(tf, fin(in, "x"));
          return List.of(tf.constant(0f));
        },
        "get", (tf, in) -> List.of(tf.math.mul(f32(vars, 0).read(tf), tf.constant(2f)))));
  }

  @Test
  void accumulateInOneFunctionMeanInAnother() {
    check("accumulate_then_mean", vars -> Map.of(
        "add", (ListBody) (tf, in) -> {
          Operand<TFloat32> x = fin(in, "x");
          tf.assignAddVariableOp(f32(vars, 0).handle(tf), tf.sum(x, tf.constant(0)));
          tf.assignAddVariableOp(i32(vars, 1).handle(tf), tf.size(x));
          return List.of(i32(vars, 1).read(tf));
        },
        "mean", (tf, in) -> List.of(tf.math.div(f32(vars, 0).read(tf), tf.dtypes.cast(i32(vars, 1).read(tf), TFloat32.class)))));
  }

  @Test
  void incrementAndDoubleInTwoFunctions() {
    check("increment_and_double_functions", vars -> Map.of(
        "inc", (ListBody) (tf, in) -> {
          tf.assignAddVariableOp(i64(vars, 0).handle(tf), tf.constant(1L));
          return List.of(i64(vars, 0).read(tf));
        },
        "double", (tf, in) -> {
          Variable<TInt64> v = i64(vars, 0);
          v.assign(tf, tf.math.mul(v.read(tf), tf.constant(2L)));
          return List.of(v.read(tf));
        }));
  }

  @Test
  void int32Counter() {
    check("counter_int32", vars -> f((tf, in) -> {
      tf.assignAddVariableOp(i32(vars, 0).handle(tf), tf.constant(1));
      return List.of(i32(vars, 0).read(tf));
    }));
  }

  @Test
  void int64CounterWithAStepBeyondInt32() {
    check("counter_int64_step", vars -> f((tf, in) -> {
      Variable<TInt64> n = i64(vars, 0);
      tf.assignAddVariableOp(n.handle(tf), in.input("step", TInt64.class));
      return List.of(n.read(tf), tf.math.floorMod(n.read(tf), tf.constant(3L)));
    }));
  }

  @Test
  void float64Accumulate() {
    check("float64_accumulate", vars -> f((tf, in) -> {
      Variable<TFloat64> s = f64(vars, 0);
      Operand<TFloat64> x = in.input("x", TFloat64.class);
      tf.assignAddVariableOp(s.handle(tf), tf.sum(tf.math.mul(x, x), tf.constant(0)));
      return List.of(tf.math.sqrt(s.read(tf)));
    }));
  }

  @Test
  void int32VectorUpdate() {
    check("int32_vector_update", vars -> f((tf, in) -> {
      Variable<TInt32> v = i32(vars, 0);
      v.assign(tf, tf.math.sub(tf.math.mul(v.read(tf), tf.constant(2)), iin(in, "x")));
      return List.of(tf.sum(v.read(tf), tf.constant(0)));
    }));
  }

  @Test
  void recurrenceOverManyCalls() {
    check("recurrence_many_calls", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      v.assign(tf, tf.math.add(tf.math.mul(tf.constant(0.5f), v.read(tf)), fin(in, "x")));
      return List.of(v.read(tf));
    }));
  }

  @Test
  void fibonacciState() {
    check("fibonacci_state", vars -> f((tf, in) -> {
      Variable<TInt64> a = i64(vars, 0);
      Variable<TInt64> b = i64(vars, 1);
      Operand<TInt64> t = tf.math.add(a.read(tf), b.read(tf));
      a.assign(tf, b.read(tf));
      b.assign(tf, t);
      return List.of(a.read(tf));
    }));
  }

  @Test
  void aVariableResetEagerlyBetweenCallsIsSeenByTheNext() {
    check("reset_from_eager_between_calls", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      tf.assignAddVariableOp(v.handle(tf), fin(in, "x"));
      return List.of(tf.math.mul(v.read(tf), tf.constant(10f)));
    }));
  }

  @Test
  void float64NewtonIteration() {
    check("float64_newton_sqrt", vars -> f((tf, in) -> {
      Variable<TFloat64> g = f64(vars, 0);
      Operand<TFloat64> x = in.input("x", TFloat64.class);
      g.assign(tf, tf.math.mul(tf.constant(0.5), tf.math.add(g.read(tf), tf.math.div(x, g.read(tf)))));
      return List.of(tf.math.sub(tf.math.mul(g.read(tf), g.read(tf)), x));
    }));
  }
}
