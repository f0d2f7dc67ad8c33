package dev.polyfn.internal.saved;

import com.google.protobuf.ByteString;
import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.EagerResource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.LookupTableExport;
import org.tensorflow.proto.AssetFileDef;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SaveableObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.SignatureDef;
import org.tensorflow.proto.TensorInfo;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph.TrackableObject.ObjectReference;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph.TrackableObject.SerializedTensor;

/**
 * Writes the lookup tables a saved function captures (restored from a SavedModel, see {@link
 * SavedTables}) into the new SavedModel, as Python writes a trackable resource, so that Python's
 * {@code tf.saved_model.load} and {@code Function.load} both rebuild each: its part of the object
 * graph (under the root as {@code table_<t>}, renumbered), its concrete functions and their
 * FunctionDefs, its constants as {@code Const} nodes ({@code tables/<t>/<op>}), its asset files in
 * {@code assets/} with their {@code AssetFileDef}s, and a mutable table's current contents in the
 * checkpoint ({@code table_<t>/.ATTRIBUTES/<state>-keys} and {@code -values}, exported now as
 * Python's saveable does). For TensorFlow's graph loaders ({@code SavedModelBundle}, Serving):
 * node {@code tables/<t>} creates the table, and the init op ({@code __saved_model_init_op})
 * initializes it.
 */
final class SavedTableWriter {
  private final List<SavedTables.Source> sources = new ArrayList<>();
  private final List<EagerResource> resources;
  /** Per table, the AssetFileDef index of each of its assets. */
  private final List<int[]> assetIndex = new ArrayList<>();
  /** The files to write under {@code assets/}, by name. */
  private final Map<String, byte[]> files = new LinkedHashMap<>();

  /** Why save cannot write resource {@code r}, or null if it can. */
  static String refusal(EagerResource r) {
    SavedTables.Source s = SavedTables.source(r);
    if (s == null) {
      return "a resource that was not restored from a SavedModel";
    }
    return s.unsavable() == null ? null : "a resource restored from a SavedModel (a lookup table) which save cannot"
        + " write: " + s.unsavable();
  }

  /** Whether a table has contents in the checkpoint (the saver must restore them). */
  boolean hasContents() {
    return sources.stream().anyMatch(s -> !s.states().isEmpty());
  }

  SavedTableWriter(List<EagerResource> resources) {
    this.resources = resources;
    for (EagerResource r : resources) {
      sources.add(SavedTables.source(r));
    }
  }

  static String name(int t) {
    return "table_" + t;
  }

