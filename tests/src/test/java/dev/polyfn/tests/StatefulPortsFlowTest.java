package dev.polyfn.tests;

import static dev.polyfn.tests.StatefulPorts.asF32;
import static dev.polyfn.tests.StatefulPorts.asI32;
import static dev.polyfn.tests.StatefulPorts.check;
import static dev.polyfn.tests.StatefulPorts.f;
import static dev.polyfn.tests.StatefulPorts.f32;
import static dev.polyfn.tests.StatefulPorts.fin;
import static dev.polyfn.tests.StatefulPorts.i32;
import static dev.polyfn.tests.StatefulPorts.iin;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.Variable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/**
 * Stateful programs against Python's tf.function (tests/python/stateful_ports.py): variable
 * writes inside Flow conds, loops and mapFn, with reads before, inside and after them; a loop
 * whose condition reads the variable its body writes.
 */
class StatefulPortsFlowTest {

  @Test
  void condAssignsInBothBranches() {
    check("cond_assign_in_both_branches", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> x = fin(in, "x");
      Operand<TFloat32> r = Flow.cond(tf, in.input("p", TBool.class), () -> {
        tf.assignAddVariableOp(v.handle(tf), x);
        return v.read(tf);
      }, () -> {
        tf.assignSubVariableOp(v.handle(tf), x);
        return tf.math.mul(v.read(tf), tf.constant(2f));
      });
      return List.of(r, v.read(tf));
    }));
  }

  @Test
  void condReadsAfterAWriteBeforeIt() {
    check("cond_reads_after_prior_write", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      v.assign(tf, fin(in, "x"));
      return List.of(Flow.cond(tf, in.input("p", TBool.class),
          () -> tf.math.mul(v.read(tf), tf.constant(2f)), () -> tf.math.sub(v.read(tf), tf.constant(1f))));
    }));
  }

  @Test
  void condWritesThenTheBodyReadsAfterIt() {
    check("cond_write_then_read_after", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> x = fin(in, "x");
      Operand<TInt32> r = Flow.cond(tf, in.input("p", TBool.class), () -> {
        v.assign(tf, x);
        return tf.constant(1);
      }, () -> tf.constant(0));
      return List.of(r, tf.math.mul(v.read(tf), tf.constant(1f)));
    }));
  }

  @Test
  void loopAssignAdd() {
    check("loop_assign_add", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TInt32> n = iin(in, "n");
      Flow.whileLoop(tf, List.of(tf.constant(0)), s -> tf.math.less(asI32(s.get(0)), n), s -> {
        tf.assignAddVariableOp(v.handle(tf), tf.dtypes.cast(s.get(0), TFloat32.class));
        return List.of(tf.math.add(asI32(s.get(0)), tf.constant(1)));
      });
      return List.of(v.read(tf));
    }));
  }

  @Test
  void loopBodyReadsWritesAndReadsAgain() {
    check("loop_read_write_read", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TInt32> n = iin(in, "n");
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f)), s -> tf.math.less(asI32(s.get(0)), n), s -> {
        Operand<TFloat32> r1 = v.read(tf);
        v.assign(tf, tf.math.add(tf.math.mul(r1, tf.constant(2f)), tf.constant(1f)));
        Operand<TFloat32> r2 = v.read(tf);
        return List.of(tf.math.add(asI32(s.get(0)), tf.constant(1)), tf.math.add(asF32(s.get(1)), tf.math.sub(r2, r1)));
      });
      return List.of(out.get(1), v.read(tf));
    }));
  }

  @Test
  void loopWithACondThatWrites() {
    check("loop_with_cond_writing", vars -> f((tf, in) -> {
      Variable<TInt32> v = i32(vars, 0);
      Operand<TInt32> n = iin(in, "n");
      Flow.whileLoop(tf, List.of(tf.constant(0)), s -> tf.math.less(asI32(s.get(0)), n), s -> {
        Operand<TInt32> k = asI32(s.get(0));
        Flow.cond(tf, tf.math.equal(tf.math.floorMod(k, tf.constant(2)), tf.constant(0)), () -> {
          tf.assignAddVariableOp(v.handle(tf), k);
          return tf.constant(0);
        }, () -> {
          tf.assignSubVariableOp(v.handle(tf), tf.constant(1));
          return tf.constant(0);
        });
        return List.of(tf.math.add(k, tf.constant(1)));
      });
      return List.of(v.read(tf));
    }));
  }

  @Test
  void loopConditionReadsTheVariableItsBodyWrites() {
    check("loop_condition_reads_variable", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> limit = fin(in, "limit");
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0)), Flow.loop().maximumIterations(50),
          s -> tf.math.less(v.read(tf), limit), s -> {
            v.assign(tf, tf.math.mul(v.read(tf), tf.constant(2f)));
            return List.of(tf.math.add(asI32(s.get(0)), tf.constant(1)));
          });
      return List.of(out.get(0), v.read(tf));
    }));
  }

  @Test
  void loopSwapsTwoVariables() {
    check("loop_swaps_two_variables", vars -> f((tf, in) -> {
      Variable<TFloat32> a = f32(vars, 0);
      Variable<TFloat32> b = f32(vars, 1);
      Operand<TInt32> n = iin(in, "n");
      Flow.whileLoop(tf, List.of(tf.constant(0)), s -> tf.math.less(asI32(s.get(0)), n), s -> {
        Operand<TFloat32> t = a.read(tf);
        a.assign(tf, b.read(tf));
        b.assign(tf, tf.math.add(t, b.read(tf)));
        return List.of(tf.math.add(asI32(s.get(0)), tf.constant(1)));
      });
      return List.of(a.read(tf), b.read(tf));
    }));
  }

  /**
   * A write after a cond whose branch read the variable: the read saw the write in 28 of 30
   * calls, because a lowered cond completes, for what waits for it, when its branch's control
   * outputs have run, and they held the branch's writes only; they hold its used reads now.
   */
  @Test
  void condReadsThenAWriteAfterTheCond() {
    check("cond_reads_then_write_after", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> r = Flow.cond(tf, in.input("p", TBool.class), () -> tf.math.mul(v.read(tf), tf.constant(2f)), () -> v.read(tf));
      v.assign(tf, fin(in, "x"));
      return List.of(r, v.read(tf));
    }));
  }

  @Test
  void condCallsAReaderThenAWriteAfterTheCond() {
    Variable<?>[] shared = new Variable<?>[1];
    try (ListFunction reader = Function.defineList((tf, in) -> List.of(((Variable<?>) shared[0]).read(tf)))) {
      check("cond_nested_reader_then_write_after", vars -> {
        shared[0] = vars.get(0);
        return f((tf, in) -> {
          Operand<TFloat32> r = Flow.cond(tf, in.input("p", TBool.class), () -> asF32(reader.apply(tf, Map.of()).get(0)),
              () -> tf.constant(-1f));
          f32(vars, 0).assign(tf, fin(in, "x"));
          return List.of(r, f32(vars, 0).read(tf));
        });
      });
    }
  }

  @Test
  void loopReadsThenAWriteAfterTheLoop() {
    check("loop_reads_then_write_after", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TInt32> n = iin(in, "n");
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(0f)), s -> tf.math.less(asI32(s.get(0)), n),
          s -> List.of(tf.math.add(asI32(s.get(0)), tf.constant(1)), tf.math.add(asF32(s.get(1)), v.read(tf))));
      v.assign(tf, fin(in, "x"));
      return List.of(out.get(1), v.read(tf));
    }));
  }

  @Test
  void mapFnReadsThenAWriteAfterIt() {
    check("map_fn_reads_then_write_after", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> x = fin(in, "x");
      Operand<TFloat32> y = Flow.mapFn(tf, x, e -> tf.math.mul(e, v.read(tf)));
      v.assign(tf, tf.sum(x, tf.constant(0)));
      return List.of(y, v.read(tf));
    }));
  }

  @Test
  void mapFnAssignAdd() {
    check("map_fn_assign_add", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> y = Flow.mapFn(tf, fin(in, "x"), e -> {
        tf.assignAddVariableOp(v.handle(tf), e);
        return tf.math.mul(e, tf.constant(2f));
      });
      return List.of(y, v.read(tf));
    }));
  }
}
