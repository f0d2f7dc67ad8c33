package dev.polyfn.internal.saved;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.OpDef.ArgDef;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;

/**
 * The constant and asset captures of Python's concrete functions, moved into the functions. A
 * function Python traced reads the eager tensors it captured (a table's keys and default value)
 * and the asset files (a vocabulary) as inputs bound to objects of the saved object graph; Python
 * feeds them from the graph's {@code Const} nodes and the {@code assets/} directory. Here each
 * becomes a {@code Const} node of the function itself (an asset: its absolute path, found where
 * the SavedModel is now, so a moved SavedModel finds its files), so that only variables and
 * resources stay inputs; the definition is checked like any restored one before it runs.
 */
final class PythonCaptures {
  /**
   * A definition with its constant and asset inputs inlined, the bound inputs left, in order, and
   * the asset files it reads (named when running it fails: a table initialized from a bad file).
   */
  record Inlined(FunctionDef def, List<Integer> bound, List<Path> assets) {}

  private final Path root;
  private final MetaGraphDef meta;
  private Map<String, NodeDef> constants;

  PythonCaptures(Path root, MetaGraphDef meta) {
    this.root = root;
    this.meta = meta;
  }

  /**
   * {@code def} whose inputs bound to constants or assets (its last {@code bound.size()} inputs,
   * bound to those object graph nodes) are {@code Const} nodes instead.
   */
  Inlined inline(FunctionDef def, List<Integer> bound) {
    var graph = meta.getObjectGraphDef();
    List<ArgDef> args = def.getSignature().getInputArgList();
    int explicit = args.size() - bound.size();
    if (explicit < 0) {
      throw new IllegalArgumentException("function " + def.getSignature().getName() + " has " + args.size()
          + " inputs, fewer than the " + bound.size() + " objects bound to it");
    }
    FunctionDef.Builder b = def.toBuilder();
    List<Integer> inputs = new ArrayList<>();
    Set<String> nodeNames = new HashSet<>();
    def.getNodeDefList().forEach(n -> nodeNames.add(n.getName()));
    Map<String, String> replaced = new HashMap<>();
    List<Integer> kept = new ArrayList<>();
    List<Path> assets = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      SavedObject o = i < explicit ? null : graph.getNodes(bound.get(i - explicit));
      TensorProto value = o == null ? null : value(o, bound.get(i - explicit));
      if (value == null) {
        inputs.add(i);
        if (o != null) {
          kept.add(bound.get(i - explicit));
        }
        continue;
      }
      if (o.hasAsset()) {
        assets.add(asset(o.getAsset().getAssetFileDefIndex()));
      }
      ArgDef arg = args.get(i);
      if (arg.getType() != value.getDtype()) {
        throw new IllegalArgumentException("function " + def.getSignature().getName() + " takes input '" + arg.getName()
            + "' as " + arg.getType() + ", but the " + o.getKindCase() + " bound to it is " + value.getDtype());
      }
      String name = "polyfn_captured_" + i;
      while (!nodeNames.add(name)) {
        name = name + "_";
      }
      b.addNodeDef(NodeDef.newBuilder().setName(name).setOp("Const")
          .putAttr("dtype", AttrValue.newBuilder().setType(value.getDtype()).build())
          .putAttr("value", AttrValue.newBuilder().setTensor(value).build()));
      replaced.put(arg.getName(), name);
    }
    if (replaced.isEmpty()) {
      return new Inlined(def, kept, assets);
    }
    // An input is referred to by its bare name; a node's output as node:output_arg:index.
    for (NodeDef.Builder n : b.getNodeDefBuilderList()) {
      for (int k = 0; k < n.getInputCount(); k++) {
        n.setInput(k, reference(n.getInput(k), replaced));
      }
    }
    Map<String, String> ret = new HashMap<>(b.getRetMap());
    ret.replaceAll((k, v) -> reference(v, replaced));
    b.putAllRet(ret);
    return new Inlined(PythonStructures.withInputs(def, b, inputs).build(), kept, assets);
  }

  private static String reference(String input, Map<String, String> replaced) {
    boolean control = input.startsWith("^");
    String name = control ? input.substring(1) : input;
    String node = replaced.get(name);
    if (node == null) {
      return input;
    }
    return control ? "^" + node : node + ":output:0";
  }

  /** The value of a constant or asset node, or null for another kind. */
  private TensorProto value(SavedObject o, int id) {
    if (o.hasConstant()) {
      NodeDef n = constants().get(o.getConstant().getOperation());
      if (n == null || !n.getOp().equals("Const") || !n.containsAttr("value")) {
        throw new IllegalArgumentException("object " + id + " is the constant '" + o.getConstant().getOperation()
            + "', which the graph holds no Const node for");
      }
      return n.getAttrOrThrow("value").getTensor();
    }
    if (o.hasAsset()) {
      return TensorProto.newBuilder().setDtype(DataType.DT_STRING).setTensorShape(TensorShapeProto.getDefaultInstance())
          .addStringVal(ByteString.copyFrom(asset(o.getAsset().getAssetFileDefIndex()).toString(), StandardCharsets.UTF_8))
          .build();
    }
    return null;
  }

  /** The file of asset {@code index}: under {@code assets/} of the SavedModel as it is now. */
  Path asset(int index) {
    if (index < 0 || index >= meta.getAssetFileDefCount()) {
      throw new IllegalArgumentException("an asset refers to asset file " + index + " of " + meta.getAssetFileDefCount());
    }
    String file = meta.getAssetFileDef(index).getFilename();
    Path assets = root.resolve("assets").toAbsolutePath().normalize();
    Path p = assets.resolve(file).normalize();
    if (file.isEmpty() || !p.startsWith(assets) || p.equals(assets)) {
      throw new IllegalArgumentException("asset file '" + file + "' is not a file name under " + assets);
    }
    if (!Files.isRegularFile(p)) {
      throw new IllegalArgumentException("asset file " + p + " is missing (a function's table is initialized from it)");
    }
    // TensorFlow reads the file line by line into memory, and a line it cannot allocate aborts the
    // process (std::bad_alloc): a file over the limit is refused before TensorFlow sees it.
    long size;
    try {
      size = Files.size(p);
    } catch (IOException e) {
      throw new IllegalArgumentException("asset file " + p + " cannot be read: " + e.getMessage(), e);
    }
    if (size > BoundedFiles.ASSET) {
      throw new IllegalArgumentException("asset file " + p + " is larger than Polyfn reads (" + size
          + " bytes; the limit for an asset file is " + BoundedFiles.ASSET + " bytes)");
    }
    return p;
  }

  /** The graph's {@code Const} node {@code name}, or null. */
  NodeDef constant(String name) {
    return constants().get(name);
  }

  private Map<String, NodeDef> constants() {
    if (constants == null) {
      constants = new HashMap<>();
      for (NodeDef n : meta.getGraphDef().getNodeList()) {
        if (n.getOp().equals("Const")) {
          constants.put(n.getName(), n);
        }
      }
    }
    return constants;
  }
}
