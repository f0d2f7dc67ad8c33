package dev.polyfn.internal.saved;

import dev.polyfn.FunctionOptions;
import dev.polyfn.Variable;
import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.EagerResource;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.trace.Capture;
import dev.polyfn.internal.trace.FunctionCore;
import dev.polyfn.internal.trace.Param;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.Operation;
import org.tensorflow.exceptions.TensorFlowException;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.OpDef.ArgDef;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.proto.TrackableObjectGraphOuterClass.TrackableObjectGraph;
import org.tensorflow.types.TString;
import org.tensorflow.types.family.TType;

/**
 * The objects of Python's object graph that restored functions capture: variables, read from the
 * checkpoint, and other resources (lookup tables), restored as Python's loader restores them: its
 * saved {@code _create_resource} function run once (under a shared name of this load's own, so two
 * loads never share a table), then {@code _initialize} (a table's keys and values, or its
 * vocabulary file), then, for a table whose contents are in the checkpoint (MutableHashTable,
 * DenseHashTable), its saved restore function with the checkpoint's tensors. Each saved function
 * runs eagerly once, registered like any restored function (checked first), and is removed after.
 */
final class PythonObjects {
  private static final AtomicLong LOADS = new AtomicLong();
  /** Resources made from resources at most this deep (Python's tables are 1 or 2 deep); deeper is refused. */
  static final int MAX_DEPTH = 64;

  private final Path root;
  private final MetaGraphDef meta;
  private final SavedObjectGraph graph;
  private final Map<String, FunctionDef> library;
  private final PythonCaptures captures;
  private final Consumer<EagerResource> owner;
  private final Map<Integer, EagerResource> made = new HashMap<>();
  private final Set<Integer> making = new HashSet<>();
  private final String load = "polyfn_" + LOADS.incrementAndGet() + "_";
  private Map<Integer, String> paths;
  private TrackableObjectGraph trackables;
  /** The checkpoint's index, read at the first restore. */
  private CheckpointIndex index;
  /** The asset files the functions run so far read, in order. */
  private final List<Path> assetsRead = new ArrayList<>();
  /** Whether each restore also reads and checks the save id ({@link SaveIds}): a Polyfn save's tables. */
  private boolean checkSaveId;
  /** The save id every restore must find ({@code polyfn.json}'s; null: none), when {@link #checkSaveId}. */
  private String saveId;

  /** {@code owner} takes each resource as soon as it exists (it closes them). */
  PythonObjects(Path root, MetaGraphDef meta, Map<String, FunctionDef> library, PythonCaptures captures,
      Consumer<EagerResource> owner) {
    this.root = root;
    this.meta = meta;
    this.graph = meta.getObjectGraphDef();
    this.library = library;
    this.captures = captures;
    this.owner = owner;
  }

  /**
   * From now on each restore reads the checkpoint's save id with the tensors it restores, and
   * refuses one that is not {@code expected} (null: none), as Polyfn's own loader checks its
   * variables: a Polyfn save's tables, read while another save replaces the checkpoint.
   */
  PythonObjects checkingSaveId(String expected) {
    checkSaveId = true;
    saveId = expected;
    return this;
  }

  /** The captures of a restored function, for the objects {@code bound} (variables and resources). */
  Capture[] captures(List<Integer> bound, Consumer<Variable<?>> adopt) {
    List<Integer> varNodes = bound.stream().filter(b -> graph.getNodes(b).hasVariable()).toList();
    List<Variable<?>> variables = variables(varNodes);
    variables.forEach(adopt);
    Capture[] out = new Capture[bound.size()];
    int v = 0;
    for (int i = 0; i < out.length; i++) {
      int b = bound.get(i);
      out[i] = graph.getNodes(b).hasVariable() ? Capture.of(variables.get(v++)) : Capture.of("resource_" + i, resource(b));
    }
    return out;
  }

