package dev.polyfn.internal.saved;

import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.NestBody;
import dev.polyfn.internal.Interner;
import dev.polyfn.internal.NativeLog;
import dev.polyfn.internal.structure.Nests;
import dev.polyfn.internal.structure.OutputStructure;
import dev.polyfn.internal.trace.Capture;
import dev.polyfn.internal.trace.Facades;
import dev.polyfn.internal.trace.FunctionCore;
import dev.polyfn.internal.trace.Param;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.proto.Struct.StructuredValue;
import org.tensorflow.types.family.TType;

/**
 * Imports a {@code tf.function} from a SavedModel written by Python's {@code tf.saved_model.save}:
 * its concrete functions, with the dispatch rebuilt from their input signatures in the saved
 * object graph, and the variables they capture, read from the checkpoint (keys from its object
 * graph), and the lookup tables they capture, made and filled by their saved functions ({@link
 * PythonObjects}); captured constants and asset paths become constants of the functions ({@link
 * PythonCaptures}). Representable: positional parameters that are tensors, lists or tuples of tensors,
 * dicts of tensors, deeper structures of lists, tuples and dicts of tensors (as nest parameters,
 * whose Java value is the same structure of Lists and Maps; a namedtuple is a List of its fields
 * in order), {@code SparseTensorSpec}s and {@code RaggedTensorSpec}s (Polyfn's built-in composites,
 * see {@link PythonTypeSpecs}), extension types (a map of their fields, see {@link
 * PythonStructures}), keyword-only arguments of those kinds (after the positional ones), or
 * Python literals (Java-value parameters, see {@link PythonLiterals}); a tensor default in the
 * function's argspec makes its tensor parameter optional ({@link TensorDefaults}). A function whose
 * outputs hold a composite loads as a nested function (its outputs the returned structure). A
 * concrete function that takes a None where others take values, has another parameter list
 * or captures other variables than the first is left out with a WARNING. The library functions a
 * concrete function calls (nested {@code tf.function}s, control-flow branches and loop bodies,
 * Keras RNN loops) are restored with it under fresh names; the outputs are named by their paths in
 * the returned dict ({@code output_0}... for a result that is not a dict; see {@link #outputs}).
 */
public final class PythonSavedModel {

  private PythonSavedModel() {}

  /** One concrete function, converted: its parameters, types, FunctionDef and outputs. */
  private record Converted(List<Param> params, String declared, String traced, FunctionDef def,
      List<FunctionDef> called, String[] outputs, String outputShapes, List<Integer> bound) {}

