package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowPorts.matvec;
import static dev.polyfn.tests.StatefulPorts.asF32;
import static dev.polyfn.tests.StatefulPorts.check;
import static dev.polyfn.tests.StatefulPorts.f;
import static dev.polyfn.tests.StatefulPorts.f32;
import static dev.polyfn.tests.StatefulPorts.f64;
import static dev.polyfn.tests.StatefulPorts.fin;
import static dev.polyfn.tests.StatefulPorts.i32;
import static dev.polyfn.tests.StatefulPorts.iin;

import dev.polyfn.Flow;
import dev.polyfn.ListBody;
import dev.polyfn.Variable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;

/**
 * Stateful programs against Python's tf.function (tests/python/stateful_ports.py): hand-written
 * SGD, momentum and Adam steps over several calls (each call's loss and the variables after it),
 * and scatter updates of variables with reads between them.
 */
class StatefulPortsTrainingTest {

  @Test
  void sgdLinearRegression() {
    check("sgd_linear_regression", vars -> step((tf, in) -> List.of(sgdStep(tf, fin(in, "x"), fin(in, "y"), f32(vars, 0), f32(vars, 1)))));
  }

  /** One SGD step of a linear model (learning rate 0.05) on the mean squared error; the loss before it. */
  static Operand<TFloat32> sgdStep(Ops tf, Operand<TFloat32> x, Operand<TFloat32> y, Variable<TFloat32> w, Variable<TFloat32> b) {
    Operand<TFloat32> wr = w.read(tf);
    Operand<TFloat32> br = b.read(tf);
    Operand<TFloat32> pred = tf.math.add(matvec(tf, x, wr), br);
    Operand<TFloat32> loss = tf.math.mean(tf.math.square(tf.math.sub(pred, y)), tf.constant(0));
    List<Operand<?>> g = Flow.gradients(tf, loss, List.of(wr, br));
    tf.assignSubVariableOp(w.handle(tf), tf.math.mul(tf.constant(0.05f), asF32(g.get(0))));
    tf.assignSubVariableOp(b.handle(tf), tf.math.mul(tf.constant(0.05f), asF32(g.get(1))));
    return loss;
  }

  @Test
  void momentumSgd() {
    check("momentum_sgd", vars -> step((tf, in) -> {
      Variable<TFloat32> w = f32(vars, 0);
      Variable<TFloat32> vel = f32(vars, 1);
      Operand<TFloat32> wr = w.read(tf);
      Operand<TFloat32> d = tf.math.sub(wr, fin(in, "t"));
      Operand<TFloat32> loss = tf.math.add(sum(tf, tf.math.square(d)),
          tf.math.mul(tf.constant(0.1f), sum(tf, tf.math.mul(tf.math.mul(tf.math.mul(wr, wr), wr), wr))));
      Operand<TFloat32> g = asF32(Flow.gradients(tf, loss, List.of(wr)).get(0));
      vel.assign(tf, tf.math.sub(tf.math.mul(tf.constant(0.9f), vel.read(tf)), tf.math.mul(tf.constant(0.05f), g)));
      tf.assignAddVariableOp(w.handle(tf), vel.read(tf));
      return List.of(loss);
    }));
  }

  @Test
  void adamLikeStep() {
    check("adam_like", vars -> step((tf, in) -> {
      Variable<TFloat32> w = f32(vars, 0);
      Variable<TFloat32> m = f32(vars, 1);
      Variable<TFloat32> s = f32(vars, 2);
      Variable<TFloat32> t = f32(vars, 3);
      Operand<TFloat32> wr = w.read(tf);
      Operand<TFloat32> loss = tf.math.mean(tf.math.square(tf.math.sub(matvec(tf, fin(in, "x"), wr), fin(in, "y"))), tf.constant(0));
      Operand<TFloat32> g = asF32(Flow.gradients(tf, loss, List.of(wr)).get(0));
      tf.assignAddVariableOp(t.handle(tf), tf.constant(1f));
      m.assign(tf, tf.math.add(tf.math.mul(tf.constant(0.9f), m.read(tf)), tf.math.mul(tf.constant(0.1f), g)));
      s.assign(tf, tf.math.add(tf.math.mul(tf.constant(0.999f), s.read(tf)), tf.math.mul(tf.math.mul(tf.constant(0.001f), g), g)));
      Operand<TFloat32> mh = tf.math.div(m.read(tf), tf.math.sub(tf.constant(1f), tf.math.pow(tf.constant(0.9f), t.read(tf))));
      Operand<TFloat32> sh = tf.math.div(s.read(tf), tf.math.sub(tf.constant(1f), tf.math.pow(tf.constant(0.999f), t.read(tf))));
      tf.assignSubVariableOp(w.handle(tf),
          tf.math.div(tf.math.mul(tf.constant(0.1f), mh), tf.math.add(tf.math.sqrt(sh), tf.constant(1e-7f))));
      return List.of(loss, w.read(tf));
    }));
  }

