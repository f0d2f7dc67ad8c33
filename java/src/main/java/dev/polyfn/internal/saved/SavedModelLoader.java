package dev.polyfn.internal.saved;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.polyfn.FunctionOptions;
import dev.polyfn.ListBody;
import dev.polyfn.MapBody;
import dev.polyfn.NestBody;
import dev.polyfn.SingleBody;
import dev.polyfn.UnaryBody;
import dev.polyfn.Variable;
import dev.polyfn.internal.trace.Capture;
import dev.polyfn.internal.trace.Facades;
import dev.polyfn.internal.trace.FunctionCore;
import dev.polyfn.internal.trace.Param;
import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.SlowWork;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.tensorflow.Operand;
import org.tensorflow.exceptions.TensorFlowException;
import org.tensorflow.ndarray.NdArrays;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.family.TType;

/**
 * Loads a SavedModel Polyfn wrote ({@link SavedModelWriter}) back as a polymorphic function with
 * the saved dispatch: each concrete function's FunctionDef (from {@code saved_model.pb}) is
 * registered under a fresh name, with the library functions it refers to (renamed too, see
 * {@link FunctionLibrary}), and restored with its saved types (from {@code
 * assets.extra/polyfn.json}); captured variables come back as new {@link Variable}s holding the
 * checkpoint's values, owned by the function. Everything is read and checked before the function
 * is returned; a failure closes what was built and names the file and the problem.
 */
public final class SavedModelLoader {
  private SavedModelLoader() {}

  /**
   * Loads {@code dir}; {@code body} (a {@link MapBody}, {@link ListBody}, {@link SingleBody} or
   * {@link UnaryBody}, or null) traces the calls no saved signature accepts; {@code kind} is the
   * expected kind ("map", "list", "single", "nest") or null for whatever was saved.
   */
  public static <F> F load(Facades<F> facades, Path dir, Object body, String kind) {
    return load(facades, dir, body, kind, null);
  }

