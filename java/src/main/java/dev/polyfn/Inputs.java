package dev.polyfn;

import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TType;

/**
 * Declares a function's parameters while its body is traced, and returns their placeholders.
 *
 * <p>The first trace fixes the parameter list. Each call is then typed against it: a tensor's dtype
 * and shape are part of the call's signature, and a signature seen before reuses its concrete
 * function.
 *
 * <pre>{@code
 * Operand<TFloat32> x = in.input("x", TFloat32.class);                    // any shape, exact trace
 * Operand<TFloating> v = in.input("v", TFloating.class, Shape.of(-1));    // any float dtype, any length
 * Operand<TInt32> m = in.input("m", TInt32.class, Shape.unknown());       // any rank, one trace
 * }</pre>
 */
public interface Inputs {
  /**
   * A tensor parameter of any shape. Each new shape traces a new concrete function.
   *
   * @param name the parameter's name, the key of its argument in {@code call}
   * @param type a concrete tensor class ({@code TFloat32}) or a family ({@code TFloating},
   *     {@code TNumber}, {@code TType}) that accepts every member dtype, tracing once per dtype
   */
  <T extends TType> Operand<T> input(String name, Class<T> type);

  /**
   * A tensor parameter constrained to {@code shape}: {@code -1} is any size for a dim, {@link
   * Shape#unknown()} any rank. Calls that fit share one trace (traced with this shape); calls that
   * do not fit fail with {@link IllegalArgumentException}.
   */
  <T extends TType> Operand<T> input(String name, Class<T> type, Shape shape);
}
