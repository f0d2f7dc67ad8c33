package dev.polyfn.internal.trace;

import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import dev.polyfn.internal.Aliases;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Conversions;
import dev.polyfn.internal.EagerResource;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.Wire;
import dev.polyfn.internal.structure.Nests;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorflow.SparseTensor;
import org.tensorflow.Tensor;

/**
 * Walks a call's arguments in parameter order and writes their type facts and tensors. Everything
 * that can be checked on the Java side without Rust fails here, naming the parameter (and the
 * element index or key) and what was expected.
 */
public final class Arguments {
  private Arguments() {}

  /** The value for {@code p}: the argument, its default when omitted, or null when absent. */
  public static Object valueFor(Param p, Map<String, ?> args) {
    Object v = args.get(p.name());
    if (v == null) {
      if (args.containsKey(p.name())) {
        throw new IllegalArgumentException("argument '" + p.name() + "': expected " + p.kindName() + ", got null");
      }
      return p.optional() ? p.defaultValue() : null;
    }
    return v;
  }

  /**
   * Writes a whole call; false when the arguments do not bind to {@code params} (missing or
   * unexpected names), which Rust then explains. {@code forCall}: the arguments are to be run
   * (values only), not only traced (where {@link TensorSpec}s stand for values).
   */
  public static boolean describe(Param[] params, Capture[] captures, Map<String, ?> args, CallBuffer buf,
      Interner interner, boolean forCall) {
    int given = 0;
    for (Param p : params) {
      // One map lookup for a given argument (the call path); defaults and nulls take the rest.
      Object v = args.get(p.name());
      if (v != null) {
        given++;
      } else {
        v = valueFor(p, args);
        if (v == null) {
          return false;
        }
      }
      write(p, v, buf, interner, forCall);
    }
    if (given != args.size()) {
      return false;
    }
    for (Capture c : captures) {
      writeCapture(c, c.value(), buf);
    }
    return true;
  }

  /** Writes a capture's current value: a tensor, or a variable or other resource by handle. */
  public static void writeCapture(Capture c, Object value, CallBuffer buf) {
    if (value instanceof Variable) {
      variable((Variable<?>) value, buf);
    } else if (value instanceof EagerResource r) {
      // Typed as a variable whose values are resources (no variable has that dtype): a scalar
      // DT_RESOURCE input, fed by handle, held by the call until it returns.
      int a = buf.aliases().aliasOf(r);
      buf.variable(Wire.DT_RESOURCE, NO_DIMS, Aliases.index(a), a < 0 ? r.retain() : 0, a < 0 ? r.releaser() : null);
    } else {
      try {
        buf.tensor((Tensor) value);
      } catch (IllegalStateException e) {
        throw new IllegalArgumentException("argument 'capture " + c.name() + "': the tensor is closed", e);
      }
    }
  }

  private static final long[] NO_DIMS = new long[0];

  /** Writes a variable: its type and alias index; its handle only at its first occurrence. */
  public static void variable(Variable<?> v, CallBuffer buf) {
    int a = buf.aliases().aliasOf(v);
    if (a < 0) {
      // Its handle is fed: the call holds the variable's resource until it returns.
      buf.variable(v.dtypeCode(), v.dims(), Aliases.index(a), v.retainResource(), v.releaser());
    } else {
      buf.variable(v.dtypeCode(), v.dims(), Aliases.index(a), 0, null);
    }
  }

  /** Writes one argument of parameter {@code p} for a trace, where specs stand for tensors. */
  public static void write(Param p, Object v, CallBuffer buf, Interner interner) {
    write(p, v, buf, interner, false);
  }

  /** Writes one argument of parameter {@code p}; specs are rejected when {@code forCall}. */
  public static void write(Param p, Object v, CallBuffer buf, Interner interner, boolean forCall) {
    switch (p.kind()) {
      case TENSOR:
        tensor(p, -1, null, v, buf, forCall);
        return;
      case LIST:
        if (!(v instanceof List)) {
          throw new IllegalArgumentException(
              "argument '" + p.name() + "': expected a list of tensors, got " + describe(v));
        }
        List<?> list = (List<?>) v;
        buf.list(list.size());
        int i = 0;
        for (Object e : list) {
          tensor(p, i++, null, e, buf, forCall);
        }
        return;
      case MAP:
        if (!(v instanceof Map)) {
          throw new IllegalArgumentException(
              "argument '" + p.name() + "': expected a map of tensors, got " + describe(v));
        }
        Map<?, ?> map = (Map<?, ?>) v;
        buf.map(map.size());
        // Rust flattens map values in key order: write them in the same order.
        for (String key : sortedKeys(p, map)) {
          buf.key(interner.string(key));
          tensor(p, -1, key, map.get(key), buf, forCall);
        }
        return;
      case NEST:
        Nests.write(p, v, buf, interner, forCall);
        return;
      case VARIABLE:
        if (!(v instanceof Variable)) {
          throw new IllegalArgumentException(
              "argument '" + p.name() + "': expected a Variable of " + p.tensorType().getSimpleName() + ", got " + describe(v));
        }
        if (((Variable<?>) v).isClosed()) {
          throw new IllegalArgumentException("argument '" + p.name() + "': the variable is closed");
        }
        variable((Variable<?>) v, buf);
        return;
      default:
        if (!boxed(p.javaClass()).isInstance(v)) {
          throw new IllegalArgumentException(
              "argument '" + p.name() + "': expected a " + p.javaClass().getName() + ", got " + describe(v));
        }
        buf.literal(interner.literal(p.javaClass(), v));
    }
  }

