package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.PolymorphicFunction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tensorflow.Operand;
import org.tensorflow.Result;
import org.tensorflow.SavedModelBundle;
import org.tensorflow.Signature;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.NdArrays;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;

/**
 * Saving again a function that captures lookup tables restored from Python's SavedModels ({@code
 * tests/python/make_table_models.py}: a {@code StaticHashTable}, a {@code StaticVocabularyTable}
 * with its vocabulary file, a {@code MutableHashTable}, a {@code DenseHashTable}, and a Keras
 * model whose {@code StringLookup} table and {@code Embedding} variable are both captured, a Keras
 * {@code TextVectorization}, two tables). The
 * saved SavedModel must give the same results to {@code Function.load} (saved again too) and to
 * Python's {@code tf.saved_model.load} ({@code m.<name>(x)} and every signature, {@code
 * tests/python/check_tables.py}); a mutable table is saved with its contents at the save.
 */
class LookupTablesSaveTest {
  private static final String[] WORDS = {"cat", "dog", "bird", "fish", "zebra"};

  @TempDir static Path dir;
  private static Map<String, float[]> expected;

  /** A model of make_table_models.py: its function, parameter, and the input the test passes. */
  private record Model(String name, String function, String param) {
    Tensor input() {
      return switch (name) {
        case "dense" -> TInt64.vectorOf(3, 4, 9);
        case "keras" -> TString.tensorOf(NdArrays.ofObjects(String.class, Shape.of(2, 2))
            .setObject("dog", 0, 0).setObject("fish", 0, 1).setObject("bird", 1, 0).setObject("cat", 1, 1));
        case "keras_text" -> TString.vectorOf("the cat ran", "a dog flew");
        default -> TString.vectorOf(WORDS);
      };
    }

    /** check_tables.py's arguments for the same input. */
    List<String> pythonInput() {
      return switch (name) {
        case "dense" -> List.of("int64", "3", "3|4|9");
        case "keras" -> List.of("string", "2,2", "dog|fish|bird|cat");
        case "keras_text" -> List.of("string", "2", "the cat ran|a dog flew");
        default -> List.of("string", "5", String.join("|", WORDS));
      };
    }
  }

  private static Model model(String name) {
    return switch (name) {
      case "dense" -> new Model(name, "lookup", "keys");
      case "keras", "keras_text" -> new Model(name, "serve", "args_0");
      case "counter" -> new Model(name, "add", "words");
      default -> new Model(name, "lookup", "words");
    };
  }

  @BeforeAll
  static void writeModels() throws Exception {
    expected = PythonScripts.namedValues(PythonScripts.run("make_table_models.py", 300, dir.toString()));
  }

  /** The one output of a call, as floats (ids are small integers, exact as floats). */
  private static float[] call(MapFunction f, Model m) {
    try (Tensor x = m.input(); Outputs o = f.call(Map.of(m.param(), x))) {
      assertEquals(1, o.size(), "one output: " + o.names());
      return floats(o.get(o.names().get(0)));
    }
  }

  /** What TensorFlow Java's SavedModelBundle (the graph, its init op and saver) returns from the one signature. */
  private static float[] bundled(Path saved, Model m) {
    try (SavedModelBundle b = SavedModelBundle.load(saved.toString(), "serve"); Tensor x = m.input()) {
      Signature sig = b.signatures().stream().filter(s -> !s.key().startsWith("__")).findFirst().orElseThrow();
      try (Result r = b.function(sig.key()).call(Map.of(sig.inputNames().iterator().next(), x))) {
        return floats(r.get(0));
      }
    }
  }

  /** The asset file named {@code name} a save wrote: {@code assets/<digest of its contents>/<name>}. */
  private static Path asset(Path saved, String name) throws Exception {
    try (Stream<Path> all = Files.walk(saved.resolve("assets"))) {
      List<Path> found = all.filter(p -> p.getFileName().toString().equals(name)).toList();
      assertEquals(1, found.size(), "assets named " + name + ": " + found);
      assertTrue(found.get(0).getParent().getFileName().toString().matches("[0-9a-f]{16}"), found.get(0).toString());
      return found.get(0);
    }
  }

