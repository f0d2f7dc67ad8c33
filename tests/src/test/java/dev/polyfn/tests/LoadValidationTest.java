package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.FunctionDefLibrary;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.proto.SavedObjectGraphOuterClass.SavedObjectGraph;
import org.tensorflow.types.TFloat32;

/**
 * Files whose parts contradict one another, or that hold numbers written the standard JSON way:
 * a trace cache entry is skipped with a WARNING naming it (its signature traces anew), a
 * SavedModel or profile is refused at load naming the file that is wrong and what is wrong in it.
 */
class LoadValidationTest {

  /** Defines the cached function again: the damaged entry is skipped with a WARNING naming it, and traced anew. */
  private static void skippedAndTracedAnew(Path cache, Path entry, String why) throws Exception {
    byte[] damaged = Files.readAllBytes(entry);
    List<String> logged = LoggedWarnings.during(() -> {
      try (MapFunction f = FileFixtures.define(cache, "plus")) {
        assertEquals(FileFixtures.ANSWER, FileFixtures.answer(f));
        assertEquals(1, f.traceCount(), "the entry must not serve the call");
      }
    });
    assertTrue(logged.stream().anyMatch(m -> m.contains("ignoring trace cache entry " + entry) && m.contains(why)),
        logged.toString());
    // The new trace's entry replaces the damaged one, written by a background thread: waited for,
    // so the next edit (or the temporary directory's removal) does not race with it.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (java.util.Arrays.equals(damaged, Files.readAllBytes(entry)) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertTrue(!java.util.Arrays.equals(damaged, Files.readAllBytes(entry)), "the traced entry was not written");
  }

  @Test
  void aCacheEntryWithoutOutputNamesIsSkippedAndTracedAnew(@TempDir Path cache) throws Exception {
    Path entry = FileFixtures.cache(cache, "plus");
    CacheEntryFile e = CacheEntryFile.read(entry);
    e.outputs.clear();
    e.write(entry);
    skippedAndTracedAnew(cache, entry, "0 output names for a function with 1 outputs");
  }

  @Test
  void aCacheEntryWhoseParametersContradictItsTypesIsSkippedAndTracedAnew(@TempDir Path cache) throws Exception {
    Path entry = FileFixtures.cache(cache, "plus");
    CacheEntryFile original = CacheEntryFile.read(entry);
    CacheEntryFile list = CacheEntryFile.read(entry);
    list.params.get(0).kind = "LIST";
    list.write(entry);
    skippedAndTracedAnew(cache, entry, "parameter 0 is 'x' (list) in the parameter list, but 'x' (tensor)");
    CacheEntryFile twice = CacheEntryFile.read(entry);
    twice.params.add(twice.params.get(0));
    twice.write(entry);
    skippedAndTracedAnew(cache, entry, "parameter 'x' is listed twice");
    original.outputs.set(0, "");
    original.write(entry);
    skippedAndTracedAnew(cache, entry, "output name '' is empty");
  }

  private static Path metadata(Path dir) {
    return dir.resolve("assets.extra").resolve("polyfn.json");
  }

