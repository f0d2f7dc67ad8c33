package dev.polyfn.internal.structure;

import dev.polyfn.CompositeType;
import dev.polyfn.Nest;
import dev.polyfn.internal.trace.Traced;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;

/**
 * Nested outputs: a body's returned nest flattened into leaf operands named by their paths, and
 * the nest rebuilt from those names around each call's tensors.
 *
 * <p>The names alone describe the structure ({@code $}, then per level {@code [i]}, {@code ['key']}
 * or {@code <record class>.component}), so a concrete function restored from a trace cache,
 * which keeps only its output names, rebuilds the same nest. A template is parsed once per
 * concrete function and reused by every call.
 */
public final class OutputStructure {
  private OutputStructure() {}

  public static final String ROOT = "$";

  /** Flattens {@code out} into {@code names} and {@code operands}, failing with the element's path. */
  public static Traced flatten(String function, Object out) {
    List<String> names = new ArrayList<>();
    List<Operand<?>> operands = new ArrayList<>();
    flatten(function, out, new StringBuilder(ROOT), names, operands, 0);
    return new Traced(names.toArray(new String[0]), operands.toArray(new Operand<?>[0]));
  }

  private static void flatten(String function, Object v, StringBuilder path, List<String> names,
      List<Operand<?>> operands, int depth) {
    int mark = path.length();
    if (depth > Nests.MAX_DEPTH) {
      throw bad(function, path, "is nested deeper than " + Nests.MAX_DEPTH + " levels");
    }
    CompositeType<?, ?> composite = v == null ? null : CompositeRegistry.forView(v.getClass());
    if (v instanceof Operand) {
      names.add(path.toString());
      operands.add((Operand<?>) v);
    } else if (composite != null) {
      // Before records: a view class may well be a record (SparseOperand is).
      @SuppressWarnings("unchecked")
      List<Operand<?>> parts = CompositeContract.components((CompositeType<?, Object>) composite, v);
      for (int i = 0; i < parts.size(); i++) {
        names.add(path + "#" + composite.name() + ":" + i);
        operands.add(parts.get(i));
      }
    } else if (v instanceof Nest) {
      flatten(function, ((Nest) v).unwrap(), path, names, operands, depth);
    } else if (v instanceof List) {
      List<?> list = (List<?>) v;
      if (list.isEmpty()) {
        throw bad(function, path, "is an empty list: every list, map and record of the outputs must hold a tensor");
      }
      for (int i = 0; i < list.size(); i++) {
        flatten(function, list.get(i), path.append('[').append(i).append(']'), names, operands, depth + 1);
        path.setLength(mark);
      }
    } else if (v instanceof Map) {
      Map<?, ?> map = (Map<?, ?>) v;
      if (map.isEmpty()) {
        throw bad(function, path, "is an empty map: every list, map and record of the outputs must hold a tensor");
      }
      String[] keys;
      try {
        keys = Nests.sortedKeys(map);
      } catch (Nests.PathError e) {
        throw bad(function, path, "has a key that is not a string");
      }
      for (String k : keys) {
        flatten(function, map.get(k), path.append("['").append(escape(k)).append("']"), names, operands, depth + 1);
        path.setLength(mark);
      }
    } else if (v instanceof Record) {
      Records.Info info = Records.of(v.getClass());
      if (info.size() == 0) {
        throw bad(function, path, "is a record without components: every record of the outputs must hold a tensor");
      }
      for (int i = 0; i < info.size(); i++) {
        Object c = info.get(v, i);
        if (c instanceof Operand && !info.types()[i].isAssignableFrom(((Operand<?>) c).type())) {
          // The caller gets a tensor in this component: its declared type must accept one.
          throw bad(function, path, "is a " + info.type().getSimpleName() + " whose component '" + info.names()[i]
              + "' is declared " + info.types()[i].getSimpleName() + ", which cannot hold the output tensor: "
              + "make the record generic in its leaves (record Heads<T>(T logits, T probs))");
        }
        path.append('<').append(info.type().getName()).append(">.").append(info.names()[i]);
        flatten(function, c, path, names, operands, depth + 1);
        path.setLength(mark);
      }
    } else {
      throw bad(function, path, "is " + (v == null ? "null" : "a " + v.getClass().getName())
          + ": outputs are operands of the traced graph, in lists, maps and records");
    }
  }

  private static IllegalArgumentException bad(String function, CharSequence path, String what) {
    return new IllegalArgumentException("output " + path + " of '" + function + "' " + what);
  }

  /** A map key as output paths write it between {@code ['} and {@code ']}. */
  public static String escape(String key) {
    return key.replace("\\", "\\\\").replace("'", "\\'");
  }

  /** A parsed output structure; {@link #build} puts a call's leaves in it. */
  public abstract static class Template {
    public abstract Object build(Object[] leaves, boolean graph);
  }

  private static final class Leaf extends Template {
    final int index;

    Leaf(int index) {
      this.index = index;
    }

    @Override
    public Object build(Object[] leaves, boolean graph) {
      return leaves[index];
    }
  }

