package dev.polyfn.tests;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.proto.FunctionDefLibrary;
import org.tensorflow.proto.MetaGraphDef;
import org.tensorflow.proto.SavedModel;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;

/**
 * A seeded fuzzer over every file Polyfn reads: SavedModels Polyfn wrote (with a variable, and
 * with nested control flow), their {@code polyfn.json} and variables, SavedModels Python wrote
 * (a function's object graph and variables; lookup tables' object graph, vocabulary asset and
 * checkpointed contents; a mutable table's function saved again by Polyfn), trace cache entries
 * and signature profiles. Each case
 * mutates one file of a pristine copy ({@link FileMutations}) and loads it in a child JVM, which
 * runs cases one after another and prints each case before running it, so a crash or hang is
 * pinned to its case; the driver then starts a new child after it.
 *
 * <p>Allowed outcomes: the file loads and answers right (or answers what an edited definition
 * says, or refuses a call its edited signatures do not accept), or it is refused naming the file
 * (a cache entry: skipped with a WARNING naming it, the call traced anew). Everything else is a
 * violation: a crash, a hang, an {@code Error} or other exception, a refusal that does not name
 * the file, or a file that loads and then fails the call.
 */
final class FileFuzzer {
  private FileFuzzer() {}

  /** Held strongly: java.util.logging keeps loggers weakly, and a collected one loses its handler. */
  private static final Logger LOGGER = Logger.getLogger("dev.polyfn");

  /** The files mutated: their path under the corpus, and how they are loaded. */
  enum Target {
    POLYFN_PB("polyfn/saved_model.pb", "load"),
    POLYFN_JSON("polyfn/assets.extra/polyfn.json", "load"),
    POLYFN_INDEX("polyfn/variables/variables.index", "load"),
    POLYFN_DATA("polyfn/variables/variables.data-00000-of-00001", "load"),
    NESTED_PB("nested/saved_model.pb", "load"),
    NESTED_JSON("nested/assets.extra/polyfn.json", "load"),
    CACHE_ENTRY("cache", "cache"),
    PROFILE("profile.json", "profile"),
    PYTHON_PB("python/saved_model.pb", "load"),
    PYTHON_INDEX("python/variables/variables.index", "load"),
    // Lookup tables Python wrote: their object graph, asset file and checkpointed contents are
    // read to create, initialize and restore the tables before any call.
    VOCAB_PB("vocab/saved_model.pb", "table"),
    VOCAB_ASSET("vocab/assets/vocab.txt", "table"),
    MUTABLE_PB("mutable/saved_model.pb", "table"),
    MUTABLE_DATA("mutable/variables/variables.data-00000-of-00001", "table"),
    // The mutable table's function saved again by Polyfn: its polyfn.json names the table's
    // object, which Function.load makes from the object graph and checkpoint as Python's.
    RESAVED_PB("resaved/saved_model.pb", "resaved"),
    RESAVED_JSON("resaved/assets.extra/polyfn.json", "resaved"),
    RESAVED_DATA("resaved/variables/variables.data-00000-of-00001", "resaved");

    final String path;
    final String how;

    Target(String path, String how) {
      this.path = path;
      this.how = how;
    }

    /** The directory copied for a case (the SavedModel, the cache, or the profile itself). */
    String root() {
      return path.contains("/") ? path.substring(0, path.indexOf('/')) : path;
    }
  }

  static final List<String> VIOLATIONS = List.of("crash", "hang", "error", "unnamed refusal", "loads, then the call fails",
      "define threw", "wrong answer");