  @Test
  void polyfnJsonWhoseParametersContradictItsTypesIsRefusedAtLoad(@TempDir Path dir) throws Exception {
    Path saved = FileFixtures.save(dir.resolve("m"), "plus");
    String json = Files.readString(metadata(saved));
    int start = json.indexOf("\"parameters\":[") + "\"parameters\":[".length();
    int end = json.indexOf("}]", start) + 1;
    String param = json.substring(start, end);
    Files.writeString(metadata(saved), json.replace(param, param + "," + param));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().startsWith(metadata(saved) + ": ") && e.getMessage().contains("parameter 'x' is listed twice"),
        e.getMessage());
    Files.writeString(metadata(saved), json.replace("\"kind\":\"TENSOR\"", "\"kind\":\"LIST\""));
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().startsWith(metadata(saved) + ": ")
        && e.getMessage().contains("'x' (list) in the parameter list, but 'x' (tensor) in the declared type"), e.getMessage());
    Files.writeString(metadata(saved), json); // and the intact file still loads
    try (MapFunction f = (MapFunction) Function.load(saved)) {
      assertEquals(FileFixtures.ANSWER, FileFixtures.answer(f));
    }
  }

  /** The output shapes polyfn.json keeps for a later save are checked at load: one per output, dims of -1 or more. */
  @Test
  void polyfnJsonWithMalformedOutputShapesIsRefusedAtLoad(@TempDir Path dir) throws Exception {
    Path saved = FileFixtures.save(dir.resolve("m"), "plus");
    String json = Files.readString(metadata(saved));
    assertTrue(json.contains("\"output_shapes\":[[-1]]"), json);
    for (String bad : List.of("[[-2]]", "[[-1],[3]]", "[\"x\"]", "{}")) {
      Files.writeString(metadata(saved), json.replace("\"output_shapes\":[[-1]]", "\"output_shapes\":" + bad));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
      assertTrue(e.getMessage().startsWith(metadata(saved) + ": ") && e.getMessage().contains("output shapes"), bad + ": " + e.getMessage());
    }
    Files.writeString(metadata(saved), json.replace(",\"output_shapes\":[[-1]]", "")); // not recorded (older saves): loads
    try (MapFunction f = (MapFunction) Function.load(saved)) {
      assertEquals(FileFixtures.ANSWER, FileFixtures.answer(f));
    }
  }

  @Test
  void aCheckpointKeyPolyfnJsonGetsWrongIsRefusedNamingPolyfnJson(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("m");
    try (dev.polyfn.Variable<org.tensorflow.types.TFloat32> w = dev.polyfn.Variable.create(
            org.tensorflow.types.TFloat32.vectorOf(1f, 2f, 3f));
        MapFunction f = SavedModelTest.scale(w)) {
      f.getConcreteFunction(java.util.Map.of("x", dev.polyfn.TensorSpec.of(org.tensorflow.types.TFloat32.class,
          org.tensorflow.ndarray.Shape.of(3))));
      f.save(saved);
    }
    String json = Files.readString(metadata(saved));
    Files.writeString(metadata(saved), json.replace("\"v0/.ATTRIBUTES/VARIABLE_VALUE\"", "\"w0/.ATTRIBUTES/VARIABLE_VALUE\""));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertEquals(metadata(saved) + ": variables[0].checkpoint_key: expected \"v0/.ATTRIBUTES/VARIABLE_VALUE\", got"
        + " \"w0/.ATTRIBUTES/VARIABLE_VALUE\"", e.getMessage());
    // a variable node's dtype that is no dtype (the file fuzzer's case, a flipped byte): refused
    // naming saved_model.pb, not the checkpoint it was compared with
    Path pb = saved.resolve("saved_model.pb");
    byte[] intactPb = Files.readAllBytes(pb);
    org.tensorflow.proto.SavedModel model = org.tensorflow.proto.SavedModel.parseFrom(intactPb);
    org.tensorflow.proto.GraphDef.Builder graph = model.getMetaGraphs(0).getGraphDef().toBuilder();
    for (org.tensorflow.proto.NodeDef.Builder n : graph.getNodeBuilderList()) {
      if (n.getName().equals("variables/0")) {
        n.putAttr("dtype", org.tensorflow.proto.AttrValue.newBuilder().setTypeValue(77).build());
      }
    }
    Files.write(pb, model.toBuilder().setMetaGraphs(0, model.getMetaGraphs(0).toBuilder().setGraphDef(graph)).build()
        .toByteArray());
    Files.writeString(metadata(saved), json);
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertEquals(pb + ": variable node variables/0 has dtype 77, which is no TensorFlow dtype", e.getMessage());
    Files.write(pb, intactPb);
    // a blank name (the file fuzzer's case): refused naming the file, not by FunctionOptions
    Files.writeString(metadata(saved), json.replace("\"name\":\"scale\"", "\"name\":\" \""));
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertEquals(metadata(saved) + ": name: expected a function name with a non-blank character, got \" \"", e.getMessage());
  }

  @Test
  void aDamagedFunctionDefIsReportedAgainstSavedModelPb(@TempDir Path dir) throws Exception {
    Path saved = FileFixtures.save(dir.resolve("m"), "plus");
    FileFixtures.editSavedModel(saved, lib -> {
      FunctionDefLibrary.Builder b = lib.toBuilder();
      for (FunctionDef.Builder f : b.getFunctionBuilderList()) {
        f.getNodeDefBuilderList().forEach(n -> n.setOp(n.getOp().startsWith("Add") ? "NoSuchOp" : n.getOp()));
      }
      return b.build();
    });
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().startsWith(saved.resolve("saved_model.pb") + ": function ")
        && e.getMessage().contains("\"NoSuchOp\" is not registered"), e.getMessage());
  }

  /** A node input rewired to a node that does not exist: TensorFlow builds the body only at the first call. */
  private static FunctionDefLibrary dangling(FunctionDefLibrary lib) {
    FunctionDefLibrary.Builder b = lib.toBuilder();
    for (FunctionDef.Builder f : b.getFunctionBuilderList()) {
      for (var n : f.getNodeDefBuilderList()) {
        if (n.getOp().startsWith("Add")) {
          n.setInput(0, "nowhere:output:0");
        }
      }
    }
    return b.build();
  }

  @Test
  void aFunctionBodyTensorFlowCannotBuildIsRefusedAtLoadNotAtTheFirstCall(@TempDir Path dir) throws Exception {
    Path saved = FileFixtures.save(dir.resolve("m"), "plus");
    FileFixtures.editSavedModel(saved, LoadValidationTest::dangling);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().startsWith(saved.resolve("saved_model.pb") + ": function ")
        && e.getMessage().contains("its body is not a valid graph") && e.getMessage().contains("nowhere"), e.getMessage());
    Path cache = dir.resolve("cache");
    Path entry = FileFixtures.cache(cache, "plus");
    FileFixtures.editEntry(entry, LoadValidationTest::dangling);
    skippedAndTracedAnew(cache, entry, "its body is not a valid graph");
  }

  /** Every Add node asks for {@code device}: TensorFlow reads a node's device only when it places the function. */
  private static UnaryOperator<FunctionDefLibrary> onDevice(String device) {
    return lib -> {
      FunctionDefLibrary.Builder b = lib.toBuilder();
      for (FunctionDef.Builder f : b.getFunctionBuilderList()) {
        f.getNodeDefBuilderList().forEach(n -> n.setDevice(n.getOp().startsWith("Add") ? device : n.getDevice()));
      }
      return b.build();
    };
  }

  /** Fuzzer seed 67 (a flipped byte in a device name): it loaded, then every call failed. */
  @Test
  void aDeviceTensorFlowCannotReadIsRefusedAtLoadNotAtTheFirstCall(@TempDir Path dir) throws Exception {
    Path saved = FileFixtures.save(dir.resolve("m"), "plus");
    FileFixtures.editSavedModel(saved, onDevice("/job:localhost/replica:0/tas&:0/device:CPU:0"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().startsWith(saved.resolve("saved_model.pb") + ": function ")
        && e.getMessage().contains("asks for device \"/job:localhost/replica:0/tas&:0/device:CPU:0\", which is no device"
            + " specification TensorFlow can read"), e.getMessage());
    // A device TensorFlow reads loads and answers, partial or full (a GPU this machine lacks: on the CPU).
    for (String device : new String[] {"/job:localhost/replica:0/task:0/device:CPU:0", "/device:CPU:0", "/cpu:0", "/device:GPU:0"}) {
      Path good = FileFixtures.save(dir.resolve("ok" + Math.abs(device.hashCode())), "plus");
      FileFixtures.editSavedModel(good, onDevice(device));
      try (MapFunction f = (MapFunction) Function.load(good)) {
        assertEquals(FileFixtures.ANSWER, FileFixtures.answer(f), device);
      }
    }
    Path cache = dir.resolve("cache");
    Path entry = FileFixtures.cache(cache, "plus");
    FileFixtures.editEntry(entry, onDevice("/device:CPU:x"));
    skippedAndTracedAnew(cache, entry, "no device specification TensorFlow can read");
  }

  /**
   * Fuzzer seed 71: the Reshape of {@code scale}'s "total" (sum of reshape(x, [-1]) over axis 0)
   * turned into a Sum, which sums x[3] to a scalar; the outer Sum's axis 0 then names no axis. Only
   * the recorded input shape shows it: the load built the body with inputs of unknown shape, so
   * the function loaded and every call failed.
   */
  @Test
  void aBodyInvalidForItsRecordedInputShapesIsRefusedAtLoad(@TempDir Path dir) throws Exception {
    Path saved = dir.resolve("m");
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f)); MapFunction f = SavedModelTest.scale(w)) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3))));
      f.save(saved);
    }
    FileFixtures.editSavedModel(saved, lib -> {
      FunctionDefLibrary.Builder b = lib.toBuilder();
      for (FunctionDef.Builder fn : b.getFunctionBuilderList()) {
        fn.getNodeDefBuilderList().forEach(n -> {
          if (n.getOp().equals("Reshape")) {
            n.setOp("Sum").putAttr("Tidx", n.getAttrOrThrow("Tshape")).removeAttr("Tshape").putAttr("keep_dims",
                org.tensorflow.proto.AttrValue.newBuilder().setB(false).build());
          }
        });
      }
      return b.build();
    });
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(saved));
    assertTrue(e.getMessage().startsWith(saved.resolve("saved_model.pb") + ": function ")
        && e.getMessage().contains("its body is not a valid graph") && e.getMessage().contains("Invalid reduction dimension"),
        e.getMessage());
  }

  private static IllegalArgumentException profileRefused(Path file, String json) throws Exception {
    Files.writeString(file, json);
    return assertThrows(IllegalArgumentException.class,
        () -> Function.define(FileFixtures.PLUS_ONE, FunctionOptions.defaults().withSignatureProfile(file)).close());
  }

  private static String profile(String calls, String count, String parameters) {
    return "{\"format\": \"polyfn-signature-profile\", \"version\": 1, \"function\": \"f\", \"calls\": " + calls
        + ", \"signatures\": [{\"count\": " + count + ", \"parameters\": " + parameters + "}]}";
  }

  @Test
  void profileErrorsNameTheFileAndWhatIsWrongInIt(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("profile.json");
    String[][] cases = {
        {"{\"x\": {\"dtype\": \"FLOAT\", \"shape\": [-5, 3]}}", "signatures[0].parameters.x.shape[0]: expected a size >= 0 or -1"},
        {"{\"x\": {\"dtype\": \"FLOAT\", \"shape\": [4611686018427387904, 4]}}", "more elements than a 64-bit count holds"},
        {"{\"x\": {\"dtype\": \"FLOAT\", \"shape\": [" + "1,".repeat(299) + "1]}}", "300 dimensions, more than TensorFlow's 254"},
        {"{\"x\": {\"dtype\": \"FLOAT\", \"shape\": [2]}, \"z\": {\"dtype\": \"FLOAT\", \"shape\": [2]}}", "'z'"},
    };
    for (String[] c : cases) {
      IllegalArgumentException e = profileRefused(file, profile("10", "10", c[0]));
      assertTrue(e.getMessage().startsWith("signature profile " + file + ": ") && e.getMessage().contains(c[1]),
          c[0] + " -> " + e.getMessage());
    }
  }

  @Test
  void jsonNumbersAreReadAsStandardJsonThenCheckedByField(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("profile.json");
    String x = "{\"x\": {\"dtype\": \"FLOAT\", \"shape\": [-1]}}";
    Files.writeString(file, profile("1e3", "1.0", x));
    try (MapFunction f = Function.define(FileFixtures.PLUS_ONE, FunctionOptions.defaults().withSignatureProfile(file))) {
      assertEquals(1, f.traceCount()); // "count": 1.0 and "calls": 1e3 are integers written the other JSON ways
      assertEquals(FileFixtures.ANSWER, FileFixtures.answer(f));
      assertTrue(String.join("\n", f.inferenceReport()).contains("1000"), f.inferenceReport().toString());
    }
    IllegalArgumentException e = profileRefused(file, profile("1.5", "1", x));
    assertTrue(e.getMessage().equals("signature profile " + file + ": calls: expected an integer >= 0, got 1.5"),
        e.getMessage());
    e = profileRefused(file, profile("-1.0e+1", "1", x));
    assertTrue(e.getMessage().contains("calls: expected an integer >= 0, got -10.0"), e.getMessage());
    e = profileRefused(file, profile("01", "1", x));
    assertTrue(e.getMessage().contains("malformed JSON"), e.getMessage());
  }

  /** A Python object graph whose function names a concrete function it does not hold. */
  @Test
  void aPythonObjectGraphNamingAMissingConcreteFunctionIsRefusedNamingTheFile(@TempDir Path dir) throws Exception {
    Path pb = pythonModule(dir, graph -> {
      for (int i = 0; i < graph.getNodesCount(); i++) {
        if (graph.getNodes(i).hasFunction()) {
          graph.getNodesBuilder(i).getFunctionBuilder().setConcreteFunctions(0, "no_such_concrete_function");
        }
      }
    });
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("module"), "add"));
    assertTrue(e.getMessage() != null && e.getMessage().startsWith(pb + ": ")
        && e.getMessage().contains("no_such_concrete_function"), String.valueOf(e.getMessage()));
  }

  /**
   * A concrete function whose input signature is not Python's (positional arguments, keyword
   * arguments) pair: refused with an IllegalArgumentException saying so (an index error before).
   */
  @Test
  void aPythonInputSignatureOfAnotherShapeIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    pythonModule(dir, graph -> {
      for (String name : List.copyOf(graph.getConcreteFunctionsMap().keySet())) {
        var c = graph.getConcreteFunctionsOrThrow(name).toBuilder();
        var sig = c.getCanonicalizedInputSignature().toBuilder();
        sig.getTupleValueBuilder().removeValues(1);
        graph.putConcreteFunctions(name, c.setCanonicalizedInputSignature(sig).build());
      }
    });
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("module"), "add"));
    assertTrue(e.getMessage() != null && e.getMessage().contains("input signature is not a tuple"), String.valueOf(e.getMessage()));
  }

  /**
   * Writes tests/python/make_saved.py's SavedModels into {@code dir}, then rewrites the object
   * graph of module/saved_model.pb with {@code edit}; returns that file.
   */
  private static Path pythonModule(Path dir, java.util.function.Consumer<SavedObjectGraph.Builder> edit) throws Exception {
    String python = System.getProperty("polyfn.python", "python3");
    Process p = new ProcessBuilder(python, Path.of("python", "make_saved.py").toString(), dir.toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "python timed out");
    assertEquals(0, p.exitValue(), out);
    Path pb = dir.resolve("module").resolve("saved_model.pb");
    SavedModel model = SavedModel.parseFrom(Files.readAllBytes(pb));
    MetaGraphDef meta = model.getMetaGraphs(0);
    SavedObjectGraph.Builder graph = meta.getObjectGraphDef().toBuilder();
    edit.accept(graph);
    Files.write(pb, model.toBuilder().setMetaGraphs(0, meta.toBuilder().setObjectGraphDef(graph)).build().toByteArray());
    return pb;
  }
}
