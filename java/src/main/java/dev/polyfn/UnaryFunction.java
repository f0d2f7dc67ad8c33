package dev.polyfn;

import dev.polyfn.internal.trace.Traced;
import java.util.Map;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * A type-safe function of one tensor to one tensor, made by {@link Function#unary}: its {@code
 * call} takes an {@code I} and returns an {@code O}, no casts.
 *
 * <pre>{@code
 * try (UnaryFunction<TFloat32, TFloat32> twice = Function.unary(TFloat32.class, (tf, x) -> tf.math.mul(x, tf.constant(2f)));
 *     TFloat32 x = TFloat32.vectorOf(1f, 2f);
 *     TFloat32 y = twice.call(x)) {
 *   y.getFloat(1);   // 4.0
 * }
 * }</pre>
 *
 * The parameter is called {@code x}; like every Polyfn function it traces once per dtype (for a
 * family type) and shape.
 */
public final class UnaryFunction<I extends TType, O extends TType> extends PolymorphicFunction {
  private final Class<I> inputType;
  private final UnaryBody<I, O> body;

  UnaryFunction(Class<I> inputType, UnaryBody<I, O> body, FunctionOptions options) {
    super(options, "unary", Objects.requireNonNull(inputType, "inputType"));
    this.inputType = inputType;
    this.body = Objects.requireNonNull(body, "body");
    traceInferred(body);
  }

  @Override
  Traced trace(Ops tf, Inputs inputs) {
    Operand<O> out = body.define(tf, inputs.input("x", inputType));
    if (out == null) {
      throw new IllegalStateException("the body of '" + name() + "' returned null instead of an output");
    }
    return new Traced(new String[] {"output"}, new Operand<?>[] {out});
  }

  /** Calls the function on {@code x}; the caller closes the returned tensor. */
  @SuppressWarnings("unchecked")
  public O call(I x) {
    return (O) invokeSingle(x).tensors()[0];
  }

  /** Adds a call of this function on {@code x} to the graph of {@code tf}; see {@link MapFunction#apply}. */
  @SuppressWarnings("unchecked")
  public Operand<O> apply(Ops tf, Operand<I> x) {
    return (Operand<O>) applyInGraph(tf, Map.of("x", x)).operands()[0];
  }
}
