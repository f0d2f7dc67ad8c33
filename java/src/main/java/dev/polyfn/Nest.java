package dev.polyfn;

import dev.polyfn.internal.structure.CompositeContract;
import dev.polyfn.internal.structure.CompositeRegistry;
import dev.polyfn.internal.structure.Nests;
import dev.polyfn.internal.structure.Records;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.Tensor;
import org.tensorflow.types.family.TType;

/**
 * The body's view of a nested argument ({@link Inputs#nest}): the argument's structure, with an
 * operand (a graph placeholder) where the argument has a tensor and the value itself where it has a
 * Java value. Navigate it by index ({@link #get(int)}), by key or record component ({@link
 * #get(String)}), and take a leaf with {@link #operand(Class)} or {@link #value(Class)}:
 *
 * <pre>{@code
 * Nest xs = in.nest("xs");                                  // [{"k": x0}, {"k": x1}]
 * Operand<TFloat32> k1 = xs.get(1).get("k").operand(TFloat32.class);
 * }</pre>
 *
 * Every error names the element's path ({@code xs[1]['k']}) and what it is.
 */
public final class Nest {
  private enum Kind { OPERAND, VALUE, LIST, MAP, RECORD, COMPOSITE }

  private final Kind kind;
  private final String path;
  private final Object leaf;
  private final List<Nest> elements;
  private final Map<String, Nest> entries;
  private final Class<?> recordClass;

  private Nest(Kind kind, String path, Object leaf, List<Nest> elements, Map<String, Nest> entries, Class<?> recordClass) {
    this.kind = kind;
    this.path = path;
    this.leaf = leaf;
    this.elements = elements;
    this.entries = entries;
    this.recordClass = recordClass;
  }

  /** Where the graph inputs of a nest come from, in flatten order. {@hidden} */
  public interface Placeholders {
    /** The placeholder of the next tensor. */
    Operand<?> next();

    /**
     * The spec a composite's view is built with, once its {@code components} were taken: the
     * spec the trace is keyed under (generalized by reduce-retracing), else {@code call}, the
     * argument's own.
     */
    default CompositeSpec traced(CompositeSpec call, List<Operand<?>> components) {
      return call;
    }
  }

  /**
   * The view of argument {@code v} at {@code path}: tensors (and specs) become the next
   * placeholders, in the order {@code Nests} wrote their facts.
   *
   * {@hidden}
   */
  @SuppressWarnings("unchecked")
  public static Nest build(String path, Object v, Placeholders placeholders) {
    if ((v instanceof TType && !(v instanceof SparseTensor)) || v instanceof TensorSpec) {
      return new Nest(Kind.OPERAND, path, placeholders.next(), null, null, null);
    }
    CompositeType<Object, ?> composite = v == null ? null : (CompositeType<Object, ?>) CompositeRegistry.forValue(v.getClass());
    if (composite != null) {
      CompositeSpec spec = CompositeRegistry.spec(composite, v);
      List<Operand<?>> components = new ArrayList<>();
      for (int i = 0; i < spec.components().size(); i++) {
        components.add(placeholders.next());
      }
      spec = placeholders.traced(spec, components);
      return new Nest(Kind.COMPOSITE, path, CompositeContract.view(composite, spec, Collections.unmodifiableList(components)), null, null,
          composite.viewClass());
    }
    if (v instanceof Tensor) {
      return new Nest(Kind.OPERAND, path, placeholders.next(), null, null, null);
    }
    if (v instanceof List) {
      List<Nest> out = new ArrayList<>();
      int i = 0;
      for (Object e : (List<?>) v) {
        out.add(build(path + Nests.index(i++), e, placeholders));
      }
      return new Nest(Kind.LIST, path, null, Collections.unmodifiableList(out), null, null);
    }
    if (v instanceof Map) {
      Map<?, ?> map = (Map<?, ?>) v;
      Map<String, Nest> out = new LinkedHashMap<>();
      for (String k : Nests.sortedKeys(map)) {
        out.put(k, build(path + Nests.key(k), map.get(k), placeholders));
      }
      return new Nest(Kind.MAP, path, null, null, Collections.unmodifiableMap(out), null);
    }
    if (v instanceof Record) {
      Records.Info info = Records.of(v.getClass());
      Map<String, Nest> out = new LinkedHashMap<>();
      for (int i = 0; i < info.size(); i++) {
        out.put(info.names()[i], build(path + Nests.component(info.names()[i]), info.get(v, i), placeholders));
      }
      return new Nest(Kind.RECORD, path, null, null, Collections.unmodifiableMap(out), v.getClass());
    }
    return new Nest(Kind.VALUE, path, v, null, null, null);
  }

  /** This element's path in the argument, e.g. {@code xs[1]['k']}. */
  public String path() {
    return path;
  }

  /** Whether this element is a tensor (an operand in the body). */
  public boolean isOperand() {
    return kind == Kind.OPERAND;
  }

  /** Whether this element is a Java value. */
  public boolean isValue() {
    return kind == Kind.VALUE;
  }

