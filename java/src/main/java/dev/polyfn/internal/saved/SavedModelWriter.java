package dev.polyfn.internal.saved;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.SaveOptions;
import dev.polyfn.Variable;
import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.EagerResource;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.SlowWork;
import dev.polyfn.internal.trace.Capture;
import dev.polyfn.internal.trace.FunctionCore;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.trace.Param;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.EagerSession;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.TensorFlow;
import org.tensorflow.exceptions.TensorFlowException;
import org.tensorflow.ndarray.NdArrays;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.OpDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.proto.SignatureDef;
import org.tensorflow.proto.TensorInfo;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TString;

/**
 * Writes a polymorphic function as a standard TensorFlow SavedModel (a V1 MetaGraph, which every
 * TensorFlow loader reads: Python's {@code tf.saved_model.load}, TensorFlow Java's {@code
 * SavedModelBundle}, TensorFlow Serving):
 *
 * <ul>
 *   <li>{@code saved_model.pb}: the graph (every concrete function's FunctionDef in its library,
 *       with the functions it refers to, such as control-flow branches; one resource variable
 *       per captured variable, a V2 saver), one signature per concrete function, whose inputs
 *       are placeholders feeding a call of that function, and the TF2 object graph Python's
 *       loader reads ({@code PythonObjectGraph});
 *   <li>{@code variables/}: a checkpoint of the variables' current values (and of the captured
 *       mutable tables' contents);
 *   <li>{@code assets/}: the files of the captured lookup tables ({@link SavedTableWriter}, which
 *       writes those tables, restored from a SavedModel, into the graph and object graph too);
 *   <li>{@code assets.extra/polyfn.json}: Polyfn's own metadata, which TensorFlow ignores (see
 *       {@link SavedFunctionMetadata}).
 * </ul>
 */
public final class SavedModelWriter {
  public static final String METADATA = "assets.extra/polyfn.json";
  public static final String CHECKPOINT = "variables/variables";

  private SavedModelWriter() {}

  /**
   * One concrete function as saved: its signature, types, FunctionDef, the library functions that
   * one refers to, its flat inputs, and its outputs' static shapes as traced (null: not recorded,
   * for a restored definition; an element null: an unknown rank).
   */
  public record Saved(String signature, ConcreteFunctionInfo info, String declared, String traced, FunctionDef def,
      List<FunctionDef> library, List<SavedSignatures.Input> inputs, List<long[]> outputShapes) {}

  public static void save(FunctionCore f, Path dir, SaveOptions options) {
    SlowWork.Phases time = SlowWork.start();
    Path target = options.servingVersion() < 0 ? dir : dir.resolve(Long.toString(options.servingVersion()));
    List<Saved> saved;
    Capture[] captures;
    Param[] params;
    List<TensorProto> defaults = new ArrayList<>();
    // One consistent view: no trace adds a concrete function or fixes the parameters meanwhile.
    f.traceLock().lock();
    try {
      params = f.params();
      captures = f.captures();
      List<ConcreteFunctionInfo> concrete = f.concreteFunctions();
      if (params == null || concrete.isEmpty()) {
        f.address(); // closed by another thread meanwhile: its closed error, not this one
        throw new IllegalStateException("cannot save '" + f.name() + "': it has no concrete function yet;"
            + " call it or use getConcreteFunction for each signature to save");
      }
      check(f, params, captures);
      saved = export(f, params, concrete, options);
      // Kept as Python keeps a tf.function's default values; the signatures still take every input.
      for (Param p : params) {
        defaults.add(p.optional() && p.kind() != Param.Kind.JAVA ? TensorDefaults.proto(f.name(), p) : null);
      }
    } finally {
      f.traceLock().unlock();
    }
    time.end("export");
    try {
      write(f, target, params, defaults, captures, saved, options, time);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the SavedModel to " + target + ": " + e.getMessage(), e);
    }
    time.report(() -> "function '" + f.name() + "' saved to " + target);
  }