  /**
   * Loads function {@code name} (null: the only one) of Python's SavedModel at {@code root} as a
   * function of {@code kind}: "map" (named tensors), "nest" (nested outputs, which may hold
   * SparseTensors and RaggedTensors), or null for "nest" when an output is a composite, else "map".
   */
  public static <F> F load(Facades<F> facades, Path root, MetaGraphDef meta, String name, String kind) {
    SavedObjectGraph graph = meta.getObjectGraphDef();
    TreeMap<String, Integer> functions = new TreeMap<>();
    for (var child : graph.getNodes(0).getChildrenList()) {
      if (graph.getNodes(child.getNodeId()).hasFunction()) {
        functions.put(child.getLocalName(), child.getNodeId());
      }
    }
    Path pb = root.resolve("saved_model.pb");
    Integer node = name != null ? functions.get(name) : functions.size() == 1 ? functions.values().iterator().next() : null;
    if (node == null) {
      throw new IllegalArgumentException(pb + ": " + (name == null ? "" : "no function '" + name + "'; ")
          + "the saved object has the functions " + functions.keySet()
          + (name == null && functions.size() > 1 ? "; load one by name with Function.load(dir, name)" : ""));
    }
    String fname = name != null ? name : functions.firstKey(); // without a name, the only one
    Map<String, FunctionDef> library = new HashMap<>();
    meta.getGraphDef().getLibrary().getFunctionList().forEach(f -> library.put(f.getSignature().getName(), f));
    List<String> argNames = argNames(graph.getNodes(node), pb + ": function '" + fname + "'");
    List<String> names = graph.getNodes(node).getFunction().getConcreteFunctionsList();
    List<SavedConcreteFunction> saved = new ArrayList<>();
    for (String n : names) {
      if (!graph.containsConcreteFunctions(n)) {
        throw new IllegalArgumentException(pb + ": the object graph's function '" + fname + "' names concrete function "
            + n + ", which the object graph does not hold");
      }
      saved.add(graph.getConcreteFunctionsOrThrow(n));
    }
    PythonLiterals literals = PythonLiterals.of(graph.getNodes(node), saved, argNames.size());
    String composite = saved.stream().map(c -> PythonTypeSpecs.composite(c.getOutputSignature(), "$"))
        .filter(c -> c != null).findFirst().orElse(null);
    boolean nested = "nest".equals(kind) || (kind == null && composite != null);
    if (composite != null && !nested) {
      throw new IllegalArgumentException(pb + ": function '" + fname + "' returns composite tensors (output " + composite
          + "), which named tensor outputs cannot hold: load it with Function.loadNested(dir, name), whose outputs are"
          + " nests (a RaggedTensor, a SparseTensor in them)");
    }
    // Created first: literal arguments are interned by the function that will dispatch on them.
    F made = nested ? facades.define("nest", (NestBody) (tf, in) -> {
      throw new IllegalStateException("a loaded function has no body");
    }, null, FunctionOptions.defaults().withName(fname)) : facades.define("map", (MapBody) (tf, in) -> {
      throw new IllegalStateException("a loaded function has no body");
    }, null, FunctionOptions.defaults().withName(fname));
    FunctionCore f = facades.core(made);
    try {
      // A tensor default (def f(x, scale=tf.constant(2.0))) makes the parameter optional, as in Python.
      Map<Integer, TType> defaults = new HashMap<>();
      TensorDefaults.ofPython(graph.getNodes(node), argNames.size()).forEach((i, proto) -> {
        TType t = TensorDefaults.tensor(pb + ": the default of argument '" + argNames.get(i) + "'", proto, null, null);
        f.adopt(t);
        defaults.put(i, t);
      });
      PythonCaptures inliner = new PythonCaptures(root, meta);
      List<Converted> converted = new ArrayList<>();
      Map<String, String> byTraced = new HashMap<>(); // the kept ones' names by their traced types
      List<String> reasons = new ArrayList<>();
      for (int i = 0; i < names.size(); i++) {
        String concrete = names.get(i);
        try {
          Converted c = convert(concrete, saved.get(i), library, argNames, graph, literals, defaults, f.interner(), inliner,
              nested);
          Converted first = converted.isEmpty() ? null : converted.get(0);
          if (first != null && !first.params().equals(c.params())) {
            throw new IllegalArgumentException("its parameters " + c.params() + " differ from the first's");
          }
          if (first != null && !first.bound().equals(c.bound())) {
            throw new IllegalArgumentException("it captures other variables than the first");
          }
          // Python's loader calls the first of two that accept the same calls (by Polyfn's types).
          String same = byTraced.putIfAbsent(c.traced(), concrete);
          if (same != null) {
            throw new IllegalArgumentException("its signature is that of " + same + ", saved before it,"
                + " which serves its calls as in Python");
          }
          converted.add(c);
        } catch (IllegalArgumentException e) {
          reasons.add(concrete + ": " + e.getMessage());
          NativeLog.logger().log(Level.WARNING, pb + ": concrete function " + concrete + " of '" + fname + "' is left out: " + e.getMessage());
        }
      }
      if (converted.isEmpty()) {
        throw new IllegalArgumentException(pb + ": no concrete function of '" + fname + "' can be represented: "
            + String.join("; ", reasons));
      }
      restore(f, root, converted, new PythonObjects(root, meta, library, inliner, f::adopt));
      return made;
    } catch (RuntimeException | Error e) {
      f.close(); // an Error too: the half-loaded function must not leak its tables and variables
      throw e;
    }
  }

