package dev.polyfn;

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
 * <p>The body is traced into a real TensorFlow function once per input signature (dtype and shape
 * of each tensor), cached, and executed natively by TensorFlow's runtime on later calls.
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
}