  private static void check(FunctionCore f, Param[] params, Capture[] captures) {
    PythonNames.checkParameters(f.name(), java.util.Arrays.stream(params).map(Param::name).toList());
    for (Param p : params) {
      if (p.kind() == Param.Kind.VARIABLE) {
        throw new IllegalStateException("cannot save '" + f.name() + "': parameter '" + p.name() + "' takes "
            + p.kindName() + "; a SavedModel signature takes tensors (and lists, maps, records and nests of them) only");
      }
      if (p.kind() == Param.Kind.JAVA) {
        SavedLiterals.checkParameter(f.name(), p);
      }
    }
    for (Capture c : captures) {
      String refused = c.resource() == null ? null : SavedTableWriter.refusal(c.resource());
      if (refused != null) {
        throw new IllegalStateException("cannot save '" + f.name() + "': it captures " + c.resource().name() + ", "
            + refused);
      }
      if (c.resource() != null) {
        continue;
      }
      if (c.variable() == null) {
        throw new IllegalStateException("cannot save '" + f.name() + "': it captures '" + c.name()
            + "' by reference (in.capture), a Java supplier a SavedModel cannot hold; capture a Variable"
            + " or pass the value as a parameter");
      }
    }
  }

  private static List<Saved> export(FunctionCore f, Param[] params, List<ConcreteFunctionInfo> concrete, SaveOptions options) {
    List<Saved> out = new ArrayList<>();
    Set<String> taken = new HashSet<>();
    Set<String> renamed = new HashSet<>();
    for (ConcreteFunctionInfo c : concrete) {
      String[] types;
      FunctionDef def;
      List<FunctionDef> library;
      try {
        types = Native.exportConcreteTypes(f.address(), c.id(), true);
        types[0] = SavedLiterals.forSave(types[0], params, f.interner());
        def = FunctionDef.parseFrom(Native.exportFunctionDef(f.address(), c.id(), false));
        library = FunctionLibrary.exported(f.address(), c.id(), def);
      } catch (TensorFlowException | InvalidProtocolBufferException e) {
        throw new IllegalStateException("cannot save '" + f.name() + "': concrete function " + c.functionType()
            + " cannot be exported (" + e.getMessage() + ")", e);
      } catch (IllegalStateException e) {
        throw new IllegalStateException("cannot save '" + f.name() + "': concrete function " + c.functionType()
            + ": " + e.getMessage(), e);
      }
      List<SavedSignatures.Input> inputs = SavedSignatures.inputs(types[0]);
      String name = SavedSignatures.defaultName(f.name(), inputs, taken);
      String chosen = options.signatureNames().getOrDefault(name, name);
      if (!chosen.equals(name)) {
        renamed.add(name);
      }
      SavedSignatures.checkNames(f.name(), chosen, inputs);
      out.add(new Saved(chosen, c, types[1], types[0], def, library, inputs, outputShapes(types[2])));
    }
    for (String asked : options.signatureNames().keySet()) {
      if (!renamed.contains(asked) && !taken.contains(asked)) {
        throw new IllegalArgumentException("signatureNames: no signature is named '" + asked + "'; the signatures are "
            + taken);
      }
    }
    Set<String> unique = new HashSet<>();
    for (Saved s : out) {
      if (!unique.add(s.signature())) {
        throw new IllegalArgumentException("signatureNames: two signatures would both be named '" + s.signature() + "'");
      }
    }
    return out;
  }

  /** The output shapes JSON {@code Native.exportConcreteTypes} gives: null, or each output's dims or null. */
  @SuppressWarnings("unchecked")
  private static List<long[]> outputShapes(String json) {
    if (!(Json.parse(json) instanceof List<?> outputs)) {
      return null;
    }
    List<long[]> shapes = new ArrayList<>();
    for (Object o : outputs) {
      shapes.add(o == null ? null : ((List<Long>) o).stream().mapToLong(Long::longValue).toArray());
    }
    return shapes;
  }

