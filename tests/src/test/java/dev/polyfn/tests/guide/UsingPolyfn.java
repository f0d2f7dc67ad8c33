package dev.polyfn.tests.guide;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.SingleFunction;
import dev.polyfn.UnaryFunction;
import dev.polyfn.Variable;
import java.util.List;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TFloating;

/**
 * The snippets of the guide's pages on using Polyfn (docs/mental-model.md, parameters.md,
 * retracing.md, captures-and-variables.md, control-flow.md), compiled so that they cannot drift
 * (DocsTest checks that each is copied from here). GuideSnippetsTest runs them.
 */
@SuppressWarnings("unchecked")
final class UsingPolyfn {
  private UsingPolyfn() {}

  static Operand<TFloating> constrained(Ops tf, Inputs in) {
    // any float dtype, any length: one trace per dtype, not per length
    Operand<TFloating> v = in.input("v", TFloating.class, Shape.of(-1));
    // any rank: Shape.unknown()
    return v;
  }

  static MapFunction parameters(TFloat32 input, TFloat32 a, TFloat32 b, TFloat32 age) {
    MapFunction f = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      List<Operand<TFloat32>> terms = in.list("terms", TFloat32.class);
      Map<String, Operand<?>> features = in.map("features");
      boolean training = in.javaInput("training", Boolean.class, false);   // optional, default false
      Operand<TFloat32> y = x;
      for (Operand<TFloat32> t : terms) {      // Java control flow over the list's elements
        y = tf.math.add(y, t);
      }
      if (training) {                          // and over Java values: one trace per value
        y = tf.math.mul(y, tf.constant(0.5f));
      }
      return Map.of("y", y);
    });
    f.call(Map.of("x", input, "terms", List.of(a, b), "features", Map.of("age", age)));
    return f;
  }

  static MapFunction retracing(MapBody body) {
    MapFunction f = Function.define(body, FunctionOptions.defaults()
        .withName("encoder")
        .withReduceRetracing(true)          // like tf.function(reduce_retracing=True)
        .withMaxConcreteFunctions(64));     // LRU bound; evicted functions are released
    return f;
  }

  static MapFunction sideEffects(TFloat32 a, TFloat32 b) {
    MapFunction f = Function.define((tf, in) -> {
      System.out.println("tracing!");                // printed on the first call of each signature
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      return Map.of("y", tf.math.add(x, tf.constant(1f)));
    });
    f.call(Map.of("x", a)).close();   // prints "tracing!"
    f.call(Map.of("x", b)).close();   // same shape: prints nothing
    return f;
  }

  static void variables() {
    try (Variable<TFloat32> counter = Variable.create(TFloat32.scalarOf(0f));
         SingleFunction increment = Function.defineSingle((tf, in) -> {
           Operand<TFloat32> next = tf.math.add(counter.read(tf), tf.constant(1f));
           counter.assign(tf, next);      // an effect: runs at every call
           return next;
         })) {
      increment.call(Map.of()).close();
      counter.value().getFloat();         // 1.0: eager code sees the update, as does every other function
    }
  }

  static MapFunction nested(MapFunction inner) {
    MapFunction outer = Function.define((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<?> sq = inner.apply(tf, Map.of("x", x)).get("sq");
      return Map.of("y", tf.math.add((Operand<TFloat32>) sq, tf.constant(1f)));
    });
    return outer;
  }

  static UnaryFunction<TFloat32, TFloat32> controlFlow() {
    UnaryFunction<TFloat32, TFloat32> f = Function.unary(TFloat32.class, (tf, x) -> {
      Operand<TFloat32> ten = tf.constant(10f);              // read inside a branch: captured for you
      Operand<TFloat32> y = Flow.cond(tf, tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f)),
          () -> tf.math.mul(x, ten),
          () -> tf.math.neg(x));
      // Halve y until its largest element is below 1; at most 100 iterations.
      List<Operand<?>> out = Flow.whileLoop(tf, List.of(y), Flow.loop().maximumIterations(100),
          v -> tf.math.greater(tf.max((Operand<TFloat32>) v.get(0), tf.constant(0)), tf.constant(1f)),
          v -> List.of(tf.math.div((Operand<TFloat32>) v.get(0), tf.constant(2f))));
      return (Operand<TFloat32>) out.get(0);
    });
    return f;
  }

  static Operand<TFloat32> power(Ops tf, Operand<TFloat32> w, Operand<TInt32> n) {
    record State(Operand<TInt32> i, Operand<TFloat32> acc) {}   // acc = w^n, no casts
    State end = Flow.whileLoop(tf, new State(tf.constant(0), tf.constant(1f)),
        s -> tf.math.less(s.i(), n),
        s -> new State(tf.math.add(s.i(), tf.constant(1)), tf.math.mul(s.acc(), w)));
    return end.acc();
  }
}