  private static final class ListNode extends Template {
    final List<Template> elements = new ArrayList<>();

    @Override
    public Object build(Object[] leaves, boolean graph) {
      Object[] out = new Object[elements.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = elements.get(i).build(leaves, graph);
      }
      return Collections.unmodifiableList(java.util.Arrays.asList(out));
    }
  }

  private static final class MapNode extends Template {
    final Map<String, Template> entries = new LinkedHashMap<>();

    @Override
    public Object build(Object[] leaves, boolean graph) {
      Map<String, Object> out = new LinkedHashMap<>();
      entries.forEach((k, t) -> out.put(k, t.build(leaves, graph)));
      return Collections.unmodifiableMap(out);
    }
  }

  private static final class CompositeNode extends Template {
    final CompositeType<?, ?> type;
    final List<Integer> leaves = new ArrayList<>();

    CompositeNode(CompositeType<?, ?> type) {
      this.type = type;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Object build(Object[] values, boolean graph) {
      if (graph) {
        List<Operand<?>> operands = new ArrayList<>();
        leaves.forEach(i -> operands.add((Operand<?>) values[i]));
        return CompositeContract.view((CompositeType<Object, ?>) type, null, operands);
      }
      List<Tensor> tensors = new ArrayList<>();
      leaves.forEach(i -> tensors.add((Tensor) values[i]));
      return CompositeContract.fromComponents((CompositeType<Object, ?>) type, tensors);
    }
  }

  private static final class RecordNode extends Template {
    final Records.Info info;
    final Template[] components;

    RecordNode(Records.Info info) {
      this.info = info;
      this.components = new Template[info.size()];
    }

    @Override
    public Object build(Object[] leaves, boolean graph) {
      Object[] values = new Object[components.length];
      for (int i = 0; i < values.length; i++) {
        values[i] = components[i].build(leaves, graph);
      }
      return info.make(values);
    }
  }

  /**
   * The template of output {@code names}, record classes resolved with {@code loader}. Throws
   * IllegalStateException for names that are not output paths (a function that is not nested).
   */
  public static Template parse(String[] names, ClassLoader loader) {
    Template root = null;
    for (int leaf = 0; leaf < names.length; leaf++) {
      String n = names[leaf];
      if (!n.startsWith(ROOT)) {
        throw new IllegalStateException("output name '" + n + "' is not an output path");
      }
      root = insert(root, n, ROOT.length(), leaf, loader);
    }
    if (root == null) {
      throw new IllegalStateException("a nested function has no outputs");
    }
    return root;
  }

  /** Inserts leaf {@code leaf} at the path {@code n[at..]} below {@code node} (null: not yet made). */
  private static Template insert(Template node, String n, int at, int leaf, ClassLoader loader) {
    if (at == n.length()) {
      return new Leaf(leaf);
    }
    char c = n.charAt(at);
    if (c == '[' && n.charAt(at + 1) == '\'') {
      StringBuilder key = new StringBuilder();
      int i = at + 2;
      for (; n.charAt(i) != '\''; i++) {
        key.append(n.charAt(i) == '\\' ? n.charAt(++i) : n.charAt(i));
      }
      MapNode m = node == null ? new MapNode() : (MapNode) node;
      m.entries.put(key.toString(), insert(m.entries.get(key.toString()), n, i + 2, leaf, loader));
      return m;
    }
    if (c == '[') {
      int close = n.indexOf(']', at);
      int index = Integer.parseInt(n.substring(at + 1, close));
      ListNode l = node == null ? new ListNode() : (ListNode) node;
      if (index == l.elements.size()) {
        l.elements.add(null);
      }
      l.elements.set(index, insert(l.elements.get(index), n, close + 1, leaf, loader));
      return l;
    }
    if (c == '#') {
      int colon = n.lastIndexOf(':');
      String name = n.substring(at + 1, colon);
      CompositeNode cn = (CompositeNode) node;
      if (cn == null) {
        CompositeType<?, ?> type = CompositeRegistry.named(name);
        if (type == null) {
          throw new IllegalStateException("output composite type '" + name + "' is not registered");
        }
        cn = new CompositeNode(type);
      }
      cn.leaves.add(leaf);
      return cn;
    }
    if (c == '<') {
      int close = n.indexOf(">.", at);
      String className = n.substring(at + 1, close);
      int end = close + 2;
      while (end < n.length() && n.charAt(end) != '[' && n.charAt(end) != '<') {
        end++;
      }
      String component = n.substring(close + 2, end);
      RecordNode r = (RecordNode) node;
      if (r == null) {
        try {
          r = new RecordNode(Records.of(Class.forName(className, false, loader)));
        } catch (ClassNotFoundException e) {
          throw new IllegalStateException("output record class " + className + " is not visible to the function", e);
        }
      }
      int i = java.util.Arrays.asList(r.info.names()).indexOf(component);
      r.components[i] = insert(r.components[i], n, end, leaf, loader);
      return r;
    }
    throw new IllegalStateException("output name '" + n + "' is not an output path");
  }
}
