package dev.polyfn.internal.saved;

import com.google.protobuf.ByteString;
import dev.polyfn.internal.structure.Nests;
import dev.polyfn.internal.structure.RaggedType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.NameAttrList;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.OpDef;
import org.tensorflow.proto.SavedObjectGraphOuterClass.FunctionSpec;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedBareConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedUserObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedVariable;
import org.tensorflow.proto.Struct.DictValue;
import org.tensorflow.proto.Struct.ListValue;
import org.tensorflow.proto.Struct.NamedTupleValue;
import org.tensorflow.proto.Struct.NoneValue;
import org.tensorflow.proto.Struct.PairValue;
import org.tensorflow.proto.Struct.StructuredValue;
import org.tensorflow.proto.Struct.TensorSpecProto;
import org.tensorflow.proto.Struct.TupleValue;
import org.tensorflow.proto.Struct.TypeSpecProto;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph.TrackableObject;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph.TrackableObject.ObjectReference;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph.TrackableObject.SerializedTensor;
import org.tensorflow.proto.VersionDef;

/**
 * The TF2 object graph that Python's {@code tf.saved_model.load} reads, written beside the
 * signatures, so that {@code m = tf.saved_model.load(dir); m.<name>(x)} dispatches across the
 * saved concrete functions as a Python-saved {@code tf.function} does, {@code
 * m.<name>.concrete_functions} lists them, and {@code m.signatures[key](**flat)} runs one.
 *
 * <p>The graph, as Python writes it for a {@code tf.Module} with one {@code tf.function}: node 0
 * a generic user object whose children are the variables ({@code v0}, {@code v1}...), the
 * function and {@code signatures}; one {@code variable} node per captured variable; one {@code
 * function} node naming the concrete functions; a signature map with one bare concrete function
 * per signature; then the captured lookup tables' nodes ({@link SavedTableWriter}). Each concrete
 * function records its captures ({@code bound_inputs}, the variable and table nodes in capture
 * order, which are its last inputs), its structured input
 * signature ({@code ((args...), {})}: a tensor as a {@code TensorSpec}, a list as a list, a map
 * as a dict, a record as a named tuple of its components, a {@code SparseTensor} as a {@code
 * SparseTensorSpec}, a {@code RaggedTensor} as a {@code RaggedTensorSpec}, which Python flattens in the order Polyfn does; a signature takes {@code
 * ((), {key: spec...})}) and its outputs (a dict by output name). The checkpoint gets the matching {@code TrackableObjectGraph}, which Python's loader
 * needs to restore the variables. A type holding a Java value has a signature but no Python
 * structure: that concrete function is left out of the function's list.
 *
 * <p>Python packs a dict's flat values in sorted key order: where a concrete function's outputs
 * are in another order, Python calls a small wrapper that returns them sorted.
 */
final class PythonObjectGraph {
  private PythonObjectGraph() {}

  /** The checkpoint key of the serialized {@code TrackableObjectGraph} (Python's {@code OBJECT_GRAPH_PROTO_KEY}). */
  static final String CHECKPOINT_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH";

  /**
   * The root object's metadata, which marks a SavedModel Polyfn wrote (Python ignores it): one
   * whose {@code polyfn.json} is missing is refused as damaged, not loaded as Python's.
   */
  static final String POLYFN_MARK = "written by Polyfn's save; its types are in assets.extra/polyfn.json";

  /** The root's child that is the signature map ({@code m.signatures}). */
  static final String SIGNATURES = "signatures";

  /** The root's child that is variable {@code v} ({@code m.v0}), also its name in the checkpoint. */
  static String variableName(int v) {
    return "v" + v;
  }

  /**
   * What child {@code name} of the root is, other than the function, in the object graph of a
   * function with {@code variables} variables and {@code tables} tables ({@link #objectGraph}):
   * "signature map", "variable" or "table"; null if no other child has that name.
   */
  static String rootChild(String name, int variables, int tables) {
    if (name.equals(SIGNATURES)) {
      return "signature map";
    }
    for (int v = 0; v < variables; v++) {
      if (name.equals(variableName(v))) {
        return "variable";
      }
    }
    for (int t = 0; t < tables; t++) {
      if (name.equals(SavedTableWriter.name(t))) {
        return "table";
      }
    }
    return null;
  }

