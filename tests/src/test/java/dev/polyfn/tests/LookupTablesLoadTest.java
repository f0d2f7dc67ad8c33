package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorflow.Graph;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.SessionFunction;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.NodeDef;
import org.tensorflow.proto.OpDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedBareConcreteFunction;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObject;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedResource;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;

/**
 * SavedModels whose functions use lookup tables, written now by Python ({@code
 * tests/python/make_table_models.py}): a {@code StaticHashTable} initialized from keys and values,
 * a {@code StaticVocabularyTable} initialized from a vocabulary file (an asset), a {@code
 * MutableHashTable} and a {@code DenseHashTable} whose contents are in the checkpoint. {@code
 * Function.load} restores each table (created, initialized, restored) and returns what Python's
 * restored functions and TensorFlow Java's {@code SavedModelBundle} return.
 */
class LookupTablesLoadTest {
  private static final String[] WORDS = {"cat", "dog", "bird", "fish", "zebra"};
  private static final long[] KEYS = {3, 4, 9};

  @TempDir static Path dir;
  private static final Map<String, long[]> expected = new LinkedHashMap<>();

  @BeforeAll
  static void writeModels() throws Exception {
    PythonScripts.namedValues(PythonScripts.run("make_table_models.py", 300, dir.toString())).forEach((k, v) -> {
      long[] l = new long[v.length];
      for (int i = 0; i < v.length; i++) {
        l[i] = (long) v[i];
      }
      expected.put(k, l);
    });
  }

  private static Tensor input(String model) {
    return model.equals("dense") ? TInt64.vectorOf(KEYS) : TString.vectorOf(WORDS);
  }

  private static long[] longs(Tensor t) {
    TInt64 ids = (TInt64) t;
    long[] out = new long[(int) ids.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = ids.getLong(i);
    }
    return out;
  }

  private static long[] call(MapFunction f, String model) {
    String param = model.equals("dense") ? "keys" : "words";
    try (Tensor x = input(model); Outputs o = f.call(Map.of(param, x))) {
      return longs(o.get("ids"));
    }
  }

