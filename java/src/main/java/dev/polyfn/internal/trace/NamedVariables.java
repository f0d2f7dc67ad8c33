package dev.polyfn.internal.trace;

import dev.polyfn.Variable;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A function's variables by the name its body created them with ({@code in.variable(name, ...)}),
 * so that later traces get the same variable, and those a SavedModel restored under their name,
 * so that a function loaded with its body traces new signatures on them.
 */
public final class NamedVariables {
  private final Map<String, Variable<?>> byName = new ConcurrentHashMap<>();
  /** The names restored from a SavedModel, not created by this body: checked against its declaration. */
  private final Set<String> restored = ConcurrentHashMap.newKeySet();

  Variable<?> get(String name) {
    return byName.get(name);
  }

  void put(String name, Variable<?> v) {
    byName.put(name, v);
  }

  /** Names a variable restored from a SavedModel as the body's {@code in.variable(name, ...)}. */
  public void putRestored(String name, Variable<?> v) {
    restored.add(name);
    byName.put(name, v);
  }

  boolean isRestored(String name) {
    return restored.contains(name);
  }

  /** The name the body created {@code v} by, or null. */
  public String nameOf(Variable<?> v) {
    for (Map.Entry<String, Variable<?>> e : byName.entrySet()) {
      if (e.getValue() == v) {
        return e.getKey();
      }
    }
    return null;
  }
}