  /** Writes the pristine corpus into {@code dir}; the Python SavedModel only when {@code python} runs. */
  static void corpus(Path dir, String python) throws Exception {
    try (Variable<TFloat32> w = Variable.create(TFloat32.vectorOf(1f, 2f, 3f)); MapFunction f = SavedModelTest.scale(w)) {
      f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(3))));
      f.save(dir.resolve("polyfn"));
    }
    FileFixtures.save(dir.resolve("nested"), "nested");
    Path entry = FileFixtures.cache(dir.resolve("cache-tmp"), "nested");
    Files.createDirectories(dir.resolve("cache"));
    Files.copy(entry, dir.resolve("cache").resolve(entry.getFileName()));
    Files.writeString(dir.resolve("profile.json"), "{\"format\": \"polyfn-signature-profile\", \"version\": 1,"
        + " \"function\": \"f\", \"calls\": 30, \"signatures\": [{\"count\": 20, \"parameters\": {\"x\": {\"dtype\":"
        + " \"FLOAT\", \"shape\": [2]}}}, {\"count\": 10, \"parameters\": {\"x\": {\"dtype\": \"FLOAT\", \"shape\": [-1]}}}]}");
    if (python != null) {
      Path out = dir.resolve("python-all");
      Process p = new ProcessBuilder(python, Path.of("python", "make_saved.py").toString(), out.toString())
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (p.waitFor(300, TimeUnit.SECONDS) && p.exitValue() == 0) {
        Files.move(out.resolve("function"), dir.resolve("python"));
      }
      Path tables = dir.resolve("tables-all");
      Process t = new ProcessBuilder(python, Path.of("python", "make_table_models.py").toString(), tables.toString())
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (t.waitFor(300, TimeUnit.SECONDS) && t.exitValue() == 0) {
        Files.move(tables.resolve("vocab"), dir.resolve("vocab"));
        Files.move(tables.resolve("mutable"), dir.resolve("mutable"));
        try (MapFunction f = Function.load(dir.resolve("mutable"), "lookup")) {
          f.save(dir.resolve("resaved"));
        }
      }
    }
  }

  /** Targets the corpus holds. */
  static List<Target> targets(Path corpus) {
    return Arrays.stream(Target.values()).filter(t -> Files.exists(corpus.resolve(t.root()))).toList();
  }

  /**
   * Child JVM: args = corpus, scratch dir, seed, first case, last case (exclusive). With args =
   * {@code --drive <dir> <seed> <cases> [python]}: the whole run (corpus, children, report) in {@code dir}.
   */
  public static void main(String[] args) throws Exception {
    if (args[0].equals("--drive")) {
      Path dir = Path.of(args[1]);
      delete(dir);
      corpus(dir.resolve("corpus"), args.length > 4 ? args[4] : null);
      Report report = drive(dir.resolve("corpus"), Files.createDirectories(dir.resolve("scratch")), Long.parseLong(args[2]),
          Integer.parseInt(args[3]), 60);
      System.out.println(report.table());
      System.exit(report.violations().isEmpty() ? 0 : 1);
    }
    Path corpus = Path.of(args[0]);
    Path scratch = Path.of(args[1]);
    long seed = Long.parseLong(args[2]);
    List<Target> targets = targets(corpus);
    List<String> warnings = new ArrayList<>();
    LOGGER.setUseParentHandlers(false); // the WARNINGs are counted, not printed
    LOGGER.addHandler(new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
          synchronized (warnings) {
            warnings.add(r.getMessage());
          }
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    });
    Map<Target, String> expected = new TreeMap<>();
    for (Target t : targets) {
      expected.put(t, run(t, corpus.resolve(t.root())));
    }
    for (int i = Integer.parseInt(args[3]); i < Integer.parseInt(args[4]); i++) {
      Random r = new Random(seed * 1_000_003L + i);
      Target t = targets.get(r.nextInt(targets.size()));
      Path copy = scratch.resolve("case-" + i);
      copy(corpus.resolve(t.root()), copy);
      Path file = t == Target.CACHE_ENTRY ? FileFixtures.entries(copy).get(0)
          : t == Target.PROFILE ? copy : copy.resolve(t.path.substring(t.root().length() + 1));
      String mutation = mutate(t, file, r);
      System.out.println("case " + i + " " + t + " " + mutation);
      System.out.flush();
      synchronized (warnings) {
        warnings.clear();
      }
      String outcome = outcome(t, copy, file, expected.get(t), warnings);
      System.out.println("outcome " + i + " " + outcome);
      System.out.flush();
      if (!Boolean.getBoolean("polyfn.fuzz.keepCases")) deleteLater(copy); // kept for a look at one case
    }
  }

  private static String mutate(Target t, Path file, Random r) throws Exception {
    int pick = r.nextInt(10);
    if (pick < 5) {
      return FileMutations.bytes(file, r);
    }
    if (t == Target.CACHE_ENTRY) {
      return FileMutations.entry(file, r);
    }
    if (t == Target.POLYFN_JSON || t == Target.NESTED_JSON || t == Target.PROFILE || t == Target.RESAVED_JSON) {
      return FileMutations.jsonFile(file, r);
    }
    if (t == Target.POLYFN_PB || t == Target.NESTED_PB || t == Target.PYTHON_PB || t == Target.VOCAB_PB
        || t == Target.MUTABLE_PB || t == Target.RESAVED_PB) {
      SavedModel model = SavedModel.parseFrom(Files.readAllBytes(file));
      MetaGraphDef meta = model.getMetaGraphs(0);
      String[] what = new String[1];
      FunctionDefLibrary lib = FileMutations.functions(meta.getGraphDef().getLibrary(), r, what);
      MetaGraphDef edited = meta.toBuilder().setGraphDef(meta.getGraphDef().toBuilder().setLibrary(lib)).build();
      Files.write(file, model.toBuilder().setMetaGraphs(0, edited).build().toByteArray());
      return "function: " + what[0];
    }
    return FileMutations.bytes(file, r);
  }

  /** What loading {@code t} from {@code root} answers ("answer [..]", "call refused: ..."). */
  private static String run(Target t, Path root) throws Exception {
    switch (t.how) {
      case "cache" -> {
        try (MapFunction f = FileFixtures.define(root, "nested")) {
          // " (traced)": the call traced; " (restored)": an entry was restored too (it served another signature)
          return FileFixtures.answer(f) + (f.traceCount() == 0 ? "" : " (traced)")
              + (f.traceCount() > 0 && f.concreteFunctions().size() > f.traceCount() ? " (restored)" : "");
        }
      }
      case "table", "resaved" -> {
        try (MapFunction f = t.how.equals("table") ? Function.load(root, "lookup") : (MapFunction) Function.load(root)) {
          try (TString words = TString.vectorOf("cat", "dog", "zebra", "owl");
               Outputs out = f.call(Map.of("words", words))) {
            // Edited output names are what the file says: the first output then stands for "ids".
            TInt64 ids = (TInt64) out.get(out.names().contains("ids") ? "ids" : out.names().get(0));
            // Read flat: an edited function may answer a tensor of another rank (a scalar).
            long[] got = new long[(int) ids.size()];
            int[] at = {0};
            ids.scalars().forEach(s -> got[at[0]++] = s.getLong());
            return "answer " + Arrays.toString(got);
          } catch (RuntimeException e) {
            return "call refused: " + e;
          }
        }
      }
      case "profile" -> {
        try (MapFunction f = Function.define(FileFixtures.PLUS_ONE, FunctionOptions.defaults().withSignatureProfile(root))) {
          return FileFixtures.answer(f);
        }
      }
      default -> {
        try (MapFunction f = (MapFunction) Function.load(root)) {
          float[] input = t.root().equals("python") ? new float[] {1f, 2f, 3f, 4f}
              : t.root().equals("polyfn") ? new float[] {1f, 1f, 2f} : new float[] {1f, 2f};
          try (TFloat32 x = TFloat32.vectorOf(input); Outputs out = f.call(Map.of("x", x))) {
            // Edited output names are what the file says: the first output then stands for "y".
            String y = out.names().contains("y") ? "y" : out.names().get(0);
            return "answer " + Arrays.toString(SavedModelTest.floats(out.get(y)));
          } catch (RuntimeException e) {
            return "call refused: " + e;
          }
        }
      }
    }
  }

  private static String outcome(Target t, Path copy, Path file, String expected, List<String> warnings) {
    String answer;
    try {
      answer = run(t, copy);
    } catch (IllegalArgumentException e) {
      String m = String.valueOf(e.getMessage());
      // A checkpoint's files are read as one: naming its folder names the file.
      boolean named = m.contains(file.toString()) || t.path.contains("/variables/")
          && m.contains(copy.resolve("variables").toString());
      if (!named) {
        e.printStackTrace(System.out); // for the log of a long run; the driver reads only case and outcome lines
      }
      return named ? "refused naming the file" : "unnamed refusal: " + oneLine(m);
    } catch (Exception | Error e) {
      e.printStackTrace(System.out);
      return (t == Target.CACHE_ENTRY ? "define threw: " : "error: ") + oneLine(e.toString());
    }
    boolean skipped;
    synchronized (warnings) {
      skipped = warnings.stream().anyMatch(w -> w.contains(file.toString()));
    }
    if (answer.startsWith("call refused: ")) {
      if (answer.contains("matches no saved signature") || answer.contains("no saved signature")) {
        return "loads, refuses the call (other signatures)";
      }
      // A kernel's error while running (TensorFlow wraps those): the edited graph is valid but
      // computes something that fails for this input, as a model dividing by zero would.
      return answer.contains("{{function_node __wrapped__") ? "loads, the edited graph fails at run time"
          : "loads, then the call fails: " + oneLine(answer);
    }
    if (t == Target.CACHE_ENTRY) {
      if (answer.endsWith(" (restored)")) {
        return "restored an edited signature, traced this one";
      }
      String plain = answer.replace(" (traced)", "");
      if (!plain.equals(expected.replace(" (traced)", ""))) {
        // An edit that keeps the checksum right may restore what the edited definition says.
        return answer.contains("(traced)") ? "wrong answer: " + answer : "restored an edited definition";
      }
      return skipped ? "skipped naming the file" : answer.contains("(traced)") ? "unnamed refusal: traced without a WARNING"
          : "answers right";
    }
    if (answer.equals(expected)) {
      return "answers right";
    }
    return t == Target.PROFILE ? "wrong answer: " + answer : "answers what the edited file says";
  }

  private static String oneLine(String s) {
    String line = s.replace('\n', ' ');
    return line.length() > 300 ? line.substring(0, 300) + "..." : line;
  }

  static void copy(Path from, Path to) throws IOException {
    if (Files.isRegularFile(from)) {
      Files.createDirectories(to.getParent());
      Files.copy(from, to);
      return;
    }
    Files.walkFileTree(from, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
        Files.createDirectories(to.resolve(from.relativize(dir).toString()));
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.copy(file, to.resolve(from.relativize(file).toString()));
        return FileVisitResult.CONTINUE;
      }
    });
  }

  /**
   * Deletes a case's copy, trying again while the trace cache's writer thread may still be
   * writing the entry of a trace into it; what is left, the driver deletes after the child.
   */
  private static void deleteLater(Path p) throws InterruptedException {
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        delete(p);
        return;
      } catch (IOException e) {
        Thread.sleep(50);
      }
    }
  }

  static void delete(Path p) throws IOException {
    if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      try (var list = Files.list(p)) {
        for (Path c : list.toList()) {
          delete(c);
        }
      }
    }
    Files.delete(p);
  }

  /** The outcome of every case, counted by target and outcome; each violation with its case. */
  record Report(Map<String, Integer> counts, List<String> violations, int cases) {
    String table() {
      StringBuilder b = new StringBuilder(cases + " cases\n");
      counts.forEach((k, v) -> b.append(String.format("%6d  %s%n", v, k)));
      violations.forEach(v -> b.append("VIOLATION ").append(v).append('\n'));
      return b.toString();
    }
  }

  /**
   * Runs cases {@code [0, cases)} of {@code seed} over {@code corpus} in child JVMs, a new child
   * after each crash or hang (no output for {@code hangSeconds}).
   */
  static Report drive(Path corpus, Path scratch, long seed, int cases, long hangSeconds) throws Exception {
    Map<String, Integer> counts = new TreeMap<>();
    List<String> violations = new ArrayList<>();
    int next = 0;
    while (next < cases) {
      Path log = Files.createTempFile("polyfn-fuzz-", ".log");
      List<String> cmd = new ArrayList<>(List.of("/usr/bin/prlimit", "--as=" + (6L << 30)));
      if (!Files.isExecutable(Path.of(cmd.get(0)))) {
        cmd.clear();
      }
      cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
          "-Dorg.bytedeco.javacpp.cachedir=" + System.getProperty("org.bytedeco.javacpp.cachedir",
              Path.of(System.getProperty("user.home"), ".javacpp", "cache").toString()),
          "-cp", System.getProperty("java.class.path"), FileFuzzer.class.getName(), corpus.toString(), scratch.toString(),
          Long.toString(seed), Integer.toString(next), Integer.toString(cases)));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      long lastSize = -1;
      long lastProgress = System.nanoTime();
      boolean hung = false;
      while (!p.waitFor(1, TimeUnit.SECONDS)) {
        long size = Files.size(log);
        if (size != lastSize) {
          lastSize = size;
          lastProgress = System.nanoTime();
        } else if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(hangSeconds)) {
          p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
          hung = true;
          break;
        }
      }
      String started = null;
      for (String line : Files.readAllLines(log, StandardCharsets.ISO_8859_1)) {
        if (line.startsWith("case ")) {
          started = line.substring(5);
        } else if (line.startsWith("outcome ")) {
          String[] parts = line.split(" ", 3);
          String kind = parts[2].contains(":") ? parts[2].substring(0, parts[2].indexOf(':')) : parts[2];
          counts.merge(kind, 1, Integer::sum);
          if (VIOLATIONS.contains(kind)) {
            violations.add(started + " -> " + parts[2]);
          }
          next = Integer.parseInt(parts[1]) + 1;
          started = null;
        }
      }
      if (started != null) { // the case that was running when the child died or hung
        String kind = hung ? "hang" : "crash";
        counts.merge(kind, 1, Integer::sum);
        String tail = String.join(" | ", Files.readAllLines(log, StandardCharsets.ISO_8859_1).stream()
            .filter(l -> !l.startsWith("case ") && !l.startsWith("outcome ")).toList());
        violations.add(started + " -> " + kind + " (exit " + (hung ? "killed" : p.exitValue()) + "): "
            + (tail.length() > 500 ? tail.substring(tail.length() - 500) : tail));
        next = Integer.parseInt(started.substring(0, started.indexOf(' '))) + 1;
      } else if (hung || p.exitValue() != 0) {
        String out = Files.readString(log, StandardCharsets.ISO_8859_1);
        Files.delete(log);
        throw new IllegalStateException("the fuzzing child JVM failed outside any case (" + (hung ? "hung" : "exit "
            + p.exitValue()) + "):\n" + (out.length() > 4000 ? out.substring(out.length() - 4000) : out));
      }
      Files.delete(log);
      delete(scratch);
      Files.createDirectories(scratch);
    }
    return new Report(counts, violations, cases);
  }
}