  /** Registers the converted concrete functions and the variables and resources they capture with {@code f}. */
  private static void restore(FunctionCore f, Path root, List<Converted> converted, PythonObjects objects) {
    try {
      Capture[] captures = objects.captures(converted.get(0).bound(), f::adopt);
      Param[] params = converted.get(0).params().toArray(new Param[0]);
      f.useSavedOrder(); // the first that accepts a call serves it, as in Python (not the most specific)
      for (Converted c : converted) {
        f.restoreConcrete(params, captures, c.declared(), c.traced(),
            FunctionLibrary.forRestore(c.def(), c.called()), c.outputs(), c.outputShapes());
      }
      f.markBodyless();
      f.countSavedTraces(converted.size());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": '" + f.name() + "' cannot be restored: "
          + e.getMessage(), e);
    }
  }

  /** The positional parameter names of the function's Python signature, without the object ({@code self}). */
  private static List<String> argNames(SavedObject function, String what) {
    StructuredValue spec = function.getFunction().getFunctionSpec().getFullargspec();
    List<String> names = new ArrayList<>();
    for (var pair : spec.getNamedTupleValue().getValuesList()) {
      if (pair.getKey().equals("args")) {
        pair.getValue().getListValue().getValuesList().forEach(v -> names.add(v.getStringValue()));
      }
    }
    // As Python's loader (function_deserialization.py): a method's first argument, or a first
    // argument named self, is the object, which a restored function is not called with.
    if (function.getFunction().getFunctionSpec().getIsMethod() || (!names.isEmpty() && names.get(0).equals("self"))) {
      if (names.isEmpty()) {
        throw new IllegalArgumentException(what + " is saved as a method whose argument list names no 'self' argument");
      }
      names.remove(0);
    }
    return names;
  }

  private static Converted convert(String name, SavedConcreteFunction c, Map<String, FunctionDef> library,
      List<String> argNames, SavedObjectGraph graph, PythonLiterals literals, Map<Integer, TType> defaults,
      Interner interner, PythonCaptures inliner, boolean nested) {
    FunctionDef saved = library.get(name);
    if (saved == null) {
      throw new IllegalArgumentException("it is not in the graph's library");
    }
    // Constants and asset paths become the function's own Const nodes; variables and resources stay inputs.
    PythonCaptures.Inlined inlined = inliner.inline(saved, c.getBoundInputsList());
    FunctionDef def = inlined.def();
    // Nested tf.functions, tf.cond/while_loop/switch_case branches, map_fn and Keras RNN loops:
    // the library functions it reaches travel with it (renamed on restore, cycles refused).
    List<FunctionDef> called = FunctionLibrary.reachable(def, library, "the SavedModel's function library");
    TableSizes.check(def, called, inlined.assets());
    List<StructuredValue> args = PythonLiterals.args(c);
    if (args.size() > argNames.size()) {
      throw new IllegalArgumentException("it takes " + args.size() + " positional arguments, its Python signature names "
          + argNames.size());
    }
    List<Param> params = new ArrayList<>();
    List<Object> declared = new ArrayList<>();
    List<Object> traced = new ArrayList<>();
    Map<String, StructuredValue> structured = new LinkedHashMap<>(); // the arguments that take inputs, in order
    for (int i = 0; i < args.size(); i++) {
      String p = argNames.get(i);
      StructuredValue v = args.get(i);
      if (PythonLiterals.isLiteral(v)) {
        literal(p, i, v, literals, interner, params, declared, traced);
        continue;
      }
      structure(p, v, v.hasTensorSpecValue() ? defaults.get(i) : null, interner, params, declared, traced);
      structured.put(p, v);
    }
    // Keyword-only arguments follow the positional ones, in Python's flattening order (sorted by
    // name); one that is None in this concrete function is no parameter, as an absent one.
    var keywords = Nests.inCodePointOrder(PythonLiterals.signature(c).getValues(1).getDictValue().getFieldsMap());
    for (var kw : keywords.entrySet()) {
      StructuredValue v = kw.getValue();
      if (v.hasNoneValue()) {
        continue;
      }
      if (PythonLiterals.isLiteral(v)) {
        throw new IllegalArgumentException("keyword-only argument '" + kw.getKey() + "' is a Python " + v.getKindCase()
            + " literal, which Polyfn loads only as a positional argument");
      }
      structure(kw.getKey(), v, null, interner, params, declared, traced);
      structured.put(kw.getKey(), v);
    }
    // Python feeds an extension type's fields in declaration order, Polyfn a map's entries by sorted key.
    def = PythonStructures.reorder(def, def.getSignature().getInputArgCount() - inlined.bound().size(), structured);
    // The inputs' shape hints, in Python's input order before inlining and reordering: dropped,
    // as Python's own loader drops them (function_deserialization.py).
    def = def.toBuilder().removeAttr("_input_shapes").build();
    List<Object> declaredCaptures = new ArrayList<>();
    List<Object> tracedCaptures = new ArrayList<>();
    List<Integer> bound = inlined.bound();
    for (int i = 0; i < bound.size(); i++) {
      SavedObject o = graph.getNodes(bound.get(i));
      if (!o.hasVariable() && !o.hasResource()) {
        throw new IllegalArgumentException("it captures a " + o.getKindCase() + ", which Polyfn cannot restore");
      }
      declaredCaptures.add(capture(i, Map.of("kind", "variable_constraint", "dtypes", "any")));
      // A resource (a lookup table) is typed as a variable of resources: a scalar handle input.
      Map<String, Object> spec = new LinkedHashMap<>();
      spec.put("kind", "variable_spec");
      spec.put("dtype", o.hasVariable() ? o.getVariable().getDtype().name().substring(3) : "RESOURCE");
      spec.put("shape", o.hasVariable() ? PythonTypeSpecs.shape(o.getVariable().getShape()) : List.of());
      spec.put("alias", (long) i);
      tracedCaptures.add(capture(i, spec));
    }
    // Each output's static shape from the output signature, so that a save of the loaded function
    // tells Python the shapes Python's own save did.
    List<Object> shapes = new ArrayList<>();
    String[] outputs = nested ? paths(c.getOutputSignature(), def.getSignature().getOutputArgCount(), shapes)
        : outputs(c.getOutputSignature(), def.getSignature().getOutputArgCount(), shapes);
    RestoreChecks.outputTypes(def, outputs); // refused here, not at every call
    return new Converted(params, document(declared, declaredCaptures), document(traced, tracedCaptures), def, called,
        outputs, Json.write(shapes), bound);
  }

  /** Adds argument {@code p}, a tensor spec (with its default, or null) or a structure of them, as a parameter. */
  private static void structure(String p, StructuredValue v, TType def, Interner interner, List<Param> params,
      List<Object> declared, List<Object> traced) {
    Param.Kind kind = kind(p, v);
    params.add(kind == Param.Kind.NEST ? new Param(p, kind, null, null, null, false, null)
        : new Param(p, kind, TType.class, null, null, def != null, def));
    declared.add(param(p, kind, def != null, Map.of("kind", switch (kind) {
      case TENSOR -> "tensor_constraint";
      case LIST -> "list_constraint";
      case MAP -> "map_constraint";
      default -> "nest_constraint";
    })));
    traced.add(param(p, kind, def != null, PythonStructures.type(p, v, interner)));
  }

  /**
   * The parameter kind of a structure of specs: a tensor, a list (or tuple) of tensors, a dict of
   * tensors, or any deeper structure of lists, tuples and dicts as a nest parameter (whose traced
   * type, built by {@link #type}, refuses what Polyfn cannot represent, such as a None inside).
   */
  private static Param.Kind kind(String p, StructuredValue v) {
    if (v.hasTensorSpecValue()) {
      return Param.Kind.TENSOR;
    }
    if (v.hasTypeSpecValue()) {
      return Param.Kind.NEST; // a SparseTensorSpec, RaggedTensorSpec or extension type (others refused in type())
    }
    List<StructuredValue> items = v.hasDictValue() ? new ArrayList<>(v.getDictValue().getFieldsMap().values())
        : PythonStructures.sequence(v);
    if (items == null) {
      throw new IllegalArgumentException("argument '" + p + "' is a " + v.getKindCase() + ", not a tensor, list, tuple, namedtuple or dict");
    }
    if (!items.stream().allMatch(StructuredValue::hasTensorSpecValue)) {
      return Param.Kind.NEST;
    }
    return v.hasDictValue() ? Param.Kind.MAP : Param.Kind.LIST;
  }

  /**
   * Adds Python literal argument {@code i} as a Java-value parameter: the traced type is the
   * value itself, interned as a call's argument would be, so equal values dispatch here.
   */
  private static void literal(String name, int i, StructuredValue v, PythonLiterals literals, Interner interner,
      List<Param> params, List<Object> declared, List<Object> traced) {
    if (literals.alwaysNone(i)) {
      return; // None in every concrete function: no value to pass, no parameter
    }
    Param p = literals.param(i, name);
    Object value = PythonLiterals.value(v, p.javaClass());
    if (value == null) {
      throw new IllegalArgumentException("argument '" + name + "' is None, which no Java value stands for");
    }
    params.add(p);
    declared.add(param(name, Param.Kind.JAVA, p.optional(), Map.of("kind", "literal_constraint", "class", p.javaClass().getName())));
    Map<String, Object> type = new LinkedHashMap<>();
    type.put("kind", "literal");
    type.put("id", (long) interner.literal(p.javaClass(), value));
    type.put("repr", Interner.repr(value));
    type.put("class", p.javaClass().getName());
    traced.add(param(name, Param.Kind.JAVA, p.optional(), type));
  }

  private static Map<String, Object> param(String name, Param.Kind kind, Map<String, Object> type) {
    return param(name, kind, false, type);
  }

  private static Map<String, Object> param(String name, Param.Kind kind, boolean optional, Map<String, Object> type) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", name);
    m.put("kind", kind.name().toLowerCase(java.util.Locale.ROOT));
    m.put("optional", optional);
    Map<String, Object> t = new LinkedHashMap<>(type);
    if (t.get("kind").equals("tensor_constraint")) {
      t.put("dtypes", "any");
      t.put("shape", null);
    } else if (t.get("kind").equals("list_constraint")) {
      t.put("element", null);
      t.put("length", null);
    } else if (t.get("kind").equals("map_constraint")) {
      t.put("value", null);
    }
    m.put("type", t);
    return m;
  }

  private static Map<String, Object> capture(int i, Map<String, Object> type) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", "variable_" + i);
    m.put("type", type);
    return m;
  }

  private static String document(List<Object> params, List<Object> captures) {
    Map<String, Object> ft = new LinkedHashMap<>();
    ft.put("parameters", params);
    ft.put("captures", captures);
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("format", "polyfn.function_type");
    doc.put("version", 1L);
    doc.put("function_type", ft);
    return Json.write(doc);
  }

  /** A nested function's output names: the paths of the output structure's tensors, in Python's flattening order. */
  private static String[] paths(StructuredValue out, int count, List<Object> shapes) {
    List<String> paths = new ArrayList<>();
    PythonTypeSpecs.outputPaths(out, OutputStructure.ROOT, false, paths, shapes);
    if (paths.size() != count) {
      throw new IllegalArgumentException("its output structure holds " + paths.size() + " tensors, its FunctionDef has "
          + count + " outputs");
    }
    return paths.toArray(new String[0]);
  }

  /**
   * Output names of a function whose outputs are named tensors, one per tensor of the returned
   * structure in Python's flattening order (a dict by sorted key, nested; a None is no output, as
   * in Python's FunctionDef): a returned dict's tensor by its key ({@code logits}), a deeper one by
   * its path below that key ({@code extras[0]}, {@code extras['a']}); another structure's tensors
   * {@code output_0}, {@code output_1}... in that order. A structure naming two tensors alike, or
   * holding what is no tensor, is refused: a name must not go to another output's value. Each
   * output's static shape is added to {@code shapes}, in the same order.
   */
  static String[] outputs(StructuredValue out, int count, List<Object> shapes) {
    List<String> names = new ArrayList<>();
    if (out.hasDictValue()) {
      // A tensor at key k is named k, a deeper one by its path below k.
      Nests.inCodePointOrder(out.getDictValue().getFieldsMap()).forEach((k, v) ->
          PythonTypeSpecs.outputPaths(v, k, true, names, shapes));
    } else {
      PythonTypeSpecs.outputPaths(out, OutputStructure.ROOT, true, names, shapes);
      for (int i = 0; i < names.size(); i++) {
        names.set(i, "output_" + i);
      }
    }
    if (names.size() != count) {
      throw new IllegalArgumentException("its output structure holds " + names.size() + " tensors, its FunctionDef has "
          + count + " outputs");
    }
    Set<String> seen = new HashSet<>();
    for (String n : names) {
      if (!seen.add(n)) {
        throw new IllegalArgumentException("its outputs hold two tensors named '" + n + "', which named outputs cannot"
            + " tell apart: load it with Function.loadNested(dir, name)");
      }
    }
    return names.toArray(new String[0]);
  }

  public static boolean isPythonSavedModel(MetaGraphDef meta) {
    return meta.hasObjectGraphDef() && meta.getObjectGraphDef().getNodesCount() > 0
        && !PythonObjectGraph.POLYFN_MARK.equals(meta.getObjectGraphDef().getNodes(0).getUserObject().getMetadata());
  }
}
