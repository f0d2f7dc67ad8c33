package dev.polyfn.internal.saved;

import dev.polyfn.internal.structure.Nests;
import dev.polyfn.internal.structure.OutputStructure;
import dev.polyfn.internal.structure.RaggedType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.Struct.StructuredValue;
import org.tensorflow.proto.Struct.TypeSpecProto;
import org.tensorflow.proto.Struct.TypeSpecProto.TypeSpecClass;
import org.tensorflow.proto.TensorShapeProto;

/**
 * Python's composite type specs in a saved input signature as Polyfn's built-in composites (the
 * traced type a call's value must fit): a {@code SparseTensorSpec} is a {@code SparseTensor}, a
 * {@code RaggedTensorSpec} a {@code RaggedTensor}, their components in the order Python flattens
 * them into the concrete function's inputs (extension types are maps of their fields, see {@link
 * PythonStructures}). Any other type spec is refused, named. Outputs that hold
 * composites make the loaded function a nested one, whose output paths {@link #outputPaths} gives.
 */
final class PythonTypeSpecs {
  private PythonTypeSpecs() {}

  /** The traced type of type spec {@code spec}, {@code at} naming it in messages ({@code argument r}). */
  static Map<String, Object> composite(String at, TypeSpecProto spec) {
    if (spec.getTypeSpecClass() == TypeSpecClass.SPARSE_TENSOR_SPEC) {
      return sparse(at, spec.getTypeState());
    }
    if (spec.getTypeSpecClass() == TypeSpecClass.RAGGED_TENSOR_SPEC) {
      return ragged(at, spec.getTypeState());
    }
    throw new IllegalArgumentException(at + " is a " + spec.getTypeSpecClassName()
        + " (TYPE_SPEC_VALUE), which Polyfn cannot represent");
  }

  /**
   * A {@code SparseTensorSpec} (its state: the dense shape, the values' dtype): the concrete
   * function takes indices, values and dense shape as three inputs, in that order.
   */
  private static Map<String, Object> sparse(String at, StructuredValue state) {
    List<StructuredValue> parts = state.getTupleValue().getValuesList();
    if (parts.size() != 2 || !parts.get(0).hasTensorShapeValue() || !parts.get(1).hasTensorDtypeValue()
        || parts.get(0).getTensorShapeValue().getUnknownRank()) {
      throw new IllegalArgumentException(at + " is a SparseTensorSpec of unknown rank or an unreadable state,"
          + " which Polyfn cannot represent");
    }
    Object shape = shape(parts.get(0).getTensorShapeValue());
    long rank = ((List<?>) shape).size();
    String dtype = dtype(parts.get(1).getTensorDtypeValue());
    return composite("SparseTensor", dtype, shape, List.of("indices", "values", "dense_shape"),
        List.of(spec("INT64", List.of(-1L, rank)), spec(dtype, List.of(-1L)), spec("INT64", List.of(rank))));
  }

  /**
   * A {@code RaggedTensorSpec} (its state: shape, values' dtype, ragged rank, row splits' dtype,
   * maybe a {@code flat_values_spec}): the concrete function takes the flat values ({@code [-1,
   * inner dims]}, or the flat_values_spec's shape), the outer row splits ({@code [rows + 1]}) and
   * the inner ones ({@code [-1]}), as {@code _component_specs} says. A ragged rank of 0 (a dense
   * tensor) and flat values that are themselves composite are refused.
   */
  private static Map<String, Object> ragged(String at, StructuredValue state) {
    List<StructuredValue> parts = state.getTupleValue().getValuesList();
    if (parts.size() < 4 || parts.size() > 5 || !parts.get(0).hasTensorShapeValue() || !parts.get(1).hasTensorDtypeValue()
        || !parts.get(2).hasInt64Value() || !parts.get(3).hasTensorDtypeValue()) {
      throw new IllegalArgumentException(at + " is a RaggedTensorSpec with an unreadable state, which Polyfn cannot represent");
    }
    StructuredValue flatSpec = parts.size() == 5 && !parts.get(4).hasNoneValue() ? parts.get(4) : null;
    if (flatSpec != null && flatSpec.hasTypeSpecValue()) {
      throw new IllegalArgumentException(at + " is a RaggedTensorSpec with flat values that are themselves a "
          + flatSpec.getTypeSpecValue().getTypeSpecClassName() + ", which Polyfn cannot represent (its RaggedTensor's flat"
          + " values are a tensor)");
    }
    if (flatSpec != null && (!flatSpec.hasTensorSpecValue()
        || flatSpec.getTensorSpecValue().getDtype() != parts.get(1).getTensorDtypeValue())) {
      throw new IllegalArgumentException(at + " is a RaggedTensorSpec whose flat_values_spec (" + flatSpec.getKindCase()
          + (flatSpec.hasTensorSpecValue() ? " of " + flatSpec.getTensorSpecValue().getDtype() : "")
          + ") is not a TensorSpec of its dtype " + parts.get(1).getTensorDtypeValue() + ", which Polyfn cannot represent");
    }
    long raggedRank = parts.get(2).getInt64Value();
    Object shape = shape(parts.get(0).getTensorShapeValue());
    DataType splits = parts.get(3).getTensorDtypeValue();
    if (raggedRank < 1 || raggedRank > 64 || (shape instanceof List<?> dims && raggedRank >= dims.size())
        || (splits != DataType.DT_INT64 && splits != DataType.DT_INT32)) {
      throw new IllegalArgumentException(at + " is a RaggedTensorSpec of ragged rank " + raggedRank
          + ", shape " + shape + " and " + splits + " row splits, which Polyfn cannot represent (a RaggedTensor has a"
          + " ragged rank of 1 or more, below its rank, and int64 or int32 row splits)");
    }
    String dtype = dtype(parts.get(1).getTensorDtypeValue());
    Object flat = "unknown";
    long outer = -1;
    if (shape instanceof List<?> l) {
      @SuppressWarnings("unchecked")
      List<Long> dims = (List<Long>) l;
      List<Long> inner = new ArrayList<>(List.of(-1L));
      inner.addAll(dims.subList((int) raggedRank + 1, dims.size()));
      flat = inner;
      outer = dims.get(0) < 0 ? -1 : dims.get(0) + 1;
    }
    if (flatSpec != null) {
      flat = shape(flatSpec.getTensorSpecValue().getShape());
    }
    List<Object> components = new ArrayList<>();
    components.add(spec(dtype, flat));
    components.add(spec(dtype(splits), List.of(outer)));
    for (int i = 1; i < raggedRank; i++) {
      components.add(spec(dtype(splits), List.of(-1L)));
    }
    return composite(RaggedType.NAME, dtype, shape, List.copyOf(RaggedType.names((int) raggedRank)), components);
  }

