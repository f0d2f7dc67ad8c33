package dev.polyfn.internal.saved;

import dev.polyfn.internal.JavaValues;
import dev.polyfn.internal.trace.FunctionCore;
import dev.polyfn.internal.trace.Param;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.types.family.TType;

/**
 * Polyfn's metadata in a SavedModel, {@code assets.extra/polyfn.json} (TensorFlow's loaders
 * ignore {@code assets.extra}). Version 1:
 *
 * <pre>{@code
 * {"format": "polyfn.saved_function", "version": 1,
 *  "save_id": "<random>",                        // optional: see SaveIds (absent before 2026-11-28)
 *  "name": "scale", "kind": "map",                // map, list, single or unary
 *  "unary_input": null,                           // unary: the input's tensor class
 *  "parameters": [{"name": "x", "kind": "TENSOR", "tensor_type": "org.tensorflow.types.TFloat32",
 *                  "shape": [-1, 3], "optional": false,     // shape: null (undeclared), "unknown" or dims
 *                  "record_class": null,     // kind TENSOR, LIST, MAP or NEST; a record: its class
 *                  "default": null}],        // an optional tensor's default: a base64 TensorProto
 *  "variables": [{"checkpoint_key": "v0/.ATTRIBUTES/VARIABLE_VALUE", // captured variables, in capture order
 *                 "name": "acc"}],            // optional: the name the body created it by (in.variable)
 *  "resources": [{"capture": 1, "object": 7}],  // optional: captured tables, by capture index and
 *                                              // object graph node (restored as Python's are)
 *  "concrete_functions": [{"signature": "scale__float32_N_3", "function": "<FunctionDef name>",
 *                          "outputs": ["y"], "declared": <function type>, "traced": <function type>,
 *                          "output_shapes": [[-1, 3]]}]}   // optional: each output's static shape
 *                                                          // as traced (null: an unknown rank)
 * }</pre>
 *
 * {@code declared} and {@code traced} are the serialized FunctionTypes ({@code
 * polyfn.function_type} documents) of each concrete function: the declared polymorphic type and
 * the concrete function's own type, from which {@code Function.load} restores the dispatch.
 */
public final class SavedFunctionMetadata {
  public static final String FORMAT = "polyfn.saved_function";
  public static final long VERSION = 1;

  /** The checkpoint key of the {@code i}th captured variable. */
  public static String variableKey(int i) {
    // Python's form ("<object path>/.ATTRIBUTES/VARIABLE_VALUE"): its checkpoint reader finds a
    // variable's value by that suffix. Polyfn before 2026-11 wrote "variables/<i>", still read.
    return PythonObjectGraph.variableName(i) + "/.ATTRIBUTES/VARIABLE_VALUE";
  }

  /** The key Polyfn wrote for variable {@code i} before Python's form. */
  static String legacyVariableKey(int i) {
    return "variables/" + i;
  }

  /** One concrete function; {@code outputShapes}: its outputs' static shapes as JSON, null if not recorded. */
  public record Concrete(String signature, String function, String[] outputs, String declared, String traced,
      String outputShapes) {}

  /** A captured resource (a lookup table): its index among the captures and its node in Python's object graph. */
  public record Resource(int capture, int object) {}

  public final String name;
  public final String kind;
  public final Class<? extends TType> unaryInput;
  /** Without default tensors (see {@link #defaults}): the loader adds them to the function it makes. */
  public final Param[] params;
  /** Each parameter's default tensor, null for none. */
  public final List<TensorProto> defaults;
  public final List<String> variableKeys;
  /**
   * Each variable's name in the body ({@code in.variable}), null for one it did not create: a
   * function loaded with its body finds the restored variable by that name when it traces anew.
   */
  public final List<String> variableNames;
  /** The captured resources; the variables take the other capture indices, in order. */
  public final List<Resource> resources;
  public final List<Concrete> concrete;
  /** The save's id ({@link SaveIds}), null in a SavedModel written before ids. */
  public final String saveId;

  private SavedFunctionMetadata(String name, String kind, Class<? extends TType> unaryInput, Param[] params,
      List<TensorProto> defaults, List<String> variableKeys, List<String> variableNames, List<Resource> resources,
      List<Concrete> concrete, String saveId) {
    this.name = name;
    this.kind = kind;
    this.unaryInput = unaryInput;
    this.params = params;
    this.defaults = defaults;
    this.variableKeys = variableKeys;
    this.variableNames = variableNames;
    this.resources = resources;
    this.concrete = concrete;
    this.saveId = saveId;
  }

