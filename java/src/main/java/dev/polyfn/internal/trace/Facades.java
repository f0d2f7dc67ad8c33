package dev.polyfn.internal.trace;

import dev.polyfn.FunctionOptions;

/**
 * How the machinery makes and opens the public function classes without naming them: the API
 * passes its implementation (e.g. to {@code SavedModelLoader.load}), so code that creates
 * functions (loading a SavedModel) returns the public object while working on its {@link
 * FunctionCore}.
 *
 * @param <F> the public function type
 */
public interface Facades<F> {
  /**
   * A new function of {@code kind} ({@code "map"}, {@code "list"}, {@code "single"}, {@code
   * "nest"} or {@code "unary"} over {@code unaryInput}) with {@code body}, of the body interface of that kind.
   */
  F define(String kind, Object body, Class<?> unaryInput, FunctionOptions options);

  /** The core of a function made by {@link #define}. */
  FunctionCore core(F function);
}
