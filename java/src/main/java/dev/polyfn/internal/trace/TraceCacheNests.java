package dev.polyfn.internal.trace;

import dev.polyfn.internal.JavaValues;
import dev.polyfn.internal.saved.Json;
import dev.polyfn.internal.structure.Nests;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which nest parameters ({@code in.nest}, {@code in.sparse}, {@code in.ragged}) the trace cache
 * keeps: those whose traced type holds tensors, and numbers, booleans and strings, in lists, maps
 * and Polyfn's built-in composites ({@code SparseTensor}, {@code RaggedTensor}), to any depth.
 * Such a type is made of dtypes, shapes, list lengths, map keys, the composites' names and the
 * Java values' texts (the entry holds each value's text, not the tracing JVM's interning id, and
 * the next JVM interns it again: {@link dev.polyfn.internal.saved.SavedLiterals}), which mean the
 * same in any JVM, so a restored entry dispatches exactly as the trace did.
 *
 * <p>Judged by the traced type (the document the entry holds), not by the declaration: a nest
 * parameter accepts records, yet a call that passed none is as safe to cache as a list
 * parameter's, and is cached; a call that passed one is not. Refused, wherever they are in the
 * nest:
 * <ul>
 *   <li>a Java value of a class without a text form another JVM reads back (an enum, any other
 *       object): its type is an id of the tracing JVM's interner only;
 *   <li>a record: binding a record argument needs its class, which an entry does not hold, and
 *       the record class's code is not in the cache key;
 *   <li>a composite of a type the application registered: its code (spec, view, components)
 *       shaped the graph, and the key sees the body's class only.
 * </ul>
 * The same rule refuses, on read, an entry whose nest holds any of them: the writer never
 * writes one, so such an entry was edited.
 */
final class TraceCacheNests {
  private TraceCacheNests() {}

  /**
   * Composites whose code is Polyfn's (in the key through Polyfn's version) and whose types hold
   * no Java value (no metadata). No registered type can take their names ({@code
   * CompositeRegistry.register} refuses a name in use, and these are registered first).
   */
  private static final Set<String> BUILT_IN = Set.of("SparseTensor", "RaggedTensor");

  /**
   * Why the concrete function of traced type document {@code traced} (its parameters {@code
   * params}) cannot be cached for one of its nest parameters, naming the parameter and the path
   * in it; null when every nest parameter holds only what the cache keeps. A document that is not a function
   * type with one type per parameter is a reason too.
   */
  static String whyNot(Param[] params, String traced) {
    boolean nests = false;
    for (Param p : params) {
      nests |= p.kind() == Param.Kind.NEST;
    }
    if (!nests) {
      return null; // not parsed (nor a lambda bootstrapped): a warm start without nests pays nothing here
    }
    List<?> types;
    try {
      Map<?, ?> doc = (Map<?, ?>) Json.parse(traced);
      types = (List<?>) ((Map<?, ?>) doc.get("function_type")).get("parameters");
    } catch (ClassCastException | NullPointerException | IllegalArgumentException e) {
      return "its traced type is not a function type document";
    }
    if (types == null || types.size() != params.length) {
      return "its traced type does not have one type per parameter";
    }
    for (int i = 0; i < params.length; i++) {
      Param p = params[i];
      if (p.kind() != Param.Kind.NEST) {
        continue;
      }
      Object type = types.get(i) instanceof Map<?, ?> m ? m.get("type") : null;
      String why = refused(type, p.name(), 0);
      if (why != null) {
        return "parameter '" + p.name() + "' " + why;
      }
    }
    return null;
  }

  /** What in {@code type} (found at {@code path}) the cache does not keep, or null. */
  private static String refused(Object type, String path, int depth) {
    Map<?, ?> m = type instanceof Map<?, ?> map ? map : Map.of();
    Object kind = m.get("kind");
    if (depth > 0 && "tensor_spec".equals(kind)) {
      return null;
    }
    if ("list".equals(kind) && m.get("elements") instanceof List<?> elements) {
      for (int i = 0; i < elements.size(); i++) {
        String why = refused(elements.get(i), path + Nests.index(i), depth + 1);
        if (why != null) {
          return why;
        }
      }
      return null;
    }
    if ("map".equals(kind) && m.get("entries") instanceof Map<?, ?> entries) {
      for (Map.Entry<?, ?> e : entries.entrySet()) {
        String why = refused(e.getValue(), path + Nests.key(String.valueOf(e.getKey())), depth + 1);
        if (why != null) {
          return why;
        }
      }
      return null;
    }
    String at = " at " + path;
    if ("composite".equals(kind) && m.get("components") instanceof List<?> components) {
      if (!BUILT_IN.contains(m.get("name"))) {
        return "holds a " + m.get("name") + at + ", a composite type the application registered, whose code the"
            + " cache key does not see";
      }
      if (m.get("metadata") != null) {
        return "holds a " + m.get("name") + " with metadata" + at + ", which Polyfn's own never has";
      }
      for (Object c : components) {
        if (!(c instanceof Map<?, ?> cm) || !"tensor_spec".equals(cm.get("kind"))) {
          return "holds a " + m.get("name") + at + " whose components are not tensors";
        }
      }
      return null;
    }
    if ("literal".equals(kind)) {
      // Its text is checked when the entry is written (forSave) and interned again when read (forLoad).
      return m.get("class") instanceof String c && JavaValues.declaredClass(c) != null ? null
          : "holds a Java value (" + m.get("class") + ")" + at + " of a class without a text form another JVM"
          + " reads back (the cache keeps numbers, booleans and strings): pass the value as a tensor";
    }
    if ("record".equals(kind)) {
      return "holds a record (" + m.get("class") + ")" + at + ", whose class an entry does not keep";
    }
    return depth == 0 ? "is a nest parameter whose traced type is " + describe(kind) + ", not a list, map or composite"
        : "holds " + describe(kind) + at + ", which the trace cache does not keep";
  }

  private static String describe(Object kind) {
    return kind instanceof String s ? "a " + s : "no type";
  }
}
