package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Diagnostics;
import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import dev.polyfn.Variable;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/** Variables: captured by handle, shared between functions and eager code, created once. */
class VariablesTest {

  /**
   * A variable keeps its shape, as Python's does: an assignment of another shape is refused,
   * eagerly (naming both shapes) and in a traced body (at trace time when the value's shape is
   * known, at the call when it is not). Before, it was accepted: calls then dispatched and ran on
   * the shape the variable was created with while its value had another (a function traced for
   * a [2] variable read a [3] value; its static shape, which Grappler folds into constants,
   * stayed [2]).
   */
  @Test
  void anAssignmentOfAnotherShapeIsRefusedAndTheValueKept() {
    try (TFloat32 init = TFloat32.vectorOf(1f, 2f);
        Variable<TFloat32> v = Variable.create(init);
        SingleFunction size = Function.defineSingle((tf, in) -> tf.size(v.read(tf)));
        SingleFunction set = Function.defineSingle((tf, in) -> {
          Operand<TFloat32> value = in.input("value", TFloat32.class, Shape.unknown());
          v.assign(tf, value);
          return tf.size(v.read(tf));
        });
        TFloat32 three = TFloat32.vectorOf(5f, 6f, 7f);
        TFloat32 two = TFloat32.vectorOf(8f, 9f)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> v.assign(three));
      assertTrue(e.getMessage().contains("[3]") && e.getMessage().contains("[2]"), e.getMessage());
      assertEquals(2, v.value().shape().size(0));
      e = assertThrows(IllegalArgumentException.class, () -> Function.defineSingle((tf, in) -> {
        v.assign(tf, tf.constant(new float[] {1f, 2f, 3f}));
        return tf.constant(0);
      }).call(Map.of()));
      assertTrue(e.getMessage().contains("[3]") && e.getMessage().contains("[2]"), e.getMessage());
      // Shape known only at the call: TensorFlow's refusal, naming both shapes (not any failure).
      RuntimeException atCall = assertThrows(org.tensorflow.exceptions.TFInvalidArgumentException.class,
          () -> set.call(three).close());
      assertTrue(atCall.getMessage().contains("[3]") && atCall.getMessage().contains("[2]"), atCall.getMessage());
      assertEquals(2, v.value().shape().size(0));
      try (TType n = size.call(Map.of())) {
        assertEquals(2, ((org.tensorflow.types.TInt32) n).getInt());
      }
      try (TType n = set.call(two)) { // the same shape: assigned
        assertEquals(2, ((org.tensorflow.types.TInt32) n).getInt());
      }
      assertEquals(9f, v.value().getFloat(1), 0f);
    }
  }

  @Test
  void aVariableCapturedByTwoFunctionsIsSharedWithEagerCode() {
    try (TFloat32 zero = TFloat32.scalarOf(0f);
        Variable<TFloat32> counter = Variable.create(zero);
        SingleFunction increment = Function.defineSingle((tf, in) -> {
          Operand<TFloat32> by = in.input("by", TFloat32.class);
          Operand<TFloat32> next = tf.math.add(counter.read(tf), by);
          counter.assign(tf, next); // an effect, run at every call
          return next;
        });
        SingleFunction peek = Function.defineSingle((tf, in) -> counter.read(tf));
        TFloat32 two = TFloat32.scalarOf(2f)) {
      try (TType after = increment.call(two)) {
        assertEquals(2f, ((TFloat32) after).getFloat(), 0f);
      }
      increment.call(two).close();
      assertEquals(4f, counter.value().getFloat(), 0f); // eager code sees the assignments
      try (TType seen = peek.call(Map.of())) {
        assertEquals(4f, ((TFloat32) seen).getFloat(), 0f); // so does the other function
      }
      try (TFloat32 ten = TFloat32.scalarOf(10f)) {
        counter.assign(ten); // an eager assignment reaches both functions
      }
      try (TType seen = peek.call(Map.of()); TType after = increment.call(two)) {
        assertEquals(10f, ((TFloat32) seen).getFloat(), 0f);
        assertEquals(12f, ((TFloat32) after).getFloat(), 0f);
      }
      assertEquals(1, increment.traceCount());
      assertEquals(1, peek.traceCount());
      assertTrue(peek.functionType().toString().contains("captures: variable_"), peek.functionType().toString());
    }
  }

  @Test
  void aVariableCreatedInABodyIsCreatedOnceOnTheFirstTrace() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction accumulate = Function.define((tf, in) -> {
          traces.incrementAndGet();
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Variable<TFloat32> total = in.variable("total", TFloat32.scalarOf(0f));
          Operand<TFloat32> next = tf.math.add(total.read(tf), tf.sum(x, tf.range(tf.constant(0), tf.rank(x), tf.constant(1))));
          total.assign(tf, next);
          return Map.of("total", next);
        });
        TFloat32 v2 = TFloat32.vectorOf(1f, 2f);
        TFloat32 v3 = TFloat32.vectorOf(1f, 1f, 1f)) {
      long before = Diagnostics.liveVariables();
      accumulate.call(Map.of("x", v2)).close();
      assertEquals(before + 1, Diagnostics.liveVariables());
      try (Outputs out = accumulate.call(Map.of("x", v3))) { // a retrace reuses the variable
        assertEquals(6f, out.get("total", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(2, traces.get());
      assertEquals(before + 1, Diagnostics.liveVariables());
    }
  }

  @Test
  void creatingAVariableOnASecondTraceThrows() {
    AtomicInteger traces = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          if (traces.incrementAndGet() > 1) {
            Variable.create(TFloat32.scalarOf(1f)); // a new variable on a retrace
          }
          return Map.of("y", x);
        });
        TFloat32 s = TFloat32.scalarOf(1f);
        TFloat32 v = TFloat32.vectorOf(1f)) {
      f.call(Map.of("x", s)).close();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", v)));
      assertTrue(e.getMessage().contains("first trace"), e.getMessage());
      assertEquals(1, f.traceCount());
      f.call(Map.of("x", s)).close();
    }
  }

  @Test
  void theSameVariablePassedOrCapturedTwiceIsOneGraphInput() {
    try (TFloat32 one = TFloat32.scalarOf(1f);
        Variable<TFloat32> a = Variable.create(one);
        Variable<TFloat32> b = Variable.create(one);
        MapFunction sum = Function.define((tf, in) -> {
          Operand<? extends TType> p = in.variableInput("p", TFloat32.class);
          Operand<? extends TType> q = in.variableInput("q", TFloat32.class);
          Operand<TFloat32> captured = a.read(tf);
          return Map.of("s", tf.math.add(tf.math.add(tf.readVariableOp(p, TFloat32.class),
              tf.readVariableOp(q, TFloat32.class)), captured));
        })) {
      try (Outputs out = sum.call(Map.of("p", a, "q", a))) {
        assertEquals(3f, out.get("s", TFloat32.class).getFloat(), 0f);
      }
      ConcreteFunctionInfo same = sum.concreteFunctions().get(0);
      assertEquals(1, same.inputCount()); // a as p, as q and as a capture: one handle
      try (TFloat32 five = TFloat32.scalarOf(5f)) {
        b.assign(five);
      }
      try (Outputs out = sum.call(Map.of("p", a, "q", b))) { // another aliasing pattern: a new trace
        assertEquals(7f, out.get("s", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(2, sum.traceCount());
      assertEquals(2, sum.concreteFunctions().get(1).inputCount());
      try (Outputs out = sum.call(Map.of("p", b, "q", b))) { // b twice, a captured: another pattern
        assertEquals(11f, out.get("s", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(3, sum.traceCount());
      assertEquals(2, sum.concreteFunctions().get(2).inputCount());
      try (Outputs out = sum.call(Map.of("p", a, "q", a))) { // the first pattern again: no trace
        assertEquals(3f, out.get("s", TFloat32.class).getFloat(), 0f);
      }
      assertEquals(3, sum.traceCount());
    }
  }

  /**
   * A resource input's tensor handle is kept from one call to the next (native
   * function/resource_inputs.rs): each call must still read the variable it passes, whether the
   * variables alternate, one is assigned, or one is closed and a new one (whose handle tensor may
   * reuse the closed one's memory) takes its place; one trace throughout.
   */
  @Test
  @SuppressWarnings("unchecked")
  void eachCallReadsTheVariableItPassesThoughHandlesAreKept() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y",
            tf.math.add(tf.readVariableOp(in.variableInput("v", TFloat32.class), TFloat32.class), in.input("x", TFloat32.class))));
        TFloat32 zero = TFloat32.scalarOf(0f)) {
      Variable<TFloat32>[] vs = new Variable[2];
      float[] values = new float[2];
      for (int i = 0; i < vs.length; i++) {
        try (TFloat32 init = TFloat32.scalarOf(10f * (i + 1))) {
          vs[i] = Variable.create(init);
          values[i] = 10f * (i + 1);
        }
      }
      try {
        for (int call = 0; call < 300; call++) {
          int i = call % 3 == 2 ? 1 : call % 2; // 0, 1, 1, 1, 0, 1, 0, 1, 1, ...: runs of one and alternations
          if (call % 37 == 36) { // replaced by a new variable, made right after the old one is closed
            vs[i].close();
            values[i] = call;
            try (TFloat32 init = TFloat32.scalarOf(call)) {
              vs[i] = Variable.create(init);
            }
          } else if (call % 11 == 10) {
            values[i] += 0.5f;
            try (TFloat32 next = TFloat32.scalarOf(values[i])) {
              vs[i].assign(next);
            }
          }
          try (Outputs out = f.call(Map.of("v", vs[i], "x", zero))) {
            assertEquals(values[i], out.get("y", TFloat32.class).getFloat(), 0f, "call " + call + " with variable " + i);
          }
        }
      } finally {
        for (Variable<TFloat32> v : vs) {
          v.close();
        }
      }
      assertEquals(1, f.traceCount());
    }
  }

  @Test
  void aNonVariableForAVariableParameterIsRejected() {
    try (TFloat32 one = TFloat32.scalarOf(1f);
        Variable<TFloat32> v = Variable.create(one);
        MapFunction f = Function.define((tf, in) ->
            Map.of("x", tf.readVariableOp(in.variableInput("v", TFloat32.class), TFloat32.class)))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("v", one)));
      assertTrue(e.getMessage().contains("'v'") && e.getMessage().contains("Variable"), e.getMessage());
      f.call(Map.of("v", v)).close();
    }
  }

  @Test
  void nothingLeaksAfterClosingFunctionsAndVariables() {
    long functions = Diagnostics.liveConcreteFunctions();
    long variables = Diagnostics.liveVariables();
    try (TFloat32 zero = TFloat32.tensorOf(Shape.of(2));
        Variable<TFloat32> v = Variable.create(zero);
        MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Variable<TFloat32> owned = in.variable("owned", TFloat32.scalarOf(0f));
          return Map.of("y", tf.math.add(tf.math.add(x, v.read(tf)), owned.read(tf)));
        });
        TFloat32 x = TFloat32.vectorOf(1f, 2f);
        TFloat32 s = TFloat32.scalarOf(1f)) {
      f.call(Map.of("x", x)).close();
      f.call(Map.of("x", s)).close();
      assertEquals(functions + 2, Diagnostics.liveConcreteFunctions());
      assertEquals(variables + 2, Diagnostics.liveVariables());
    }
    assertEquals(functions, Diagnostics.liveConcreteFunctions());
    assertEquals(variables, Diagnostics.liveVariables());
  }

  /**
   * A function run eagerly (debug mode) holds the variables passed to it until its body ends: a
   * close from another thread meanwhile empties the variable only after the body read it. Before,
   * the body's read ran after the close had emptied it and returned a value of shape [0].
   */
  @Test
  void aBodyRunEagerlyKeepsItsVariableArgumentUntilItEnds() throws Exception {
    try (TFloat32 init = TFloat32.vectorOf(1f, 2f, 3f)) {
      Variable<TFloat32> v = Variable.create(init);
      try (MapFunction f = Function.define((tf, in) -> {
        Operand<? extends TType> h = in.variableInput("v", TFloat32.class);
        Thread closer = new Thread(v::close);
        closer.start();
        try {
          closer.join();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        return Map.of("y", tf.readVariableOp(h, TFloat32.class));
      }, dev.polyfn.FunctionOptions.defaults().withRunEagerly(true));
           Outputs o = f.call(Map.of("v", v))) {
        TFloat32 y = o.get("y", TFloat32.class);
        assertEquals(Shape.of(3), y.shape(), "the value the body read");
        assertEquals(3f, y.getFloat(2));
      }
      assertTrue(v.isClosed());
      assertThrows(IllegalStateException.class, v::value);
    }
  }

  /**
   * Eager reads racing a close, on another thread: each sees the variable's value or says it is
   * closed, never the emptied value a close leaves behind (shape [0]) nor another error. Before, a
   * read that passed the closed check could run after the close had emptied the variable.
   */
  @Test
  void eagerReadsRacingACloseSeeTheValueOrAClosedError() throws Exception {
    int ok = 0;
    int closed = 0;
    int wrong = 0;
    String first = null;
    for (int round = 0; round < 200; round++) {
      try (TFloat32 init = TFloat32.vectorOf(1f, 2f, 3f)) {
        Variable<TFloat32> v = Variable.create(init);
        Thread closer = new Thread(v::close);
        closer.start();
        for (int i = 0; i < 30; i++) {
          try {
            TFloat32 x = v.value();
            if (x.shape().numDimensions() == 1 && x.shape().get(0) == 3 && x.getFloat(2) == 3f) {
              ok++;
            } else {
              wrong++;
              first = first == null ? "value of shape " + x.shape() : first;
            }
          } catch (RuntimeException e) {
            // Only the closed error counts as closed: a panic in native code is an IllegalStateException too.
            if (e instanceof IllegalStateException && String.valueOf(e.getMessage()).endsWith(" is closed")) {
              closed++;
            } else {
              wrong++;
              first = first == null ? e.toString() : first;
            }
          }
        }
        closer.join();
      }
    }
    assertEquals(0, wrong, "reads that saw neither the value nor a closed error (first: " + first + "); ok=" + ok
        + " closed=" + closed);
    assertTrue(ok > 0 && closed > 0, "both outcomes happen: ok=" + ok + " closed=" + closed);
  }

  /**
   * A closed variable's value is gone (emptied at close, so its memory goes while its handle
   * lives on): every use of it is an exception (IllegalArgumentException when passed as an
   * argument, IllegalStateException otherwise), never a read of the emptied value; the functions
   * that took or captured it stay usable.
   */
  @Test
  void everyUseOfAClosedVariableThrows() {
    Ops eager = Ops.create(EagerSession.getDefault());
    try (TFloat32 one = TFloat32.scalarOf(1f); TFloat32 two = TFloat32.scalarOf(2f)) {
      Variable<TFloat32> v = Variable.create(one);
      try (MapFunction passed = Function.define((tf, in) -> Map.of("y", tf.readVariableOp(in.variableInput("v", TFloat32.class), TFloat32.class)));
           MapFunction captured = Function.define((tf, in) -> Map.of("y", v.read(tf)))) {
        passed.call(Map.of("v", v)).close();
        captured.call(Map.of()).close();
        v.close();
        assertThrows(IllegalStateException.class, v::value);
        assertThrows(IllegalStateException.class, () -> v.assign(two));
        assertThrows(IllegalStateException.class, () -> v.read(eager));
        assertThrows(IllegalStateException.class, () -> v.handle(eager));
        assertThrows(IllegalStateException.class, () -> v.assign(eager, eager.constant(2f)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> passed.call(Map.of("v", v)));
        assertTrue(e.getMessage().contains("argument 'v': the variable is closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> captured.call(Map.of()));
        try (Variable<TFloat32> w = Variable.create(two); Outputs out = passed.call(Map.of("v", w))) {
          assertEquals(2f, out.get("y", TFloat32.class).getFloat(), 0f);
        }
      }
    }
  }

  /**
   * A stateful operation whose output nothing uses still runs at every call, as in Python, where
   * every stateful operation is a control output: here a ResourceCountUpTo beside an assignment.
   */
  @Test
  void aStatefulOperationWhoseOutputIsUnusedRunsAtEveryCall() {
    try (TInt64 zero = TInt64.scalarOf(0L);
        TFloat32 none = TFloat32.scalarOf(0f);
        Variable<TInt64> count = Variable.create(zero);
        Variable<TFloat32> last = Variable.create(none);
        SingleFunction f = Function.defineSingle((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          tf.resourceCountUpTo(count.handle(tf), 100L, TInt64.class); // its output unused
          last.assign(tf, x);
          return tf.math.neg(x);
        });
        TFloat32 one = TFloat32.scalarOf(1f)) {
      for (int i = 1; i <= 4; i++) {
        f.call(one).close();
        assertEquals(i, count.value().getLong(), "calls: " + i);
      }
      assertEquals(1f, last.value().getFloat(), 0f);
    }
  }
}