  /**
   * What Python needs of one concrete function: the definitions to add to the library ({@code
   * defs}: its own with input shapes, and small wrappers that call it), the concrete function its
   * {@code tf.function} lists ({@code function}, null when its type holds a Java value) and the one
   * its signature is ({@code signature}: flat keyword arguments by signature key).
   */
  record Concrete(List<FunctionDef> defs, String functionName, SavedConcreteFunction function, String signatureName,
      SavedConcreteFunction signature) {}

  /**
   * Python's view of concrete function {@code s} of a function with {@code variables} captures
   * (variables and tables; {@link #objectGraph} binds them).
   */
  @SuppressWarnings("unchecked")
  static Concrete concrete(SavedModelWriter.Saved s, int variables) {
    AttrValue.ListValue.Builder shapes = AttrValue.ListValue.newBuilder();
    for (SavedSignatures.Input in : s.inputs()) {
      shapes.addShape(SavedGraph.shape(in.dims()));
    }
    for (int v = 0; v < variables; v++) {
      shapes.addShape(TensorShapeProto.getDefaultInstance());
    }
    AttrValue inputShapes = AttrValue.newBuilder().setList(shapes).build();
    FunctionDef def = s.def().toBuilder().putAttr("_input_shapes", inputShapes).build();
    int inputs = s.inputs().size() + variables;
    int[] same = java.util.stream.IntStream.range(0, inputs).toArray();
    OpDef callee = def.getSignature();
    List<String> names = s.info().outputNames();
    // Python packs a dict's values in sorted key order (code points, not Java's UTF-16 units):
    // the outputs in that order, by index.
    List<String> sorted = new ArrayList<>(names);
    sorted.sort(Nests::compareCodePoints);
    int[] order = sorted.stream().mapToInt(names::indexOf).toArray();
    DictValue.Builder outputs = DictValue.newBuilder();
    for (int i = 0; i < order.length; i++) {
      // The static shape the trace inferred, as Python's save writes its concrete functions'
      // structured outputs (unknown for a restored definition, which recorded none).
      long[] dims = s.outputShapes() == null ? null : s.outputShapes().get(order[i]);
      outputs.putFields(sorted.get(i), spec(sorted.get(i), callee.getOutputArg(order[i]).getType(), dims));
    }
    StructuredValue outputSignature = StructuredValue.newBuilder().setDictValue(outputs).build();
    List<FunctionDef> defs = new ArrayList<>(List.of(def));

    // The signature: flat keyword arguments, as Python's own signature functions take them,
    // which Python passes sorted by its names for the keys (then the variables).
    String signatureName = callee.getName() + "_signature";
    List<Integer> byKey = new ArrayList<>(java.util.stream.IntStream.range(0, s.inputs().size()).boxed().toList());
    byKey.sort(java.util.Comparator.comparing(i -> s.inputs().get(i).key(), PythonNames.argOrder()));
    int[] keyOrder = java.util.stream.IntStream.range(0, inputs)
        .map(k -> k < byKey.size() ? byKey.get(k) : k).toArray();
    AttrValue.ListValue.Builder keyShapes = AttrValue.ListValue.newBuilder();
    for (int k : keyOrder) {
      keyShapes.addShape(shapes.getShape(k));
    }
    defs.add(wrapper(signatureName, callee, keyOrder, order, AttrValue.newBuilder().setList(keyShapes).build()));
    DictValue.Builder flat = DictValue.newBuilder();
    for (SavedSignatures.Input in : s.inputs()) {
      flat.putFields(in.key(), spec(in.key(), in.dtype(), in.dims()));
    }
    StructuredValue noArgs = StructuredValue.newBuilder().setTupleValue(TupleValue.getDefaultInstance()).build();
    SavedConcreteFunction signature = saved(tuple(noArgs, StructuredValue.newBuilder().setDictValue(flat).build()),
        outputSignature);

    // The tf.function's concrete function: its parameters as Python structures.
    Map<String, Object> doc = (Map<String, Object>) Json.parse(s.traced());
    List<Object> params = (List<Object>) ((Map<String, Object>) doc.get("function_type")).get("parameters");
    TupleValue.Builder args = TupleValue.newBuilder();
    for (Object p : params) {
      Map<String, Object> param = (Map<String, Object>) p;
      StructuredValue v = structure(SavedSignatures.sanitize((String) param.get("name")), (Map<String, Object>) param.get("type"));
      if (v == null) {
        return new Concrete(defs, null, null, signatureName, signature);
      }
      args.addValues(v);
    }
    String functionName = callee.getName();
    if (!sorted.equals(names)) {
      functionName = callee.getName() + "_for_python";
      defs.add(wrapper(functionName, callee, same, order, inputShapes));
    }
    SavedConcreteFunction function = saved(tuple(StructuredValue.newBuilder().setTupleValue(args).build(),
        StructuredValue.newBuilder().setDictValue(DictValue.getDefaultInstance()).build()), outputSignature);
    return new Concrete(defs, functionName, function, signatureName, signature);
  }