  public static String kindOf(FunctionCore f) {
    String kind = f.kind();
    return List.of("map", "list", "single", "nest").contains(kind) ? kind : "unary";
  }

  /**
   * The metadata of {@code f}, whose captures are {@code slots}: variable {@code j} as {@code j},
   * table {@code t} as {@code -1 - t}, at object graph node {@code tables.get(t)}.
   */
  public static String write(FunctionCore f, Param[] params, List<TensorProto> defaults, List<Integer> slots,
      List<Integer> tables, List<SavedModelWriter.Saved> saved, String saveId) {
    Map<String, Object> doc = SavedModelWriter.object();
    doc.put("format", FORMAT);
    doc.put("version", VERSION);
    doc.put("save_id", saveId);
    doc.put("name", f.name());
    doc.put("kind", kindOf(f));
    doc.put("unary_input", "unary".equals(f.kind()) ? f.unaryInput().getName() : null);
    List<Object> ps = new ArrayList<>();
    for (int i = 0; i < params.length; i++) {
      Param p = params[i];
      Map<String, Object> m = SavedModelWriter.object();
      m.put("name", p.name());
      m.put("kind", p.kind().name());
      m.put("tensor_type", p.tensorType() == null ? null : p.tensorType().getName());
      m.put("record_class", p.kind() == Param.Kind.NEST && p.javaClass() != null ? p.javaClass().getName() : null);
      m.put("shape", SavedModelWriter.shapeJson(p.shape()));
      m.put("optional", p.optional());
      m.put("default", defaults.get(i) == null ? null : TensorDefaults.text(defaults.get(i)));
      if (p.kind() == Param.Kind.JAVA) { // a Java value's class and default, by text (SavedLiterals)
        m.put("java_class", p.javaClass().getName());
        m.put("java_default", p.optional() ? JavaValues.text(p.javaClass(), p.defaultValue()) : null);
      }
      ps.add(m);
    }
    doc.put("parameters", ps);
    List<Object> vs = new ArrayList<>();
    List<Object> rs = new ArrayList<>();
    for (int i = 0; i < slots.size(); i++) {
      int j = slots.get(i);
      if (j >= 0) {
        Map<String, Object> m = SavedModelWriter.object();
        m.put("checkpoint_key", variableKey(j));
        String named = f.namedVariables().nameOf(f.captures()[i].variable());
        if (named != null) {
          m.put("name", named);
        }
        vs.add(m);
      } else {
        Map<String, Object> m = SavedModelWriter.object();
        m.put("capture", (long) i);
        m.put("object", (long) tables.get(-1 - j));
        rs.add(m);
      }
    }
    doc.put("variables", vs);
    if (!rs.isEmpty()) {
      doc.put("resources", rs);
    }
    List<Object> cs = new ArrayList<>();
    for (SavedModelWriter.Saved s : saved) {
      Map<String, Object> m = SavedModelWriter.object();
      m.put("signature", s.signature());
      m.put("function", s.def().getSignature().getName());
      m.put("outputs", s.info().outputNames());
      m.put("declared", Json.parse(s.declared()));
      m.put("traced", Json.parse(s.traced()));
      m.put("output_shapes", s.outputShapes() == null ? null : s.outputShapes().stream()
          .map(d -> d == null ? null : java.util.Arrays.stream(d).boxed().toList()).toList());
      cs.add(m);
    }
    doc.put("concrete_functions", cs);
    return Json.write(doc);
  }