  /** {@link #load(Facades, Path, Object, String)}; {@code name} picks a function of a Python-written SavedModel. */
  public static <F> F load(Facades<F> facades, Path dir, Object body, String kind, String name) {
    SlowWork.Phases time = SlowWork.start();
    Path root = versionDir(dir);
    Path metaFile = root.resolve(SavedModelWriter.METADATA);
    if (!Files.exists(metaFile)) {
      // Not Polyfn's: the whole SavedModel is parsed, to find Python's object graph.
      SavedModel model = readModel(root.resolve("saved_model.pb"), SavedModel::parseFrom, SavedModel::getMetaGraphsCount);
      if (body == null && (kind == null || kind.equals("map") || kind.equals("nest"))
          && PythonSavedModel.isPythonSavedModel(model.getMetaGraphs(0))) {
        time.end("reading");
        F made;
        try {
          made = PythonSavedModel.load(facades, root, model.getMetaGraphs(0), name, kind);
        } catch (IndexOutOfBoundsException e) {
          // An object graph whose references point past its node, function or value lists.
          throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": a malformed object graph ("
              + e.getMessage() + ")", e);
        }
        time.end("restoring");
        time.report(() -> "function '" + facades.core(made).name() + "' loaded from " + root);
        return made;
      }
    }
    SavedModelParts model = readModel(root.resolve("saved_model.pb"), SavedModelParts::read, SavedModelParts::metaGraphs);
    if (name != null) {
      throw new IllegalArgumentException(metaFile + ": loading by name is for SavedModels written by Python's"
          + " tf.saved_model.save; this one holds one Polyfn function");
    }
    String text;
    try {
      text = BoundedFiles.readText(metaFile, BoundedFiles.METADATA);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(metaFile + ": missing, so " + root
          + " was not written by Polyfn's save, and it holds no object graph of Python's tf.saved_model.save");
    } catch (IOException | UncheckedIOException e) {
      throw new IllegalArgumentException(metaFile + ": cannot be read: " + e.getMessage(), e);
    }
    SavedFunctionMetadata meta;
    try {
      meta = SavedFunctionMetadata.read(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(metaFile + ": " + e.getMessage(), e);
    }
    SaveIds.check(root, meta.saveId, SaveIds.of(model), "saved_model.pb");
    if (kind != null && !kind.equals(meta.kind)) {
      throw new IllegalArgumentException(metaFile + ": the saved function is a " + meta.kind
          + " function, not a " + kind + " function; load it with the matching method");
    }
    Map<String, SavedModelParts.Fn> library = model.library();
    Map<String, byte[]> nodes = model.nodes();
    List<FunctionLibrary.Restorable> defs = new ArrayList<>();
    for (SavedFunctionMetadata.Concrete c : meta.concrete) {
      SavedModelParts.Fn def = library.get(c.function());
      if (def == null) {
        // Either file may be the damaged one: the message names both.
        throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": no function " + c.function()
            + " in the graph's library, which signature " + c.signature() + " of " + metaFile + " names");
      }
      try {
        RestoreChecks.parameters(meta.params, c.declared(), c.traced());
        RestoreChecks.outputNames(c.outputs(), c.outputs().length);
        SavedComposites.check(c, meta.kind);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(metaFile + ": signature " + c.signature() + ": " + e.getMessage(), e);
      }
      checkArity(root, c, def, meta.variableKeys.size() + meta.resources.size());
      defs.add(restorable(root, c, def, library));
    }
    time.end("reading");
    List<Variable<?>> variables = restoreVariables(root, meta, nodes);
    time.end("variables");
    F made;
    try {
      made = create(facades, meta, body);
    } catch (RuntimeException | Error e) {
      variables.forEach(Variable::close);
      throw e;
    }
    FunctionCore f = facades.core(made);
    try {
      for (int i = 0; i < variables.size(); i++) {
        f.adopt(variables.get(i)); // a loop, not forEach(f::adopt): a method reference's first bootstrap costs a load
        if (meta.variableNames.get(i) != null) {
          // A body's later trace finds the restored variable by the name it created it by.
          f.namedVariables().putRestored(meta.variableNames.get(i), variables.get(i));
        }
      }
      Param[] params = withDefaults(meta, f);
      Capture[] captures = captures(root, meta, variables, f);
      for (int i = 0; i < defs.size(); i++) {
        SavedFunctionMetadata.Concrete c = meta.concrete.get(i);
        try {
          String traced = SavedLiterals.forLoad(c.traced(), params, f.interner());
          f.restoreConcrete(params, captures, c.declared(), traced, defs.get(i), c.outputs(), c.outputShapes());
        } catch (RuntimeException e) {
          if (!(e instanceof TensorFlowException) && (e.getMessage() == null || !e.getMessage().startsWith("not a usable "))) {
            throw e; // the types or parameters: polyfn.json's
          }
          // The definition itself was refused (the types are read first): saved_model.pb's fault.
          throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": function " + c.function()
              + " (signature " + c.signature() + "): " + e.getMessage(), e);
        }
      }
      if (body == null) {
        f.markBodyless();
      }
      f.countSavedTraces(defs.size());
      time.end("functions");
    } catch (RuntimeException | Error e) {
      f.close(); // releases what was restored and the variables it adopted (after an Error too)
      if (e instanceof Error || (e instanceof IllegalArgumentException && e.getMessage() != null
          && e.getMessage().startsWith(root.toString()))) {
        throw e; // already names its file, or an Error
      }
      throw new IllegalArgumentException(metaFile + ": " + e.getMessage(), e);
    }
    time.report(() -> "function '" + meta.name + "' loaded from " + root);
    return made;
  }

  /**
   * The saved parameters with their default tensors, new tensors owned by {@code f} (closed with
   * it), each checked against its parameter's declared type and shape.
   */
  private static Param[] withDefaults(SavedFunctionMetadata meta, FunctionCore f) {
    Param[] params = meta.params.clone();
    for (int i = 0; i < params.length; i++) {
      TensorProto proto = meta.defaults.get(i);
      if (proto != null) {
        Param p = params[i];
        TType t = TensorDefaults.tensor("parameters[" + i + "].default", proto, p.tensorType(), p.shape());
        f.adopt(t);
        params[i] = new Param(p.name(), p.kind(), p.tensorType(), p.javaClass(), p.shape(), true, t);
      }
    }
    return params;
  }

  /** The directory itself, or its highest numeric version subdirectory (TensorFlow Serving's layout). */
  /** See {@link dev.polyfn.Function#savedModelDirectory}. */
  public static Path versionDir(Path dir) {
    if (Files.isRegularFile(dir.resolve("saved_model.pb")) || !Files.isDirectory(dir)) {
      return dir;
    }
    try (Stream<Path> list = Files.list(dir)) {
      return list.filter(p -> p.getFileName().toString().matches("[0-9]{1,18}")
              && Files.isRegularFile(p.resolve("saved_model.pb")))
          .max((a, b) -> Long.compare(Long.parseLong(a.getFileName().toString()), Long.parseLong(b.getFileName().toString())))
          .orElse(dir);
    } catch (IOException e) {
      return dir;
    }
  }

  /** A parser of {@code saved_model.pb}'s bytes: the whole SavedModel, or only the parts Polyfn needs. */
  private interface PbParser<T> {
    T parse(byte[] bytes) throws InvalidProtocolBufferException;
  }

  /** {@code file} read with {@code parser}; every failure an IllegalArgumentException naming the file. */
  private static <T> T readModel(Path file, PbParser<T> parser, java.util.function.ToIntFunction<T> metaGraphs) {
    try {
      T m = parser.parse(BoundedFiles.read(file, BoundedFiles.SAVED_MODEL));
      if (metaGraphs.applyAsInt(m) == 0) {
        throw new IllegalArgumentException(file + ": holds no MetaGraph (not a SavedModel, or truncated)");
      }
      return m;
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(file + ": missing; expected a SavedModel directory");
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(file + ": not a SavedModel protocol buffer (corrupt or truncated: "
          + e.getMessage() + ")");
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot be read: " + e.getMessage(), e);
    }
  }

  /**
   * The function's captures: the variables, and the tables at the capture indices {@code
   * meta.resources} names, made from the object graph as Python's are ({@link PythonObjects},
   * owned by {@code f}).
   */
  private static Capture[] captures(Path root, SavedFunctionMetadata meta, List<Variable<?>> variables, FunctionCore f) {
    Capture[] out = new Capture[variables.size() + meta.resources.size()];
    if (!meta.resources.isEmpty()) {
      Path pb = root.resolve("saved_model.pb");
      var model = readModel(pb, SavedModel::parseFrom, SavedModel::getMetaGraphsCount).getMetaGraphs(0);
      // Read again for the tables: still the save the first read checked?
      SaveIds.check(root, meta.saveId, SaveIds.ofVersion(model.getMetaInfoDef().getMetaGraphVersion()), "saved_model.pb");
      Map<String, FunctionDef> library = new HashMap<>();
      model.getGraphDef().getLibrary().getFunctionList().forEach(d -> library.put(d.getSignature().getName(), d));
      PythonCaptures inliner = new PythonCaptures(root, model);
      PythonObjects objects = new PythonObjects(root, model, library, inliner, f::adopt).checkingSaveId(meta.saveId);
      for (SavedFunctionMetadata.Resource r : meta.resources) {
        if (r.object() >= model.getObjectGraphDef().getNodesCount()) {
          throw new IllegalArgumentException(root.resolve(SavedModelWriter.METADATA) + ": resource object " + r.object()
              + " is not in the object graph of " + pb);
        }
        // The index is polyfn.json's: a wrong one is that file's fault, not the object graph's.
        var node = model.getObjectGraphDef().getNodes(r.object());
        if (!node.hasResource()) {
          throw new IllegalArgumentException(root.resolve(SavedModelWriter.METADATA) + ": resource object " + r.object()
              + " is a " + node.getKindCase() + " in the object graph of " + pb + ", not a resource");
        }
        try {
          out[r.capture()] = Capture.of("resource_" + r.capture(), objects.resource(r.object()));
        } catch (IndexOutOfBoundsException e) {
          throw new IllegalArgumentException(pb + ": a malformed object graph (" + e.getMessage() + ")", e);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(pb + ": " + e.getMessage(), e);
        }
      }
    }
    int v = 0;
    for (int i = 0; i < out.length; i++) {
      if (out[i] == null) {
        out[i] = Capture.of(variables.get(v++));
      }
    }
    return out;
  }

  /** The FunctionDef must take the flat inputs of the saved type, then one handle per capture. */
  private static void checkArity(Path root, SavedFunctionMetadata.Concrete c, SavedModelParts.Fn def, int variables) {
    int flat;
    try {
      flat = SavedSignatures.inputs(c.traced()).size();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(root.resolve(SavedModelWriter.METADATA) + ": signature " + c.signature()
          + ": " + e.getMessage());
    }
    if (def.inputs() != flat + variables || def.resourceInputs() != variables || def.outputs() != c.outputs().length) {
      throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": function " + c.function() + " takes "
          + def.inputs() + " inputs and returns " + def.outputs() + ", but its saved type in "
          + root.resolve(SavedModelWriter.METADATA) + " has " + flat + " inputs, " + variables + " captures and "
          + c.outputs().length + " outputs");
    }
  }

  /**
   * The concrete function's definition with the library functions it reaches (control-flow
   * branches). Parsing FunctionDefs costs the first use of protobuf's message classes (most of a
   * load's time), so a definition that calls no function (no node's op type names one of the
   * library, no function-valued attribute) is passed as it is. Telling that by the names' bytes
   * alone was not enough: {@code f_10}'s definition holds {@code f_1}.
   */
  private static FunctionLibrary.Restorable restorable(Path root, SavedFunctionMetadata.Concrete c,
      SavedModelParts.Fn def, Map<String, SavedModelParts.Fn> library) {
    Path pb = root.resolve("saved_model.pb");
    try {
      if (!SavedModelParts.mayCallFunctions(def.bytes(), library.keySet())) {
        return new FunctionLibrary.Restorable(def.bytes(), new byte[0]);
      }
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(pb + ": function " + c.function() + " is not a readable FunctionDef: " + e.getMessage());
    }
    Map<String, FunctionDef> parsed = new HashMap<>();
    java.util.function.Function<String, FunctionDef> parse = name -> parsed.computeIfAbsent(name, n -> {
      try {
        return FunctionDef.parseFrom(library.get(n).bytes());
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalArgumentException(pb + ": function " + n + " is not a readable FunctionDef: " + e.getMessage());
      }
    });
    Map<String, FunctionDef> available = new AbstractMap<>() {
      @Override
      public Set<String> keySet() {
        return library.keySet();
      }

      @Override
      public FunctionDef get(Object name) {
        return name instanceof String n && library.containsKey(n) ? parse.apply(n) : null;
      }

      @Override
      public Set<Map.Entry<String, FunctionDef>> entrySet() {
        throw new UnsupportedOperationException("looked up by name only");
      }
    };
    try {
      FunctionDef main = parse.apply(c.function());
      return FunctionLibrary.forRestore(main, FunctionLibrary.reachable(main, available, "the graph's library"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(pb + ": signature " + c.signature() + ": " + e.getMessage());
    }
  }

  /** A node's NodeDef, parsed only now: the loader needs the few variable nodes, not the graph. */
  private static NodeDef node(Path root, byte[] bytes) {
    try {
      return bytes == null ? null : NodeDef.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": a variable node is corrupt: " + e.getMessage());
    }
  }

  /** New variables holding the checkpoint's values, in capture order (its index checked, then an eager RestoreV2). */
  private static List<Variable<?>> restoreVariables(Path root, SavedFunctionMetadata meta, Map<String, byte[]> nodes) {
    List<Variable<?>> out = new ArrayList<>();
    if (meta.variableKeys.isEmpty()) {
      return out;
    }
    Path prefix = root.resolve(SavedModelWriter.CHECKPOINT);
    // Checked before TensorFlow reads the checkpoint: it allocates by what the index says.
    CheckpointIndex index = CheckpointIndex.read(prefix);
    List<DataType> types = new ArrayList<>();
    List<TensorShapeProto> shapes = new ArrayList<>();
    for (int i = 0; i < meta.variableKeys.size(); i++) {
      NodeDef node = node(root, nodes.get("variables/" + i));
      if (node == null || !node.getOp().equals("VarHandleOp")) {
        throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": no variable node variables/" + i);
      }
      if (!node.containsAttr("dtype")) {
        throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": variable node variables/" + i + " has no dtype");
      }
      if (!node.containsAttr("shape")) {
        throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": variable node variables/" + i + " has no shape");
      }
      DataType dtype = node.getAttrOrThrow("dtype").getType();
      if (dtype == DataType.UNRECOGNIZED || dtype == DataType.DT_INVALID) {
        throw new IllegalArgumentException(root.resolve("saved_model.pb") + ": variable node variables/" + i + " has dtype "
            + node.getAttrOrThrow("dtype").getTypeValue() + ", which is no TensorFlow dtype");
      }
      types.add(dtype);
      shapes.add(node.getAttrOrThrow("shape").getShape());
      String key = meta.variableKeys.get(i);
      index.check(key, types.get(i), shapes.get(i), "'" + key + "'");
    }
    List<Operand<?>> values;
    try {
      values = SaveIds.restoreChecked(root, prefix, index, meta.saveId, meta.variableKeys.toArray(new String[0]), types);
    } catch (TensorFlowException e) {
      throw new IllegalArgumentException(prefix + ".index: the variables' checkpoint cannot be read: "
          + e.getMessage(), e);
    }
    return CheckpointVariables.variablesOf(values, types, shapes, out);
  }

  private static <F> F create(Facades<F> facades, SavedFunctionMetadata meta, Object body) {
    FunctionOptions options = FunctionOptions.defaults().withName(meta.name);
    return facades.define(meta.kind, body != null ? body : bodyless(meta.kind), meta.unaryInput, options);
  }

  /** A body for a function loaded without one: never run, as such a function refuses to trace. */
  private static Object bodyless(String kind) {
    return switch (kind) {
      case "map" -> (MapBody) (tf, in) -> {
        throw new IllegalStateException("a loaded function has no body");
      };
      case "list" -> (ListBody) (tf, in) -> {
        throw new IllegalStateException("a loaded function has no body");
      };
      case "single" -> (SingleBody) (tf, in) -> {
        throw new IllegalStateException("a loaded function has no body");
      };
      case "nest" -> (NestBody) (tf, in) -> {
        throw new IllegalStateException("a loaded function has no body");
      };
      default -> (UnaryBody<TType, TType>) (tf, x) -> {
        throw new IllegalStateException("a loaded function has no body");
      };
    };
  }
}