  @Test
  void float64LogisticRegressionSgd() {
    check("sgd_float64_logistic", vars -> step((tf, in) -> {
      Variable<TFloat64> w = f64(vars, 0);
      Variable<TFloat64> b = f64(vars, 1);
      Operand<TFloat64> wr = w.read(tf);
      Operand<TFloat64> br = b.read(tf);
      Operand<TFloat64> x = in.input("x", TFloat64.class);
      Operand<TFloat64> y = in.input("y", TFloat64.class);
      Operand<TFloat64> logits = tf.math.add(tf.reshape(tf.linalg.matMul(x, tf.expandDims(wr, tf.constant(-1))),
          tf.constant(new int[] {-1})), br);
      // Python's sigmoid_cross_entropy_with_logits, as written in nn_impl.py
      Operand<TFloat64> zeros = tf.zerosLike(logits);
      var positive = tf.math.greaterEqual(logits, zeros);
      Operand<TFloat64> ce = tf.math.add(tf.math.sub(tf.select(positive, logits, zeros), tf.math.mul(logits, y)),
          tf.math.log1p(tf.math.exp(tf.select(positive, tf.math.neg(logits), logits))));
      Operand<TFloat64> loss = tf.math.mean(ce, tf.constant(0));
      List<Operand<?>> g = Flow.gradients(tf, loss, List.of(wr, br));
      tf.assignSubVariableOp(w.handle(tf), tf.math.mul(tf.constant(0.5), ControlFlowPorts.f64(g.get(0))));
      tf.assignSubVariableOp(b.handle(tf), tf.math.mul(tf.constant(0.5), ControlFlowPorts.f64(g.get(1))));
      return List.of(loss);
    }));
  }

  @Test
  void scatterNdUpdate() {
    check("scatter_nd_update", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      tf.resourceScatterNdUpdate(v.handle(tf), iin(in, "idx"), fin(in, "upd"));
      return List.of(sum(tf, v.read(tf)));
    }));
  }

  @Test
  void scatterAddInt32WithARepeatedIndex() {
    check("scatter_add_int32", vars -> f((tf, in) -> {
      tf.resourceScatterAdd(i32(vars, 0).handle(tf), iin(in, "idx"), iin(in, "upd"));
      return List.of(i32(vars, 0).read(tf));
    }));
  }

  @Test
  void scatterNdAdd2d() {
    check("scatter_nd_add_2d", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      tf.resourceScatterNdAdd(v.handle(tf), tf.constant(new int[][] {{0, 1}, {1, 2}, {0, 1}}), fin(in, "upd"));
      return List.of(tf.sum(v.read(tf), tf.constant(1)));
    }));
  }

  @Test
  void scatterUpdateReadThenScatterAdd() {
    check("scatter_update_read_then_add", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> upd = fin(in, "upd");
      tf.resourceScatterNdUpdate(v.handle(tf), tf.constant(new int[][] {{2}}), upd);
      Operand<TFloat32> r = v.read(tf);
      tf.resourceScatterNdAdd(v.handle(tf), tf.constant(new int[][] {{0}, {2}}), tf.concat(List.of(upd, upd), tf.constant(0)));
      return List.of(r, v.read(tf));
    }));
  }

  @Test
  void scatterSubThenScatterMax() {
    check("scatter_sub_and_max", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      tf.resourceScatterSub(v.handle(tf), tf.constant(new int[] {0, 1}), fin(in, "upd"));
      tf.resourceScatterMax(v.handle(tf), tf.constant(new int[] {1, 2}), tf.constant(new float[] {4f, 4f}));
      return List.of(v.read(tf));
    }));
  }

  /** One function named {@code step}, as Python's training cases name it. */
  static Map<String, ListBody> step(ListBody body) {
    return Map.of("step", body);
  }

  @Test
  void gatherAroundAScatterUpdate() {
    check("gather_around_scatter_update", vars -> f((tf, in) -> {
      Variable<TFloat32> v = f32(vars, 0);
      Operand<TFloat32> before = tf.resourceGather(v.handle(tf), tf.constant(new int[] {2, 0}), TFloat32.class);
      tf.resourceScatterNdUpdate(v.handle(tf), tf.constant(new int[][] {{0}, {2}}), fin(in, "upd"));
      return List.of(before, tf.resourceGather(v.handle(tf), tf.constant(new int[] {2, 0}), TFloat32.class),
          tf.resourceGatherNd(v.handle(tf), tf.constant(new int[][] {{1, 1}}), TFloat32.class));
    }));
  }

  static Operand<TFloat32> sum(Ops tf, Operand<TFloat32> x) {
    return tf.sum(x, tf.constant(0));
  }
}