  private static long[] bundled(Path saved, String model) {
    try (SavedModelBundle bundle = SavedModelBundle.load(saved.toString(), "serve"); Tensor x = input(model)) {
      SessionFunction serving = bundle.function("serving_default");
      try (Result r = serving.call(Map.of(serving.signature().inputNames().iterator().next(), x))) {
        return longs(r.get("ids").orElseThrow());
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"static", "vocab", "mutable", "dense"})
  void aTableLoadsAndAnswersLikePythonAndSavedModelBundle(String model) {
    Path saved = dir.resolve(model);
    try (MapFunction f = Function.load(saved, "lookup")) {
      long[] first = call(f, model);
      assertArrayEquals(expected.get(model), first, model + " against Python");
      for (int i = 0; i < 4; i++) {
        // Past the calls after which a function without resource inputs would move to the session path.
        assertArrayEquals(first, call(f, model), model + ": the table is kept from call to call");
      }
      assertEquals(1, f.traceCount(), "restored, not traced");
    }
    assertArrayEquals(expected.get(model), bundled(saved, model), model + ": SavedModelBundle against Python");
  }

  /** The vocabulary file is found where the SavedModel is now, not where Python wrote it. */
  @Test
  void aVocabularyFileIsFoundAfterTheSavedModelMoved() throws IOException {
    Path moved = dir.resolve("moved").resolve("vocab");
    FileFuzzer.copy(dir.resolve("vocab"), moved);
    try (MapFunction f = Function.load(moved, "lookup")) {
      assertArrayEquals(expected.get("vocab"), call(f, "vocab"));
    }
    Files.delete(moved.resolve("assets").resolve("vocab.txt"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(moved, "lookup"));
    assertTrue(e.getMessage().contains(moved.resolve("saved_model.pb").toString())
        && e.getMessage().contains(moved.resolve("assets").resolve("vocab.txt").toAbsolutePath().toString())
        && e.getMessage().contains("missing"), e.getMessage());
  }

  /**
   * A vocabulary file TensorFlow cannot initialize the table from (a word twice: a key with two
   * values) is refused naming that file, not only the SavedModel (the file fuzzer found this).
   */
  @Test
  void aBadVocabularyFileIsRefusedNamingIt() throws IOException {
    Path bad = dir.resolve("bad-vocab").resolve("vocab");
    FileFuzzer.copy(dir.resolve("vocab"), bad);
    Path vocab = bad.resolve("assets").resolve("vocab.txt");
    Files.writeString(vocab, Files.readString(vocab) + Files.readAllLines(vocab).get(0) + "\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(bad, "lookup"));
    assertTrue(e.getMessage().contains("asset file " + vocab.toAbsolutePath()), e.getMessage());
    try (MapFunction f = Function.load(dir.resolve("vocab"), "lookup")) {
      assertArrayEquals(expected.get("vocab"), call(f, "vocab"), "a good load after the refusal");
    }
  }

  /**
   * A 3 GiB vocabulary file (sparse: one line of zeros) is refused naming it before TensorFlow
   * reads it: TensorFlow's reader aborted the process on it (std::bad_alloc, found by the fuzzer).
   */
  @Test
  void anOversizedVocabularyFileIsRefusedBeforeTensorFlowReadsIt() throws IOException {
    Path big = dir.resolve("big-vocab").resolve("vocab");
    FileFuzzer.copy(dir.resolve("vocab"), big);
    Path vocab = big.resolve("assets").resolve("vocab.txt");
    try (RandomAccessFile f = new RandomAccessFile(vocab.toFile(), "rw")) {
      f.setLength(3L << 30);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(big, "lookup"));
    assertTrue(e.getMessage().contains(vocab.toAbsolutePath() + " is larger than Polyfn reads"), e.getMessage());
    Files.delete(vocab);
    try (MapFunction f = Function.load(dir.resolve("vocab"), "lookup")) {
      assertArrayEquals(expected.get("vocab"), call(f, "vocab"), "a good load after the refusal");
    }
  }

  /** Each load has tables of its own: closing one function leaves the other's table as it was. */
  @ParameterizedTest
  @ValueSource(strings = {"static", "mutable"})
  void twoLoadsShareNoTable(String model) {
    Path saved = dir.resolve(model);
    try (MapFunction a = Function.load(saved, "lookup")) {
      try (MapFunction b = Function.load(saved, "lookup")) {
        assertArrayEquals(expected.get(model), call(b, model));
      }
      assertArrayEquals(expected.get(model), call(a, model), "after the other load was closed");
    }
  }

  /** Calls from several threads read the one table, each fed its handle. */
  @Test
  void threadsCallOneTable() throws Exception {
    try (MapFunction f = Function.load(dir.resolve("vocab"), "lookup")) {
      java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
      try {
        java.util.List<java.util.concurrent.Future<long[]>> results = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
          results.add(pool.submit(() -> call(f, "vocab")));
        }
        for (var r : results) {
          assertArrayEquals(expected.get("vocab"), r.get());
        }
      } finally {
        pool.shutdown();
      }
    }
  }

  /**
   * A function that captures a table can be called inside another Polyfn body, which captures
   * the table in turn (saved too: LookupTablesSaveTest); inside the caller's own Graph, which
   * cannot feed it, it is refused saying so, and stays usable.
   */
  @Test
  void aFunctionWithATableIsRefusedWhereItCannotGo() {
    try (MapFunction f = Function.load(dir.resolve("static"), "lookup");
         MapFunction outer = Function.define((tf, in) -> f.apply(tf, Map.of("words", in.input("w", TString.class))));
         Graph g = new Graph()) {
      try (TString w = TString.vectorOf(WORDS); Outputs o = outer.call(Map.of("w", w))) {
        assertArrayEquals(expected.get("static"), longs(o.get("ids")), "inside another body");
      }
      Ops tf = Ops.create(g);
      RuntimeException own = assertThrows(RuntimeException.class,
          () -> f.apply(tf, Map.of("words", tf.placeholder(TString.class, Placeholder.shape(Shape.of(-1))))));
      assertTrue(own.getMessage().contains("not from your own Graph"), own.getMessage());
      assertArrayEquals(expected.get("static"), call(f, "static"), "still usable");
    }
  }

  /**
   * A resource Polyfn cannot make (here: its _create_resource function taken out of the object
   * graph) is refused at load, naming the file, the resource and the reason.
   */
  @Test
  void aResourceThatCannotBeRestoredIsRefusedAtLoadSayingWhy() throws IOException {
    Path broken = dir.resolve("broken").resolve("static");
    FileFuzzer.copy(dir.resolve("static"), broken);
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(broken.resolve("saved_model.pb")));
    SavedModel.Builder b = model.toBuilder();
    var graph = b.getMetaGraphsBuilder(0).getObjectGraphDefBuilder();
    for (var node : graph.getNodesBuilderList()) {
      if (node.hasResource()) {
        var kept = node.getChildrenList().stream().filter(c -> !c.getLocalName().equals("_create_resource")).toList();
        node.clearChildren().addAllChildren(kept);
      }
    }
    Files.write(broken.resolve("saved_model.pb"), b.build().toByteArray());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(broken, "lookup"));
    assertTrue(e.getMessage().contains(broken.resolve("saved_model.pb").toString())
        && e.getMessage().contains("the resource 'table'") && e.getMessage().contains("has no _create_resource function"),
        e.getMessage());
  }

  /** A copy of model {@code model} under {@code name} whose saved_model.pb's meta graph {@code edit} changed. */
  private static Path edited(String model, String name, java.util.function.Consumer<MetaGraphDef.Builder> edit)
      throws IOException {
    Path copy = dir.resolve(name).resolve(model);
    FileFuzzer.copy(dir.resolve(model), copy);
    SavedModel.Builder b = SavedModel.parseFrom(Files.readAllBytes(copy.resolve("saved_model.pb"))).toBuilder();
    edit.accept(b.getMetaGraphsBuilder(0));
    Files.write(copy.resolve("saved_model.pb"), b.build().toByteArray());
    return copy;
  }