  private static SavedConcreteFunction saved(StructuredValue input, StructuredValue output) {
    return SavedConcreteFunction.newBuilder().setCanonicalizedInputSignature(input).setOutputSignature(output).build();
  }

  /**
   * A definition named {@code name} that calls {@code callee} through one {@code
   * StatefulPartitionedCall}: its input {@code k} is the callee's input {@code inputs[k]}, and it
   * returns the callee's outputs {@code outputs[0]}, {@code outputs[1]}... (a few nodes, instead
   * of a copy of the callee's body).
   */
  private static FunctionDef wrapper(String name, OpDef callee, int[] inputs, int[] order, AttrValue inputShapes) {
    OpDef.Builder sig = OpDef.newBuilder().setName(name).setIsStateful(true);
    NodeDef.Builder call = NodeDef.newBuilder().setName("call").setOp("StatefulPartitionedCall");
    AttrValue.ListValue.Builder tin = AttrValue.ListValue.newBuilder();
    AttrValue.ListValue.Builder tout = AttrValue.ListValue.newBuilder();
    String[] argOf = new String[inputs.length];
    for (int k = 0; k < inputs.length; k++) {
      argOf[inputs[k]] = "arg_" + k;
      sig.addInputArg(OpDef.ArgDef.newBuilder().setName("arg_" + k).setType(callee.getInputArg(inputs[k]).getType()));
    }
    for (int j = 0; j < inputs.length; j++) {
      call.addInput(argOf[j]);
      tin.addType(callee.getInputArg(j).getType());
    }
    for (OpDef.ArgDef out : callee.getOutputArgList()) {
      tout.addType(out.getType());
    }
    call.putAttr("Tin", AttrValue.newBuilder().setList(tin).build())
        .putAttr("Tout", AttrValue.newBuilder().setList(tout).build())
        .putAttr("f", AttrValue.newBuilder().setFunc(NameAttrList.newBuilder().setName(callee.getName())).build())
        .putAttr("config", AttrValue.newBuilder().setS(ByteString.EMPTY).build())
        .putAttr("config_proto", AttrValue.newBuilder().setS(ByteString.EMPTY).build())
        .putAttr("executor_type", AttrValue.newBuilder().setS(ByteString.EMPTY).build());
    FunctionDef.Builder def = FunctionDef.newBuilder().addNodeDef(call).putAttr("_input_shapes", inputShapes);
    for (int i = 0; i < order.length; i++) {
      String out = "output_" + i;
      sig.addOutputArg(OpDef.ArgDef.newBuilder().setName(out).setType(callee.getOutputArg(order[i]).getType()));
      def.putRet(out, "call:output:" + order[i]);
    }
    return def.setSignature(sig).build();
  }

