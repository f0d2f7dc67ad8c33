package dev.polyfn.internal.saved;

import dev.polyfn.internal.Interner;
import dev.polyfn.internal.structure.Nests;
import dev.polyfn.internal.structure.OutputStructure;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.OpDef.ArgDef;
import org.tensorflow.proto.Struct.StructuredValue;
import org.tensorflow.proto.Struct.TypeSpecProto;
import org.tensorflow.proto.Struct.TypeSpecProto.TypeSpecClass;

/**
 * The traced types of Python's structured arguments, and the order their tensors take in the
 * concrete function's inputs. An extension type ({@code tf.experimental.ExtensionType}) is what
 * Python's own loader makes of one whose class is not registered ({@code AnonymousExtensionType}):
 * a struct of its named fields, here a map parameter (Java passes a {@code Map} of the fields; a
 * static field, a bool, int, float or str, is a Java value the call must equal). Python flattens
 * an extension type's fields in declaration order, Polyfn a map by sorted key: {@link #reorder}
 * permutes the FunctionDef's inputs so that Polyfn's order feeds them.
 */
final class PythonStructures {
  /** The state field Python adds to a packed extension type (its fields in one variant tensor). */
  private static final String PACKED = "_tf_extension_type_is_packed";

  private PythonStructures() {}

  /** The traced type of argument {@code at}: a tensor spec, a list or map of them, a composite. */
  static Map<String, Object> type(String at, StructuredValue v, Interner interner) {
    return type(at, v, interner, false);
  }

  private static Map<String, Object> type(String at, StructuredValue v, Interner interner, boolean inExtension) {
    Map<String, Object> m = new LinkedHashMap<>();
    List<StructuredValue> items = sequence(v);
    if (v.hasTensorSpecValue()) {
      m.put("kind", "tensor_spec");
      m.put("dtype", v.getTensorSpecValue().getDtype().name().substring(3));
      m.put("shape", PythonTypeSpecs.shape(v.getTensorSpecValue().getShape()));
    } else if (items != null) {
      List<Object> elements = new ArrayList<>();
      for (int i = 0; i < items.size(); i++) {
        elements.add(type(at + "[" + i + "]", items.get(i), interner, inExtension));
      }
      m.put("kind", "list");
      m.put("elements", elements);
    } else if (v.hasDictValue()) {
      Map<String, Object> entries = new TreeMap<>();
      v.getDictValue().getFieldsMap().forEach((k, e) -> entries.put(k, type(at + "['" + k + "']", e, interner, inExtension)));
      m.put("kind", "map");
      m.put("entries", entries);
    } else if (isExtension(v)) {
      Map<String, Object> entries = new TreeMap<>();
      fields("argument " + at, v.getTypeSpecValue()).forEach((k, e) -> entries.put(k, type(at + "['" + k + "']", e, interner, true)));
      m.put("kind", "map");
      m.put("entries", entries);
    } else if (v.hasTypeSpecValue()) {
      return PythonTypeSpecs.composite("argument " + at, v.getTypeSpecValue());
    } else if (inExtension) {
      return literal(at, v, interner);
    } else {
      throw new IllegalArgumentException("argument " + at + " is a " + v.getKindCase() + ", which Polyfn cannot represent");
    }
    return m;
  }

  /**
   * A static field of an extension type as a Java value leaf of the nest: interned by its class
   * (an int that fits in 32 bits is an Integer, as a Java literal), as a call's value would be.
   */
  private static Map<String, Object> literal(String at, StructuredValue v, Interner interner) {
    Object value = PythonLiterals.isLiteral(v) ? PythonLiterals.value(v, Object.class) : null;
    if (value == null) {
      throw new IllegalArgumentException("argument " + at + " is a static field holding a " + (v.hasNoneValue() ? "None"
          : v.hasTensorShapeValue() ? "TensorShape" : v.hasTensorDtypeValue() ? "DType" : v.getKindCase().toString())
          + ", which no Java value stands for (static fields Polyfn loads: bool, int, float, str)");
    }
    Map<String, Object> type = new LinkedHashMap<>();
    type.put("kind", "literal");
    type.put("id", (long) interner.literal(value.getClass(), value));
    type.put("repr", Interner.repr(value));
    type.put("class", value.getClass().getName());
    return type;
  }

  static boolean isExtension(StructuredValue v) {
    return v.hasTypeSpecValue() && v.getTypeSpecValue().getTypeSpecClass() == TypeSpecClass.EXTENSION_TYPE_SPEC;
  }

  /**
   * The fields of extension type spec {@code spec} in declaration order (its state: a tuple of
   * (name, value) pairs), {@code at} naming it in messages. A packed one is refused.
   */
  static Map<String, StructuredValue> fields(String at, TypeSpecProto spec) {
    Map<String, StructuredValue> fields = new LinkedHashMap<>();
    String cls = spec.getTypeSpecClassName();
    for (StructuredValue pair : spec.getTypeState().getTupleValue().getValuesList()) {
      List<StructuredValue> kv = pair.getTupleValue().getValuesList();
      if (kv.size() != 2 || !kv.get(0).hasStringValue() || fields.containsKey(kv.get(0).getStringValue())) {
        throw new IllegalArgumentException(at + " is a " + cls + " (an extension type) whose state is not a tuple of"
            + " distinct (name, value) fields, which Polyfn cannot read");
      }
      if (kv.get(0).getStringValue().equals(PACKED)) {
        throw new IllegalArgumentException(at + " is a packed " + cls + " (an extension type whose fields are packed into"
            + " one variant tensor), which Polyfn cannot represent: save it unpacked");
      }
      fields.put(kv.get(0).getStringValue(), kv.get(1));
    }
    return fields;
  }