  /**
   * Writes one tensor of parameter {@code p}: the whole argument, list element {@code index} or
   * map value {@code key}. The element's path (e.g. {@code xs[2]}) is built only for an error.
   */
  private static void tensor(Param p, int index, String key, Object v, CallBuffer buf, boolean forCall) {
    try {
      if (v instanceof SparseTensor) {
        throw new IllegalArgumentException("argument '" + path(p, index, key) + "': got a SparseTensor where a dense "
            + "tensor is declared: declare the parameter with sparse, or nest it in a nest parameter");
      } else if (v instanceof Tensor) {
        buf.tensor((Tensor) v);
      } else if (v instanceof TensorSpec) {
        if (forCall) {
          // A spec has no value to run on: without this check the call reaches TensorFlow with
          // one input short and fails there, naming no parameter.
          throw new IllegalArgumentException("argument '" + path(p, index, key) + "': got a TensorSpec ("
              + v + "), but call runs the function on values: pass a tensor, or pass specs to "
              + "getConcreteFunction to trace without running");
        }
        TensorSpec s = (TensorSpec) v;
        buf.spec(s.dtypeCode(), s.shape().isUnknown() ? null : s.shape().asArray());
      } else if (v != null && Conversions.convertible(v)) {
        buf.temporary(Conversions.toTensor(path(p, index, key), v, p.tensorType()));
      } else {
        throw new IllegalArgumentException("argument '" + path(p, index, key) + "': expected a tensor of "
            + p.tensorType().getSimpleName() + ", got " + describe(v));
      }
    } catch (IllegalStateException closed) {
      throw new IllegalArgumentException("argument '" + path(p, index, key) + "': the tensor is closed", closed);
    }
  }

  private static String path(Param p, int index, String key) {
    return key != null ? p.name() + "['" + key + "']" : index >= 0 ? p.name() + "[" + index + "]" : p.name();
  }

  /**
   * The keys of a map argument in the order Rust orders them: by code point, which is the byte
   * order of their UTF-8 encoding.
   */
  public static String[] sortedKeys(Param p, Map<?, ?> map) {
    String[] keys = new String[map.size()];
    int i = 0;
    for (Object k : map.keySet()) {
      if (!(k instanceof String)) {
        throw new IllegalArgumentException("argument '" + p.name() + "': map keys must be strings, got key "
            + Interner.repr(k) + " (" + describe(k) + ")");
      }
      String malformed = Interner.malformedKey((String) k);
      if (malformed != null) {
        throw new IllegalArgumentException("argument '" + p.name() + "': " + malformed);
      }
      keys[i++] = (String) k;
    }
    Nests.inRustOrder(keys);
    return keys;
  }

  private static String describe(Object v) {
    return v == null ? "null" : v.getClass().getName();
  }

  private static Class<?> boxed(Class<?> c) {
    if (!c.isPrimitive()) {
      return c;
    }
    List<Class<?>> prims = List.of(int.class, long.class, double.class, float.class, boolean.class,
        short.class, byte.class, char.class);
    List<Class<?>> boxes = List.of(Integer.class, Long.class, Double.class, Float.class, Boolean.class,
        Short.class, Byte.class, Character.class);
    return boxes.get(prims.indexOf(c));
  }

  /**
   * The arguments a trace reads: a map by name, or one bare value that binds to the first
   * parameter the body declares (a call like {@code f.call(tensor)} before the first trace).
   */
  public static final class Lookup {
    private final Map<String, ?> map;
    private final Object single;
    private final boolean forCall;
    private String bound;

    private Lookup(Map<String, ?> map, Object single, boolean forCall) {
      this.map = map;
      this.single = single;
      this.forCall = forCall;
    }

    /** Arguments (tensors or specs) to trace for, as {@code getConcreteFunction}'s. */
    public static Lookup of(Map<String, ?> args) {
      return new Lookup(args, null, false);
    }

    /** Arguments of a call, which must be values: a trace for them rejects specs at once. */
    public static Lookup ofCall(Map<String, ?> args) {
      return new Lookup(args, null, true);
    }

    /** The one argument of a call. */
    public static Lookup single(Object value) {
      return new Lookup(null, value, true);
    }

    /** Whether these are a call's arguments (pass to {@link Arguments#write}). */
    public boolean forCall() {
      return forCall;
    }

    /** Notes that the body declares {@code name} (binds a single value to the first one). */
    public void use(String name) {
      if (map == null && bound == null) {
        bound = name;
      }
    }

    /** The one bare argument of a call, or null. */
    public Object single() {
      return single;
    }

    public Map<String, ?> asMap() {
      if (map != null) {
        return map;
      }
      return bound == null ? Map.of() : java.util.Collections.singletonMap(bound, single);
    }

    /** The argument names Rust binds against (none for a single value). */
    public String[] names() {
      return map == null ? new String[0] : Arguments.names(map);
    }
  }

  /** The names of {@code args}, for binding in Rust. */
  public static String[] names(Map<String, ?> args) {
    return new ArrayList<>(args.keySet()).toArray(new String[0]);
  }
}