  private static void write(FunctionCore f, Path target, Param[] params, List<TensorProto> defaults, Capture[] captures,
      List<Saved> saved, SaveOptions options, SlowWork.Phases time) throws IOException {
    SavedGraph g = new SavedGraph();
    try (Graph empty = new Graph()) {
      g.graph().setVersions(empty.toGraphDef().getVersions()); // the running TensorFlow's producer version
    }
    List<String> varNodes = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    List<DataType> varTypes = new ArrayList<>();
    List<TensorShapeProto> shapes = new ArrayList<>();
    // Each capture's handle in the graph (a variable's node, a table's), and its slot: variable j
    // is j, table t is -1 - t.
    List<String> captureNodes = new ArrayList<>();
    List<Integer> slots = new ArrayList<>();
    List<EagerResource> resources = new ArrayList<>();
    for (Capture c : captures) {
      if (c.resource() != null) {
        slots.add(-1 - resources.size());
        resources.add(c.resource());
        captureNodes.add(null);
        continue;
      }
      Variable<?> v = c.variable();
      int j = varNodes.size();
      String node = "variables/" + j;
      DataType dt = DataType.forNumber(v.dtypeCode());
      g.variable(node, dt, SavedGraph.shape(v.dims()));
      slots.add(j);
      captureNodes.add(node);
      varNodes.add(node);
      keys.add(SavedFunctionMetadata.variableKey(j));
      varTypes.add(dt);
      shapes.add(SavedGraph.shape(v.dims()));
    }
    MetaGraphDef.Builder meta = MetaGraphDef.newBuilder();
    SavedTableWriter tables = new SavedTableWriter(resources);
    if (!varNodes.isEmpty() || tables.hasContents()) {
      meta.setSaverDef(g.saver(varNodes, keys, varTypes));
    }
    // What Python's tf.saved_model.load calls: each concrete function's definition with its
    // input shapes, and small wrappers for its signature (and for outputs Python wants reordered).
    List<PythonObjectGraph.Concrete> python = new ArrayList<>();
    Map<String, FunctionDef> pythonDefs = new LinkedHashMap<>();
    for (Saved s : saved) {
      PythonObjectGraph.Concrete c = PythonObjectGraph.concrete(s, captures.length);
      python.add(c);
      for (FunctionDef d : c.defs()) {
        pythonDefs.put(d.getSignature().getName(), d);
      }
    }
    Set<String> library = new LinkedHashSet<>();
    for (Saved s : saved) {
      for (FunctionDef d : s.library()) {
        if (library.add(d.getSignature().getName())) {
          g.graph().getLibraryBuilder().addFunction(d);
        }
      }
    }
    for (FunctionDef d : pythonDefs.values()) {
      if (library.add(d.getSignature().getName())) {
        g.graph().getLibraryBuilder().addFunction(d);
      }
    }
    List<String> tableNodes;
    try {
      tableNodes = tables.graph(g, meta, library);
    } catch (IllegalStateException e) {
      throw new IllegalStateException("cannot save '" + f.name() + "': its tables: " + e.getMessage(), e);
    }
    for (int i = 0; i < captureNodes.size(); i++) {
      if (slots.get(i) < 0) {
        captureNodes.set(i, tableNodes.get(-1 - slots.get(i)));
      }
    }
    for (Saved s : saved) {
      meta.putSignatureDef(s.signature(), signature(g, s, captureNodes, f.name()));
    }
    checkRootName(f.name(), python, varNodes.size(), resources.size());
    SavedTableWriter.Placed placed = tables.place(PythonObjectGraph.tablesBase(varNodes.size(), python));
    List<Integer> bound = slots.stream().map(j -> j >= 0 ? 1 + j : placed.tables().get(-1 - j)).toList();
    SavedObjectGraph objects = PythonObjectGraph.objectGraph(f.name(),
        java.util.Arrays.stream(params).map(Param::name).toList(), SavedLiterals.pythonDefaults(params, defaults),
        varTypes, shapes, python,
        saved.stream().map(Saved::signature).toList(), bound, placed);
    meta.setObjectGraphDef(objects);
    String saveId = SaveIds.next();
    meta.getMetaInfoDefBuilder().addAllTags(options.tags()).setTensorflowVersion(TensorFlow.version())
        .setMetaGraphVersion(SaveIds.VERSION_PREFIX + saveId);
    meta.setGraphDef(g.graph());
    SavedModel model = SavedModel.newBuilder().setSavedModelSchemaVersion(1).addMetaGraphs(meta).build();
    time.end("graph");

    Files.createDirectories(target.resolve("variables"));
    Files.createDirectories(target.resolve("assets.extra"));
    tables.writeAssets(target);
    // Always a checkpoint: Python's loader restores one, if only its object graph.
    writeCheckpoint(target.resolve(CHECKPOINT), captures, keys, tables,
        PythonObjectGraph.trackableGraph(objects, keys, placed.attributes()), saveId);
    time.end("variables");
    // Each file whole (renamed into place), and the three marked with one save id: see SaveIds.
    SaveIds.writeWhole(target.resolve(METADATA), SavedFunctionMetadata.write(f, params, defaults, slots, placed.tables(),
        saved, saveId).getBytes(StandardCharsets.UTF_8));
    // Last: a directory with saved_model.pb is complete.
    SaveIds.writeWhole(target.resolve("saved_model.pb"), model.toByteArray());
    SaveIds.deleteStaleTemps(target);
    time.end("files");
  }

