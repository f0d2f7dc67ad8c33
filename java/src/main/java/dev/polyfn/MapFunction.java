package dev.polyfn;

import dev.polyfn.internal.trace.Result;
import dev.polyfn.internal.trace.Traced;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;

/**
 * A polymorphic function with named outputs, made by {@link Function#define(MapBody)}.
 *
 * <p>Each call is typed (the dtype and shape of every tensor, the length of every list, the keys
 * of every map, the value of every Java argument); the first call of a new type traces the body
 * into a TensorFlow function, which is cached; calls of a known type run that function natively in
 * one JNI call, with no copy of tensor data.
 *
 * <pre>{@code
 * try (MapFunction f = Function.define((tf, in) ->
 *         Map.of("y", tf.math.mul(in.input("x", TFloat32.class), tf.constant(3f))));
 *     TFloat32 x = TFloat32.vectorOf(1, 2);
 *     Outputs out = f.call(Map.of("x", x))) {
 *   out.get("y", TFloat32.class);  // [3.0, 6.0]
 *   f.traceCount();                // 1
 * }
 * }</pre>
 */
public final class MapFunction extends PolymorphicFunction implements CallableFunction<Outputs> {
  private final MapBody body;

  MapFunction(MapBody body, FunctionOptions options) {
    super(options, "map", null);
    this.body = Objects.requireNonNull(body, "body");
    traceInferred(body);
  }

  @Override
  Traced trace(Ops tf, Inputs inputs) {
    Map<String, Operand<?>> outs = body.define(tf, inputs);
    if (outs == null) {
      throw new IllegalStateException("the body of '" + name() + "' returned null instead of a map of outputs");
    }
    String[] names = new String[outs.size()];
    Operand<?>[] operands = new Operand<?>[outs.size()];
    int i = 0;
    for (Map.Entry<String, Operand<?>> e : outs.entrySet()) {
      names[i] = e.getKey();
      operands[i++] = e.getValue();
    }
    return new Traced(names, operands);
  }

  /**
   * Calls the function.
   *
   * @param args an argument for every parameter, by name (optional parameters may be omitted)
   * @return the outputs, which the caller must close
   * @throws IllegalArgumentException for a missing, unexpected, null or mistyped argument (the
   *     message names the parameter and what was expected); the function stays usable
   * @throws IllegalStateException if the function is closed
   */
  public Outputs call(Map<String, ?> args) {
    Result r = invoke(args);
    return new Outputs(r.names(), r.tensors());
  }

  /** Calls a function of one parameter with its argument. */
  public Outputs call(Tensor x) {
    Result r = invokeSingle(x);
    return new Outputs(r.names(), r.tensors());
  }

  /**
   * Adds a call of this function to the graph of {@code tf} (a nested call inside another
   * function's body, or a call from your own {@code Graph}), dispatched on the operands' specs.
   *
   * <pre>{@code
   * MapFunction outer = Function.define((tf, in) -> {
   *   Operand<TFloat32> x = in.input("x", TFloat32.class);
   *   Operand<?> y = inner.apply(tf, Map.of("x", x)).get("y");
   *   return Map.of("z", tf.math.mul((Operand<TFloat32>) y, tf.constant(2f)));
   * });
   * }</pre>
   *
   * @return the outputs by name, operands of {@code tf}'s graph
   */
  public Map<String, Operand<?>> apply(Ops tf, Map<String, ?> args) {
    Traced t = applyInGraph(tf, args);
    Map<String, Operand<?>> out = new LinkedHashMap<>();
    for (int i = 0; i < t.names().length; i++) {
      out.put(t.names()[i], t.operands()[i]);
    }
    return Collections.unmodifiableMap(out);
  }
}