  /** The structured value of a traced type at {@code path}; null for a type Python cannot take. */
  @SuppressWarnings("unchecked")
  private static StructuredValue structure(String path, Map<String, Object> type) {
    String kind = type == null ? "none" : (String) type.get("kind");
    switch (kind) {
      case "tensor_spec" -> {
        SavedSignatures.Input in = SavedSignatures.tensorInput(path, type);
        return spec(path, in.dtype(), in.dims());
      }
      case "list" -> {
        ListValue.Builder list = ListValue.newBuilder();
        List<Object> elements = (List<Object>) type.get("elements");
        for (int i = 0; i < elements.size(); i++) {
          StructuredValue v = structure(path + "_" + i, (Map<String, Object>) elements.get(i));
          if (v == null) {
            return null;
          }
          list.addValues(v);
        }
        return StructuredValue.newBuilder().setListValue(list).build();
      }
      case "map" -> {
        DictValue.Builder dict = DictValue.newBuilder();
        for (Map.Entry<String, Object> e : Nests.inCodePointOrder((Map<String, Object>) type.get("entries")).entrySet()) {
          StructuredValue v = structure(path + "_" + SavedSignatures.sanitize(e.getKey()), (Map<String, Object>) e.getValue());
          if (v == null) {
            return null;
          }
          dict.putFields(e.getKey(), v);
        }
        return StructuredValue.newBuilder().setDictValue(dict).build();
      }
      case "record" -> {
        // A named tuple named as the record class, with its components as fields (Python's load
        // makes that namedtuple class); a tuple where Python could not (a field named "from").
        List<Object> names = (List<Object>) type.get("names");
        List<Object> types = (List<Object>) type.get("types");
        NamedTupleValue.Builder tuple = NamedTupleValue.newBuilder().setName(PythonNames.tupleName((String) type.get("class")));
        TupleValue.Builder plain = TupleValue.newBuilder();
        for (int i = 0; i < names.size(); i++) {
          String name = (String) names.get(i);
          StructuredValue v = structure(path + "_" + SavedSignatures.sanitize(name), (Map<String, Object>) types.get(i));
          if (v == null) {
            return null;
          }
          tuple.addValues(PairValue.newBuilder().setKey(name).setValue(v));
          plain.addValues(v);
        }
        return PythonNames.fields(names) ? StructuredValue.newBuilder().setNamedTupleValue(tuple).build()
            : StructuredValue.newBuilder().setTupleValue(plain).build();
      }
      case "composite" -> {
        return PythonObjectGraph.composite(path, type);
      }
      case "literal" -> {
        return SavedLiterals.python(type);
      }
      default -> {
        return null;
      }
    }
  }

  /**
   * Python knows two of Polyfn's composites: a SparseTensor is a SparseTensorSpec of the dense
   * shape and the values' dtype (flattened as indices, values, dense shape), a RaggedTensor a
   * RaggedTensorSpec of its shape, values' dtype, ragged rank and row splits' dtype (flattened as
   * flat values, then row splits outermost first). Null for another composite.
   */
  @SuppressWarnings("unchecked")
  private static StructuredValue composite(String path, Map<String, Object> type) {
    Object name = type.get("name");
    boolean sparse = "SparseTensor".equals(name);
    if (!(sparse || RaggedType.NAME.equals(name)) || !(type.get("shape") instanceof List<?>)) {
      return null;
    }
    long[] dims = ((List<Long>) type.get("shape")).stream().mapToLong(Long::longValue).toArray();
    DataType dtype = SavedSignatures.tensorInput(path, type).dtype();
    StructuredValue shape = StructuredValue.newBuilder().setTensorShapeValue(SavedGraph.shape(dims)).build();
    StructuredValue values = StructuredValue.newBuilder().setTensorDtypeValue(dtype).build();
    List<Object> components = (List<Object>) type.get("components");
    TypeSpecProto.Builder spec = TypeSpecProto.newBuilder().setNumFlatComponents(components.size());
    if (sparse) {
      spec.setTypeSpecClass(TypeSpecProto.TypeSpecClass.SPARSE_TENSOR_SPEC).setTypeSpecClassName("SparseTensorSpec")
          .setTypeState(tuple(shape, values));
    } else {
      DataType splits = SavedSignatures.tensorInput(path, (Map<String, Object>) components.get(1)).dtype();
      spec.setTypeSpecClass(TypeSpecProto.TypeSpecClass.RAGGED_TENSOR_SPEC).setTypeSpecClassName("RaggedTensorSpec")
          .setTypeState(tuple(shape, values, StructuredValue.newBuilder().setInt64Value(components.size() - 1).build(),
              StructuredValue.newBuilder().setTensorDtypeValue(splits).build()));
    }
    return StructuredValue.newBuilder().setTypeSpecValue(spec).build();
  }

