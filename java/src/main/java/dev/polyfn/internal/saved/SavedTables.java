package dev.polyfn.internal.saved;

import dev.polyfn.internal.EagerResource;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SaveableObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph.TrackableObject.ObjectReference;

/**
 * What each lookup table restored from a SavedModel ({@link PythonObjects}) was made from, kept so
 * that {@code save} can write the table again ({@link SavedTableWriter}) as Python's {@code
 * tf.saved_model.save} writes a trackable resource: the part of the object graph the table needs
 * (the resource, its {@code _create_resource}, {@code _initialize}, {@code _destroy_resource} and
 * saved-state functions, the constants and asset files those read), the concrete functions with
 * their FunctionDefs, and its asset files' bytes, read at load (the SavedModel it came from may be
 * gone when the function is saved). Both loaders rebuild the same table from these; a mutable
 * table's current contents are exported at save. Taken at load, each part checked as the load
 * checks it; a table whose source cannot be written (it depends on a variable, say) loads all the
 * same and keeps the reason, which save gives.
 */
final class SavedTables {
  /** How many objects a table's part of the object graph may hold: past that, it is not a table's. */
  private static final int MAX_NODES = 1000;

  private SavedTables() {}

  /** An asset file a table reads: its name under {@code assets/} and its contents. */
  record Asset(String filename, byte[] bytes) {}

  /** A saved state of the table in the checkpoint (a mutable table's keys and values), by name. */
  record State(String name, DataType keys, DataType values) {}

  /**
   * The table's part of the object graph: {@code nodes.get(0)} the resource, every reference
   * (children, dependencies, bound inputs, saved-state functions) numbered within {@code nodes}, an asset's
   * {@code asset_file_def_index} an index of {@code assets}; the concrete functions by name;
   * their FunctionDefs and the library functions they reach; the {@code Const} nodes of its
   * constants by operation name; its checkpoint states. Or, {@code unsavable} not null, why not.
   */
  record Source(List<SavedObject> nodes, Map<String, SavedConcreteFunction> concrete, List<FunctionDef> functions,
      Map<String, NodeDef> constants, List<Asset> assets, List<State> states, String unsavable) {
    static Source refused(String why) {
      return new Source(List.of(), Map.of(), List.of(), Map.of(), List.of(), List.of(), why);
    }
  }

  private static final Map<EagerResource, Source> SOURCES = Collections.synchronizedMap(new WeakHashMap<>());

  /** Keeps what {@code r} was restored from (forgotten with {@code r}). */
  static void remember(EagerResource r, Source s) {
    SOURCES.put(r, s);
  }

  /** What {@code r} was restored from, or null for a resource not restored from a SavedModel. */
  static Source source(EagerResource r) {
    return SOURCES.get(r);
  }

  /**
   * The source of resource object {@code id} of {@code graph}; never throws for a malformed part
   * (the table was made already): a {@link Source#refused} source says why it cannot be saved.
   */
  static Source of(Path root, MetaGraphDef meta, Map<String, FunctionDef> library, PythonCaptures captures, int id) {
    try {
      return read(root, meta, library, captures, id);
    } catch (RuntimeException | IOException e) {
      // The load goes on: only a later save of this table fails, giving this reason.
      return Source.refused(e.getMessage());
    }
  }

