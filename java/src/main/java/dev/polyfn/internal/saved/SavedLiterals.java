package dev.polyfn.internal.saved;

import dev.polyfn.internal.Interner;
import dev.polyfn.internal.JavaValues;
import dev.polyfn.internal.trace.Param;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.proto.Struct.NoneValue;
import org.tensorflow.proto.Struct.StructuredValue;
import org.tensorflow.proto.Struct.TupleValue;
import org.tensorflow.proto.TensorProto;

/**
 * Java-value parameters ({@code in.javaInput}) in a saved function. A traced type names a Java
 * value by the interning id of the JVM that traced it, which means nothing to another JVM; so
 * {@code polyfn.json} holds the value's text instead ({@link JavaValues}: a number, boolean or
 * string), {@code {"kind": "literal", "class": "java.lang.Boolean", "repr": "true", "value":
 * "true"}}, and a load interns the value again in its own function. Python's object graph holds
 * it as the literal Python traces with ({@code True}, {@code 3}, {@code 2.5}, {@code "relu"}), so
 * {@code m.<name>(x, training=True)} picks that concrete function, as for a Python-saved
 * {@code tf.function} traced with a literal. A Java value inside a list, map or record (interned
 * by its own class) is saved the same way. A trace cache entry holds a Java-value parameter's
 * value so too.
 */
public final class SavedLiterals {
  private static final String TAKES = "a saved Java-value parameter takes numbers, booleans or strings, declared as"
      + " their class or primitive type (Integer.class, int.class, Boolean.class, String.class...)";

  private SavedLiterals() {}

  /**
   * Refuses (IllegalStateException) to save Java-value parameter {@code p} of function {@code
   * function} when its declared class or its default has no text form another JVM reads back.
   */
  static void checkParameter(String function, Param p) {
    if (JavaValues.declaredClass(p.javaClass().getName()) == null) {
      throw new IllegalStateException("cannot save '" + function + "': parameter '" + p.name() + "' takes "
          + p.kindName() + "; " + TAKES);
    }
    if (p.optional() && JavaValues.text(p.javaClass(), p.defaultValue()) == null) {
      throw new IllegalStateException("cannot save '" + function + "': the default of parameter '" + p.name() + "', "
          + Interner.repr(p.defaultValue()) + ", has no text another JVM reads back as an equal value");
    }
  }

  /**
   * The {@code defaults} of Python's full argspec over {@code params}: the trailing run of
   * parameters with a default, as Python allows (a defaulted parameter followed by one without
   * stays required in Python), as a tuple of values (a tensor's from {@code tensors}, a Java
   * value's as its Python literal); None without any.
   */
  static StructuredValue pythonDefaults(Param[] params, List<TensorProto> tensors) {
    List<StructuredValue> values = new ArrayList<>();
    for (int i = params.length - 1; i >= 0 && params[i].optional(); i--) {
      values.add(0, tensors.get(i) != null ? StructuredValue.newBuilder().setTensorValue(tensors.get(i)).build()
          : python(params[i].defaultValue()));
    }
    if (values.isEmpty()) {
      return StructuredValue.newBuilder().setNoneValue(NoneValue.getDefaultInstance()).build();
    }
    return StructuredValue.newBuilder().setTupleValue(TupleValue.newBuilder().addAllValues(values)).build();
  }

  /**
   * Traced type document {@code traced} as {@code polyfn.json} holds it: each Java value (a
   * Java-value parameter's, or one inside a list, map or record) written as text instead of its
   * interning id. An IllegalStateException names the parameter whose value has no text form.
   */
  @SuppressWarnings("unchecked")
  public static String forSave(String traced, Param[] params, Interner interner) {
    Map<String, Object> doc = (Map<String, Object>) Json.parse(traced);
    List<Object> ps = parameters(doc);
    for (int i = 0; i < ps.size() && i < params.length; i++) {
      String name = params[i].name();
      eachLiteral(((Map<String, Object>) ps.get(i)).get("type"), 0, literal -> {
        Long id = Json.integer(literal.get("id"));
        Object value = id == null ? null : interner.value(id.intValue());
        Class<?> declared = id == null ? null : interner.declaredClass(id.intValue());
        String text = declared == null ? null : JavaValues.text(declared, value);
        if (text == null) {
          throw new IllegalStateException("parameter '" + name + "' was traced with " + literal.get("repr")
              + (value == null ? "" : ", a " + value.getClass().getName())
              + ", which another JVM cannot rebuild from a SavedModel or a trace cache entry; saved Java values are"
              + " numbers, booleans and strings (of well-formed UTF-16), a Java-value parameter declared as their class"
              + " or primitive type");
        }
        literal.remove("id");
        literal.put("value", text);
      });
    }
    return Json.write(doc);
  }