  /**
   * Adds the tables' functions (to {@code library}, names in {@code taken}), constants, asset
   * definitions and graph nodes to {@code g} and {@code meta}; the node of each table's handle.
   */
  List<String> graph(SavedGraph g, MetaGraphDef.Builder meta, Set<String> taken) {
    Map<String, FunctionDef> added = new HashMap<>();
    List<String> handles = new ArrayList<>();
    List<String> inits = new ArrayList<>();
    for (int t = 0; t < sources.size(); t++) {
      SavedTables.Source s = sources.get(t);
      String scope = "tables/" + t;
      for (FunctionDef d : s.functions()) {
        String n = d.getSignature().getName();
        FunctionDef before = added.putIfAbsent(n, d);
        if (before == null ? !taken.add(n) : !before.equals(d)) {
          throw new IllegalStateException("two of its functions are both named " + n);
        }
        if (before == null) {
          g.graph().getLibraryBuilder().addFunction(d);
        }
      }
      s.constants().forEach((op, node) -> g.graph().addNode(node.toBuilder().clearInput().clearDevice()
          .setName(scope + "/" + op)));
      int[] index = new int[s.assets().size()];
      for (int k = 0; k < index.length; k++) {
        SavedTables.Asset a = s.assets().get(k);
        String file = assetName(a);
        byte[] there = files.putIfAbsent(file, a.bytes());
        if (there != null && !java.util.Arrays.equals(there, a.bytes())) {
          // 64 bits of SHA-256 alike for other contents: never one file for both.
          throw new IllegalStateException("two asset files of other contents would both be saved as " + file);
        }
        String node = scope + "/asset_" + k;
        g.graph().addNodeBuilder().setName(node).setOp("Const")
            .putAttr("dtype", AttrValue.newBuilder().setType(DataType.DT_STRING).build())
            .putAttr("value", AttrValue.newBuilder().setTensor(TensorProto.newBuilder().setDtype(DataType.DT_STRING)
                .setTensorShape(TensorShapeProto.getDefaultInstance()).addStringVal(ByteString.copyFrom(file,
                    StandardCharsets.UTF_8))).build());
        index[k] = meta.getAssetFileDefCount();
        meta.addAssetFileDef(AssetFileDef.newBuilder().setFilename(file)
            .setTensorInfo(TensorInfo.newBuilder().setName(node + ":0").setDtype(DataType.DT_STRING)));
      }
      assetIndex.add(index);
      String create = SavedTables.child(s, "_create_resource");
      g.call(scope, create, List.of(), List.of(), List.of(DataType.DT_RESOURCE));
      handles.add(scope);
      String init = SavedTables.child(s, "_initialize");
      List<String> inputs = init == null ? null : graphInputs(s, init, scope, 0);
      if (inputs != null) {
        call(g, scope + "/initialize", added.get(init), inputs);
        inits.add(scope + "/initialize");
      }
      for (var e : s.nodes().get(0).getSaveableObjectsMap().entrySet()) {
        // The saver restores the contents: RestoreV2 of the keys and values, fed to the restore function.
        SavedTables.State st = s.states().stream().filter(x -> x.name().equals(e.getKey())).findFirst().orElseThrow();
        String fn = SavedTables.concreteName(s.nodes().get(e.getValue().getRestoreFunction()));
        String read = scope + "/restore_" + st.name();
        g.restore(read, List.of(stateKey(t, st) + "-keys", stateKey(t, st) + "-values"), List.of(st.keys(), st.values()));
        List<String> bound = graphInputs(s, fn, scope, 2);
        if (bound != null) {
          List<String> in = new ArrayList<>(List.of(read + ":0", read + ":1"));
          in.addAll(bound);
          call(g, read + "/call", added.get(fn), in);
          g.restoresAlso(read + "/call");
        }
      }
    }
    if (!inits.isEmpty()) {
      NodeDef.Builder init = g.graph().addNodeBuilder().setName("tables/init").setOp("NoOp");
      inits.forEach(i -> init.addInput("^" + i));
      meta.putSignatureDef("__saved_model_init_op", SignatureDef.newBuilder().putOutputs("__saved_model_init_op",
          TensorInfo.newBuilder().setName("tables/init").build()).build());
    }
    return handles;
  }

  private static void call(SavedGraph g, String node, FunctionDef fn, List<String> inputs) {
    g.call(node, fn.getSignature().getName(), inputs, fn.getSignature().getInputArgList().stream().map(a -> a.getType())
        .toList(), fn.getSignature().getOutputArgList().stream().map(a -> a.getType()).toList());
  }

  /**
   * The graph nodes feeding concrete function {@code fn}'s bound inputs (after {@code explicit}
   * others), all bound to the table, its constants or assets; null if another is (the function
   * then runs in the object graph only).
   */
  private static List<String> graphInputs(SavedTables.Source s, String fn, String scope, int explicit) {
    SavedConcreteFunction c = s.concrete().get(fn);
    FunctionDef def = s.functions().stream().filter(d -> d.getSignature().getName().equals(fn)).findFirst().orElseThrow();
    if (def.getSignature().getInputArgCount() != explicit + c.getBoundInputsCount()) {
      return null;
    }
    List<String> inputs = new ArrayList<>();
    for (int b : c.getBoundInputsList()) {
      SavedObject o = s.nodes().get(b);
      if (b == 0) {
        inputs.add(scope);
      } else if (o.hasConstant()) {
        inputs.add(scope + "/" + o.getConstant().getOperation());
      } else if (o.hasAsset()) {
        inputs.add(scope + "/asset_" + o.getAsset().getAssetFileDefIndex());
      } else {
        return null;
      }
    }
    return inputs;
  }

  /**
   * The tables' part of Python's object graph, from node {@code base} on: its nodes, concrete
   * functions, the root's references to the tables, each table's node, and the checkpoint
   * attributes of the tables with contents (by node).
   */
  record Placed(List<SavedObject> nodes, Map<String, SavedConcreteFunction> concrete, List<ObjectReference> roots,
      List<Integer> tables, Map<Integer, List<SerializedTensor>> attributes) {}