  /**
   * Refuses a function name that is also the name of another child of the object graph's root
   * ({@code signatures}, a variable's {@code v0}, a table's {@code table_0}): Python's loader
   * would give the attribute to one of them, losing the function or mixing up a variable.
   */
  private static void checkRootName(String name, List<PythonObjectGraph.Concrete> python, int variables, int tables) {
    if (python.stream().noneMatch(c -> c.functionName() != null)) {
      return; // no function node: the name is not written
    }
    String taken = PythonObjectGraph.rootChild(name, variables, tables);
    if (taken != null) {
      throw new IllegalArgumentException("cannot save '" + name + "': Python's tf.saved_model.load names the"
          + " function's attribute after the function, and '" + name + "' is already the attribute of the SavedModel's"
          + " " + taken + " '" + name + "'; give the function another name (FunctionOptions.withName)");
    }
  }

  /** The signature of one concrete function: placeholders → call → one identity per output. */
  private static SignatureDef signature(SavedGraph g, Saved s, List<String> captureNodes, String function) {
    OpDef sig = s.def().getSignature();
    int flat = s.inputs().size();
    if (sig.getInputArgCount() != flat + captureNodes.size() || sig.getOutputArgCount() != s.info().outputNames().size()) {
      throw new IllegalStateException("cannot save '" + function + "': concrete function " + s.info().functionType()
          + " has " + sig.getInputArgCount() + " inputs and " + sig.getOutputArgCount() + " outputs, expected "
          + (flat + captureNodes.size()) + " and " + s.info().outputNames().size());
    }
    String scope = "signatures/" + s.signature();
    SignatureDef.Builder def = SignatureDef.newBuilder().setMethodName("tensorflow/serving/predict");
    List<String> callInputs = new ArrayList<>();
    List<DataType> in = new ArrayList<>();
    // A graph has no two nodes of a name: an input "call", or "output_x", or outputs "a-b" and
    // "a_b", get another name than the one they'd share (the signature maps the names users see).
    Set<String> nodes = new HashSet<>();
    for (int i = 0; i < flat; i++) {
      SavedSignatures.Input input = s.inputs().get(i);
      DataType dt = sig.getInputArg(i).getType();
      if (dt != input.dtype()) {
        throw new IllegalStateException("cannot save '" + function + "': input " + input.key() + " is " + dt
            + " in the function but " + input.dtype() + " in its type");
      }
      String node = fresh(nodes, scope + "/" + input.key());
      g.placeholder(node, dt, SavedGraph.shape(input.dims()));
      def.putInputs(input.key(), TensorInfo.newBuilder().setName(node + ":0").setDtype(dt)
          .setTensorShape(SavedGraph.shape(input.dims())).build());
      callInputs.add(node);
      in.add(dt);
    }
    for (String handle : captureNodes) {
      callInputs.add(handle);
      in.add(DataType.DT_RESOURCE);
    }
    List<DataType> out = sig.getOutputArgList().stream().map(a -> a.getType()).toList();
    String call = fresh(nodes, scope + "/call");
    g.call(call, sig.getName(), callInputs, in, out);
    for (int i = 0; i < out.size(); i++) {
      String name = s.info().outputNames().get(i);
      String node = fresh(nodes, scope + "/output_" + SavedSignatures.sanitize(name));
      g.identity(node, call + ":" + i, out.get(i));
      def.putOutputs(name, TensorInfo.newBuilder().setName(node + ":0").setDtype(out.get(i))
          .setTensorShape(SavedGraph.shape(null)).build());
    }
    return def.build();
  }