  /** The resource of object {@code id}, created, initialized and restored at its first use. */
  EagerResource resource(int id) {
    EagerResource r = made.get(id);
    if (r != null) {
      return r;
    }
    SavedObject o = graph.getNodes(id);
    String what = "the resource '" + path(id) + "' (object " + id + ")";
    if (!o.hasResource()) {
      throw new IllegalArgumentException(what + " is a " + o.getKindCase() + ", not a resource");
    }
    if (!making.add(id)) {
      throw new IllegalArgumentException(what + " is needed to make itself");
    }
    if (making.size() > MAX_DEPTH) {
      making.remove(id);
      // Refused before the stack runs out (a StackOverflowError would surface as an Error).
      throw new TooDeep(what + " is made from a chain of more than " + MAX_DEPTH + " resources (each one's functions"
          + " capturing the next), deeper than Polyfn follows");
    }
    Map<String, Integer> children = new HashMap<>();
    o.getChildrenList().forEach(c -> children.put(c.getLocalName(), c.getNodeId()));
    int assetsBefore = assetsRead.size();
    String create = concrete(children.get("_create_resource"), what + " has no _create_resource function");
    try {
      var returns = library.get(create).getSignature().getOutputArgList();
      if (returns.size() != 1 || returns.get(0).getType() != DataType.DT_RESOURCE) {
        throw new IllegalArgumentException("its _create_resource function returns no resource handle");
      }
      List<Operand<?>> handle = run(create, List.of(), id);
      r = new EagerResource("'" + path(id) + "'", handle.get(0));
      made.put(id, r);
      owner.accept(r);
      if (children.containsKey("_initialize")) {
        run(concrete(children.get("_initialize"), "_initialize is no function"), List.of(), -1);
      }
      for (var saveable : o.getSaveableObjectsMap().entrySet()) {
        restoreSaved(id, saveable.getKey(), saveable.getValue().getRestoreFunction());
      }
      // What save needs to write the table again (the asset files read now: the SavedModel may go).
      SavedTables.remember(r, SavedTables.of(root, meta, library, captures, id));
      return r;
    } catch (TensorFlowException e) {
      // TensorFlow's message names the op, not the file: a table initialized from a bad asset
      // file is refused naming that file.
      List<Path> assets = assetsRead.subList(assetsBefore, assetsRead.size());
      throw new IllegalArgumentException(what + " cannot be restored" + (assets.isEmpty() ? "" : " from "
          + (assets.size() == 1 ? "asset file " + assets.get(0) : "asset files " + assets)) + ": " + e.getMessage(), e);
    } catch (TooDeep e) {
      throw e; // named once, not by every resource of the chain
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(what + " cannot be restored: " + e.getMessage(), e);
    } finally {
      making.remove(id);
    }
  }

  /**
   * Restores the checkpoint's contents of a table ({@code MutableHashTable}, {@code
   * DenseHashTable}): its keys and values, saved as {@code <key>-keys} and {@code <key>-values},
   * fed to its saved restore function. Another saved state is refused, saying so.
   */
  private void restoreSaved(int id, String name, int restoreNode) {
    String fn = concrete(restoreNode, "its saved state '" + name + "' has no restore function");
    FunctionDef def = library.get(fn);
    int explicit = def == null ? -1
        : def.getSignature().getInputArgCount() - graph.getConcreteFunctionsOrThrow(fn).getBoundInputsCount();
    String base = trackables().getNodes(id).getAttributesList().stream().filter(a -> a.getName().equals(name))
        .findFirst().map(a -> a.getCheckpointKey()).orElse(null);
    if (explicit != 2 || base == null) {
      throw new IllegalArgumentException("its saved state '" + name + "' is not a table's keys and values in the"
          + " checkpoint, which Polyfn cannot restore");
    }
    List<DataType> types = List.of(def.getSignature().getInputArg(0).getType(), def.getSignature().getInputArg(1).getType());
    List<TType> values = read(new String[] {base + "-keys", base + "-values"}, types, null, null);
    List<Operand<?>> inputs = new ArrayList<>();
    for (TType t : values) {
      inputs.add(TensorFlowInternals.eagerInput(t));
    }
    run(fn, inputs, -1);
  }

  /** The concrete function of function object {@code node}. */
  private String concrete(Integer node, String missing) {
    SavedObject o = node == null ? null : graph.getNodes(node);
    String name = o == null ? null : o.hasBareConcreteFunction() ? o.getBareConcreteFunction().getConcreteFunctionName()
        : o.hasFunction() && o.getFunction().getConcreteFunctionsCount() == 1 ? o.getFunction().getConcreteFunctions(0) : null;
    if (name == null || !library.containsKey(name) || !graph.containsConcreteFunctions(name)) {
      throw new IllegalArgumentException(missing);
    }
    return name;
  }