  private static Source read(Path root, MetaGraphDef meta, Map<String, FunctionDef> library, PythonCaptures captures,
      int id) throws IOException {
    SavedObjectGraph graph = meta.getObjectGraphDef();
    List<Integer> order = new ArrayList<>(List.of(id));
    Map<Integer, Integer> local = new HashMap<>(Map.of(id, 0));
    Map<String, SavedConcreteFunction> concrete = new LinkedHashMap<>();
    for (int i = 0; i < order.size(); i++) {
      int n = order.get(i);
      SavedObject o = graph.getNodes(n);
      List<Integer> next = new ArrayList<>();
      o.getChildrenList().forEach(c -> next.add(c.getNodeId()));
      o.getDependenciesList().forEach(c -> next.add(c.getNodeId()));
      List<String> names = switch (o.getKindCase()) {
        case RESOURCE, USER_OBJECT, CONSTANT, ASSET -> List.of();
        case FUNCTION -> o.getFunction().getConcreteFunctionsList();
        case BARE_CONCRETE_FUNCTION -> List.of(o.getBareConcreteFunction().getConcreteFunctionName());
        default -> throw new IllegalArgumentException("it depends on a " + o.getKindCase() + " (object " + n
            + "), which save cannot write with a table");
      };
      if (o.hasResource() && n != id && o.getSaveableObjectsCount() > 0) {
        throw new IllegalArgumentException("it depends on another resource with a saved state (object " + n + ")");
      }
      for (String name : names) {
        SavedConcreteFunction c = graph.getConcreteFunctionsOrDefault(name, null);
        if (c == null || !library.containsKey(name)) {
          throw new IllegalArgumentException("its function " + name + " is not in the SavedModel");
        }
        concrete.put(name, c);
        next.addAll(c.getBoundInputsList());
      }
      for (SaveableObject s : o.getSaveableObjectsMap().values()) {
        next.add(s.getSaveFunction());
        next.add(s.getRestoreFunction());
      }
      for (int m : next) {
        if (m < 0 || m >= graph.getNodesCount()) {
          throw new IllegalArgumentException("object " + n + " refers to object " + m + " of " + graph.getNodesCount());
        }
        if (!local.containsKey(m)) {
          local.put(m, order.size());
          order.add(m);
        }
      }
      if (order.size() > MAX_NODES) {
        throw new IllegalArgumentException("it depends on more than " + MAX_NODES + " objects");
      }
    }
    List<SavedObject> nodes = new ArrayList<>();
    Map<String, NodeDef> constants = new LinkedHashMap<>();
    List<Asset> assets = new ArrayList<>();
    for (int n : order) {
      SavedObject.Builder b = graph.getNodes(n).toBuilder();
      for (ObjectReference.Builder c : b.getChildrenBuilderList()) {
        c.setNodeId(local.get(c.getNodeId()));
      }
      for (ObjectReference.Builder c : b.getDependenciesBuilderList()) {
        c.setNodeId(local.get(c.getNodeId()));
      }
      Map<String, SaveableObject> saveables = new LinkedHashMap<>();
      b.getSaveableObjectsMap().forEach((k, s) -> saveables.put(k, s.toBuilder()
          .setSaveFunction(local.get(s.getSaveFunction())).setRestoreFunction(local.get(s.getRestoreFunction())).build()));
      b.clearSaveableObjects().putAllSaveableObjects(saveables);
      if (b.hasConstant()) {
        String op = b.getConstant().getOperation();
        NodeDef c = captures.constant(op);
        if (c == null || !c.containsAttr("value")) {
          throw new IllegalArgumentException("its constant '" + op + "' is no Const node of the graph");
        }
        constants.put(op, c);
      }
      if (b.hasAsset()) {
        int index = b.getAsset().getAssetFileDefIndex();
        Path file = captures.asset(index); // checked: a file under assets/, within the size limit
        assets.add(new Asset(meta.getAssetFileDef(index).getFilename(), BoundedFiles.read(file, BoundedFiles.ASSET)));
        b.getAssetBuilder().setAssetFileDefIndex(assets.size() - 1);
      }
      nodes.add(b.build());
    }
    Map<String, SavedConcreteFunction> renumbered = new LinkedHashMap<>();
    Map<String, FunctionDef> functions = new LinkedHashMap<>();
    for (var e : concrete.entrySet()) {
      SavedConcreteFunction.Builder c = e.getValue().toBuilder().clearBoundInputs();
      e.getValue().getBoundInputsList().forEach(b -> c.addBoundInputs(local.get(b)));
      renumbered.put(e.getKey(), c.build());
      FunctionDef def = library.get(e.getKey());
      functions.put(e.getKey(), def);
      for (FunctionDef d : FunctionLibrary.reachable(def, library, "the SavedModel's function library")) {
        functions.put(d.getSignature().getName(), d);
      }
    }
    return new Source(nodes, renumbered, new ArrayList<>(functions.values()), constants, assets,
        states(nodes.get(0), nodes, renumbered, functions), null);
  }

  /**
   * The table's saved states: each a restore function taking keys and values (as {@link
   * PythonObjects} restores them), which save writes from the table's exported contents.
   */
  private static List<State> states(SavedObject table, List<SavedObject> nodes, Map<String, SavedConcreteFunction> concrete,
      Map<String, FunctionDef> functions) {
    List<State> out = new ArrayList<>();
    for (var e : table.getSaveableObjectsMap().entrySet()) {
      String fn = concreteName(nodes.get(e.getValue().getRestoreFunction()));
      FunctionDef def = fn == null ? null : functions.get(fn);
      if (def == null || def.getSignature().getInputArgCount() - concrete.get(fn).getBoundInputsCount() != 2) {
        throw new IllegalArgumentException("its saved state '" + e.getKey() + "' is not a table's keys and values");
      }
      out.add(new State(e.getKey(), def.getSignature().getInputArg(0).getType(), def.getSignature().getInputArg(1).getType()));
    }
    return out;
  }

  /** The one concrete function of a function object, or null. */
  static String concreteName(SavedObject o) {
    if (o.hasBareConcreteFunction()) {
      return o.getBareConcreteFunction().getConcreteFunctionName();
    }
    return o.hasFunction() && o.getFunction().getConcreteFunctionsCount() == 1 ? o.getFunction().getConcreteFunctions(0) : null;
  }

  /** The concrete function of the table's child function {@code name} (such as {@code _create_resource}), or null. */
  static String child(Source s, String name) {
    for (ObjectReference c : s.nodes().get(0).getChildrenList()) {
      if (c.getLocalName().equals(name)) {
        return concreteName(s.nodes().get(c.getNodeId()));
      }
    }
    return null;
  }
}