  /** Sets attribute {@code attr} of every {@code op} node of the library's functions to {@code value}. */
  private static void setAttr(MetaGraphDef.Builder meta, String op, String attr, long value) {
    int set = 0;
    for (FunctionDef.Builder f : meta.getGraphDefBuilder().getLibraryBuilder().getFunctionBuilderList()) {
      for (NodeDef.Builder n : f.getNodeDefBuilderList()) {
        if (n.getOp().equals(op)) {
          n.putAttr(attr, AttrValue.newBuilder().setI(value).build());
          set++;
        }
      }
    }
    assertTrue(set > 0, "no " + op + " node");
  }

  /**
   * Sizes TensorFlow allocates a table by before reading anything are bounded first: a vocabulary
   * of 2^40 words (TensorFlow reserved them, and std::bad_alloc aborted the JVM; the file holds
   * 5) and a dense table of 2^40 initial buckets are refused naming the attribute, and the JVM
   * goes on: a good load after works.
   */
  @Test
  void hostileTableSizesAreRefusedNamingTheAttribute() throws IOException {
    Path vocab = edited("vocab", "huge-vocab", m -> setAttr(m, "InitializeTableFromTextFileV2", "vocab_size", 1L << 40));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(vocab, "lookup"));
    assertTrue(e.getMessage().contains("the resource '") && e.getMessage().contains("attribute vocab_size is " + (1L << 40))
        && e.getMessage().contains(vocab.resolve("assets").resolve("vocab.txt").toAbsolutePath().toString()), e.getMessage());
    Path dense = edited("dense", "huge-buckets", m -> setAttr(m, "MutableDenseHashTableV2", "initial_num_buckets", 1L << 40));
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(dense, "lookup"));
    assertTrue(e.getMessage().contains("attribute initial_num_buckets is " + (1L << 40) + ", expected 1 to " + (1L << 26)),
        e.getMessage());
    try (MapFunction f = Function.load(dir.resolve("vocab"), "lookup")) {
      assertArrayEquals(expected.get("vocab"), call(f, "vocab"), "a good load after the refusals");
    }
  }

  /**
   * A chain of 20000 resources, each one's create function capturing the next: followed
   * recursively, it ran the stack out (a StackOverflowError, an Error the load did not clean up
   * after); refused past 64, naming the chain, and a good load works after.
   */
  @Test
  void aDeepChainOfResourcesIsRefused() throws IOException {
    Path chain = edited("static", "chain", m -> {
      var graph = m.getObjectGraphDefBuilder();
      int table = -1;
      for (int i = 0; i < graph.getNodesCount(); i++) {
        table = graph.getNodes(i).hasResource() ? i : table;
      }
      var tableNode = graph.getNodesBuilder(table);
      int createAt = -1;
      for (int k = 0; k < tableNode.getChildrenCount(); k++) {
        createAt = tableNode.getChildren(k).getLocalName().equals("_create_resource") ? k : createAt;
      }
      int create = tableNode.getChildren(createAt).getNodeId();
      String createName = graph.getNodes(create).getFunction().getConcreteFunctions(0);
      FunctionDef createDef = m.getGraphDef().getLibrary().getFunctionList().stream()
          .filter(d -> d.getSignature().getName().equals(createName)).findFirst().orElseThrow();
      int links = 20000;
      int first = graph.getNodesCount(); // link i: function node first + 2i, resource node first + 2i + 1
      for (int i = 0; i < links; i++) {
        // The last link creates the table as saved; each other one captures the next link's resource.
        String name = "chain_" + i;
        boolean last = i == links - 1;
        var signature = createDef.getSignature().toBuilder().setName(name);
        var concrete = graph.getConcreteFunctionsOrThrow(createName).toBuilder();
        if (!last) {
          signature.addInputArg(OpDef.ArgDef.newBuilder().setName("chain").setType(DataType.DT_RESOURCE));
          concrete.clearBoundInputs().addBoundInputs(first + 2 * i + 3);
        }
        m.getGraphDefBuilder().getLibraryBuilder().addFunction(createDef.toBuilder().setSignature(signature));
        graph.putConcreteFunctions(name, concrete.build());
        graph.addNodes(SavedObject.newBuilder().setBareConcreteFunction(
            SavedBareConcreteFunction.newBuilder().setConcreteFunctionName(name)));
        graph.addNodes(SavedObject.newBuilder().setResource(SavedResource.getDefaultInstance()).addChildren(
            tableNode.getChildren(createAt).toBuilder().setNodeId(first + 2 * i)));
      }
      graph.getNodesBuilder(table).setChildren(createAt, tableNode.getChildren(createAt).toBuilder().setNodeId(first));
    });
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(chain, "lookup"));
    assertTrue(e.getMessage().contains("chain of more than 64 resources"), e.getMessage());
    try (MapFunction f = Function.load(dir.resolve("static"), "lookup")) {
      assertArrayEquals(expected.get("static"), call(f, "static"), "a good load after the refusal");
    }
  }
}
