package dev.polyfn.tests;

import static dev.polyfn.tests.PortCalls.ints;
import static dev.polyfn.tests.PortCalls.scalars;
import static dev.polyfn.tests.PortCalls.staticShape;
import static dev.polyfn.tests.ControlFlowTest.i;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.MapFunction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint8;

/**
 * Programs ported from TensorFlow's own tests of {@code tf.function} (polymorphic_function_test.py,
 * quarantine_test.py, default_types_test.py; control flow: TfFunctionControlFlowPortsTest): retracing,
 * Java values, nested functions, defaults, string tensors, variables, integer overflow, with the results TensorFlow 2.21's {@code tf.function} gave
 * recorded as the expected values: each was run by tests/python/tf_function_ports.py, which prints
 * them. Each case names the Python program it ports.
 */
class TfFunctionPortsTest {

  // ---- retracing (polymorphic_function_test.py, quarantine_test.py, default_types_test.py) ----

  /**
   * Reduce-retracing over shapes with a zero dim: [0] then [3] relax to [None]; [0] is served by its
   * own exact trace (the most specific); [0, 2] relaxes to an unknown rank, which serves the rest.
   * Python: seen [1,0] 1, [1,-1] 2, [1,0] 2, [-1] 3, [-1] 3, [-1] 3.
   */
  @Test
  void reduceRetracingWithZeroSizedDims() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(tf.constant(staticShape(in.input("x", TFloat32.class).shape()))),
        FunctionOptions.defaults().withReduceRetracing(true))) {
      long[][] shapes = {{0}, {3}, {0}, {0, 2}, {0, 3}, {1, 3}};
      int[][] seen = {{1, 0}, {1, -1}, {1, 0}, {-1}, {-1}, {-1}};
      int[] traces = {1, 2, 2, 3, 3, 3};
      for (int k = 0; k < shapes.length; k++) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(shapes[k])); ListOutputs out = f.call(Map.of("x", x))) {
          assertArrayEquals(seen[k], ints(out.get(0, TInt32.class)), "call " + k);
        }
        assertEquals(traces[k], f.traceCount(), "traces after call " + k);
      }
    }
  }

  /**
   * quarantine_test testFunctionRelaxationLosesInnerDimWithKerasLayer-style (reduce_retracing with a
   * non-tensor argument and a list): a string value keys the cache; within it, list element shapes
   * relax. Python: ('hi',[]) 1 trace, ('hi',[1]) relaxes to [None] 2, ('hi',[2]) 2, ('bye',[]) 3,
   * ('bye',[1]) 4, ('hi',[3]) 4.
   */
  @Test
  void reduceRetracingWithAStringValueAndAList() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          in.javaInput("a", String.class);
          List<Operand<TFloat32>> b = in.list("b", TFloat32.class);
          return List.of(tf.math.add(b.get(0), tf.constant(1f)), tf.constant((int) b.get(1).shape().get(0)));
        }, FunctionOptions.defaults().withReduceRetracing(true));
        TFloat32 b0 = TFloat32.scalarOf(1f)) {
      Object[][] calls = {{"hi", 0, 0, 1}, {"hi", 1, -1, 2}, {"hi", 2, -1, 2}, {"bye", 0, 0, 3}, {"bye", 1, -1, 4},
          {"hi", 3, -1, 4}};
      for (Object[] c : calls) {
        try (TFloat32 b1 = TFloat32.tensorOf(Shape.of((Integer) c[1]));
            ListOutputs out = f.call(Map.of("a", new String((String) c[0]), "b", List.of(b0, b1)))) {
          assertEquals(2f, out.get(0, TFloat32.class).getFloat());
          assertEquals((int) c[2], out.get(1, TInt32.class).getInt(), "seen dim for " + List.of(c));
        }
        assertEquals((int) c[3], f.traceCount(), "traces after " + List.of(c));
      }
    }
  }

  /**
   * polymorphic_function_test testNestedFunctionsRetrace-style: an inner function called from an
   * outer one traces per symbolic signature; Python: after outer([2]), outer([3]), outer([2]) both
   * traced twice.
   */
  @Test
  void nestedFunctionTracesPerSymbolicSignature() {
    try (MapFunction inner = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f))));
        ListFunction outer = Function.defineList((tf, in) -> List.of(tf.math.add(
            (Operand<TFloat32>) inner.apply(tf, Map.of("x", in.input("x", TFloat32.class))).get("y"), tf.constant(1f))))) {
      for (int n : new int[] {2, 3, 2}) {
        try (TFloat32 x = TFloat32.vectorOf(new float[n]); ListOutputs out = outer.call(Map.of("x", x))) {
          assertEquals(1f, out.get(0, TFloat32.class).getFloat(0));
        }
      }
      assertEquals(2, inner.traceCount());
      assertEquals(2, outer.traceCount());
    }
  }

  /**
   * An inner function first traced for [None] (from an outer function with
   * input_signature=[TensorSpec([None])]) serves later symbolic [4] and [5] from another outer
   * function: Python's inner traced once.
   */
  @Test
  void nestedFunctionTracedForAnUnknownDimServesKnownOnes() {
    try (MapFunction inner = Function.define((tf, in) -> Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(2f))));
        ListFunction relaxed = Function.defineList((tf, in) -> List.of(
            inner.apply(tf, Map.of("x", in.input("x", TFloat32.class, Shape.of(-1)))).get("y")));
        ListFunction known = Function.defineList((tf, in) -> List.of(
            inner.apply(tf, Map.of("x", in.input("x", TFloat32.class))).get("y")))) {
      try (TFloat32 x = TFloat32.tensorOf(Shape.of(2))) {
        relaxed.call(Map.of("x", x)).close();
      }
      for (int n : new int[] {4, 5}) {
        try (TFloat32 x = TFloat32.tensorOf(Shape.of(n))) {
          known.call(Map.of("x", x)).close();
        }
      }
      assertEquals(1, inner.traceCount());
    }
  }

  /**
   * polymorphic_function_test testDefaultArgs-style: a tensor default is a capture: omitting it and
   * passing tensors of its dtype and shape share one trace. Python: 2.0, 3.0, 6.0, 2.0 in 1 trace.
   */
  @Test
  void aTensorDefaultSharesTheTraceOfPassedTensors() {
    try (TFloat32 d = TFloat32.scalarOf(1f);
        ListFunction f = Function.defineList((tf, in) -> List.of(tf.math.add(in.input("x", TFloat32.class),
            in.input("y", TFloat32.class, d))))) {
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f)));
      assertEquals(List.of(3f), scalars(f, Map.of("x", 1f, "y", 2f)));
      assertEquals(List.of(6f), scalars(f, Map.of("x", 1f, "y", 5f)));
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f)));
      assertEquals(1, f.traceCount());
    }
  }

  /** A Java-value default: omitting it and passing an equal value share a trace. Python: 3.0, 3.0, 6.0 in 2 traces. */
  @Test
  void aJavaValueDefaultSharesTheTraceOfAnEqualValue() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(tf.math.mul(in.input("x", TFloat32.class),
        tf.constant((float) in.javaInput("n", Integer.class, 1)))))) {
      assertEquals(List.of(3f), scalars(f, Map.of("x", 3f)));
      assertEquals(List.of(3f), scalars(f, Map.of("x", 3f, "n", 1)));
      assertEquals(List.of(6f), scalars(f, Map.of("x", 3f, "n", 2)));
      assertEquals(2, f.traceCount());
    }
  }

  /**
   * String tensors: tf.strings.length and join; one trace per shape, and with reduce-retracing
   * [1], [2], [3], [] trace 3 times. Python: [1, 2, 0], ["aa", "bcbc", ""]; 2 traces; 3 with reduce.
   */
  @Test
  void stringTensorsTraceByShape() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TString> x = in.input("x", TString.class);
          return List.of(tf.strings.stringLength(x), tf.strings.join(List.of(x, x)));
        });
        ListFunction r = Function.defineList((tf, in) -> List.of(tf.strings.stringLength(in.input("x", TString.class))),
            FunctionOptions.defaults().withReduceRetracing(true))) {
      try (TString x = TString.vectorOf("a", "bc", ""); ListOutputs out = f.call(Map.of("x", x))) {
        assertArrayEquals(new int[] {1, 2, 0}, ints(out.get(0, TInt32.class)));
        TString j = out.get(1, TString.class);
        assertEquals(List.of("aa", "bcbc", ""), List.of(j.getObject(0), j.getObject(1), j.getObject(2)));
      }
      for (TString x : List.of(TString.vectorOf("xyz", "q", "w"), TString.vectorOf("a"))) {
        f.call(Map.of("x", x)).close();
        x.close();
      }
      assertEquals(2, f.traceCount());
      for (TString x : List.of(TString.vectorOf("a"), TString.vectorOf("a", "b"), TString.vectorOf("a", "b", "c"),
          TString.scalarOf("a"))) {
        r.call(Map.of("x", x)).close();
        x.close();
      }
      assertEquals(3, r.traceCount());
    }
  }

  /** Python Enum values as arguments (default_types_test Literal-style): one trace per member; values [2, 3, 2], 2 traces. */
  enum Mode { A, B }

  @Test
  void enumValuesTraceOncePerMember() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Mode m = in.javaInput("m", Mode.class);
          return List.of(tf.math.add(x, tf.constant(m == Mode.A ? 1f : 2f)));
        })) {
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f, "m", Mode.A)));
      assertEquals(List.of(3f), scalars(f, Map.of("x", 1f, "m", Mode.B)));
      assertEquals(List.of(2f), scalars(f, Map.of("x", 1f, "m", Mode.A)));
      assertEquals(2, f.traceCount());
    }
  }

  /**
   * default_types_test: equal strings (not the same object) and equal tuples (Java arrays, by
   * elements) share a trace. Python: strings "ab", "abc", "a"+"b" give [3, 4, 3] in 2 traces;
   * tuples (1, 2), (1, 2), (2, 1) give [4, 4, 4] in 2 traces.
   */
  @Test
  void equalStringsAndEqualArraysShareATrace() {
    try (ListFunction s = Function.defineList((tf, in) -> List.of(tf.math.add(in.input("x", TFloat32.class),
            tf.constant((float) in.javaInput("name", String.class).length()))));
        ListFunction t = Function.defineList((tf, in) -> List.of(tf.math.add(in.input("x", TFloat32.class),
            tf.constant((float) java.util.Arrays.stream(in.javaInput("t", int[].class)).sum()))))) {
      String a = "a";
      assertEquals(List.of(3f), scalars(s, Map.of("x", 1f, "name", "ab")));
      assertEquals(List.of(4f), scalars(s, Map.of("x", 1f, "name", "abc")));
      assertEquals(List.of(3f), scalars(s, Map.of("x", 1f, "name", a + "b")));
      assertEquals(2, s.traceCount());
      assertEquals(List.of(4f), scalars(t, Map.of("x", 1f, "t", new int[] {1, 2})));
      assertEquals(List.of(4f), scalars(t, Map.of("x", 1f, "t", new int[] {1, 2})));
      assertEquals(List.of(4f), scalars(t, Map.of("x", 1f, "t", new int[] {2, 1})));
      assertEquals(2, t.traceCount());
    }
  }

  /**
   * Python float values: two NaNs (different objects) share one trace, as Double.equals makes them
   * equal. 0.0 and -0.0 share one in Python (0.0 == -0.0, so f(1.0, -0.0) returns the 0.0 trace's
   * 0.0); Polyfn keys Java values by equals, which tells them apart (documented: "by its class and
   * equals/hashCode"), so it traces twice and returns -0.0: an intended difference.
   */
  @Test
  void nanValuesShareATraceAndSignedZerosDoNot() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(tf.math.mul(in.input("x", TFloat32.class),
        tf.constant(in.javaInput("z", Double.class).floatValue()))))) {
      assertTrue(Float.isNaN(scalars(f, Map.of("x", 1f, "z", Double.NaN)).get(0)));
      assertTrue(Float.isNaN(scalars(f, Map.of("x", 1f, "z", Double.longBitsToDouble(0x7ff8000000000001L))).get(0)));
      assertEquals(1, f.traceCount());
      assertEquals(0f, scalars(f, Map.of("x", 1f, "z", 0.0)).get(0));
      assertEquals(-0f, scalars(f, Map.of("x", 1f, "z", -0.0)).get(0)); // Python: 0.0 from the 0.0 trace
      assertEquals(3, f.traceCount());                                  // Python: 2
    }
  }

  // ---- variables (polymorphic_function_test.py, variables tests) ----

  /**
   * polymorphic_function_test testRetracingOnDifferentVaribleCombinationPatterns: three variable
   * arguments; a new aliasing pattern retraces, the same pattern with other variables does not, and
   * an assignment through one alias is seen by a read through another. Python, a.assign_add(1) then
   * a + b + c: (v1,v1,v1) 6.0 1 trace, (v2,v2,v2) 33.0 1, (v1,v2,v1) 17.0 2, (v2,v3,v2) 124.0 2,
   * (v1,v2,v3) 116.0 3, (v3,v1,v2) 117.0 3, (v1,v1,v2) 22.0 4; then v1 5, v2 12, v3 101.
   */
  @Test
  void variableAliasingPatternsRetraceAsInPython() {
    try (dev.polyfn.Variable<TFloat32> v1 = dev.polyfn.Variable.create(TFloat32.scalarOf(1f));
        dev.polyfn.Variable<TFloat32> v2 = dev.polyfn.Variable.create(TFloat32.scalarOf(10f));
        dev.polyfn.Variable<TFloat32> v3 = dev.polyfn.Variable.create(TFloat32.scalarOf(100f));
        ListFunction f = Function.defineList((tf, in) -> {
          Operand<?> a = in.variableInput("a", TFloat32.class);
          Operand<?> b = in.variableInput("b", TFloat32.class);
          Operand<?> c = in.variableInput("c", TFloat32.class);
          tf.assignAddVariableOp(a, tf.constant(1f));
          return List.of(tf.math.add(tf.math.add(tf.readVariableOp(a, TFloat32.class), tf.readVariableOp(b, TFloat32.class)),
              tf.readVariableOp(c, TFloat32.class)));
        })) {
      Object[][] calls = {{v1, v1, v1, 6f, 1}, {v2, v2, v2, 33f, 1}, {v1, v2, v1, 17f, 2}, {v2, v3, v2, 124f, 2},
          {v1, v2, v3, 116f, 3}, {v3, v1, v2, 117f, 3}, {v1, v1, v2, 22f, 4}};
      for (Object[] c : calls) {
        try (ListOutputs out = f.call(Map.of("a", c[0], "b", c[1], "c", c[2]))) {
          assertEquals((float) c[3], out.get(0, TFloat32.class).getFloat(), "result for " + List.of(c));
        }
        assertEquals((int) c[4], f.traceCount(), "traces after " + List.of(c));
      }
      try (TFloat32 a = v1.value(); TFloat32 b = v2.value(); TFloat32 c = v3.value()) {
        assertEquals(List.of(5f, 12f, 101f), List.of(a.getFloat(), b.getFloat(), c.getFloat()));
      }
    }
  }

  /**
   * polymorphic_function_test testVariableCreatedInFunction-style: a variable made on the first
   * call only, assign_add at every call: Python returns 3.0, then 6.0.
   */
  @Test
  void variableCreatedOnTheFirstCallOnly() {
    try (ListFunction f = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          dev.polyfn.Variable<TFloat32> v = in.variable("v", TFloat32.scalarOf(1f));
          v.assign(tf, tf.math.add(v.read(tf), x));
          return List.of(v.read(tf));
        })) {
      assertEquals(List.of(3f), scalars(f, Map.of("x", 2f)));
      assertEquals(List.of(6f), scalars(f, Map.of("x", 3f)));
    }
  }

  /**
   * Assignments in a cond's branches and in a loop body (automatic control dependencies): Python
   * cond: 2.0, 1.0, 4.0; loop doubling w n times: 8.0, 8.0, 32.0 for n = 3, 0, 2.
   */
  @Test
  void assignmentsInsideCondAndLoop() {
    try (dev.polyfn.Variable<TFloat32> v = dev.polyfn.Variable.create(TFloat32.scalarOf(0f));
        dev.polyfn.Variable<TFloat32> w = dev.polyfn.Variable.create(TFloat32.scalarOf(1f));
        ListFunction ca = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Flow.cond(tf, tf.math.greater(x, tf.constant(0f)), () -> {
            v.assign(tf, tf.math.add(v.read(tf), x));
            return tf.constant(0f);
          }, () -> {
            v.assign(tf, tf.math.sub(v.read(tf), tf.constant(1f)));
            return tf.constant(0f);
          });
          return List.of(v.read(tf));
        });
        ListFunction wa = Function.defineList((tf, in) -> {
          Operand<TInt32> n = in.input("n", TInt32.class);
          Flow.whileLoop(tf, List.of(tf.constant(0)), u -> tf.math.less(i(u.get(0)), n), u -> {
            w.assign(tf, tf.math.mul(w.read(tf), tf.constant(2f)));
            return List.of(tf.math.add(i(u.get(0)), tf.constant(1)));
          });
          return List.of(w.read(tf));
        })) {
      assertEquals(List.of(2f), scalars(ca, Map.of("x", 2f)));
      assertEquals(List.of(1f), scalars(ca, Map.of("x", -5f)));
      assertEquals(List.of(4f), scalars(ca, Map.of("x", 3f)));
      assertEquals(List.of(8f), scalars(wa, Map.of("n", 3)));
      assertEquals(List.of(8f), scalars(wa, Map.of("n", 0)));
      assertEquals(List.of(32f), scalars(wa, Map.of("n", 2)));
    }
  }

  // ---- dtypes (math_ops tests run in a tf.function) ----

  /** uint8 wraps modulo 256 and int64 at its bounds, as TensorFlow's kernels do in Python. */
  @Test
  void integerOverflowWrapsAsInPython() {
    try (ListFunction u8 = Function.defineList((tf, in) -> {
          Operand<TUint8> x = in.input("x", TUint8.class);
          return List.of(tf.math.add(x, tf.constant((byte) 10)), tf.math.mul(x, tf.constant((byte) 2)),
              tf.math.sub(x, tf.constant((byte) 20)));
        });
        ListFunction i64 = Function.defineList((tf, in) -> {
          Operand<TInt64> x = in.input("x", TInt64.class);
          return List.of(tf.math.add(x, tf.constant(1L)), tf.math.mul(x, tf.constant(2L)), tf.math.neg(x), tf.math.abs(x));
        });
        TUint8 x8 = TUint8.vectorOf((byte) 250, (byte) 5, (byte) 128);
        TInt64 x64 = TInt64.vectorOf(Long.MAX_VALUE, Long.MIN_VALUE);
        ListOutputs o8 = u8.call(Map.of("x", x8)); ListOutputs o64 = i64.call(Map.of("x", x64))) {
      int[][] want8 = {{4, 15, 138}, {244, 10, 0}, {230, 241, 108}};
      for (int k = 0; k < 3; k++) {
        TUint8 t = o8.get(k, TUint8.class);
        for (int j = 0; j < 3; j++) {
          assertEquals(want8[k][j], Byte.toUnsignedInt(t.getByte(j)), "uint8 output " + k + "[" + j + "]");
        }
      }
      long[][] want64 = {{Long.MIN_VALUE, Long.MIN_VALUE + 1}, {-2, 0}, {-Long.MAX_VALUE, Long.MIN_VALUE},
          {Long.MAX_VALUE, Long.MIN_VALUE}};
      for (int k = 0; k < 4; k++) {
        TInt64 t = o64.get(k, TInt64.class);
        assertEquals(want64[k][0], t.getLong(0), "int64 output " + k);
        assertEquals(want64[k][1], t.getLong(1), "int64 output " + k);
      }
    }
  }

  /**
   * map_fn_test: the results keep elems' static first dimension. Python: map_fn over a [3, 2]
   * tensor gives static shape [3, 2]; over [None, 2], [None, 2].
   */
  @Test
  void mapFnKeepsTheStaticNumberOfElements() {
    try (ListFunction f = Function.defineList((tf, in) -> List.of(
            tf.constant(staticShape(Flow.mapFn(tf, in.input("e", TFloat32.class), r -> tf.math.mul(r, tf.constant(2f))).shape())),
            tf.constant(staticShape(Flow.mapFn(tf, in.input("u", TFloat32.class, Shape.of(-1, 2)),
                r -> tf.math.mul(r, tf.constant(2f))).shape()))));
        TFloat32 e = TFloat32.tensorOf(Shape.of(3, 2)); TFloat32 u = TFloat32.tensorOf(Shape.of(3, 2));
        ListOutputs out = f.call(Map.of("e", e, "u", u))) {
      assertArrayEquals(new int[] {2, 3, 2}, ints(out.get(0, TInt32.class)));
      assertArrayEquals(new int[] {2, -1, 2}, ints(out.get(1, TInt32.class)));
    }
  }
}
