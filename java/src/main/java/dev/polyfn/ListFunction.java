package dev.polyfn;

import dev.polyfn.internal.trace.Traced;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;

/**
 * A polymorphic function whose outputs are a list, made by {@link Function#defineList(ListBody)}.
 *
 * <pre>{@code
 * try (ListFunction f = Function.defineList((tf, in) -> {
 *       Operand<TFloat32> x = in.input("x", TFloat32.class);
 *       return List.of(tf.math.neg(x), tf.math.square(x));
 *     });
 *     TFloat32 x = TFloat32.scalarOf(3f);
 *     ListOutputs out = f.call(Map.of("x", x))) {
 *   out.get(1, TFloat32.class).getFloat();   // 9.0
 * }
 * }</pre>
 */
public final class ListFunction extends PolymorphicFunction implements CallableFunction<ListOutputs> {
  private final ListBody body;

  ListFunction(ListBody body, FunctionOptions options) {
    super(options, "list", null);
    this.body = Objects.requireNonNull(body, "body");
    traceInferred(body);
  }

  @Override
  Traced trace(Ops tf, Inputs inputs) {
    List<Operand<?>> outs = body.define(tf, inputs);
    if (outs == null) {
      throw new IllegalStateException("the body of '" + name() + "' returned null instead of a list of outputs");
    }
    String[] names = new String[outs.size()];
    for (int i = 0; i < names.length; i++) {
      names[i] = "output_" + i;
    }
    return new Traced(names, outs.toArray(new Operand<?>[0]));
  }

  /** Calls the function; the caller closes the returned list. See {@link MapFunction#call(Map)}. */
  public ListOutputs call(Map<String, ?> args) {
    return new ListOutputs(invoke(args).tensors());
  }

  /** Calls a function of one parameter with its argument. */
  public ListOutputs call(Tensor x) {
    return new ListOutputs(invokeSingle(x).tensors());
  }

  /** Adds a call of this function to the graph of {@code tf}; see {@link MapFunction#apply}. */
  public List<Operand<?>> apply(Ops tf, Map<String, ?> args) {
    return List.of(applyInGraph(tf, args).operands());
  }
}