  /**
   * Two saves into one directory, of tables with vocabularies of one file name, and a load that
   * read the first save's graph, metadata and checkpoint before the second's vocabulary file
   * landed. The second save used to overwrite {@code assets/vocab.txt}, so that load built the
   * first save's table from the second's vocabulary: other ids, no error (the save ids of the
   * three files it checks agree). Each save now names an asset by its contents' digest.
   */
  @Test
  void aLoadBetweenTwoSavesNeverReadsTheOtherSavesVocabulary(@TempDir Path tmp) throws Exception {
    Path other = copyTree(dir.resolve("vocab"), tmp.resolve("other"));
    Path vocab = other.resolve("assets").resolve("vocab.txt");
    List<String> lines = new java.util.ArrayList<>(Files.readAllLines(vocab));
    java.util.Collections.reverse(lines);
    Files.write(vocab, lines);
    Path target = tmp.resolve("shared");
    Path kept = tmp.resolve("first-save");
    List<String> files = List.of("saved_model.pb", "assets.extra/polyfn.json", "variables/variables.index",
        "variables/variables.data-00000-of-00001");
    float[] first;
    try (MapFunction a = Function.load(dir.resolve("vocab"), "lookup"); MapFunction b = Function.load(other, "lookup")) {
      first = call(a, model("vocab"));
      assertFalse(java.util.Arrays.equals(first, call(b, model("vocab"))), "the two vocabularies give other ids");
      a.save(target);
      for (String f : files) {
        Files.createDirectories(kept.resolve(f).getParent());
        Files.copy(target.resolve(f), kept.resolve(f));
      }
      b.save(target);
    }
    for (String f : files) { // what a load read of the first save, before the second's vocabulary
      Files.copy(kept.resolve(f), target.resolve(f), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    try (MapFunction g = (MapFunction) Function.load(target)) {
      assertArrayEquals(first, call(g, model("vocab")));
    }
  }

  private static Path copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : all.toList()) {
        Files.copy(p, to.resolve(from.relativize(p).toString()));
      }
    }
    return to;
  }

  /**
   * An asset named with {@code ..} (a foreign or hand-edited SavedModel's {@code
   * ../assets/vocab.txt}, which a load resolves to {@code assets/vocab.txt}) is saved under its
   * file name in its digest's directory: the name used to be kept whole below the digest, so the
   * file landed in {@code assets/assets/vocab.txt}, out of the digest's directory, where every
   * other save's asset of that name overwrote it.
   */
  @Test
  void anAssetNamedWithDotDotSavesUnderItsFileName(@TempDir Path tmp) throws Exception {
    Path odd = copyTree(dir.resolve("vocab"), tmp.resolve("odd"));
    Path pb = odd.resolve("saved_model.pb");
    org.tensorflow.proto.SavedModel.Builder model = org.tensorflow.proto.SavedModel.parseFrom(Files.readAllBytes(pb)).toBuilder();
    for (var meta : model.getMetaGraphsBuilderList()) {
      for (var asset : meta.getAssetFileDefBuilderList()) {
        asset.setFilename("../assets/" + asset.getFilename());
      }
    }
    Files.write(pb, model.build().toByteArray());
    Path saved = tmp.resolve("saved");
    try (MapFunction f = Function.load(odd, "lookup")) {
      assertArrayEquals(expected.get("vocab"), call(f, model("vocab")));
      f.save(saved);
    }
    asset(saved, "vocab.txt");
    assertArrayEquals(expected.get("vocab"), bundled(saved, model("vocab")), "TensorFlow's own loader");
  }

  private static float[] floats(Tensor t) {
    {
      float[] out = new float[(int) t.shape().size()];
      if (t instanceof TInt64 ids) {
        long[] i = {0};
        ids.scalars().forEach(s -> out[(int) i[0]++] = s.getLong());
      } else {
        long[] i = {0};
        ((TFloat32) t).scalars().forEach(s -> out[(int) i[0]++] = s.getFloat());
      }
      return out;
    }
  }

  /** What Python's loader returns for the SavedModel at {@code saved}: "call" and "signature_<key>" lines. */
  private static Map<String, float[]> python(Path saved, Model m) throws Exception {
    List<String> in = m.pythonInput();
    return PythonScripts.namedValues(PythonScripts.run("check_tables.py", 300, saved.toString(), m.function(), in.get(0),
        in.get(1), in.get(2)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"static", "vocab", "mutable", "dense", "keras", "keras_text"})
  void aFunctionWithATableSavesAndLoadsInPolyfnAndPython(String name) throws Exception {
    Model m = model(name);
    Path resaved = dir.resolve("resaved-" + name);
    Path again = dir.resolve("again-" + name);
    float[] before;
    try (MapFunction f = Function.load(dir.resolve(name), m.function())) {
      before = call(f, m);
      assertArrayEquals(expected.get(name), before, 1e-6f, name + " against Python, before saving");
      f.save(resaved);
      assertArrayEquals(before, call(f, m), "still usable after the save");
    }
    try (MapFunction g = (MapFunction) Function.load(resaved)) {
      for (int i = 0; i < 4; i++) {
        assertArrayEquals(before, call(g, m), name + ": loaded back by Polyfn, call " + i);
      }
      g.save(again); // the table it restored can be saved again in turn
    }
    try (MapFunction h = (MapFunction) Function.load(again)) {
      assertArrayEquals(before, call(h, m), name + ": saved twice");
    }
    Map<String, float[]> py = python(resaved, m);
    assertTrue(py.size() >= 2, "m." + m.function() + " and a signature: " + py.keySet());
    py.forEach((k, v) -> assertArrayEquals(before, v, 1e-6f, name + ": Python's " + k));
    assertArrayEquals(before, bundled(resaved, m), 1e-6f, name + ": SavedModelBundle");
  }

  /**
   * A mutable table is saved with its contents at the save: add() returns the old values and
   * sets each word's to its length, so after one call the saved table holds the lengths.
   */
  @Test
  void aMutableTableIsSavedWithItsCurrentContents() throws Exception {
    Model m = model("counter");
    Path resaved = dir.resolve("resaved-counter");
    try (MapFunction f = Function.load(dir.resolve("counter"), "add")) {
      assertArrayEquals(expected.get("counter"), call(f, m), "the contents Python saved");
      f.save(resaved);
    }
    float[] lengths = {3, 3, 4, 4, 5};
    try (MapFunction g = (MapFunction) Function.load(resaved)) {
      assertArrayEquals(lengths, call(g, m), "the contents at the save, not at the load");
    }
    python(resaved, m).forEach((k, v) -> assertArrayEquals(lengths, v, "Python's " + k));
    assertArrayEquals(lengths, bundled(resaved, m), "SavedModelBundle");
  }

  /**
   * A table's contents come from its save's checkpoint: one another save of the same function
   * wrote (as a save into the directory while it is loaded leaves it) is refused, not restored
   * beside the first save's graph. The function has no variables, so only the tables' restore
   * reads the checkpoint.
   */
  @Test
  void aTableRestoredFromAnotherSavesCheckpointIsRefused() throws Exception {
    Model m = model("counter");
    Path first = dir.resolve("counter-first");
    Path second = dir.resolve("counter-second");
    try (MapFunction f = Function.load(dir.resolve("counter"), "add")) {
      f.save(first);
      call(f, m);
      f.save(second);
    }
    for (String file : List.of("variables.index", "variables.data-00000-of-00001")) {
      Files.copy(second.resolve("variables/" + file), first.resolve("variables/" + file), StandardCopyOption.REPLACE_EXISTING);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(first));
    assertTrue(e.getMessage().contains("the checkpoint and assets.extra/polyfn.json were written by different saves"),
        e.getMessage());
  }

  /**
   * A Polyfn function whose body calls a loaded function with a table captures the table in turn
   * and runs (refused before: "not inside another function's body"). It saves with the callee's
   * definition and the table (refused before: "calls other Polyfn functions"): Polyfn and Python
   * load it back with the same results. The loaded function owns the table: once it is closed, the
   * caller says so.
   */
  @Test
  @SuppressWarnings("unchecked")
  void aFunctionCallingALoadedTableFunctionRuns() throws Exception {
    Model m = model("static");
    float[] want = expected.get("static").clone();
    for (int i = 0; i < want.length; i++) {
      want[i] += 100;
    }
    Path saved = dir.resolve("outer-static");
    MapFunction f = Function.load(dir.resolve("static"), "lookup");
    try (MapFunction outer = Function.define((tf, in) -> Map.of("ids", tf.math.add(
            (Operand<TInt64>) f.apply(tf, Map.of("words", in.input("words", TString.class))).get("ids"), tf.constant(100L))),
        FunctionOptions.defaults().withName("lookup"))) {
      assertArrayEquals(want, call(outer, m), "the caller's result");
      outer.save(saved);
      assertArrayEquals(want, call(outer, m), "still usable after the save");
      f.close();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> call(outer, m));
      assertTrue(e.getMessage().contains("is closed"), e.getMessage());
    }
    try (MapFunction g = (MapFunction) Function.load(saved)) {
      assertArrayEquals(want, call(g, m), "loaded back by Polyfn");
    }
    // polyfn.json naming an object that is no resource (object 1, a function) is that file's fault
    Path json = saved.resolve("assets.extra").resolve("polyfn.json");
    String intact = java.nio.file.Files.readString(json);
    java.nio.file.Files.writeString(json, intact.replaceFirst("\"object\":\\d+", "\"object\":1"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().startsWith(json + ": resource object 1 is a ") && e.getMessage().endsWith(", not a resource"),
        e.getMessage());
    java.nio.file.Files.writeString(json, intact);
    Map<String, float[]> py = python(saved, m);
    assertTrue(py.size() >= 2, "m." + m.function() + " and a signature: " + py.keySet());
    py.forEach((k, v) -> assertArrayEquals(want, v, "Python's " + k));
    assertArrayEquals(want, bundled(saved, m), "SavedModelBundle");
  }

  /**
   * The vocabulary file is kept from the load: the SavedModel the table came from may be gone
   * when the function is saved.
   */
  @Test
  void aVocabularyTableSavesAfterItsSavedModelIsGone() throws Exception {
    Path copy = dir.resolve("gone").resolve("vocab");
    FileFuzzer.copy(dir.resolve("vocab"), copy);
    Path resaved = dir.resolve("resaved-gone");
    try (MapFunction f = Function.load(copy, "lookup")) {
      try (Stream<Path> all = Files.walk(copy)) {
        all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
      assertFalse(Files.exists(copy));
      f.save(resaved);
    }
    assertTrue(Files.isRegularFile(asset(resaved, "vocab.txt")));
    try (MapFunction g = (MapFunction) Function.load(resaved)) {
      assertArrayEquals(expected.get("vocab"), call(g, model("vocab")));
    }
  }

  /**
   * A path relative to the working directory, with "." and ".." in it, saves the vocabulary file
   * like an absolute one (refused before: "asset file name 'vocab.txt' is not under ./../..").
   */
  @Test
  void aTableWithAVocabularyFileSavesToARelativePath() throws Exception {
    Path relative = Path.of(".").resolve(Path.of("").toAbsolutePath().relativize(dir.toAbsolutePath().resolve("relative")));
    assertTrue(relative.startsWith(Path.of(".", "..")), "a relative path with . and ..: " + relative);
    try (MapFunction f = Function.load(dir.resolve("vocab"), "lookup")) {
      f.save(relative);
    }
    assertTrue(Files.isRegularFile(asset(dir.resolve("relative"), "vocab.txt")));
    try (MapFunction g = (MapFunction) Function.load(relative)) {
      assertArrayEquals(expected.get("vocab"), call(g, model("vocab")), "loaded back from the relative path");
    }
  }

  /**
   * A table whose saved functions depend on something save cannot write (here: its destroy
   * function made to capture the model's variable) loads and runs, but save refuses it saying
   * why; the function stays usable and a good save still works.
   */
  @Test
  void aTableSaveCannotWriteIsRefusedSayingWhy() throws Exception {
    Path broken = dir.resolve("broken").resolve("keras");
    FileFuzzer.copy(dir.resolve("keras"), broken);
    SavedModel.Builder b = SavedModel.parseFrom(Files.readAllBytes(broken.resolve("saved_model.pb"))).toBuilder();
    var graph = b.getMetaGraphsBuilder(0).getObjectGraphDefBuilder();
    int variable = -1;
    for (int i = 0; i < graph.getNodesCount(); i++) {
      variable = variable < 0 && graph.getNodes(i).hasVariable() ? i : variable;
    }
    Map<String, org.tensorflow.proto.SavedObjectGraphOuterClass.SavedConcreteFunction> fns =
        new LinkedHashMap<>(graph.getConcreteFunctionsMap());
    for (var e : fns.entrySet()) {
      if (e.getKey().contains("destroyer")) {
        e.setValue(e.getValue().toBuilder().addBoundInputs(variable).build());
      }
    }
    graph.clearConcreteFunctions().putAllConcreteFunctions(fns);
    Files.write(broken.resolve("saved_model.pb"), b.build().toByteArray());
    Model m = model("keras");
    try (MapFunction f = Function.load(broken, "serve")) {
      assertArrayEquals(expected.get("keras"), call(f, m), 1e-6f, "it loads and runs");
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.save(dir.resolve("refused")));
      assertTrue(e.getMessage().contains("cannot save 'serve'") && e.getMessage().contains("which save cannot write")
          && e.getMessage().contains("VARIABLE"), e.getMessage());
      assertFalse(Files.exists(dir.resolve("refused").resolve("saved_model.pb")));
      assertArrayEquals(expected.get("keras"), call(f, m), 1e-6f, "still usable after the refusal");
    }
    try (MapFunction f = Function.load(dir.resolve("keras"), "serve")) {
      f.save(dir.resolve("good-after-refusal"));
    }
    try (PolymorphicFunction g = Function.load(dir.resolve("good-after-refusal"))) {
      assertArrayEquals(expected.get("keras"), call((MapFunction) g, m), 1e-6f, "a good save after the refusal");
    }
  }

  /**
   * polyfn.json names each table's capture and object: one naming another object, or a capture
   * out of range, is refused naming the file; the good SavedModel still loads after.
   */
  @Test
  void aDamagedTableEntryIsRefusedNamingTheFile() throws Exception {
    Path good = dir.resolve("entry-good");
    try (MapFunction f = Function.load(dir.resolve("static"), "lookup")) {
      f.save(good);
    }
    String json = Files.readString(good.resolve("assets.extra").resolve("polyfn.json"));
    assertTrue(json.matches("(?s).*\"object\": *[0-9]+.*"), json);
    for (String[] edit : new String[][] {{"\"object\": *[0-9]+", "\"object\": 1", "saved_model.pb", "not a resource"},
        {"\"capture\": *[0-9]+", "\"capture\": 3", "polyfn.json", "resources[0].capture"}}) {
      Path bad = dir.resolve("entry-bad-" + edit[2]);
      FileFuzzer.copy(good, bad);
      Files.writeString(bad.resolve("assets.extra").resolve("polyfn.json"), json.replaceFirst(edit[0], edit[1]));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(bad));
      assertTrue(e.getMessage().contains(bad.toString()) && e.getMessage().contains(edit[2])
          && e.getMessage().contains(edit[3]), e.getMessage());
    }
    try (MapFunction f = (MapFunction) Function.load(good)) {
      assertArrayEquals(expected.get("static"), call(f, model("static")), "a good load after the refusals");
    }
  }
}
