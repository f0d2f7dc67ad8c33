package dev.polyfn.tests;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.tensorflow.Operand;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.FunctionDefLibrary;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.TensorProto;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;

/**
 * Files for the tests of loading damaged or hostile files: SavedModels and trace cache entries
 * of two small functions, and edits of their FunctionDefs as a hostile writer would make them.
 * Its {@code main} loads or defines one in a child JVM and prints what happened, for the cases
 * that once crashed, aborted or hung the JVM.
 */
final class FileFixtures {
  private FileFixtures() {}

  /**
   * y = x + 1. Both bodies are serializable lambdas: the trace cache keys them by their method,
   * so the entries {@link #cache} writes are read by a {@link #define} from anywhere (a plain
   * lambda's key holds the place it is defined at).
   */
  static final MapBody PLUS_ONE = (MapBody & Serializable) (tf, in) ->
      Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(1f)));

  /**
   * y = x + 1 when sum(x) > 0 (through two nested conds), else x: branch functions calling branch
   * functions, the outer and inner then-branches taking the same inputs (x and the predicate), so
   * the inner If can be rewired to call the outer branch.
   */
  static final MapBody NESTED = (MapBody & Serializable) (tf, in) -> {
    Operand<TFloat32> x = in.input("x", TFloat32.class);
    Operand<TBool> p = tf.math.greater(tf.sum(x, tf.constant(0)), tf.constant(0f));
    return Map.of("y", Flow.cond(tf, p,
        () -> Flow.cond(tf, p, () -> tf.math.add(x, tf.dtypes.cast(p, TFloat32.class)),
            () -> tf.math.sub(x, tf.dtypes.cast(p, TFloat32.class))),
        () -> tf.identity(x)));
  };

  static MapBody body(String name) {
    return name.equals("nested") ? NESTED : PLUS_ONE;
  }

  /** The answer of both functions for x = [1, 2]. */
  static final String ANSWER = "answer [2.0, 3.0]";

  /** Saves function {@code body} ("plus" or "nested"), traced for a float vector of any length. */
  static Path save(Path dir, String body) {
    try (MapFunction f = Function.define(body(body), FunctionOptions.defaults().withName(body))) {
      f.getConcreteFunction(Map.of("x", dev.polyfn.TensorSpec.of(TFloat32.class, org.tensorflow.ndarray.Shape.of(-1))));
      f.save(dir);
    }
    return dir;
  }

  /** Fills trace cache {@code dir} with one entry of {@code body} (a float vector of 2); returns the entry. */
  static Path cache(Path dir, String body) throws Exception {
    try (MapFunction f = define(dir, body)) {
      call(f).close();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      List<Path> entries = Files.isDirectory(dir) ? entries(dir) : List.of();
      if (!entries.isEmpty()) {
        return entries.get(0);
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no trace cache entry was written to " + dir);
  }

  static List<Path> entries(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".polyfn-trace")).sorted().toList();
    }
  }

  static MapFunction define(Path cache, String body) {
    return Function.define(body(body), FunctionOptions.defaults().withName(body).withTraceCache(cache));
  }

  static Outputs call(MapFunction f) {
    try (TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      return f.call(Map.of("x", x));
    }
  }

  /** "answer [..]" of a call of {@code f}, or "call refused: ..." when it throws. */
  static String answer(MapFunction f) {
    try (Outputs out = call(f)) {
      return "answer " + Arrays.toString(SavedModelTest.floats(out.get("y")));
    } catch (RuntimeException e) {
      return "call refused: " + e;
    }
  }

  /** Rewrites every FunctionDef of {@code savedModel}'s library that {@code edit} changes. */
  static void editSavedModel(Path savedModel, UnaryOperator<FunctionDefLibrary> edit) throws Exception {
    Path pb = savedModel.resolve("saved_model.pb");
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(pb));
    MetaGraphDef meta = model.getMetaGraphs(0);
    FunctionDefLibrary lib = edit.apply(meta.getGraphDef().getLibrary());
    MetaGraphDef edited = meta.toBuilder().setGraphDef(meta.getGraphDef().toBuilder().setLibrary(lib)).build();
    Files.write(pb, model.toBuilder().setMetaGraphs(0, edited).build().toByteArray());
  }

  /** Rewrites the FunctionDef and library of trace cache entry {@code file}, its checksum kept right. */
  static void editEntry(Path file, UnaryOperator<FunctionDefLibrary> edit) throws Exception {
    CacheEntryFile e = CacheEntryFile.read(file);
    FunctionDefLibrary all = FunctionDefLibrary.newBuilder().addFunction(FunctionDef.parseFrom(e.def))
        .mergeFrom(FunctionDefLibrary.parseFrom(e.library)).build();
    FunctionDefLibrary edited = edit.apply(all);
    e.def = edited.getFunction(0).toByteArray();
    e.library = FunctionDefLibrary.newBuilder().addAllFunction(edited.getFunctionList().subList(1, edited.getFunctionCount()))
        .build().toByteArray();
    e.write(file);
  }

  /** Every {@code Const} node of every function edited by {@code edit}. */
  static UnaryOperator<FunctionDefLibrary> consts(UnaryOperator<NodeDef> edit) {
    return lib -> {
      FunctionDefLibrary.Builder b = lib.toBuilder();
      for (FunctionDef.Builder f : b.getFunctionBuilderList()) {
        for (NodeDef.Builder n : f.getNodeDefBuilderList()) {
          if (n.getOp().equals("Const")) {
            NodeDef edited = edit.apply(n.build());
            n.clear().mergeFrom(edited);
          }
        }
      }
      return b.build();
    };
  }

  /** A constant's value given a negative dimension (TensorFlow: "Check failed: size >= 0"). */
  static NodeDef negativeDimension(NodeDef n) {
    TensorProto v = n.getAttrOrThrow("value").getTensor().toBuilder()
        .setTensorShape(TensorShapeProto.newBuilder().addDim(TensorShapeProto.Dim.newBuilder().setSize(-3))).build();
    return n.toBuilder().putAttr("value", AttrValue.newBuilder().setTensor(v).build()).build();
  }

  /** A FLOAT constant holding an INT32 value (TensorFlow: "Check failed: dtype() == expected_dtype"). */
  static NodeDef int32InFloat(NodeDef n) {
    if (n.getAttrOrThrow("dtype").getType() != DataType.DT_FLOAT) {
      return n;
    }
    TensorProto v = TensorProto.newBuilder().setDtype(DataType.DT_INT32).addIntVal(1)
        .setTensorShape(n.getAttrOrThrow("value").getTensor().getTensorShape()).build();
    return n.toBuilder().putAttr("value", AttrValue.newBuilder().setTensor(v).build()).build();
  }

  /**
   * A cycle: in the first function holding a node with a function attribute (an If) that is
   * itself called by another, that attribute rewired to call the function it is in.
   */
  static FunctionDefLibrary cycle(FunctionDefLibrary lib) {
    FunctionDefLibrary.Builder b = lib.toBuilder();
    for (int i = 0; i < b.getFunctionCount(); i++) {
      FunctionDef.Builder f = b.getFunctionBuilder(i);
      for (NodeDef.Builder n : f.getNodeDefBuilderList()) {
        for (Map.Entry<String, AttrValue> a : n.getAttrMap().entrySet()) {
          if (a.getValue().hasFunc() && !isMain(lib, f.getSignature().getName())) {
            n.putAttr(a.getKey(), a.getValue().toBuilder().setFunc(a.getValue().getFunc().toBuilder()
                .setName(f.getSignature().getName())).build());
            return b.build();
          }
        }
      }
    }
    throw new AssertionError("no branch function calls another");
  }

  /** Whether no other function of {@code lib} refers to {@code name} (the main function). */
  private static boolean isMain(FunctionDefLibrary lib, String name) {
    return lib.getFunctionList().stream().noneMatch(f -> f.getNodeDefList().stream()
        .anyMatch(n -> n.getAttrMap().values().stream().anyMatch(a -> a.hasFunc() && a.getFunc().getName().equals(name))));
  }

  /**
   * Child JVM: {@code load <dir>} loads a SavedModel and calls it; {@code define <cache dir>
   * <body>} defines a trace-cached function and calls it; {@code profile <file>} defines a
   * function with a signature profile. Prints "answer [..]" or "refused: message", and "traceCount n".
   */
  public static void main(String[] args) {
    try {
      switch (args[0]) {
        case "load" -> {
          try (MapFunction f = (MapFunction) Function.load(Path.of(args[1]))) {
            System.out.println(answer(f));
          }
        }
        case "define" -> {
          try (MapFunction f = define(Path.of(args[1]), args[2])) {
            System.out.println(answer(f));
            System.out.println("traceCount " + f.traceCount());
          }
        }
        default -> {
          try (MapFunction f = Function.define(PLUS_ONE, FunctionOptions.defaults().withSignatureProfile(Path.of(args[1])))) {
            System.out.println(answer(f));
          }
        }
      }
    } catch (IllegalArgumentException e) {
      System.out.println("refused: " + e.getMessage());
    } catch (Throwable e) {
      System.out.println("error: " + e);
    }
    System.out.flush();
  }
}
