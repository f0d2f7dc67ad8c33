package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SaveOptions;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * JVMs saving SavedModels into a directory other JVMs load at the same time (a trainer exporting
 * while workers reload, two exports at once). Two models share the function name, signature and
 * variable shape: "A" is {@code x * v + 1} with v = 10, "B" is {@code x * v + 2} with v = 20. A
 * load must give A or B whole, or fail with a clear error: A's graph with B's variable (or the
 * reverse) is a wrong function, and a JVM crash is a defect. Results are checked against values
 * computed here.
 */
class SharedSavedModelProcessesTest {
  private static final float[] X = {1f, 2f, 3f};

  /**
   * Child JVM. {@code save dir seed millis models}: saves the models named (A, B or AB: alternately)
   * into dir, over and over, for millis. {@code version dir first millis}: saves A with v = k into
   * dir/k, k = first, first + 1, ... {@code load dir millis}: loads dir and calls the function, over and over;
   * prints the outcome line (right: A's or B's result, or for versions x * k + 1 for one k).
   */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    SharedFilesHarness.Counts counts = new SharedFilesHarness.Counts();
    String mode = args[0];
    long end = System.currentTimeMillis() + Long.parseLong(args[mode.equals("load") || mode.equals("loadVersions") ? 2 : 3]);
    int done = 0;
    if (mode.equals("save")) {
      Random random = new Random(Long.parseLong(args[2]));
      String models = args[4];
      try (Variable<TFloat32> va = Variable.create(TFloat32.scalarOf(10f));
           Variable<TFloat32> vb = Variable.create(TFloat32.scalarOf(20f));
           MapFunction a = model(va, 1f);
           MapFunction b = model(vb, 2f)) {
        do { // at least once
          char which = models.charAt(done % models.length());
          (which == 'A' ? a : b).save(dir);
          done++;
          Thread.sleep(random.nextInt(15));
        } while (System.currentTimeMillis() < end);
      }
    } else if (mode.equals("version")) {
      int first = Integer.parseInt(args[2]);
      try (Variable<TFloat32> v = Variable.create(TFloat32.scalarOf(0f)); MapFunction a = model(v, 1f)) {
        do {
          int k = first + done++;
          try (TFloat32 value = TFloat32.scalarOf(k)) {
            v.assign(value);
          }
          a.save(dir, SaveOptions.defaults().withServingVersion(k));
        } while (System.currentTimeMillis() < end);
      }
    } else {
      boolean versions = mode.equals("loadVersions");
      while (System.currentTimeMillis() < end) {
        done++;
        try (MapFunction f = (MapFunction) Function.load(dir);
             TFloat32 x = TFloat32.vectorOf(X);
             Outputs out = f.call(Map.of("x", x))) {
          check(out.get("y", TFloat32.class), versions, counts);
        } catch (RuntimeException e) {
          counts.error(e);
        }
      }
    }
    System.out.println(counts.line("done=" + done));
  }

  /** {@code y = x * v + c}, traced for float vectors of any length. */
  private static MapFunction model(Variable<TFloat32> v, float c) {
    MapBody body = (tf, in) -> Map.of("y", tf.math.add(tf.math.mul(in.input("x", TFloat32.class), v.read(tf)), tf.constant(c)));
    MapFunction f = Function.define(body, FunctionOptions.defaults().withName("model"));
    f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1))));
    return f;
  }

  private static void check(TFloat32 y, boolean versions, SharedFilesHarness.Counts counts) {
    float[] got = {y.getFloat(0), y.getFloat(1), y.getFloat(2)};
    boolean right;
    if (versions) {
      float k = got[0] - 1f; // x * k + 1 for the version k loaded
      right = k >= 1f && k == Math.rint(k) && got[1] == 2f * k + 1f && got[2] == 3f * k + 1f;
    } else {
      right = matches(got, 10f, 1f) || matches(got, 20f, 2f);
    }
    if (right) {
      counts.right.incrementAndGet();
    } else {
      counts.wrong(java.util.Arrays.toString(got) + (versions ? " is x * k + 1 for no k" : " is neither A's nor B's"));
    }
  }

  private static boolean matches(float[] got, float v, float c) {
    for (int i = 0; i < X.length; i++) {
      if (got[i] != X[i] * v + c) {
        return false;
      }
    }
    return true;
  }

  private static SharedFilesHarness.Counts run(Path logs, List<String[]> children, List<String> out) throws Exception {
    out.addAll(SharedFilesHarness.runAll(logs, SharedSavedModelProcessesTest.class, children));
    return SharedFilesHarness.sum(out);
  }

  @Test
  void aDirectoryHoldingTwoSavesFilesIsRefusedNotRunWithTheOtherSavesVariables(@TempDir Path dir) throws Exception {
    try (Variable<TFloat32> va = Variable.create(TFloat32.scalarOf(10f));
         Variable<TFloat32> vb = Variable.create(TFloat32.scalarOf(20f));
         MapFunction a = model(va, 1f);
         MapFunction b = model(vb, 2f)) {
      a.save(dir.resolve("a"));
      b.save(dir.resolve("b"));
    }
    // What a load of A read when a save of B replaced the checkpoint between its reading of
    // saved_model.pb and of the variables: it ran A's graph with B's v (x * 20 + 1).
    for (String f : List.of("variables.index", "variables.data-00000-of-00001")) {
      Files.copy(dir.resolve("b/variables/" + f), dir.resolve("a/variables/" + f), StandardCopyOption.REPLACE_EXISTING);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("a")));
    assertTrue(e.getMessage().contains("the checkpoint and assets.extra/polyfn.json were written by different saves"),
        e.getMessage());
    // And B's metadata beside A's graph.
    Files.copy(dir.resolve("b/assets.extra/polyfn.json"), dir.resolve("a/assets.extra/polyfn.json"),
        StandardCopyOption.REPLACE_EXISTING);
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("a")));
    assertTrue(e.getMessage().contains("saved_model.pb and assets.extra/polyfn.json were written by different saves"),
        e.getMessage());
  }

  @Test
  void filesWithAndWithoutASaveIdAreRefusedToo(@TempDir Path dir) throws Exception {
    try (Variable<TFloat32> va = Variable.create(TFloat32.scalarOf(10f));
         MapFunction a = model(va, 1f)) {
      a.save(dir.resolve("a"));
    }
    Path json = dir.resolve("a/assets.extra/polyfn.json");
    Path pb = dir.resolve("a/saved_model.pb");
    // polyfn.json as an older Polyfn wrote it (no save id) beside this save's saved_model.pb: a
    // save over a directory the older version wrote, caught between its files.
    Files.writeString(json, Files.readString(json).replaceFirst("\"save_id\":\\s*\"[^\"]*\",?", ""));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("a")));
    assertTrue(e.getMessage().contains("saved_model.pb and assets.extra/polyfn.json were written by different saves")
        && e.getMessage().contains(" and none)"), e.getMessage());
    // Each file by its whole path (FileFuzzTest's rule: a flipped byte in polyfn.json's id named no file).
    assertTrue(e.getMessage().contains(json.toString()) && e.getMessage().contains(pb.toString()), e.getMessage());
    // And saved_model.pb without one too: only the checkpoint (the newer save's) has an id.
    org.tensorflow.proto.SavedModel.Builder model = org.tensorflow.proto.SavedModel.parseFrom(Files.readAllBytes(pb)).toBuilder();
    model.getMetaGraphsBuilder(0).getMetaInfoDefBuilder().setMetaGraphVersion("");
    Files.write(pb, model.build().toByteArray());
    e = assertThrows(IllegalArgumentException.class, () -> Function.load(dir.resolve("a")));
    assertTrue(e.getMessage().contains("the checkpoint and assets.extra/polyfn.json were written by different saves"),
        e.getMessage());
  }

  @Test
  void loadsWhileOneJvmSavesTwoModelsInTurnGetAWholeModelOrAClearError(@TempDir Path dir, @TempDir Path logs)
      throws Exception {
    Path model = dir.resolve("model");
    ChildJvm.run(SharedSavedModelProcessesTest.class, "save", model.toString(), "1", "1", "A"); // there before the loads
    List<String> out = new ArrayList<>();
    SharedFilesHarness.Counts total = run(logs, List.of(
        new String[] {"save", model.toString(), "7", "6000", "AB"},
        new String[] {"load", model.toString(), "6000"},
        new String[] {"load", model.toString(), "6000"}), out);
    String all = String.join("\n----\n", out);
    assertEquals(0, total.wrong.get(), "a load mixed two saves:\n" + all);
    assertTrue(total.right.get() > 0, all);
  }

  @Test
  void twoJvmsSavingAtOnceLeaveNoMixedModelThatLoads(@TempDir Path dir, @TempDir Path logs) throws Exception {
    Path model = dir.resolve("model");
    ChildJvm.run(SharedSavedModelProcessesTest.class, "save", model.toString(), "1", "1", "A");
    List<String> out = new ArrayList<>();
    SharedFilesHarness.Counts total = run(logs, List.of(
        new String[] {"save", model.toString(), "11", "6000", "A"},
        new String[] {"save", model.toString(), "13", "6000", "B"},
        new String[] {"load", model.toString(), "6000"}), out);
    String all = String.join("\n----\n", out);
    assertEquals(0, total.wrong.get(), "a load mixed two saves:\n" + all);
    // Whatever the two saves left: a whole model, or a load that says the directory is mixed.
    List<String> after = new ArrayList<>();
    SharedFilesHarness.Counts last = run(logs, List.<String[]>of(new String[] {"load", model.toString(), "1"}), after);
    assertEquals(0, last.wrong.get(), after.get(0));
  }

  @Test
  void loadsOfTheHighestVersionNeverFailWhileNewVersionsAreSaved(@TempDir Path dir, @TempDir Path logs) throws Exception {
    Path model = dir.resolve("model");
    ChildJvm.run(SharedSavedModelProcessesTest.class, "version", model.toString(), "1", "1");
    List<String> out = new ArrayList<>();
    SharedFilesHarness.Counts total = run(logs, List.of(
        new String[] {"version", model.toString(), "2", "6000"},
        new String[] {"loadVersions", model.toString(), "6000"},
        new String[] {"loadVersions", model.toString(), "6000"}), out);
    String all = String.join("\n----\n", out);
    assertEquals(0, total.wrong.get(), all);
    // TensorFlow Serving's layout: a version directory is used once its saved_model.pb is there,
    // so it must be whole by then.
    assertEquals(0, total.errors.get(), all);
    assertTrue(total.right.get() > 0, all);
  }
}