  private static StructuredValue spec(String name, DataType dt, long[] dims) {
    return StructuredValue.newBuilder().setTensorSpecValue(TensorSpecProto.newBuilder()
        .setName(name).setDtype(dt).setShape(SavedGraph.shape(dims))).build();
  }

  private static StructuredValue tuple(StructuredValue... values) {
    return StructuredValue.newBuilder().setTupleValue(TupleValue.newBuilder().addAllValues(List.of(values))).build();
  }

  /** The number of nodes {@link #objectGraph} writes before the tables': where they start. */
  static int tablesBase(int variables, List<Concrete> concrete) {
    return 1 + variables + (concrete.stream().anyMatch(c -> c.functionName() != null) ? 1 : 0) + 1 + concrete.size();
  }

  /**
   * The object graph: the root; one node per variable ({@code dtypes}, {@code shapes}); the
   * function {@code name} with its concrete functions, if any can take Python structures;
   * {@code signatures}, a signature map with one concrete function per signature; then the
   * tables' nodes ({@code tables}, from node {@link #tablesBase} on). Every concrete function
   * captures the nodes {@code bound}, in capture order.
   */
  static SavedObjectGraph objectGraph(String name, List<String> paramNames, StructuredValue defaults,
      List<DataType> dtypes, List<TensorShapeProto> shapes, List<Concrete> concrete, List<String> signatureNames,
      List<Integer> bound, SavedTableWriter.Placed tables) {
    VersionDef version = VersionDef.newBuilder().setProducer(1).setMinConsumer(1).build();
    SavedObject.Builder root = SavedObject.newBuilder()
        .setUserObject(SavedUserObject.newBuilder().setIdentifier("_generic_user_object").setVersion(version)
            .setMetadata(POLYFN_MARK));
    SavedObjectGraph.Builder graph = SavedObjectGraph.newBuilder();
    List<SavedObject> nodes = new ArrayList<>();
    for (int v = 0; v < dtypes.size(); v++) {
      root.addChildren(ref(1 + v, variableName(v)));
      nodes.add(SavedObject.newBuilder().setVariable(SavedVariable.newBuilder().setDtype(dtypes.get(v))
          .setShape(shapes.get(v)).setTrainable(true).setName(variableName(v))).build());
    }
    List<String> listed = concrete.stream().filter(c -> c.functionName() != null).map(Concrete::functionName).toList();
    if (!listed.isEmpty()) {
      root.addChildren(ref(1 + nodes.size(), name));
      nodes.add(SavedObject.newBuilder().setFunction(SavedFunction.newBuilder()
          .addAllConcreteFunctions(listed).setFunctionSpec(spec(paramNames, defaults))).build());
    }
    int map = 1 + nodes.size();
    root.addChildren(ref(map, SIGNATURES));
    SavedObject.Builder signatures = SavedObject.newBuilder()
        .setUserObject(SavedUserObject.newBuilder().setIdentifier("signature_map").setVersion(version));
    for (int i = 0; i < concrete.size(); i++) {
      signatures.addChildren(ref(map + 1 + i, signatureNames.get(i)));
    }
    nodes.add(signatures.build());
    for (Concrete c : concrete) {
      SavedBareConcreteFunction.Builder bare = SavedBareConcreteFunction.newBuilder()
          .setConcreteFunctionName(c.signatureName()).setAllowedPositionalArguments(0);
      c.signature().getCanonicalizedInputSignature().getTupleValue().getValues(1).getDictValue().getFieldsMap().keySet()
          .stream().sorted(PythonNames.argOrder()).forEach(bare::addArgumentKeywords);
      nodes.add(SavedObject.newBuilder().setBareConcreteFunction(bare).build());
      graph.putConcreteFunctions(c.signatureName(), c.signature().toBuilder().addAllBoundInputs(bound).build());
      if (c.functionName() != null) {
        graph.putConcreteFunctions(c.functionName(), c.function().toBuilder().addAllBoundInputs(bound).build());
      }
    }
    if (1 + nodes.size() != tablesBase(dtypes.size(), concrete)) {
      throw new IllegalStateException("the tables' nodes are not where they were placed");
    }
    root.addAllChildren(tables.roots());
    nodes.addAll(tables.nodes());
    graph.putAllConcreteFunctions(tables.concrete());
    return graph.addNodes(root).addAllNodes(nodes).build();
  }