  /** Whether this element is a list. */
  public boolean isList() {
    return kind == Kind.LIST;
  }

  /** Whether this element is a map. */
  public boolean isMap() {
    return kind == Kind.MAP;
  }

  /** Whether this element is a composite tensor (see {@link #composite}). */
  public boolean isComposite() {
    return kind == Kind.COMPOSITE;
  }

  /** Whether this element is a record. */
  public boolean isRecord() {
    return kind == Kind.RECORD;
  }

  /** The record class of a record element, else null. */
  public Class<?> recordClass() {
    return recordClass;
  }

  /** The operand of a tensor element, of any dtype. */
  public Operand<?> operand() {
    expect(Kind.OPERAND, "a tensor");
    return (Operand<?>) leaf;
  }

  /**
   * The operand of a tensor element as {@code type} (a concrete type or a family).
   *
   * @throws IllegalArgumentException if it is not a tensor, or not of {@code type}
   */
  @SuppressWarnings("unchecked")
  public <T extends TType> Operand<T> operand(Class<T> type) {
    Operand<?> o = operand();
    if (!type.isAssignableFrom(o.type())) {
      throw new IllegalArgumentException("'" + path + "' is a tensor of " + o.type().getSimpleName() + ", not of "
          + type.getSimpleName());
    }
    return (Operand<T>) o;
  }

  /**
   * The body's view of a composite tensor element (a {@link SparseOperand}, or the view class of a
   * registered {@link CompositeType}).
   *
   * @throws IllegalArgumentException if it is not a composite of that view class
   */
  public <B> B composite(Class<B> viewClass) {
    expect(Kind.COMPOSITE, "a composite tensor");
    if (!viewClass.isInstance(leaf)) {
      throw new IllegalArgumentException("'" + path + "' is a " + recordClass.getSimpleName() + ", not a "
          + viewClass.getSimpleName());
    }
    return viewClass.cast(leaf);
  }

  /**
   * The value of a Java-value element.
   *
   * @throws IllegalArgumentException if it is not a Java value of {@code type}
   */
  public <V> V value(Class<V> type) {
    expect(Kind.VALUE, "a Java value");
    if (!type.isInstance(leaf)) {
      throw new IllegalArgumentException("'" + path + "' is a " + leaf.getClass().getName() + ", not a " + type.getName());
    }
    return type.cast(leaf);
  }

  /** Element {@code i} of a list. */
  public Nest get(int i) {
    expect(Kind.LIST, "a list");
    if (i < 0 || i >= elements.size()) {
      throw new IllegalArgumentException("'" + path + "' has " + elements.size() + " elements, no element " + i);
    }
    return elements.get(i);
  }

  /** Entry {@code key} of a map, or component {@code key} of a record. */
  public Nest get(String key) {
    if (kind != Kind.MAP && kind != Kind.RECORD) {
      expect(Kind.MAP, "a map or record");
    }
    Nest n = entries.get(key);
    if (n == null) {
      throw new IllegalArgumentException("'" + path + "' has no " + (kind == Kind.MAP ? "key '" : "component '") + key
          + "'; it has " + entries.keySet());
    }
    return n;
  }

  /** The number of elements, entries or components (1 for a leaf). */
  public int size() {
    return kind == Kind.LIST ? elements.size() : entries != null ? entries.size() : 1;
  }

  /** The elements of a list. */
  public List<Nest> elements() {
    expect(Kind.LIST, "a list");
    return elements;
  }

  /** The entries of a map (sorted by key) or the components of a record (in declaration order). */
  public Map<String, Nest> entries() {
    if (kind != Kind.MAP && kind != Kind.RECORD) {
      expect(Kind.MAP, "a map or record");
    }
    return entries;
  }

  /**
   * The structure as plain Java values: lists, maps (records as maps of their components),
   * operands and Java values. Handy to return part of an argument as an output.
   */
  public Object unwrap() {
    switch (kind) {
      case LIST: {
        List<Object> out = new ArrayList<>();
        elements.forEach(e -> out.add(e.unwrap()));
        return out;
      }
      case MAP:
      case RECORD: {
        Map<String, Object> out = new LinkedHashMap<>();
        entries.forEach((k, v) -> out.put(k, v.unwrap()));
        return out;
      }
      default:
        return leaf;
    }
  }

  private void expect(Kind k, String what) {
    if (kind != k) {
      throw new IllegalArgumentException("'" + path + "' is " + describe() + ", not " + what);
    }
  }

  private String describe() {
    switch (kind) {
      case OPERAND: return "a tensor";
      case VALUE: return "a Java value (" + leaf.getClass().getName() + ")";
      case LIST: return "a list";
      case MAP: return "a map";
      case COMPOSITE: return "a composite tensor (" + recordClass.getSimpleName() + ")";
      default: return "a record (" + recordClass.getSimpleName() + ")";
    }
  }

  @Override
  public String toString() {
    return "Nest(" + path + ": " + describe() + ")";
  }
}
