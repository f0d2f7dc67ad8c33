package dev.polyfn;

import dev.polyfn.internal.structure.Records;
import java.lang.reflect.Proxy;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.types.family.TType;

/**
 * The body's view of a record argument ({@link Inputs#record}), read through the record's own
 * accessors, so the compiler checks each component's name and type:
 *
 * <pre>{@code
 * record Batch(TFloat32 features, TInt64 labels, int size) {}
 *
 * RecordInput<Batch> b = in.record("batch", Batch.class);
 * Operand<TFloat32> features = b.get(Batch::features);   // a placeholder, typed by the component
 * int size = b.value(Batch::size);                       // a Java value, part of the signature
 * }</pre>
 *
 * An accessor is resolved by applying it to a stand-in record whose tensor components are
 * distinct markers, so a record holding the same tensor twice still gives each component its own
 * placeholder. The record's canonical constructor must therefore accept any component values
 * (it may check them for null); {@link #asNest()} reads components by name without it.
 *
 * @param <R> the record class
 */
public final class RecordInput<R extends Record> {
  private final Class<R> type;
  private final R argument;
  private final Nest nest;
  private final Records.Info info;
  /** Component index by marker, built on first use. */
  private Map<Object, Integer> markers;
  private R standIn;

  /** {@hidden} */
  public RecordInput(Class<R> type, R argument, Nest nest) {
    this.type = type;
    this.argument = argument;
    this.nest = nest;
    this.info = Records.of(type);
  }

  /**
   * The operand of a tensor component, e.g. {@code get(Batch::features)}.
   *
   * @throws IllegalArgumentException if {@code component} is not the accessor of a tensor component
   */
  @SuppressWarnings("unchecked")
  public <T extends TType> Operand<T> get(Function<R, T> component) {
    Nest n = resolve(component, "get");
    return (Operand<T>) n.operand();
  }

  /**
   * The view of a nested component (a list, map or record), e.g. {@code nest(Batch::extras)}.
   *
   * @throws IllegalArgumentException if {@code component} is not the accessor of a nested component
   */
  public Nest nest(Function<R, ?> component) {
    Nest n = resolve(component, "nest");
    if (n.isOperand()) {
      throw new IllegalArgumentException("'" + n.path() + "' is a tensor: read it with get");
    }
    return n;
  }

  /**
   * The value of a Java-value component, e.g. {@code value(Batch::size)}: the argument's own value,
   * which is part of the signature (another value traces again).
   *
   * @throws IllegalArgumentException if the component is a tensor
   */
  public <V> V value(Function<R, V> component) {
    Objects.requireNonNull(component, "component");
    V v = component.apply(argument);
    if (v instanceof Tensor || v instanceof TensorSpec) {
      throw new IllegalArgumentException("a component of argument '" + nest.path() + "' is a tensor: read it with get");
    }
    return v;
  }

  /** The record as a {@link Nest}, its components by name. */
  public Nest asNest() {
    return nest;
  }

  /** The record class. */
  public Class<R> type() {
    return type;
  }

  private Nest resolve(Function<R, ?> component, String method) {
    Objects.requireNonNull(component, "component");
    Object marker = component.apply(standIn());
    Integer i = marker == null ? null : markers.get(marker);
    if (i == null) {
      throw new IllegalArgumentException(method + " on argument '" + nest.path() + "' takes the accessor of one of "
          + type.getSimpleName() + "'s tensor or nested components (such as " + type.getSimpleName() + "::"
          + info.names()[0] + "); for a Java-value component use value");
    }
    if (i < 0) {
      throw new IllegalArgumentException("two components of argument '" + nest.path() + "' hold the same record, so "
          + method + " cannot tell which one the accessor reads: read them by name with asNest()");
    }
    return nest.get(info.names()[i]);
  }

  /**
   * A record of this class whose tensor, interface-typed and generic components are fresh
   * markers (each its own object) and whose other components are the argument's values.
   */
  private R standIn() {
    if (standIn != null) {
      return standIn;
    }
    markers = new IdentityHashMap<>();
    Object[] components = new Object[info.size()];
    for (int i = 0; i < components.length; i++) {
      Class<?> t = info.types()[i];
      Object m;
      if (t.isInterface()) {
        ClassLoader loader = t.getClassLoader() != null ? t.getClassLoader() : RecordInput.class.getClassLoader();
        m = Proxy.newProxyInstance(loader, new Class<?>[] {t}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "equals": return proxy == args[0];
            case "hashCode": return System.identityHashCode(proxy);
            case "toString": return "marker";
            default: throw new UnsupportedOperationException("a stand-in component has no value");
          }
        });
      } else if (t == Object.class || t.isRecord()) {
        // A generic component (erased to Object) or a nested record: a plain unique object
        // when the type allows it, else the argument's own value.
        m = t == Object.class ? new Object() : info.get(argument, i);
      } else {
        components[i] = info.get(argument, i);
        continue;
      }
      components[i] = m;
      if (m != null) {
        // A value shared by two components cannot tell them apart: refuse it rather than guess.
        markers.put(m, markers.containsKey(m) ? -1 : i);
      }
    }
    try {
      standIn = type.cast(info.make(components));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("the constructor of " + type.getName() + " rejected stand-in components ("
          + e + "): read the components of argument '" + nest.path() + "' by name with asNest() instead", e);
    }
    return standIn;
  }
}
