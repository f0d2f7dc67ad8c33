package dev.polyfn.spark;

import dev.polyfn.MapFunction;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The functions defined in this JVM, by name: each executor defines a function once (its first
 * task) and every later task and thread reuses it, so its traces are reused too. They live as
 * long as the JVM, as an executor's cached state does.
 */
final class ExecutorFunctions {
  private static final ConcurrentHashMap<String, Slot> SLOTS = new ConcurrentHashMap<>();

  private ExecutorFunctions() {}

  /** One function's slot; defining it holds only this slot's lock, never the map's. */
  private static final class Slot {
    private volatile MapFunction function;

    MapFunction get(String name, FunctionFactory factory) {
      MapFunction f = function;
      if (f != null) {
        return f;
      }
      synchronized (this) {
        if (function == null) {
          MapFunction created = factory.create();
          if (created == null) {
            throw new IllegalStateException("the factory of Polyfn function '" + name + "' returned null");
          }
          function = created;
        }
        return function;
      }
    }
  }

  /**
   * The function named {@code name} in this JVM, defined by {@code factory} on first use. The
   * name alone identifies it (a deserialized factory has no identity worth comparing): jobs that
   * score with different functions give them different names.
   */
  static MapFunction get(String name, FunctionFactory factory) {
    return SLOTS.computeIfAbsent(name, n -> new Slot()).get(name, factory);
  }
}
