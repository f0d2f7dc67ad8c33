package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.UnaryFunction;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.types.TFloat32;

/** Functions calling functions, and functions called from a user's Graph and Session. */
class NestedCallsTest {

  @Test
  void anOuterFunctionCallingAnInnerOneTracesEachOnce() {
    AtomicInteger innerTraces = new AtomicInteger();
    AtomicInteger outerTraces = new AtomicInteger();
    try (MapFunction inner = Function.define((tf, in) -> {
          innerTraces.incrementAndGet();
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return Map.of("sq", tf.math.square(x));
        });
        MapFunction outer = Function.define((tf, in) -> {
          outerTraces.incrementAndGet();
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          @SuppressWarnings("unchecked")
          Operand<TFloat32> sq = (Operand<TFloat32>) inner.apply(tf, Map.of("x", x)).get("sq");
          return Map.of("y", tf.math.add(sq, tf.constant(1f)));
        })) {
      for (float v : new float[] {2f, 3f, 4f}) {
        try (TFloat32 x = TFloat32.vectorOf(v, -v); Outputs out = outer.call(Map.of("x", x))) {
          assertEquals(v * v + 1, out.get("y", TFloat32.class).getFloat(0), 0f);
          assertEquals(v * v + 1, out.get("y", TFloat32.class).getFloat(1), 0f);
        }
      }
      assertEquals(1, outerTraces.get());
      assertEquals(1, innerTraces.get());
      assertEquals("(x: TensorSpec(FLOAT, [2]))", inner.concreteFunctions().get(0).functionType().toString());
      // The inner function dispatched on the symbolic spec; an eager call of that spec reuses it.
      try (TFloat32 x = TFloat32.vectorOf(5f, 6f); Outputs out = inner.call(Map.of("x", x))) {
        assertEquals(36f, out.get("sq", TFloat32.class).getFloat(1), 0f);
      }
      assertEquals(1, inner.traceCount());
    }
  }

  @Test
  void anInnerFunctionClosedAfterTheOuterTraceKeepsWorkingInsideIt() {
    UnaryFunction<TFloat32, TFloat32> twice = Function.unary(TFloat32.class, (tf, x) -> tf.math.mul(x, tf.constant(2f)));
    try (UnaryFunction<TFloat32, TFloat32> quadruple =
            Function.unary(TFloat32.class, (tf, x) -> twice.apply(tf, twice.apply(tf, x)));
        TFloat32 x = TFloat32.scalarOf(3f)) {
      quadruple.call(x).close();
      twice.close(); // the outer function keeps what it calls
      try (TFloat32 y = quadruple.call(x)) {
        assertEquals(12f, y.getFloat(), 0f);
      }
    }
  }

  @Test
  void aFunctionCanBeCalledFromAUserGraphAndSession() {
    try (MapFunction affine = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TFloat32> inner = in.list("extra", TFloat32.class).get(0);
          return Map.of("y", tf.math.add(tf.math.mul(x, tf.constant(3f)), inner));
        });
        Graph g = new Graph();
        Session session = new Session(g);
        TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      Ops tf = Ops.create(g);
      Placeholder<TFloat32> input = tf.placeholder(TFloat32.class, Placeholder.shape(org.tensorflow.ndarray.Shape.of(2)));
      Map<String, Operand<?>> outs = affine.apply(tf, Map.of("x", input, "extra", List.of(tf.constant(10f))));
      try (Result r = session.runner().feed(input, x).fetch(outs.get("y")).run()) {
        TFloat32 y = (TFloat32) r.get(0);
        assertEquals(13f, y.getFloat(0), 0f);
        assertEquals(16f, y.getFloat(1), 0f);
      }
      assertEquals(1, affine.traceCount());
    }
  }

  /**
   * A callee that owns a variable ({@code in.variable}) closes it when it is closed, and a caller
   * that uses it then fails: the message says which function owned the variable and why the
   * caller's calls fail (before: "variable 1 is closed"). Found by an outside tester.
   */
  @Test
  void aCallerOfAClosedCalleeThatOwnedAVariableSaysSo() {
    dev.polyfn.SingleFunction inner = Function.defineSingle((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      dev.polyfn.Variable<TFloat32> acc = in.variable("acc", TFloat32.scalarOf(0f));
      Operand<TFloat32> n = tf.math.add(acc.read(tf), x);
      acc.assign(tf, n);
      return n;
    }, dev.polyfn.FunctionOptions.defaults().withName("inner"));
    try (dev.polyfn.SingleFunction outer = Function.defineSingle((tf, in) -> tf.math.mul(
        (Operand<TFloat32>) inner.apply(tf, Map.of("x", in.input("x", TFloat32.class))), tf.constant(10f)),
        dev.polyfn.FunctionOptions.defaults().withName("outer")); TFloat32 x = TFloat32.scalarOf(1f)) {
      try (TFloat32 y = (TFloat32) outer.call(x)) {
        assertEquals(10f, y.getFloat());
      }
      inner.close();
      IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
          () -> outer.call(x).close());
      org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("is closed: function 'inner' owned it")
          && e.getMessage().contains("functions that call 'inner' use it"), e.getMessage());
    }
  }
}
