package dev.polyfn.internal.saved;

import dev.polyfn.internal.structure.CompositeRegistry;
import dev.polyfn.internal.structure.OutputStructure;
import java.util.List;
import java.util.Map;

/**
 * Checks at load that every composite type a saved function takes or returns is registered in
 * this JVM. A saved type names its composite types only (their code is the saving JVM's), and an
 * unregistered one would load and then fail every call (its values read as records or refused):
 * the load fails instead, naming the type and how to register it.
 */
final class SavedComposites {
  private SavedComposites() {}

  /** Throws IllegalArgumentException when concrete function {@code c} uses a composite type not registered here. */
  static void check(SavedFunctionMetadata.Concrete c, String kind) {
    String missing = unregistered(Json.parse(c.traced()));
    if (missing == null && kind.equals("nest")) {
      for (String out : c.outputs()) {
        // An output path ends with "#<type name>:<component index>" at a composite leaf (a map
        // key, quoted, ends with "']").
        int at = out.startsWith(OutputStructure.ROOT) ? out.lastIndexOf('#') : -1;
        int colon = out.lastIndexOf(':');
        String name = at < 0 || colon < at + 2 ? null : out.substring(at + 1, colon);
        if (name != null && out.substring(colon + 1).matches("[0-9]+") && name.indexOf('\'') < 0
            && name.indexOf(']') < 0 && CompositeRegistry.named(name) == null) {
          missing = name;
          break;
        }
      }
    }
    if (missing != null) {
      throw new IllegalArgumentException("it uses composite type '" + missing
          + "', which is not registered in this JVM: register it with Composites.register(...) before Function.load"
          + " (the type's code is not saved, its name only)");
    }
  }

  /** The name of the first composite type in a parsed type document that is not registered, or null. */
  private static String unregistered(Object node) {
    if (node instanceof Map<?, ?> m) {
      if ("composite".equals(m.get("kind")) && m.get("name") instanceof String name && CompositeRegistry.named(name) == null) {
        return name;
      }
      for (Object v : m.values()) {
        String found = unregistered(v);
        if (found != null) {
          return found;
        }
      }
    } else if (node instanceof List<?> l) {
      for (Object v : l) {
        String found = unregistered(v);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }
}