  private static ObjectReference ref(int node, String localName) {
    return ObjectReference.newBuilder().setNodeId(node).setLocalName(localName).build();
  }

  /**
   * Python's {@code FunctionSpec}: a {@code FullArgSpec} whose {@code args} are the parameters and
   * whose {@code defaults} their default values (see {@link SavedLiterals#pythonDefaults}).
   */
  private static FunctionSpec spec(List<String> paramNames, StructuredValue defaults) {
    StructuredValue none = StructuredValue.newBuilder().setNoneValue(NoneValue.getDefaultInstance()).build();
    ListValue.Builder args = ListValue.newBuilder();
    for (String p : paramNames) {
      args.addValues(StructuredValue.newBuilder().setStringValue(p));
    }
    NamedTupleValue.Builder full = NamedTupleValue.newBuilder().setName("FullArgSpec")
        .addValues(pair("args", StructuredValue.newBuilder().setListValue(args).build()))
        .addValues(pair("varargs", none)).addValues(pair("varkw", none))
        .addValues(pair("defaults", defaults))
        .addValues(pair("kwonlyargs", StructuredValue.newBuilder().setListValue(ListValue.getDefaultInstance()).build()))
        .addValues(pair("kwonlydefaults", none))
        .addValues(pair("annotations", StructuredValue.newBuilder().setDictValue(DictValue.getDefaultInstance()).build()));
    return FunctionSpec.newBuilder().setFullargspec(StructuredValue.newBuilder().setNamedTupleValue(full))
        .setInputSignature(none).build();
  }

  private static PairValue pair(String key, StructuredValue value) {
    return PairValue.newBuilder().setKey(key).setValue(value).build();
  }

  /**
   * The checkpoint's object graph: the nodes of {@code objects} with their children, the
   * variables' values under {@code keys}, the tables' contents as {@code tables} says.
   */
  static byte[] trackableGraph(SavedObjectGraph objects, List<String> keys, Map<Integer, List<SerializedTensor>> tables) {
    TrackableObjectGraph.Builder g = TrackableObjectGraph.newBuilder();
    for (int i = 0; i < objects.getNodesCount(); i++) {
      TrackableObject.Builder node = TrackableObject.newBuilder().addAllChildren(objects.getNodes(i).getChildrenList());
      if (i >= 1 && i <= keys.size()) {
        node.addAttributes(SerializedTensor.newBuilder().setName("VARIABLE_VALUE").setFullName(variableName(i - 1))
            .setCheckpointKey(keys.get(i - 1)));
      }
      node.addAllAttributes(tables.getOrDefault(i, List.of()));
      g.addNodes(node);
    }
    return g.build().toByteArray();
  }
}
