package dev.polyfn;

import java.util.Objects;

/**
 * Options of a polymorphic function; immutable, each {@code with...} returns a copy.
 *
 * <pre>{@code
 * MapFunction f = Function.define(body, FunctionOptions.defaults().withName("scale"));
 * }</pre>
 */
public final class FunctionOptions {
  private static final FunctionOptions DEFAULTS = new FunctionOptions("function");

  private final String name;

  private FunctionOptions(String name) {
    this.name = name;
  }

  /** The defaults: name {@code "function"}. */
  public static FunctionOptions defaults() {
    return DEFAULTS;
  }

  /** A name for the function, used in its concrete functions' names, errors and logs. */
  public FunctionOptions withName(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank");
    }
    return new FunctionOptions(name);
  }

  public String name() {
    return name;
  }

  @Override
  public String toString() {
    return "FunctionOptions(name=" + name + ")";
  }
}
