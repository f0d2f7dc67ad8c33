package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.Outputs;
import dev.polyfn.RecordInput;
import dev.polyfn.SingleFunction;
import dev.polyfn.UnaryFunction;
import dev.polyfn.Variable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.buffer.ByteDataBuffer;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * Debug mode ({@code FunctionOptions.withRunEagerly}, {@code Function.runFunctionsEagerly}): the
 * body runs eagerly at every call, and its results equal the traced function's on the same inputs
 * (bitwise: the traced reference runs without Grappler, op by op as written).
 */
@SuppressWarnings("unchecked")
class RunEagerlyTest {
  private static final FunctionOptions EAGER = FunctionOptions.defaults().withRunEagerly(true);
  private static final FunctionOptions TRACED = FunctionOptions.defaults().withGrappler(false);

  @AfterEach
  void switchOff() {
    Function.runFunctionsEagerly(false);
  }

  /** Each output's dtype, shape and bytes, by name. */
  private static Map<String, String> fingerprint(Outputs o) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String name : o.names()) {
      Tensor t = o.get(name);
      ByteDataBuffer data = t.asRawTensor().data();
      byte[] bytes = new byte[(int) data.size()];
      data.read(bytes);
      out.put(name, t.dataType() + " " + t.shape() + " " + java.util.HexFormat.of().formatHex(bytes));
    }
    return out;
  }

  /**
   * Calls {@code traced} and {@code eager} on the same arguments, twice, and compares them bitwise;
   * except Softmax, whose eager kernel and the traced function's differ in the last bit of some
   * elements (1 ulp, measured): its outputs are compared within 2 ulps.
   */
  private static void assertSameResults(String what, MapFunction traced, MapFunction eager, Map<String, ?> args) {
    for (int round = 0; round < 2; round++) {
      try (Outputs t = traced.call(args); Outputs e = eager.call(args)) {
        Map<String, String> expected = fingerprint(t);
        Map<String, String> actual = fingerprint(e);
        if (expected.containsKey("softmax")) {
          assertWithinUlps(t.get("softmax", TFloat32.class), e.get("softmax", TFloat32.class), 2, what);
          expected.remove("softmax");
          actual.remove("softmax");
        }
        assertEquals(expected, actual, what);
      }
    }
    assertEquals(0, eager.traceCount(), what + ": nothing is traced in eager mode");
    assertEquals(0, eager.statistics().misses(), what);
  }

  private static void assertWithinUlps(TFloat32 expected, TFloat32 actual, int ulps, String what) {
    assertEquals(expected.shape(), actual.shape(), what);
    float[] a = new float[(int) expected.size()];
    float[] b = new float[a.length];
    expected.asRawTensor().data().asFloats().read(a);
    actual.asRawTensor().data().asFloats().read(b);
    for (int i = 0; i < a.length; i++) {
      int d = Math.abs(Float.floatToIntBits(a[i]) - Float.floatToIntBits(b[i]));
      assertTrue(d <= ulps, what + ": element " + i + " differs by " + d + " ulps: " + a[i] + " vs " + b[i]);
    }
  }

  private static void assertSameResults(String what, MapBody body, Map<String, ?> args) {
    try (MapFunction traced = Function.define(body, TRACED); MapFunction eager = Function.define(body, EAGER)) {
      assertSameResults(what, traced, eager, args);
      assertTrue(traced.traceCount() > 0, what);
    }
  }

  @Test
  void theCallPathSuitesFunctionsGiveBitwiseTheTracedResults() {
    for (CallPathParityTest.Case c : CallPathParityTest.cases()) {
      Map<String, Tensor> args = c.args().get();
      try {
        assertSameResults(c.name(), c.body(), args);
      } finally {
        args.values().forEach(Tensor::close);
      }
    }
  }

  record Batch(TFloat32 features, TInt64 labels, int size) {}

  @Test
  void listsMapsNestsRecordsJavaValuesDefaultsAndCaptures() {
    try (TFloat32 x = TFloat32.vectorOf(1f, -2f, 3f);
        TFloat32 a = TFloat32.vectorOf(0.5f, 0.25f, 2f);
        TFloat32 b = TFloat32.vectorOf(-1f, 4f, 8f);
        TInt64 labels = TInt64.vectorOf(7, 8, 9);
        TFloat32 scale = TFloat32.scalarOf(3f);
        TFloat32 offset = TFloat32.scalarOf(-0.75f);
        TFloat32 bias = TFloat32.scalarOf(10f)) {
      MapBody body = (tf, in) -> {
        Operand<TFloat32> v = in.input("x", TFloat32.class);
        List<Operand<TFloat32>> terms = in.list("terms", TFloat32.class);
        Map<String, Operand<?>> features = in.map("features");
        var nest = in.nest("nest");
        RecordInput<Batch> batch = in.record("batch", Batch.class);
        boolean training = in.javaInput("training", Boolean.class, false);
        Operand<TFloat32> w = in.input("w", TFloat32.class, bias);
        Operand<TFloat32> s = in.capture("scale", () -> scale);
        Operand<TFloat32> o = in.constCapture(offset);
        Operand<TFloat32> y = v;
        for (Operand<TFloat32> t : terms) {
          y = tf.math.add(y, t);
        }
        y = tf.math.mul(y, (Operand<TFloat32>) features.get("age"));
        y = tf.math.add(y, nest.get(1).get("k").operand(TFloat32.class));
        y = tf.math.add(y, tf.math.mul(batch.get(Batch::features), tf.constant((float) batch.value(Batch::size))));
        if (training) {
          y = tf.math.mul(y, tf.constant(0.5f));
        }
        return Map.of("y", tf.math.add(tf.math.mul(y, s), tf.math.add(o, w)),
            "labels", tf.math.add(batch.get(Batch::labels), tf.constant(1L)));
      };
      for (boolean training : new boolean[] {false, true}) {
        Map<String, Object> args = new LinkedHashMap<>(Map.of("x", x, "terms", List.of(a, b),
            "features", Map.of("age", b), "nest", List.of(Map.of("k", a), Map.of("k", b)),
            "batch", new Batch(a, labels, 4), "training", training));
        assertSameResults("training " + training, body, args);
        args.put("w", 2.5f); // a Java number, cast to the declared dtype
        args.put("terms", List.of(a));
        assertSameResults("training " + training + ", fewer terms, w given", body, args);
      }
    }
  }

  record State(Operand<TInt32> i, Operand<TFloat32> acc) {}

  @Test
  void flowRunsAsJavaWithTheTracedResults() {
    MapBody body = (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TInt32> n = in.input("n", TInt32.class);
      Operand<TBool> positive = tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f));
      Operand<TFloat32> c = Flow.cond(tf, positive, () -> tf.math.mul(x, tf.constant(10f)), () -> tf.math.neg(x));
      Map<String, Operand<?>> m = Flow.condMap(tf, positive,
          () -> Map.of("p", tf.math.square(x), "q", n), () -> Map.of("p", tf.math.abs(x), "q", tf.math.neg(n)));
      List<Operand<?>> loop = Flow.whileLoop(tf, List.of(tf.constant(0), tf.constant(1f)),
          v -> tf.math.less((Operand<TInt32>) v.get(0), n),
          v -> List.of(tf.math.add((Operand<TInt32>) v.get(0), tf.constant(1)),
              tf.math.mul((Operand<TFloat32>) v.get(1), tf.constant(1.5f))));
      State s = Flow.whileLoop(tf, new State(tf.constant(0), tf.constant(0f)), Flow.loop().maximumIterations(3),
          st -> tf.constant(true), st -> new State(tf.math.add(st.i(), tf.constant(1)), tf.math.add(st.acc(),
              tf.sum(x, tf.constant(0)))));
      Operand<TFloat32> mapped = Flow.mapFn(tf, tf.reshape(x, tf.constant(new int[] {-1, 1})),
          row -> tf.math.add(tf.math.square(row), tf.constant(1f)));
      State r = Flow.condRecord(tf, positive, () -> new State(n, x), () -> new State(tf.math.neg(n), c));
      return Map.of("c", c, "p", m.get("p"), "q", m.get("q"), "loop", loop.get(1), "acc", s.acc(), "mapped", mapped,
          "ri", r.i(), "racc", r.acc());
    };
    try (TFloat32 pos = TFloat32.vectorOf(1f, 2f, 0.5f); TFloat32 neg = TFloat32.vectorOf(-1f, -2f, 0.5f);
        TInt32 four = TInt32.scalarOf(4); TInt32 zero = TInt32.scalarOf(0)) {
      assertSameResults("then, 4 iterations", body, Map.of("x", pos, "n", four));
      assertSameResults("else, no iteration", body, Map.of("x", neg, "n", zero));
    }
  }

  @Test
  void variablesAreReadAndAssignedEagerly() {
    try (Variable<TFloat32> tracedCounter = Variable.create(TFloat32.scalarOf(0f));
        Variable<TFloat32> eagerCounter = Variable.create(TFloat32.scalarOf(0f));
        TFloat32 step = TFloat32.scalarOf(1.5f)) {
      java.util.function.Function<Variable<TFloat32>, MapBody> body = v -> (tf, in) -> {
        Operand<TFloat32> next = tf.math.add(v.read(tf), in.input("step", TFloat32.class));
        v.assign(tf, next);
        Variable<TFloat32> own = in.variable("own", TFloat32.scalarOf(100f));
        own.assign(tf, tf.math.sub(own.read(tf), next));
        return Map.of("read", v.read(tf), "own", own.read(tf));
      };
      try (MapFunction traced = Function.define(body.apply(tracedCounter), TRACED);
          MapFunction eager = Function.define(body.apply(eagerCounter), EAGER)) {
        for (int i = 0; i < 3; i++) {
          try (Outputs t = traced.call(Map.of("step", step)); Outputs e = eager.call(Map.of("step", step))) {
            assertEquals(fingerprint(t), fingerprint(e));
          }
        }
        assertEquals(4.5f, eagerCounter.value().getFloat(), 0f);
        assertEquals(tracedCounter.value().getFloat(), eagerCounter.value().getFloat(), 0f);
      }
    }
  }

  @Test
  void aVariableCreatedInTheBodyAfterTheFirstCallIsRefused() {
    try (MapFunction f = Function.define((tf, in) -> {
      Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(1f)); // a new one per call: refused after the first
      return Map.of("y", tf.math.add(v.read(tf), in.input("x", TFloat32.class)));
    }, EAGER); TFloat32 x = TFloat32.scalarOf(2f)) {
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(3f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", x)));
      assertTrue(e.getMessage().contains("runs eagerly (FunctionOptions.withRunEagerly"), e.getMessage());
      assertTrue(e.getMessage().contains("creates a variable on a call other than its first"), e.getMessage());
    }
  }

  @Test
  void theBodyRunsAtEveryCallAndSeesValues() {
    AtomicInteger runs = new AtomicInteger();
    List<Float> seen = new ArrayList<>();
    MapBody body = (tf, in) -> {
      runs.incrementAndGet();
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      seen.add(((TFloat32) x.asTensor()).getFloat()); // a value: works only eagerly
      return Map.of("y", tf.math.mul(x, tf.constant(2f)));
    };
    MapFunction f = Function.define(body, FunctionOptions.defaults().withRunEagerly(true));
    try (f; TFloat32 one = TFloat32.scalarOf(1f); TFloat32 two = TFloat32.scalarOf(2f)) {
      for (TFloat32 x : List.of(one, two, one)) {
        try (Outputs out = f.call(Map.of("x", x))) {
          assertEquals(2 * x.getFloat(), out.get("y", TFloat32.class).getFloat(), 0f);
        }
      }
      assertEquals(3, runs.get(), "the body runs at every call");
      assertEquals(List.of(1f, 2f, 1f), seen);
      assertEquals(0, f.traceCount());
      assertEquals(0, f.concreteFunctions().size());
      assertEquals(0, f.statistics().exactHits() + f.statistics().misses(), "eager calls are not counted");
    }
    try (MapFunction g = Function.define(body, TRACED); TFloat32 one = TFloat32.scalarOf(1f)) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> g.call(Map.of("x", one)));
      assertTrue(e.getMessage().contains("Graph tensors must be fetched"), "a traced body sees no values: " + e);
    }
  }

  @Test
  void theJvmWideSwitchTogglesExistingFunctions() {
    AtomicInteger runs = new AtomicInteger();
    try (MapFunction f = Function.define((tf, in) -> {
      runs.incrementAndGet();
      return Map.of("y", tf.math.square(in.input("x", TFloat32.class)));
    }); TFloat32 x = TFloat32.vectorOf(3f, -1f)) {
      f.call(Map.of("x", x)).close();
      f.call(Map.of("x", x)).close();
      assertEquals(1, runs.get(), "traced: the body runs once per signature");
      assertFalse(Function.functionsRunEagerly());
      // The guide's snippet (docs/debugging.md):
      Function.runFunctionsEagerly(true);    // bodies run op by op: breakpoints see values
      try (Outputs out = f.call(Map.of("x", x))) {
        assertEquals(9f, out.get("y", TFloat32.class).getFloat(0), 0f);
      } finally {
        Function.runFunctionsEagerly(false);
      }
      assertEquals(2, runs.get(), "eager: the body ran again");
      Function.runFunctionsEagerly(true);
      assertTrue(Function.functionsRunEagerly());
      f.call(Map.of("x", x)).close();
      assertEquals(3, runs.get());
      assertEquals(1, f.traceCount(), "nothing traced while the switch is on");
      Function.runFunctionsEagerly(false);
      f.call(Map.of("x", x)).close();
      assertEquals(3, runs.get(), "off again: the cached trace serves the call");
      assertEquals(1, f.traceCount());
    }
  }

  /** The message of the exception {@code call} throws with {@code options}. */
  private static String failure(MapBody body, FunctionOptions options, Map<String, ?> args) {
    try (MapFunction f = Function.define(body, options)) {
      return assertThrows(IllegalArgumentException.class, () -> f.call(args).close()).getMessage();
    }
  }

  @Test
  void badArgumentsGetTheTracedMessages() {
    MapBody body = (tf, in) -> Map.of("y", tf.math.add(in.input("a", TFloat32.class), in.input("b", TFloat32.class)));
    try (TFloat32 one = TFloat32.scalarOf(1f); TInt32 wrong = TInt32.scalarOf(1)) {
      List<Map<String, ?>> bad = List.of(Map.of("a", one, "b", wrong), Map.of("a", one), Map.of("a", one, "b", one,
          "c", one), Map.of("a", one, "b", "two"));
      for (Map<String, ?> args : bad) {
        String traced = failure(body, TRACED, args);
        assertEquals(traced, failure(body, EAGER, args), args.toString());
      }
      assertTrue(failure(body, EAGER, Map.of("a", one, "b", wrong)).contains("'b'"));
      MapBody handle = (tf, in) -> {
        in.input("x", TFloat32.class);
        return Map.of("h", in.variableInput("v", TFloat32.class));
      };
      try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(1f))) {
        assertEquals(failure(handle, TRACED, Map.of("x", one, "v", v)),
            failure(handle, EAGER, Map.of("x", one, "v", v)));
      }
    }
    // The function stays usable after a failed eager call.
    try (MapFunction f = Function.define(body, EAGER); TFloat32 one = TFloat32.scalarOf(1f);
        TInt32 wrong = TInt32.scalarOf(1)) {
      assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("a", one, "b", wrong)));
      try (Outputs out = f.call(Map.of("a", one, "b", one))) {
        assertEquals(2f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
    }
  }

  @Test
  void whatCannotRunEagerlyIsRefusedNamingTheOption() {
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("g", Flow.gradients(tf, tf.math.square(x), List.of(x)).get(0));
    }, EAGER); TFloat32 x = TFloat32.scalarOf(3f)) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", x)));
      assertTrue(e.getMessage().contains("withRunEagerly(true)"), e.getMessage());
    }
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", Flow.mapFn(tf, in.input("x", TFloat32.class),
        row -> row)), EAGER); TFloat32 empty = TFloat32.tensorOf(org.tensorflow.ndarray.Shape.of(0, 2))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("x", empty)));
      assertTrue(e.getMessage().startsWith("mapFn: elems is empty"), e.getMessage());
    }
  }

  @Test
  void nestedCallsAndNestedOutputsRunEagerly() {
    AtomicInteger innerRuns = new AtomicInteger();
    try (MapFunction inner = Function.define((tf, in) -> {
      innerRuns.incrementAndGet();
      return Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(3f)));
    }); TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      MapBody outer = (tf, in) -> {
        Operand<TFloat32> v = in.input("x", TFloat32.class);
        Operand<TFloat32> y = (Operand<TFloat32>) inner.apply(tf, Map.of("x", v)).get("y");
        return Map.of("z", tf.math.add(y, tf.constant(1f)));
      };
      assertSameResults("nested apply", outer, Map.of("x", x));
      Supplier<NestFunction> nested = () -> Function.defineNested((tf, in) -> {
        Operand<TFloat32> v = in.input("x", TFloat32.class);
        return Map.of("pair", List.of(tf.math.neg(v), tf.math.square(v)));
      }, EAGER);
      try (NestFunction f = nested.get()) {
        for (int i = 0; i < 2; i++) {
          try (NestOutputs out = f.call(Map.of("x", x))) {
            Map<String, List<TFloat32>> value = (Map<String, List<TFloat32>>) out.value();
            assertEquals(-2f, value.get("pair").get(0).getFloat(1), 0f);
            assertEquals(4f, value.get("pair").get(1).getFloat(1), 0f);
          }
        }
      }
    }
  }

  @Test
  void everyKindOfFunctionRunsEagerly() {
    try (UnaryFunction<TFloat32, TFloat32> unary = Function.unary(TFloat32.class,
            (tf, x) -> tf.math.mul(x, tf.constant(2f)), EAGER);
        SingleFunction single = Function.defineSingle((tf, in) -> tf.math.neg(in.input("x", TFloat32.class)), EAGER);
        ListFunction list = Function.defineList((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          return List.of(x, tf.math.square(x));
        }, EAGER);
        TFloat32 x = TFloat32.vectorOf(1f, 3f)) {
      for (int i = 0; i < 2; i++) {
        try (TFloat32 y = unary.call(x); TType n = single.call(x); ListOutputs l = list.call(x)) {
          assertEquals(6f, y.getFloat(1), 0f);
          assertEquals(-3f, ((TFloat32) n).getFloat(1), 0f);
          assertEquals(9f, ((TFloat32) l.get(1)).getFloat(1), 0f);
          assertEquals(2, l.size());
        }
      }
      assertEquals(0, unary.traceCount() + single.traceCount() + list.traceCount());
      unary.close();
      assertEquals("function 'function' is closed",
          assertThrows(IllegalStateException.class, () -> unary.call(x)).getMessage());
    }
  }

  @Test
  @Timeout(300) // before eager calls were serialized, concurrent ones could corrupt TF Java's session and spin
  void misuseIsRefusedAndTheFunctionStaysUsable() throws Exception {
    Inputs[] kept = new Inputs[1];
    try (MapFunction f = Function.define((tf, in) -> {
      kept[0] = in;
      return Map.of("y", tf.math.abs(in.input("x", TFloat32.class)));
    }, EAGER); TFloat32 x = TFloat32.scalarOf(-2f)) {
      f.call(Map.of("x", x)).close();
      IllegalStateException late = assertThrows(IllegalStateException.class, () -> kept[0].input("z", TFloat32.class));
      assertTrue(late.getMessage().contains("after its eager call ended"), late.getMessage());
      // Many threads at once: each call runs its own body.
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<Float>> results = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
          float v = -i;
          results.add(pool.submit(() -> {
            try (TFloat32 in = TFloat32.scalarOf(v); Outputs out = f.call(Map.of("x", in))) {
              return out.get("y", TFloat32.class).getFloat();
            }
          }));
        }
        for (int i = 0; i < 400; i++) {
          assertEquals(i, results.get(i).get(), 0f);
        }
      } finally {
        pool.shutdownNow();
      }
    }
    // A body that applies itself with the same arguments never ends: stopped, the JVM intact.
    MapFunction[] self = new MapFunction[1];
    try (MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", (Operand<TFloat32>) self[0].apply(tf, Map.of("x", x)).get("y"));
    }, EAGER); TFloat32 x = TFloat32.scalarOf(1f)) {
      self[0] = f;
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("x", x)));
      assertTrue(e.getMessage().contains("runs eagerly") || e.getMessage().contains("stack"), e.getMessage());
    }
  }
}
