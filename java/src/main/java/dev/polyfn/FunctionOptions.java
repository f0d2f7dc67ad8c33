package dev.polyfn;

import java.util.Objects;

/**
 * Options of a polymorphic function; immutable, each {@code with...} returns a copy.
 *
 * <pre>{@code
 * MapFunction f = Function.define(body, FunctionOptions.defaults()
 *     .withName("scale")
 *     .withReduceRetracing(true)        // shapes that vary share generic traces
 *     .withMaxConcreteFunctions(64));   // evict the least recently used beyond 64
 * }</pre>
 */
public final class FunctionOptions {
  private static final FunctionOptions DEFAULTS = new FunctionOptions("function", false, 0);

  private final String name;
  private final boolean reduceRetracing;
  private final int maxConcreteFunctions;

  private FunctionOptions(String name, boolean reduceRetracing, int maxConcreteFunctions) {
    this.name = name;
    this.reduceRetracing = reduceRetracing;
    this.maxConcreteFunctions = maxConcreteFunctions;
  }

  /** The defaults: name {@code "function"}, exact retracing, an unbounded cache. */
  public static FunctionOptions defaults() {
    return DEFAULTS;
  }

  /**
   * A name for the function, shown as given in errors, logs and {@code toString}: any text with a
   * non-blank character ({@code "ü-名前"}, {@code "_private"}). TensorFlow's names for its
   * concrete functions and graph ops are derived from it, keeping only the characters TensorFlow
   * allows.
   *
   * @throws IllegalArgumentException if {@code name} is empty or blank
   */
  public FunctionOptions withName(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("a function name must not be empty or blank (got \"" + name
          + "\"); any other text is allowed");
    }
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions);
  }

  /**
   * tf.function's {@code reduce_retracing}: when a call matches no cached signature, trace the
   * most specific common supertype of the call and the cached signatures instead of the call's
   * exact types. Calls with shapes {@code [2]}, {@code [3]}, {@code [4]}, {@code [2, 2]} then
   * trace {@code [2]}, {@code [-1]} (which serves {@code [4]}) and an unknown rank: 3 traces.
   */
  public FunctionOptions withReduceRetracing(boolean reduceRetracing) {
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions);
  }

  /**
   * Bounds the cache: beyond {@code max} concrete functions the least recently used is evicted
   * and its TensorFlow function released (a later call of its signature traces again).
   *
   * @param max at least 1
   */
  public FunctionOptions withMaxConcreteFunctions(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max concrete functions must be at least 1, got " + max);
    }
    return new FunctionOptions(name, reduceRetracing, max);
  }

  /** The function's name, shown in logs, errors and traced function names. */
  public String name() {
    return name;
  }

  /** Whether a miss traces a generalized signature; see {@link #withReduceRetracing}. */
  public boolean reduceRetracing() {
    return reduceRetracing;
  }

  /** The cache bound, 0 when unbounded. */
  public int maxConcreteFunctions() {
    return maxConcreteFunctions;
  }

  @Override
  public String toString() {
    return "FunctionOptions(name=" + name + ", reduceRetracing=" + reduceRetracing
        + ", maxConcreteFunctions=" + (maxConcreteFunctions == 0 ? "unbounded" : maxConcreteFunctions) + ")";
  }
}
