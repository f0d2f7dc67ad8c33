package dev.polyfn;

import dev.polyfn.internal.structure.OutputStructure;
import dev.polyfn.internal.trace.Result;
import dev.polyfn.internal.trace.Traced;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;

/**
 * A polymorphic function whose outputs are a nest (lists, maps and records of tensors), made by
 * {@link Function#defineNested(NestBody)}. A call returns the same nest with a tensor for each
 * operand the body returned, closeable as one:
 *
 * <pre>{@code
 * try (NestFunction f = Function.defineNested((tf, in) -> {
 *       Operand<TFloat32> x = in.input("x", TFloat32.class);
 *       return Map.of("pair", List.of(tf.math.neg(x), tf.math.square(x)));
 *     });
 *     NestOutputs out = f.call(Map.of("x", x))) {
 *   Map<String, List<TFloat32>> v = out.value();   // {pair=[-x, x²]}
 * }
 * }</pre>
 */
public final class NestFunction extends PolymorphicFunction implements CallableFunction<NestOutputs> {
  private final NestBody body;
  /**
   * The output template of each concrete function, by its output names array (one array per
   * concrete function, compared by identity), parsed on its first call.
   */
  private final Map<String[], OutputStructure.Template> templates = new ConcurrentHashMap<>();

  NestFunction(NestBody body, FunctionOptions options) {
    super(options, "nest", null);
    this.body = Objects.requireNonNull(body, "body");
    traceInferred(body);
  }

  @Override
  Traced trace(Ops tf, Inputs inputs) {
    Object outs = body.define(tf, inputs);
    if (outs == null) {
      throw new IllegalStateException("the body of '" + name() + "' returned null instead of its outputs");
    }
    return OutputStructure.flatten(name(), outs);
  }

  private OutputStructure.Template template(String[] names) {
    OutputStructure.Template t = templates.get(names);
    if (t == null) {
      t = OutputStructure.parse(names, body.getClass().getClassLoader());
      templates.put(names, t);
    }
    return t;
  }

  /** Calls the function; the caller closes the returned outputs. See {@link MapFunction#call(Map)}. */
  public NestOutputs call(Map<String, ?> args) {
    return outputs(invoke(args));
  }

  /** Calls a function of one parameter with its argument. */
  public NestOutputs call(Tensor x) {
    return outputs(invokeSingle(x));
  }

  private NestOutputs outputs(Result r) {
    try {
      return new NestOutputs(template(r.names()).build(r.tensors(), false), r.tensors());
    } catch (RuntimeException e) {
      // The caller never sees the tensors: close them here.
      for (Tensor t : r.tensors()) {
        t.close();
      }
      throw e;
    }
  }

  /**
   * Adds a call of this function to the graph of {@code tf}; returns the output nest with an
   * operand of that graph for each tensor. See {@link MapFunction#apply}.
   */
  public Object apply(Ops tf, Map<String, ?> args) {
    Traced t = applyInGraph(tf, args);
    Operand<?>[] operands = t.operands();
    return OutputStructure.parse(t.names(), body.getClass().getClassLoader()).build(operands, true);
  }
}
