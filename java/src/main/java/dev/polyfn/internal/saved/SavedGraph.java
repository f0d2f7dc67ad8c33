package dev.polyfn.internal.saved;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.GraphDef;
import org.tensorflow.proto.NameAttrList;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.SaverDef;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;

/**
 * The GraphDef of a SavedModel Polyfn writes, built node by node as protocol buffers: one
 * resource variable per captured variable, a V2 saver (the restore and save subgraphs TensorFlow's
 * loaders run through the {@link SaverDef}) and, per signature, placeholders feeding a {@code
 * StatefulPartitionedCall} of the concrete function's FunctionDef. Every attribute is written, so
 * loaders that do not fill in defaults read the same graph.
 */
public final class SavedGraph {
  public static final String FILENAME = "save/filename";
  public static final String RESTORE_ALL = "save/restore_all";
  public static final String SAVE_TENSOR = "save/control_dependency";

  private final GraphDef.Builder graph = GraphDef.newBuilder();

  public GraphDef.Builder graph() {
    return graph;
  }

  /** A resource variable {@code name} of {@code dtype} and {@code shape}. */
  public void variable(String name, DataType dtype, TensorShapeProto shape) {
    node(name, "VarHandleOp")
        .putAttr("container", str(""))
        .putAttr("shared_name", str(name))
        .putAttr("dtype", type(dtype))
        .putAttr("shape", AttrValue.newBuilder().setShape(shape).build())
        .putAttr("allowed_devices", AttrValue.newBuilder().setList(AttrValue.ListValue.newBuilder()).build());
  }

  /**
   * The saver of {@code variables} (node names) stored under {@code keys} in the checkpoint: a
   * restore op that assigns each from a RestoreV2, and a save op, as a V1 {@code Saver} writes them.
   * Without variables (a saver for the tables' contents only, which add their own restores to
   * {@link #RESTORE_ALL}): no RestoreV2 and SaveV2, which take at least one tensor.
   */
  public SaverDef saver(List<String> variables, List<String> keys, List<DataType> dtypes) {
    node(FILENAME + "/input", "Const").putAttr("dtype", type(DataType.DT_STRING))
        .putAttr("value", AttrValue.newBuilder().setTensor(strings(List.of("model"), false)).build());
    node(FILENAME, "PlaceholderWithDefault").addInput(FILENAME + "/input")
        .putAttr("dtype", type(DataType.DT_STRING))
        .putAttr("shape", AttrValue.newBuilder().setShape(TensorShapeProto.getDefaultInstance()).build());
    if (variables.isEmpty()) {
      node(RESTORE_ALL, "NoOp");
      node(SAVE_TENSOR, "Identity").addInput(FILENAME).putAttr("T", type(DataType.DT_STRING));
      return saverDef();
    }
    List<String> empty = keys.stream().map(k -> "").toList();
    AttrValue.ListValue.Builder types = AttrValue.ListValue.newBuilder();
    dtypes.forEach(types::addType);
    stringConst("save/tensor_names", keys);
    stringConst("save/shape_and_slices", empty);
    NodeDef.Builder restore = node("save/RestoreV2", "RestoreV2")
        .addInput(FILENAME).addInput("save/tensor_names").addInput("save/shape_and_slices")
        .putAttr("dtypes", AttrValue.newBuilder().setList(types).build());
    NodeDef.Builder restoreAll = node(RESTORE_ALL, "NoOp");
    NodeDef.Builder save = node("save/SaveV2", "SaveV2")
        .addInput(FILENAME).addInput("save/tensor_names").addInput("save/shape_and_slices")
        .putAttr("dtypes", AttrValue.newBuilder().setList(types).build());
    for (int i = 0; i < variables.size(); i++) {
      node("save/Assign_" + i, "AssignVariableOp").addInput(variables.get(i)).addInput(restore.getName() + ":" + i)
          .putAttr("dtype", type(dtypes.get(i))).putAttr("validate_shape", AttrValue.newBuilder().setB(false).build());
      restoreAll.addInput("^save/Assign_" + i);
      node("save/Read_" + i, "ReadVariableOp").addInput(variables.get(i)).putAttr("dtype", type(dtypes.get(i)));
      save.addInput("save/Read_" + i);
    }
    node(SAVE_TENSOR, "Identity").addInput(FILENAME).addInput("^save/SaveV2").putAttr("T", type(DataType.DT_STRING));
    return saverDef();
  }