  /**
   * Runs saved concrete function {@code name} once, eagerly, on {@code explicit} inputs and the
   * objects bound to it; its outputs. {@code creating}: the object whose resources it creates
   * (they get shared names of this load's own), or -1.
   */
  private List<Operand<?>> run(String name, List<Operand<?>> explicit, int creating) {
    PythonCaptures.Inlined in = captures.inline(library.get(name), graph.getConcreteFunctionsOrThrow(name).getBoundInputsList());
    assetsRead.addAll(in.assets());
    FunctionDef def = creating >= 0 ? ownSharedNames(in.def(), creating) : in.def();
    List<FunctionDef> called = FunctionLibrary.reachable(def, library, "the SavedModel's function library");
    TableSizes.check(def, called, in.assets());
    List<Operand<?>> inputs = new ArrayList<>(explicit);
    for (int b : in.bound()) {
      if (!graph.getNodes(b).hasResource()) {
        throw new IllegalArgumentException("function " + name + " captures a " + graph.getNodes(b).getKindCase()
            + ", which Polyfn cannot feed to a resource's functions");
      }
      inputs.add(resource(b).handle());
    }
    List<ArgDef> args = def.getSignature().getInputArgList();
    if (args.size() != inputs.size()) {
      throw new IllegalArgumentException("function " + name + " takes " + args.size() + " inputs, not " + inputs.size());
    }
    List<Object> docCaptures = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      DataType t = args.get(i).getType();
      Map<String, Object> type = new LinkedHashMap<>();
      type.put("kind", t == DataType.DT_RESOURCE ? "variable_spec" : "tensor_spec");
      type.put("dtype", t == DataType.DT_RESOURCE ? "RESOURCE" : t.name().substring(3));
      type.put("shape", t == DataType.DT_RESOURCE ? List.of() : "unknown");
      if (t == DataType.DT_RESOURCE) {
        type.put("alias", (long) i);
      }
      docCaptures.add(Map.of("name", "input_" + i, "type", type));
    }
    String doc = Json.write(Map.of("format", "polyfn.function_type", "version", 1L,
        "function_type", Map.of("parameters", List.of(), "captures", docCaptures)));
    String[] outputs = new String[def.getSignature().getOutputArgCount()];
    Arrays.setAll(outputs, i -> "output_" + i);
    FunctionCore once = new FunctionCore(FunctionOptions.defaults().withName("restore_" + name), "map", null, (tf, x) -> {
      throw new IllegalStateException("a restored function has no body");
    });
    try {
      once.restoreConcrete(new Param[0], new Capture[0], doc, doc,
          FunctionLibrary.forRestore(def, called),
          outputs, null);
      Operation done;
      synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe (making a builder too)
        var op = Ops.create(EagerSession.getDefault()).scope().opBuilder(once.concreteFunctions().get(0).name(), "restore");
        for (Operand<?> o : inputs) {
          op.addInput(o.asOutput());
        }
        done = op.build();
      }
      List<Operand<?>> out = new ArrayList<>();
      for (int i = 0; i < outputs.length; i++) {
        out.add(done.output(i));
      }
      return out;
    } finally {
      once.close();
    }
  }

  /**
   * {@code def} (object {@code id}'s create function) whose resource-creating nodes use shared
   * names of this load's own (a resource private to its kernel would go with the function, which
   * is removed after it ran): a shared name, or a node name shared by name, prefixed with this
   * load's; a private resource's (no shared name, no node name sharing) made unique to the object,
   * so that two objects' private tables, whose nodes may be named alike, stay two.
   */
  private FunctionDef ownSharedNames(FunctionDef def, int id) {
    FunctionDef.Builder b = def.toBuilder();
    for (NodeDef.Builder n : b.getNodeDefBuilderList()) {
      if (n.containsAttr("shared_name")) {
        String shared = n.getAttrOrThrow("shared_name").getS().toStringUtf8();
        boolean byNodeName = n.containsAttr("use_node_name_sharing") && n.getAttrOrThrow("use_node_name_sharing").getB();
        String own = !shared.isEmpty() ? shared : byNodeName ? n.getName() : "object_" + id + "/" + n.getName();
        n.putAttr("shared_name", AttrValue.newBuilder().setS(com.google.protobuf.ByteString.copyFromUtf8(load + own))
            .build());
        if (n.containsAttr("use_node_name_sharing")) {
          n.putAttr("use_node_name_sharing", AttrValue.newBuilder().setB(false).build());
        }
      }
    }
    return b.build();
  }

  /** A chain of resources deeper than {@link #MAX_DEPTH}. */
  private static final class TooDeep extends IllegalArgumentException {
    TooDeep(String message) {
      super(message);
    }
  }

  /** The object's path from the root (local names joined by '.'), for messages. */
  private String path(int id) {
    if (paths == null) {
      paths = new HashMap<>();
      paths.put(0, "");
      ArrayDeque<Integer> todo = new ArrayDeque<>(List.of(0));
      while (!todo.isEmpty()) {
        int n = todo.poll();
        for (var c : graph.getNodes(n).getChildrenList()) {
          if (c.getNodeId() >= 0 && c.getNodeId() < graph.getNodesCount() && !paths.containsKey(c.getNodeId())) {
            String p = paths.get(n);
            paths.put(c.getNodeId(), p.isEmpty() ? c.getLocalName() : p + "." + c.getLocalName());
            todo.add(c.getNodeId());
          }
        }
      }
    }
    return paths.getOrDefault(id, "object " + id);
  }

  /** The checkpoint's object graph (its nodes are the object graph's, by number). */
  private TrackableObjectGraph trackables() {
    if (trackables == null) {
      TString t = (TString) read(new String[] {"_CHECKPOINTABLE_OBJECT_GRAPH"}, List.of(DataType.DT_STRING), null, null)
          .get(0);
      try {
        trackables = TrackableObjectGraph.parseFrom(t.asBytes().getObject());
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        throw new IllegalArgumentException(root.resolve(SavedModelWriter.CHECKPOINT) + ".index: the object graph"
            + " cannot be read: " + e.getMessage(), e);
      }
    }
    return trackables;
  }

  /** New variables with the checkpoint's values of the variable nodes {@code bound}, in order. */
  List<Variable<?>> variables(List<Integer> bound) {
    List<Variable<?>> out = new ArrayList<>();
    if (bound.isEmpty()) {
      return out;
    }
    String index = root.resolve(SavedModelWriter.CHECKPOINT) + ".index";
    String[] keys = new String[bound.size()];
    List<DataType> types = new ArrayList<>();
    List<TensorShapeProto> shapes = new ArrayList<>();
    List<String> names = new ArrayList<>();
    TrackableObjectGraph checkpointed = trackables(); // its own errors name the index
    try {
      for (int i = 0; i < keys.length; i++) {
        var node = checkpointed.getNodes(bound.get(i));
        keys[i] = node.getAttributesList().stream().filter(a -> a.getName().equals("VARIABLE_VALUE")).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("the checkpoint has no value for a captured variable")).getCheckpointKey();
        types.add(graph.getNodes(bound.get(i)).getVariable().getDtype());
        shapes.add(graph.getNodes(bound.get(i)).getVariable().getShape());
        names.add("'" + path(bound.get(i)) + "' (checkpoint key '" + keys[i] + "')");
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(index + ": the variables cannot be read: " + e.getMessage(), e);
    }
    List<Operand<?>> values = restore(keys, types, shapes, names);
    return CheckpointVariables.variablesOf(values, types, shapes, out);
  }

  /**
   * The checkpoint's tensors {@code keys} of {@code dtypes} (eager tensors of TensorFlow Java's
   * default session), each checked against the checkpoint's index first ({@link
   * CheckpointIndex#check}), with its declared shape and name for messages ({@code declared} and
   * {@code names}, null when there are none).
   */
  private List<TType> read(String[] keys, List<DataType> dtypes, List<TensorShapeProto> declared, List<String> names) {
    for (int i = 0; i < keys.length; i++) {
      if (!DataTypes.hasTensorClass(dtypes.get(i))) {
        throw new IllegalArgumentException(root.resolve(SavedModelWriter.CHECKPOINT) + ".index: '" + keys[i] + "' is "
            + dtypes.get(i) + ", which TensorFlow Java has no tensor class for");
      }
    }
    List<TType> out = new ArrayList<>();
    List<Operand<?>> restored = restore(keys, dtypes, declared, names);
    synchronized (EagerLock.LOCK) { // asTensor records the tensor in the eager session: see EagerLock
      for (Operand<?> o : restored) {
        out.add(o.asTensor());
      }
    }
    return out;
  }

  /**
   * {@link #read}'s tensors as eager operands, of any dtype (a variable's value is assigned, never
   * made a TensorFlow Java tensor).
   */
  private List<Operand<?>> restore(String[] keys, List<DataType> dtypes, List<TensorShapeProto> declared,
      List<String> names) {
    Path prefix = root.resolve(SavedModelWriter.CHECKPOINT);
    if (index == null) {
      index = CheckpointIndex.read(prefix);
    }
    for (int i = 0; i < keys.length; i++) {
      index.check(keys[i], dtypes.get(i), declared == null ? null : declared.get(i),
          names == null ? "'" + keys[i] + "'" : names.get(i));
    }
    List<Operand<?>> values;
    try {
      values = checkSaveId ? SaveIds.restoreChecked(root, prefix, index, saveId, keys, dtypes)
          : new ArrayList<>(CheckpointVariables.restoreV2(prefix, keys, dtypes));
    } catch (TensorFlowException e) {
      throw new IllegalArgumentException(prefix + ".index: " + String.join(", ", keys) + " cannot be read: "
          + e.getMessage(), e);
    }
    return values;
  }
}
