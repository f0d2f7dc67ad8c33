package dev.polyfn.internal.saved;

import dev.polyfn.internal.trace.Param;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.Struct.StructuredValue;

/**
 * The Python literals (bool, int, float, str, None) in the input signatures of a Python
 * {@code tf.function}'s concrete functions, as Java values: each parameter that takes literals
 * becomes a Java-value parameter, so a call dispatches by {@code equals} on the value, as
 * Python's restored function picks a concrete function by the literal it was traced with.
 *
 * <p>Java classes: bool is {@link Boolean}, float {@link Double}, str {@link String}, int
 * {@link Integer} when every saved value of the parameter fits in 32 bits (what a Java literal
 * like {@code 2} is), else {@link Long}; a parameter whose values mix these is declared as
 * {@link Object}. Python fills defaults into the saved signatures, so a parameter that is None in
 * every concrete function (an unused {@code arg=None}) is left out: Java has no null argument.
 * A Python default that is a literal makes the Java parameter optional with that default.
 */
public final class PythonLiterals {
  private final Map<Integer, Class<?>> classes = new HashMap<>();
  private final Set<Integer> alwaysNone = new HashSet<>();
  private final Map<Integer, Object> defaults = new HashMap<>();

  private PythonLiterals() {}

  /** Reads the literal arguments of {@code function}'s concrete functions {@code concretes}. */
  public static PythonLiterals of(SavedObject function, List<SavedConcreteFunction> concretes, int argCount) {
    PythonLiterals l = new PythonLiterals();
    Map<Integer, List<StructuredValue>> values = new HashMap<>();
    for (SavedConcreteFunction c : concretes) {
      List<StructuredValue> args = args(c);
      for (int i = 0; i < args.size(); i++) {
        if (isLiteral(args.get(i))) {
          values.computeIfAbsent(i, k -> new ArrayList<>()).add(args.get(i));
        }
      }
    }
    List<StructuredValue> defaults = pythonDefaults(function);
    int firstDefault = argCount - defaults.size();
    values.forEach((i, vs) -> {
      List<StructuredValue> all = new ArrayList<>(vs);
      if (i >= firstDefault && i - firstDefault < defaults.size() && isLiteral(defaults.get(i - firstDefault))) {
        all.add(defaults.get(i - firstDefault));
      }
      if (vs.stream().allMatch(StructuredValue::hasNoneValue)) {
        l.alwaysNone.add(i);
        return;
      }
      Class<?> cls = classOf(all);
      l.classes.put(i, cls);
      if (all.size() > vs.size() && !all.get(all.size() - 1).hasNoneValue()) {
        l.defaults.put(i, value(all.get(all.size() - 1), cls));
      }
    });
    return l;
  }

  /** The positional arguments of a concrete function's canonicalized input signature. */
  public static List<StructuredValue> args(SavedConcreteFunction c) {
    return signature(c).getValues(0).getTupleValue().getValuesList();
  }

  /**
   * A concrete function's canonicalized input signature: the tuple (positional arguments, a
   * tuple; keyword arguments, a dict), checked, as a hostile file may hold anything there.
   */
  public static org.tensorflow.proto.Struct.TupleValue signature(SavedConcreteFunction c) {
    var sig = c.getCanonicalizedInputSignature().getTupleValue();
    if (sig.getValuesCount() != 2 || !sig.getValues(0).hasTupleValue() || !sig.getValues(1).hasDictValue()) {
      throw new IllegalArgumentException("its input signature is not a tuple of the positional arguments (a tuple) and"
          + " the keyword arguments (a dict)");
    }
    return sig;
  }

  public static boolean isLiteral(StructuredValue v) {
    return v.hasBoolValue() || v.hasInt64Value() || v.hasFloat64Value() || v.hasStringValue() || v.hasNoneValue();
  }

  /** Whether argument {@code i} is None in every concrete function (and so is no parameter). */
  public boolean alwaysNone(int i) {
    return alwaysNone.contains(i);
  }

  /** The Java parameter for literal argument {@code i} named {@code name}. */
  public Param param(int i, String name) {
    Object def = defaults.get(i);
    return new Param(name, Param.Kind.JAVA, null, classes.get(i), null, def != null, def);
  }

  /** The Java value of literal {@code v} for a parameter of class {@code cls}; null for None. */
  public static Object value(StructuredValue v, Class<?> cls) {
    switch (v.getKindCase()) {
      case BOOL_VALUE:
        return v.getBoolValue();
      case INT64_VALUE:
        long n = v.getInt64Value();
        return cls == Long.class || n != (int) n ? (Object) n : (Object) (int) n;
      case FLOAT64_VALUE:
        return v.getFloat64Value();
      case STRING_VALUE:
        return v.getStringValue();
      default:
        return null;
    }
  }

  private static Class<?> classOf(List<StructuredValue> values) {
    Set<Class<?>> seen = new HashSet<>();
    for (StructuredValue v : values) {
      if (!v.hasNoneValue()) {
        seen.add(v.hasInt64Value() ? Long.class : value(v, Object.class).getClass());
      }
    }
    if (seen.size() != 1) {
      return Object.class;
    }
    Class<?> only = seen.iterator().next();
    if (only == Long.class && values.stream().filter(StructuredValue::hasInt64Value)
        .allMatch(v -> v.getInt64Value() == (int) v.getInt64Value())) {
      return Integer.class;
    }
    return only;
  }

  /** The Python defaults of the trailing positional arguments, from the function's full argspec. */
  private static List<StructuredValue> pythonDefaults(SavedObject function) {
    for (var pair : function.getFunction().getFunctionSpec().getFullargspec().getNamedTupleValue().getValuesList()) {
      if (pair.getKey().equals("defaults")) {
        StructuredValue d = pair.getValue();
        return d.hasTupleValue() ? d.getTupleValue().getValuesList()
            : d.hasListValue() ? d.getListValue().getValuesList() : List.of();
      }
    }
    return List.of();
  }
}