  private static SaverDef saverDef() {
    return SaverDef.newBuilder()
        .setFilenameTensorName(FILENAME + ":0")
        .setSaveTensorName(SAVE_TENSOR + ":0")
        .setRestoreOpName(RESTORE_ALL)
        .setMaxToKeep(5)
        .setKeepCheckpointEveryNHours(10000f)
        .setVersion(SaverDef.CheckpointFormatVersion.V2)
        .build();
  }

  /** A placeholder of {@code dtype} and {@code shape}. */
  public void placeholder(String name, DataType dtype, TensorShapeProto shape) {
    node(name, "Placeholder").putAttr("dtype", type(dtype))
        .putAttr("shape", AttrValue.newBuilder().setShape(shape).build());
  }

  /** A call of function {@code function} on {@code inputs}. */
  public void call(String name, String function, List<String> inputs, List<DataType> in, List<DataType> out) {
    AttrValue.ListValue.Builder tin = AttrValue.ListValue.newBuilder();
    in.forEach(tin::addType);
    AttrValue.ListValue.Builder tout = AttrValue.ListValue.newBuilder();
    out.forEach(tout::addType);
    NodeDef.Builder n = node(name, "StatefulPartitionedCall")
        .putAttr("f", AttrValue.newBuilder().setFunc(NameAttrList.newBuilder().setName(function)).build())
        .putAttr("Tin", AttrValue.newBuilder().setList(tin).build())
        .putAttr("Tout", AttrValue.newBuilder().setList(tout).build())
        .putAttr("config", str(""))
        .putAttr("config_proto", str(""))
        .putAttr("executor_type", str(""));
    inputs.forEach(n::addInput);
  }

  /** An identity of {@code input}: a named output of a signature. */
  public void identity(String name, String input, DataType dtype) {
    node(name, "Identity").addInput(input).putAttr("T", type(dtype));
  }

  /**
   * A RestoreV2 {@code name} of the checkpoint tensors {@code keys} ({@code dtypes}), read when
   * the saver restores (its filename), run by {@link #RESTORE_ALL} before {@code after}.
   */
  public void restore(String name, List<String> keys, List<DataType> dtypes) {
    stringConst(name + "/tensor_names", keys);
    stringConst(name + "/shape_and_slices", keys.stream().map(k -> "").toList());
    AttrValue.ListValue.Builder types = AttrValue.ListValue.newBuilder();
    dtypes.forEach(types::addType);
    node(name, "RestoreV2").addInput(FILENAME).addInput(name + "/tensor_names").addInput(name + "/shape_and_slices")
        .putAttr("dtypes", AttrValue.newBuilder().setList(types).build());
  }

  /** Makes {@link #RESTORE_ALL} run node {@code op} too. */
  public void restoresAlso(String op) {
    graph.getNodeBuilderList().stream().filter(n -> n.getName().equals(RESTORE_ALL)).findFirst().orElseThrow()
        .addInput("^" + op);
  }

  private void stringConst(String name, List<String> values) {
    node(name, "Const").putAttr("dtype", type(DataType.DT_STRING))
        .putAttr("value", AttrValue.newBuilder().setTensor(strings(values, true)).build());
  }

  private NodeDef.Builder node(String name, String op) {
    return graph.addNodeBuilder().setName(name).setOp(op);
  }

  private static TensorProto strings(List<String> values, boolean vector) {
    TensorShapeProto.Builder shape = TensorShapeProto.newBuilder();
    if (vector) {
      shape.addDimBuilder().setSize(values.size());
    }
    TensorProto.Builder t = TensorProto.newBuilder().setDtype(DataType.DT_STRING).setTensorShape(shape);
    values.forEach(v -> t.addStringVal(ByteString.copyFrom(v, StandardCharsets.UTF_8)));
    return t.build();
  }

  private static AttrValue str(String s) {
    return AttrValue.newBuilder().setS(ByteString.copyFrom(s, StandardCharsets.UTF_8)).build();
  }

  private static AttrValue type(DataType t) {
    return AttrValue.newBuilder().setType(t).build();
  }

  /** A shape: null or a negative rank is an unknown rank; -1 dims are unknown. */
  public static TensorShapeProto shape(long[] dims) {
    TensorShapeProto.Builder b = TensorShapeProto.newBuilder();
    if (dims == null) {
      return b.setUnknownRank(true).build();
    }
    for (long d : dims) {
      b.addDimBuilder().setSize(d);
    }
    return b.build();
  }
}