  /** Reads the metadata; anything malformed is an {@link IllegalArgumentException} naming the field. */
  public static SavedFunctionMetadata read(String text) {
    Reader r = new Reader(Json.parse(text));
    Map<String, Object> doc = r.object("", r.root);
    if (!FORMAT.equals(doc.get("format"))) {
      throw new IllegalArgumentException("format: expected \"" + FORMAT + "\", got " + doc.get("format"));
    }
    if (!Long.valueOf(VERSION).equals(Json.integer(doc.get("version")))) {
      throw new IllegalArgumentException("version: expected " + VERSION + ", got " + doc.get("version")
          + " (written by another Polyfn version)");
    }
    String name = r.string("name", doc.get("name"));
    if (name.isBlank()) {
      throw new IllegalArgumentException("name: expected a function name with a non-blank character, got \"" + name + "\"");
    }
    String kind = r.string("kind", doc.get("kind"));
    if (!List.of("map", "list", "single", "nest", "unary").contains(kind)) {
      throw new IllegalArgumentException("kind: expected map, list, single, nest or unary, got " + kind);
    }
    Class<? extends TType> unary = kind.equals("unary") ? tensorClass("unary_input", doc.get("unary_input")) : null;
    List<Object> ps = r.list("parameters", doc.get("parameters"));
    Param[] params = new Param[ps.size()];
    List<TensorProto> defaults = new ArrayList<>();
    for (int i = 0; i < params.length; i++) {
      String at = "parameters[" + i + "]";
      Map<String, Object> p = r.object(at, ps.get(i));
      Param.Kind pk;
      try {
        pk = Param.Kind.valueOf(r.string(at + ".kind", p.get("kind")));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(at + ".kind: expected TENSOR, LIST, MAP, NEST or JAVA, got " + p.get("kind"));
      }
      if (pk == Param.Kind.VARIABLE) {
        throw new IllegalArgumentException(at + ".kind: expected TENSOR, LIST, MAP, NEST or JAVA, got " + pk);
      }
      Class<?> record = pk == Param.Kind.NEST && p.get("record_class") != null
          ? recordClass(at + ".record_class", p.get("record_class")) : null;
      Object tt = p.get("tensor_type");
      Object optional = p.get("optional");
      if (!(optional instanceof Boolean)) {
        throw new IllegalArgumentException(at + ".optional: expected a boolean");
      }
      // An optional tensor has its default (absent before 2026-11, when save refused defaults).
      Object def = p.get("default");
      if ((def != null) != (pk == Param.Kind.TENSOR && (Boolean) optional)) {
        throw new IllegalArgumentException(at + ".default: " + (def == null ? "missing for an optional tensor"
            : "only an optional tensor parameter has a default"));
      }
      defaults.add(def == null ? null : TensorDefaults.fromText(at + ".default", def));
      String pname = r.string(at + ".name", p.get("name"));
      Class<?> javaClass = pk == Param.Kind.JAVA ? javaClass(at + ".java_class", p.get("java_class")) : record;
      Object javaDefault = p.get("java_default");
      if (pk == Param.Kind.JAVA && (javaDefault != null) != (Boolean) optional) {
        throw new IllegalArgumentException(at + ".java_default: " + (javaDefault == null ? "missing for an optional"
            + " Java-value parameter" : "only an optional Java-value parameter has a default"));
      }
      Object javaValue = null;
      try {
        javaValue = javaDefault == null || pk != Param.Kind.JAVA ? null
            : SavedLiterals.value(pname, javaClass.getName(), r.string(at + ".java_default", javaDefault));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(at + ".java_default: " + e.getMessage(), e);
      }
      params[i] = new Param(pname, pk, tt == null ? null : tensorClass(at + ".tensor_type", tt), javaClass,
          shape(at + ".shape", p.get("shape")), (Boolean) optional, javaValue);
    }
    List<String> vars = new ArrayList<>();
    List<String> varNames = new ArrayList<>();
    List<Object> vs = r.list("variables", doc.get("variables"));
    for (int i = 0; i < vs.size(); i++) {
      Map<?, ?> v = r.object("variables[" + i + "]", vs.get(i));
      String key = r.string("variables[" + i + "].checkpoint_key", v.get("checkpoint_key"));
      String named = v.get("name") == null ? null : r.string("variables[" + i + "].name", v.get("name"));
      if (named != null && varNames.contains(named)) {
        throw new IllegalArgumentException("variables[" + i + "].name: \"" + named + "\" names another variable too");
      }
      varNames.add(named);
      if (!key.equals(variableKey(i)) && !key.equals(legacyVariableKey(i))) {
        // The writer keys variable i so, and the loader reads node variables/i with it.
        throw new IllegalArgumentException("variables[" + i + "].checkpoint_key: expected \"" + variableKey(i) + "\", got \""
            + key + "\"");
      }
      vars.add(key);
    }
    List<Resource> resources = new ArrayList<>();
    List<Object> rs = doc.get("resources") == null ? List.of() : r.list("resources", doc.get("resources"));
    java.util.Set<Long> taken = new java.util.HashSet<>();
    for (int i = 0; i < rs.size(); i++) {
      String at = "resources[" + i + "]";
      Map<String, Object> m = r.object(at, rs.get(i));
      Long capture = Json.integer(m.get("capture"));
      Long object = Json.integer(m.get("object"));
      if (capture == null || capture < 0 || capture >= vars.size() + rs.size() || !taken.add(capture)) {
        throw new IllegalArgumentException(at + ".capture: expected a capture index below " + (vars.size() + rs.size())
            + " that no other resource has, got " + m.get("capture"));
      }
      if (object == null || object < 1 || object > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(at + ".object: expected an object graph node, got " + m.get("object"));
      }
      resources.add(new Resource(capture.intValue(), object.intValue()));
    }
    List<Concrete> concrete = new ArrayList<>();
    List<Object> cs = r.list("concrete_functions", doc.get("concrete_functions"));
    if (cs.isEmpty()) {
      throw new IllegalArgumentException("concrete_functions: expected at least one");
    }
    for (int i = 0; i < cs.size(); i++) {
      String at = "concrete_functions[" + i + "]";
      Map<String, Object> c = r.object(at, cs.get(i));
      List<Object> outs = r.list(at + ".outputs", c.get("outputs"));
      String[] names = new String[outs.size()];
      for (int j = 0; j < names.length; j++) {
        names[j] = r.string(at + ".outputs[" + j + "]", outs.get(j));
      }
      concrete.add(new Concrete(r.string(at + ".signature", c.get("signature")), r.string(at + ".function", c.get("function")),
          names, Json.write(r.object(at + ".declared", c.get("declared"))), Json.write(r.object(at + ".traced", c.get("traced"))),
          c.get("output_shapes") == null ? null : Json.write(c.get("output_shapes")))); // checked by restoreConcrete
    }
    String saveId = doc.get("save_id") == null ? null : r.string("save_id", doc.get("save_id"));
    return new SavedFunctionMetadata(name, kind, unary, params, defaults, vars, varNames, resources, concrete, saveId);
  }