  Placed place(int base) {
    List<SavedObject> nodes = new ArrayList<>();
    Map<String, SavedConcreteFunction> concrete = new LinkedHashMap<>();
    List<ObjectReference> roots = new ArrayList<>();
    List<Integer> tables = new ArrayList<>();
    Map<Integer, List<SerializedTensor>> attributes = new HashMap<>();
    for (int t = 0; t < sources.size(); t++) {
      SavedTables.Source s = sources.get(t);
      int at = base + nodes.size();
      tables.add(at);
      roots.add(ObjectReference.newBuilder().setNodeId(at).setLocalName(name(t)).build());
      for (SavedObject o : s.nodes()) {
        SavedObject.Builder b = o.toBuilder();
        b.getChildrenBuilderList().forEach(c -> c.setNodeId(at + c.getNodeId()));
        b.getDependenciesBuilderList().forEach(c -> c.setNodeId(at + c.getNodeId()));
        Map<String, SaveableObject> saveables = new LinkedHashMap<>();
        b.getSaveableObjectsMap().forEach((k, v) -> saveables.put(k, v.toBuilder()
            .setSaveFunction(at + v.getSaveFunction()).setRestoreFunction(at + v.getRestoreFunction()).build()));
        b.clearSaveableObjects().putAllSaveableObjects(saveables);
        if (b.hasConstant()) {
          b.getConstantBuilder().setOperation("tables/" + t + "/" + b.getConstant().getOperation());
        }
        if (b.hasAsset()) {
          b.getAssetBuilder().setAssetFileDefIndex(assetIndex.get(t)[b.getAsset().getAssetFileDefIndex()]);
        }
        nodes.add(b.build());
      }
      s.concrete().forEach((n, c) -> {
        SavedConcreteFunction.Builder b = c.toBuilder().clearBoundInputs();
        c.getBoundInputsList().forEach(i -> b.addBoundInputs(at + i));
        concrete.put(n, b.build());
      });
      List<SerializedTensor> states = new ArrayList<>();
      for (SavedTables.State st : s.states()) {
        states.add(SerializedTensor.newBuilder().setName(st.name()).setFullName(name(t))
            .setCheckpointKey(stateKey(t, st)).build());
      }
      if (!states.isEmpty()) {
        attributes.put(at, states);
      }
    }
    return new Placed(nodes, concrete, roots, tables, attributes);
  }

  private static String stateKey(int t, SavedTables.State st) {
    return name(t) + "/.ATTRIBUTES/" + st.name();
  }

  /** Adds each table's current contents (exported now) to the checkpoint's {@code keys} and {@code values}. */
  void contents(Ops tf, List<String> keys, List<Operand<?>> values) {
    for (int t = 0; t < sources.size(); t++) {
      for (SavedTables.State st : sources.get(t).states()) {
        LookupTableExport<?, ?> export = tf.lookupTableExport(resources.get(t).handle(),
            DataTypes.tensorClass(st.keys()), DataTypes.tensorClass(st.values()));
        keys.add(stateKey(t, st) + "-keys");
        values.add(export.keys());
        keys.add(stateKey(t, st) + "-values");
        values.add(export.values());
      }
    }
  }

  /**
   * The name of asset {@code a} under {@code assets/}: {@code <digest>/<file name>}, the digest the
   * first 16 hex digits of its contents' SHA-256. A name so stands for one content: a save into a
   * directory another process loads from never changes a file the other save's graph names (a
   * load between the two would otherwise build a table from the new save's vocabulary beside the
   * old save's graph, a wrong answer with no error), and two tables' files of one name are kept
   * apart. The file name is the last part of the name the asset had (an earlier save's digest
   * and any other directory dropped, so a name holding {@code ..} cannot lead out of the digest's
   * directory), {@code asset} when that part is empty, {@code .} or {@code ..}.
   */
  static String assetName(SavedTables.Asset a) {
    String digest = java.util.HexFormat.of().formatHex(dev.polyfn.internal.Native.sha256(a.bytes())).substring(0, 16);
    String file = a.filename().substring(a.filename().lastIndexOf('/') + 1);
    return digest + "/" + (file.isEmpty() || file.equals(".") || file.equals("..") ? "asset" : file);
  }

  /** Writes the tables' asset files under {@code target/assets}, each whole (see {@link #assetName}). */
  void writeAssets(Path target) throws IOException {
    // Both absolute and normalized: a target such as ./m or ../x/m keeps its "." or ".." in
    // assets, which the normalized file's path would not start with.
    Path assets = target.resolve("assets").toAbsolutePath().normalize();
    for (var f : files.entrySet()) {
      Path p = assets.resolve(f.getKey()).normalize();
      if (!p.startsWith(assets)) {
        throw new IOException("asset file name '" + f.getKey() + "' is not under " + assets);
      }
      Files.createDirectories(p.getParent());
      SaveIds.writeWhole(p, f.getValue());
    }
  }
}
