package dev.polyfn;

import dev.polyfn.internal.trace.Traced;
import java.util.Map;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * A polymorphic function with one output, made by {@link Function#defineSingle(SingleBody)}.
 *
 * <pre>{@code
 * try (SingleFunction norm = Function.defineSingle((tf, in) -> {
 *       Operand<TFloat32> v = in.input("v", TFloat32.class, Shape.of(-1));
 *       return tf.math.sqrt(tf.sum(tf.math.square(v), tf.constant(0)));
 *     });
 *     TFloat32 v = TFloat32.vectorOf(3f, 4f);
 *     TType n = norm.call(v)) {          // a single parameter takes a bare tensor
 *   ((TFloat32) n).getFloat();           // 5.0
 * }
 * }</pre>
 */
public final class SingleFunction extends PolymorphicFunction implements CallableFunction<TType> {
  private final SingleBody body;

  SingleFunction(SingleBody body, FunctionOptions options) {
    super(options, "single", null);
    this.body = Objects.requireNonNull(body, "body");
    traceInferred(body);
  }

  @Override
  Traced trace(Ops tf, Inputs inputs) {
    Operand<?> out = body.define(tf, inputs);
    if (out == null) {
      throw new IllegalStateException("the body of '" + name() + "' returned null instead of an output");
    }
    return new Traced(new String[] {"output"}, new Operand<?>[] {out});
  }

  /** Calls the function; the caller closes the returned tensor. See {@link MapFunction#call(Map)}. */
  public TType call(Map<String, ?> args) {
    return invoke(args).tensors()[0];
  }

  /** Calls a function of one parameter with its argument. */
  public TType call(Tensor x) {
    return invokeSingle(x).tensors()[0];
  }

  /** Adds a call of this function to the graph of {@code tf}; see {@link MapFunction#apply}. */
  public Operand<?> apply(Ops tf, Map<String, ?> args) {
    return applyInGraph(tf, args).operands()[0];
  }
}