  /**
   * The record class a saved record parameter takes, loaded by name: it must be on the class path
   * of the loading JVM (as the record's values are passed by the caller).
   */
  private static Class<?> recordClass(String at, Object v) {
    if (!(v instanceof String name)) {
      throw new IllegalArgumentException(at + ": expected a class name, got " + v);
    }
    Class<?> c;
    try {
      c = Class.forName(name, false, Thread.currentThread().getContextClassLoader() != null
          ? Thread.currentThread().getContextClassLoader() : SavedFunctionMetadata.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalArgumentException(at + ": record class " + name + " is not on the class path", e);
    }
    if (!c.isRecord()) {
      throw new IllegalArgumentException(at + ": " + name + " is not a record class");
    }
    return c;
  }

  /** The declared class of a saved Java-value parameter: one whose values have a text form. */
  private static Class<?> javaClass(String at, Object v) {
    Class<?> c = v instanceof String name ? JavaValues.declaredClass(name) : null;
    if (c == null) {
      throw new IllegalArgumentException(at + ": expected a number, boolean or string class (java.lang.Integer, int...),"
          + " got " + v);
    }
    return c;
  }

  private static Shape shape(String at, Object v) {
    if (v == null) {
      return null;
    }
    if ("unknown".equals(v)) {
      return Shape.unknown();
    }
    if (!(v instanceof List<?> l) || l.size() > 254) {
      throw new IllegalArgumentException(at + ": expected null, \"unknown\" or at most 254 dims");
    }
    long[] dims = new long[l.size()];
    for (int i = 0; i < dims.length; i++) {
      Long d = Json.integer(l.get(i));
      if (d == null || d < -1) {
        throw new IllegalArgumentException(at + "[" + i + "]: expected a dim >= -1, got " + l.get(i));
      }
      dims[i] = d;
    }
    return Shape.of(dims);
  }

  private static Class<? extends TType> tensorClass(String at, Object name) {
    try {
      return Class.forName(String.valueOf(name), false, TType.class.getClassLoader()).asSubclass(TType.class);
    } catch (ClassNotFoundException | ClassCastException e) {
      throw new IllegalArgumentException(at + ": expected a TensorFlow Java tensor class, got " + name);
    }
  }

  /** Typed access to the parsed document, each failure naming the field. */
  private static final class Reader {
    final Object root;

    Reader(Object root) {
      this.root = root;
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> object(String at, Object v) {
      if (!(v instanceof Map<?, ?>)) {
        throw new IllegalArgumentException((at.isEmpty() ? "the document" : at) + ": expected an object");
      }
      return (Map<String, Object>) v;
    }

    @SuppressWarnings("unchecked")
    List<Object> list(String at, Object v) {
      if (!(v instanceof List<?>)) {
        throw new IllegalArgumentException(at + ": expected an array");
      }
      return (List<Object>) v;
    }

    String string(String at, Object v) {
      if (!(v instanceof String s)) {
        throw new IllegalArgumentException(at + ": expected a string, got " + v);
      }
      return s;
    }
  }
}