  /**
   * Traced type document {@code traced} as read from {@code polyfn.json}, with each Java value
   * interned by {@code interner} as a call's argument would be (so that call dispatches here): a
   * Java-value parameter's by the parameter's class, which the literal must name, one inside a
   * nest by its own class. An IllegalArgumentException says what is malformed.
   */
  @SuppressWarnings("unchecked")
  public static String forLoad(String traced, Param[] params, Interner interner) {
    Map<String, Object> doc = (Map<String, Object>) Json.parse(traced);
    List<Object> ps = parameters(doc);
    for (int i = 0; i < ps.size() && i < params.length; i++) {
      Param p = params[i];
      eachLiteral(((Map<String, Object>) ps.get(i)).get("type"), 0, literal -> {
        Class<?> declared = literal.get("class") instanceof String c ? JavaValues.declaredClass(c) : null;
        if (declared == null || (p.kind() == Param.Kind.JAVA && declared != p.javaClass())
            || !(literal.get("value") instanceof String text) || literal.containsKey("id")) {
          throw new IllegalArgumentException("parameter '" + p.name() + "': expected a literal of "
              + (p.kind() == Param.Kind.JAVA ? "class " + p.javaClass().getName() : "a number, boolean or string class")
              + " with its value's text and no id, got " + Json.write(literal));
        }
        Object value = value(p.name(), declared.getName(), text);
        literal.put("id", (long) interner.literal(declared, value));
        literal.put("repr", Interner.repr(value));
        literal.remove("value");
      });
    }
    return Json.write(doc);
  }

  /** Calls {@code action} on each literal type in serialized type {@code t} (nests, records, composites' metadata). */
  @SuppressWarnings("unchecked")
  private static void eachLiteral(Object t, int depth, java.util.function.Consumer<Map<String, Object>> action) {
    if (depth > Json.MAX_DEPTH) {
      return; // Json.parse bounds depth: never reached
    }
    if (t instanceof Map<?, ?> m) {
      if ("literal".equals(m.get("kind"))) {
        action.accept((Map<String, Object>) m);
        return;
      }
      m.values().forEach(v -> eachLiteral(v, depth + 1, action));
    } else if (t instanceof List<?> l) {
      l.forEach(v -> eachLiteral(v, depth + 1, action));
    }
  }

  /**
   * The value of parameter {@code name}, declared as {@code cls}, that {@code text} stands for:
   * only the text a save writes for it ({@link JavaValues#text}), not another that parses alike
   * ({@code +3}, {@code " 2.5"}), nor a string a save refuses (an unpaired surrogate).
   */
  static Object value(String name, String cls, String text) {
    Object value;
    try {
      value = JavaValues.parse(cls, text);
    } catch (NumberFormatException e) {
      value = null;
    }
    if (value == null || !text.equals(JavaValues.text(JavaValues.declaredClass(cls), value))) {
      throw new IllegalArgumentException("parameter '" + name + "': " + text + " is no " + cls + " value as a save"
          + " writes one");
    }
    return value;
  }

  /** The Python literal of Java value {@code v} (a number, boolean or string with a text form). */
  static StructuredValue python(Object v) {
    StructuredValue.Builder b = StructuredValue.newBuilder();
    if (v instanceof Boolean z) {
      return b.setBoolValue(z).build();
    }
    if (v instanceof Float f) { // the decimal written in Java (0.1f is 0.1 for Python, not 0.10000000149...)
      return b.setFloat64Value(Double.parseDouble(f.toString())).build();
    }
    if (v instanceof Double d) {
      return b.setFloat64Value(d).build();
    }
    if (v instanceof Number n) {
      return b.setInt64Value(n.longValue()).build();
    }
    return b.setStringValue((String) v).build();
  }

  /** The Python literal of a saved literal type ({@link #forSave}'s form). */
  static StructuredValue python(Map<String, Object> literal) {
    String cls = (String) literal.get("class");
    return python(value("?", cls, (String) literal.get("value")));
  }

  @SuppressWarnings("unchecked")
  private static List<Object> parameters(Map<String, Object> doc) {
    Object ft = doc.get("function_type");
    Object ps = ft instanceof Map<?, ?> m ? m.get("parameters") : null;
    if (!(ps instanceof List<?>)) {
      throw new IllegalArgumentException("the traced type is not a function type document");
    }
    return (List<Object>) ps;
  }
}
