package dev.polyfn;

import org.tensorflow.types.family.TType;

/**
 * Entry point: defines polymorphic functions, Polyfn's counterpart of Python's {@code
 * tf.function}.
 *
 * <pre>{@code
 * try (MapFunction addTwo = Function.define((tf, in) -> {
 *       Operand<TFloat32> x = in.input("x", TFloat32.class);
 *       return Map.of("y", tf.math.add(x, tf.constant(2f)));
 *     });
 *     TFloat32 x = TFloat32.scalarOf(1f);
 *     Outputs out = addTwo.call(Map.of("x", x))) {
 *   float y = out.get("y", TFloat32.class).getFloat();   // 3.0
 * }
 * }</pre>
 *
 * <p>The body is traced into a real TensorFlow function once per input signature, cached, and
 * executed natively by TensorFlow's runtime on later calls. The output form picks the class:
 * named outputs ({@link #define}), a list ({@link #defineList}), one tensor ({@link
 * #defineSingle}), or one typed tensor to one typed tensor ({@link #unary}).
 */
public final class Function {
  private Function() {}

  /** A function with named outputs. */
  public static MapFunction define(MapBody body) {
    return define(body, FunctionOptions.defaults());
  }

  /** A function with named outputs and options. */
  public static MapFunction define(MapBody body, FunctionOptions options) {
    return new MapFunction(body, options);
  }

  /** A function whose outputs are a list. */
  public static ListFunction defineList(ListBody body) {
    return defineList(body, FunctionOptions.defaults());
  }

  /** A function whose outputs are a list, with options. */
  public static ListFunction defineList(ListBody body, FunctionOptions options) {
    return new ListFunction(body, options);
  }

  /** A function with one output. */
  public static SingleFunction defineSingle(SingleBody body) {
    return defineSingle(body, FunctionOptions.defaults());
  }

  /** A function with one output, with options. */
  public static SingleFunction defineSingle(SingleBody body, FunctionOptions options) {
    return new SingleFunction(body, options);
  }

  /** A function whose outputs are a nest of lists, maps and records of tensors. */
  public static NestFunction defineNested(NestBody body) {
    return defineNested(body, FunctionOptions.defaults());
  }

  /** A function whose outputs are a nest, with options. */
  public static NestFunction defineNested(NestBody body, FunctionOptions options) {
    return new NestFunction(body, options);
  }

  /**
   * A type-safe function of one tensor {@code x} of {@code inputType} (a concrete type or a family)
   * to one tensor: {@code call(I)} returns {@code O} without casts.
   */
  public static <I extends TType, O extends TType> UnaryFunction<I, O> unary(Class<I> inputType, UnaryBody<I, O> body) {
    return unary(inputType, body, FunctionOptions.defaults());
  }

  /** A type-safe unary function, with options. */
  public static <I extends TType, O extends TType> UnaryFunction<I, O> unary(
      Class<I> inputType, UnaryBody<I, O> body, FunctionOptions options) {
    return new UnaryFunction<>(inputType, body, options);
  }
}