  /** {@code name}, or {@code name_2}, {@code name_3}... if taken; added to {@code taken}. */
  private static String fresh(Set<String> taken, String name) {
    String out = name;
    for (int n = 2; !taken.add(out); n++) {
      out = name + "_" + n;
    }
    return out;
  }

  /**
   * Writes the variables' current values and the tables' contents as a V2 checkpoint, with an
   * eager SaveV2, and Python's object graph ({@code objectGraph}, if not null) under its key.
   */
  private static void writeCheckpoint(Path prefix, Capture[] captures, List<String> keys, SavedTableWriter tables,
      byte[] objectGraph, String saveId) {
    synchronized (EagerLock.LOCK) { // TensorFlow Java's eager session is not thread-safe
      writeCheckpointLocked(prefix, captures, keys, tables, objectGraph, saveId);
    }
  }

  private static void writeCheckpointLocked(Path prefix, Capture[] captures, List<String> keys, SavedTableWriter tables,
      byte[] objectGraph, String saveId) {
    Ops tf = Ops.create(EagerSession.getDefault());
    List<Operand<?>> values = new ArrayList<>();
    for (Capture c : captures) {
      if (c.variable() != null) {
        values.add(c.variable().read(tf));
      }
    }
    List<String> allKeys = new ArrayList<>(keys);
    tables.contents(tf, allKeys, values);
    if (objectGraph != null) {
      allKeys.add(PythonObjectGraph.CHECKPOINT_KEY);
    }
    allKeys.add(SaveIds.CHECKPOINT_KEY);
    String[] names = allKeys.toArray(new String[0]);
    String[] slices = new String[names.length];
    java.util.Arrays.fill(slices, "");
    // Strings fed as tensors, not eager constants: see TensorFlowInternals.eagerInput.
    try (TString path = TString.scalarOf(prefix.toString()); TString keyNames = TString.vectorOf(names);
         TString noSlices = TString.vectorOf(slices);
         TString graph = objectGraph == null ? null : TString.tensorOfBytes(NdArrays.scalarOfObject(objectGraph));
         TString id = TString.scalarOf(saveId)) {
      if (graph != null) {
        values.add(TensorFlowInternals.eagerInput(graph));
      }
      values.add(TensorFlowInternals.eagerInput(id));
      tf.train.save(TensorFlowInternals.eagerInput(path), TensorFlowInternals.eagerInput(keyNames),
          TensorFlowInternals.eagerInput(noSlices), values);
    }
  }

  /** Shapes of a parameter for the metadata: null when undeclared, "unknown" for unknown rank. */
  public static Object shapeJson(Shape s) {
    if (s == null) {
      return null;
    }
    if (s.isUnknown()) {
      return "unknown";
    }
    List<Long> dims = new ArrayList<>();
    for (long d : s.asArray()) {
      dims.add(d);
    }
    return dims;
  }

  public static Map<String, Object> object() {
    return new LinkedHashMap<>();
  }
}