  private static Map<String, Object> composite(String name, String dtype, Object shape, List<String> names,
      List<Object> components) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", "composite");
    m.put("name", name);
    m.put("dtype", dtype);
    m.put("shape", shape);
    m.put("metadata", null);
    m.put("component_names", names);
    m.put("components", components);
    return m;
  }

  private static Map<String, Object> spec(String dtype, Object shape) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", "tensor_spec");
    m.put("dtype", dtype);
    m.put("shape", shape);
    return m;
  }

  private static String dtype(DataType t) {
    return t.name().substring(3);
  }

  /** A shape as traced types write it: its dims (-1 unknown), or "unknown" for an unknown rank. */
  static Object shape(TensorShapeProto s) {
    if (s.getUnknownRank()) {
      return "unknown";
    }
    List<Long> dims = new ArrayList<>();
    s.getDimList().forEach(d -> dims.add(d.getSize() < 0 ? -1L : d.getSize()));
    return dims;
  }

  /**
   * The output paths of output structure {@code v} at {@code path}, as a nested function names its
   * leaves ({@code $['y']}, {@code $['r']#RaggedTensor:0}...), in the order Python flattens it into
   * the FunctionDef's outputs: dict entries by sorted key, list, tuple and namedtuple items by
   * index, an extension type's fields in declaration order, composites expanded into their
   * components. {@code named}: the paths of a function whose outputs are named tensors, where a
   * None is no output (Python's FunctionDef has none for it) and a composite is refused; else a
   * None is refused (a nested function's outputs hold no None).
   */
  static void outputPaths(StructuredValue v, String path, boolean named, List<String> out) {
    outputPaths(v, path, named, out, null);
  }

  /**
   * As {@link #outputPaths(StructuredValue, String, boolean, List)}, adding each output's static
   * shape to {@code shapes} (unless null) in the same order: a TensorSpec's dims (-1 unknown; null
   * an unknown rank), null for a component of a composite or extension type.
   */
  static void outputPaths(StructuredValue v, String path, boolean named, List<String> out, List<Object> shapes) {
    List<StructuredValue> items = PythonStructures.sequence(v);
    int before = out.size();
    if (named && v.hasNoneValue()) {
      return;
    } else if (v.hasTensorSpecValue()) {
      out.add(path);
      Object dims = shape(v.getTensorSpecValue().getShape());
      if (shapes != null) {
        shapes.add(dims instanceof List<?> ? dims : null);
      }
      return;
    } else if (v.hasDictValue()) {
      Nests.inCodePointOrder(v.getDictValue().getFieldsMap()).forEach((k, e) ->
          outputPaths(e, path + "['" + OutputStructure.escape(k) + "']", named, out, shapes));
      return;
    } else if (items != null) {
      for (int i = 0; i < items.size(); i++) {
        outputPaths(items.get(i), path + "[" + i + "]", named, out, shapes);
      }
      return;
    } else if (!named && PythonStructures.isExtension(v)) {
      PythonStructures.outputFields(v, path, out);
    } else if (!named && v.hasTypeSpecValue()) {
      Map<String, Object> type = composite("output " + path, v.getTypeSpecValue());
      for (int i = 0; i < ((List<?>) type.get("components")).size(); i++) {
        out.add(path + "#" + type.get("name") + ":" + i);
      }
    } else {
      throw new IllegalArgumentException("output " + path + " is a " + v.getKindCase() + ", which "
          + (named ? "a named tensor output cannot hold" : "Polyfn cannot return"));
    }
    for (int i = before; shapes != null && i < out.size(); i++) {
      shapes.add(null); // a composite's components: shapes not recorded
    }
  }

  /** The path of the first composite (a type spec) in output structure {@code v}, or null. */
  static String composite(StructuredValue v, String path) {
    if (v.hasTypeSpecValue()) {
      return path + " (a " + v.getTypeSpecValue().getTypeSpecClassName() + ")";
    }
    if (v.hasDictValue()) {
      for (var e : Nests.inCodePointOrder(v.getDictValue().getFieldsMap()).entrySet()) {
        String found = composite(e.getValue(), path + "['" + e.getKey() + "']");
        if (found != null) {
          return found;
        }
      }
    }
    List<StructuredValue> items = PythonStructures.sequence(v);
    items = items == null ? List.of() : items;
    for (int i = 0; i < items.size(); i++) {
      String found = composite(items.get(i), path + "[" + i + "]");
      if (found != null) {
        return found;
      }
    }
    return null;
  }
}
