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
    private final String factoryClass;
    private volatile MapFunction function;

    Slot(String factoryClass) {
      this.factoryClass = factoryClass;
    }

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

  static MapFunction get(String name, FunctionFactory factory) {
    Slot slot = SLOTS.computeIfAbsent(name, n -> new Slot(factory.getClass().getName()));
    if (!slot.factoryClass.equals(factory.getClass().getName())) {
      throw new IllegalStateException("two scoring jobs name different functions '" + name + "' ("
          + slot.factoryClass + " and " + factory.getClass().getName() + "); give each its own name");
    }
    return slot.get(name, factory);
  }
}
