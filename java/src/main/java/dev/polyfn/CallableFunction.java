package dev.polyfn;

import java.util.Map;
import org.tensorflow.Tensor;

/**
 * A function called with its arguments by name, or with its one argument alone, returning outputs
 * the caller closes: {@link MapFunction} ({@link Outputs}), {@link ListFunction} ({@link
 * ListOutputs}), {@link SingleFunction} (one tensor) and {@link NestFunction} ({@link
 * NestOutputs}). Code that calls any kind of function is written once against it, as Polyfn's
 * Kotlin extensions are.
 *
 * <pre>{@code
 * static <O extends AutoCloseable> void callTwice(CallableFunction<O> f, Tensor x) throws Exception {
 *   try (O first = f.call(x); O second = f.call(Map.of("x", x))) {
 *     // ...
 *   }
 * }
 * }</pre>
 *
 * @param <O> what a call returns
 */
public interface CallableFunction<O extends AutoCloseable> {
  /**
   * Calls the function.
   *
   * @param args an argument for every parameter, by name (optional parameters may be omitted)
   * @return the outputs, which the caller must close
   * @throws IllegalArgumentException for a missing, unexpected, null or mistyped argument (the
   *     message names the parameter and what was expected); the function stays usable
   * @throws IllegalStateException if the function is closed
   */
  O call(Map<String, ?> args);

  /**
   * Calls a function of one parameter with its argument.
   *
   * @param x the argument of the function's one parameter
   * @return the outputs, which the caller must close
   * @throws IllegalArgumentException if the function has more than one parameter, or for a
   *     mistyped argument
   */
  O call(Tensor x);
}