  /**
   * Adds the paths of {@code v}'s tensors (a composite's components, {@code #i}) in Python's
   * flattening order ({@code python}: an extension type's fields in declaration order) or in
   * Polyfn's (by sorted field name, as for any map); dicts by sorted key in both.
   */
  static void leaves(String path, StructuredValue v, boolean python, List<String> out) {
    List<StructuredValue> items = sequence(v);
    if (v.hasTensorSpecValue()) {
      out.add(path);
    } else if (items != null) {
      for (int i = 0; i < items.size(); i++) {
        leaves(path + "[" + i + "]", items.get(i), python, out);
      }
    } else if (v.hasDictValue()) {
      Nests.inCodePointOrder(v.getDictValue().getFieldsMap()).forEach((k, e) -> leaves(key(path, k), e, python, out));
    } else if (isExtension(v)) {
      Map<String, StructuredValue> fields = fields(path, v.getTypeSpecValue());
      (python ? fields : Nests.inCodePointOrder(fields)).forEach((k, e) -> leaves(key(path, k), e, python, out));
    } else if (v.hasTypeSpecValue()) {
      int n = ((List<?>) PythonTypeSpecs.composite(path, v.getTypeSpecValue()).get("components")).size();
      for (int i = 0; i < n; i++) {
        out.add(path + "#" + i);
      }
    }
    // A static field (a literal) is no input.
  }

  /** The path of entry {@code k} below {@code path}, escaped so that no key can pass for a deeper path. */
  private static String key(String path, String k) {
    return path + "['" + OutputStructure.escape(k) + "']";
  }

  /**
   * {@code def} with its first {@code explicit} inputs (those of the arguments {@code args}, in
   * Python's order) reordered to Polyfn's; the captured inputs after them stay. Body nodes refer
   * to inputs by name, so only the signature, its arg attributes and resource ids move.
   */
  static FunctionDef reorder(FunctionDef def, int explicit, Map<String, StructuredValue> args) {
    List<String> python = new ArrayList<>();
    List<String> polyfn = new ArrayList<>();
    args.forEach((name, v) -> {
      leaves(name, v, true, python);
      leaves(name, v, false, polyfn);
    });
    if (python.size() != explicit) {
      throw new IllegalArgumentException("its arguments hold " + python.size() + " tensors, its FunctionDef takes "
          + explicit + " inputs besides the captured ones");
    }
    if (python.equals(polyfn)) {
      return def;
    }
    Map<String, Integer> at = new HashMap<>();
    for (int i = 0; i < python.size(); i++) {
      if (at.put(python.get(i), i) != null) {
        throw new IllegalArgumentException("its arguments hold two tensors at " + python.get(i) + ", which Polyfn cannot"
            + " tell apart to order its inputs");
      }
    }
    List<Integer> from = new ArrayList<>();
    for (int i = 0; i < def.getSignature().getInputArgCount(); i++) {
      from.add(i < explicit ? at.get(polyfn.get(i)) : i);
    }
    return withInputs(def, def.toBuilder(), from).build();
  }

  /**
   * {@code b} (a builder of {@code def}, maybe edited) whose inputs are {@code def}'s inputs at
   * indices {@code from}, in that order, with their arg attributes and resource ids moved along.
   * Body nodes refer to inputs by name, so they need no change.
   */
  static FunctionDef.Builder withInputs(FunctionDef def, FunctionDef.Builder b, List<Integer> from) {
    List<ArgDef> inputs = def.getSignature().getInputArgList();
    b.getSignatureBuilder().clearInputArg();
    b.clearArgAttr();
    b.clearResourceArgUniqueId();
    for (int i = 0; i < from.size(); i++) {
      int k = from.get(i);
      b.getSignatureBuilder().addInputArg(inputs.get(k));
      if (def.containsArgAttr(k)) {
        b.putArgAttr(i, def.getArgAttrOrThrow(k));
      }
      if (def.containsResourceArgUniqueId(k)) {
        b.putResourceArgUniqueId(i, def.getResourceArgUniqueIdOrThrow(k));
      }
    }
    return b;
  }

  /**
   * Adds the output paths of an extension type output at {@code path}: its fields in declaration
   * order (the FunctionDef's output order), each as {@code path['field']}; a static field is refused.
   */
  static void outputFields(StructuredValue v, String path, List<String> out) {
    fields("output " + path, v.getTypeSpecValue()).forEach((k, e) -> {
      String at = path + "['" + OutputStructure.escape(k) + "']";
      if (PythonLiterals.isLiteral(e) || e.hasTensorShapeValue() || e.hasTensorDtypeValue()) {
        throw new IllegalArgumentException("output " + at + " is a static field of a " + v.getTypeSpecValue()
            .getTypeSpecClassName() + " (a Python " + e.getKindCase() + "), which a Java output, made of tensors, cannot hold");
      }
      PythonTypeSpecs.outputPaths(e, at, false, out);
    });
  }

  /**
   * The items of a list, tuple or namedtuple in Python's flattening order (a namedtuple is a
   * tuple: its fields in declaration order, so Java passes it as a List), or null.
   */
  static List<StructuredValue> sequence(StructuredValue v) {
    if (v.hasListValue()) {
      return v.getListValue().getValuesList();
    }
    if (v.hasTupleValue()) {
      return v.getTupleValue().getValuesList();
    }
    if (v.hasNamedTupleValue()) {
      return v.getNamedTupleValue().getValuesList().stream().map(pair -> pair.getValue()).toList();
    }
    return null;
  }
}
