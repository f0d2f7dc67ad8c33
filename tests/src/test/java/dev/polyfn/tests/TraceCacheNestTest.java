package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Nest;
import dev.polyfn.Outputs;
import dev.polyfn.RaggedOperand;
import dev.polyfn.RaggedTensor;
import dev.polyfn.SparseOperand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.SparseTensor;
import org.tensorflow.ndarray.StdArrays;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * Warm start of nest parameters ({@link FunctionOptions#withTraceCache}): a nest that held tensors
 * (lists and maps of tensors, SparseTensors, RaggedTensors) and numbers restores in the next JVM
 * and serves the structures and values traced before without tracing (another value traces); a
 * nest that held an enum or a record, and a record parameter, are not cached (their types are
 * this JVM's), and say why at DEBUG. Each
 * run is a fresh child JVM, as a restarted application is; each function caches into a directory
 * of its own, so the test sees which wrote entries.
 */
class TraceCacheNestTest {
  /** A record of tensors only: still not cached (an entry does not keep its class). */
  record Pair(TFloat32 a, TFloat32 b) {}

  /** A Java value without a text form another JVM reads back: a nest holding one is not cached. */
  enum Mode { UP, DOWN }

  /** Every leaf of a nest summed: tensors, SparseTensor values, RaggedTensor flat values, integer Java values. */
  @SuppressWarnings("unchecked")
  static Operand<TFloat32> sum(Ops tf, Nest n) {
    if (n.isOperand()) {
      return all(tf, n.operand(TFloat32.class));
    }
    if (n.isValue()) {
      Object v = n.value(Object.class);
      return tf.constant(v instanceof Mode m ? 100f + m.ordinal() : (float) (Integer) v);
    }
    if (n.isComposite()) {
      Object view = n.unwrap();
      return view instanceof SparseOperand<?> s ? all(tf, (Operand<TFloat32>) s.values())
          : all(tf, (Operand<TFloat32>) ((RaggedOperand<?>) view).flatValues());
    }
    Operand<TFloat32> total = tf.constant(0f);
    for (Nest e : n.isList() ? n.elements() : new ArrayList<>(n.entries().values())) {
      total = tf.math.add(total, sum(tf, e));
    }
    return total;
  }

  private static Operand<TFloat32> all(Ops tf, Operand<TFloat32> x) {
    return tf.sum(x, tf.range(tf.constant(0), tf.rank(x), tf.constant(1)));
  }

  /**
   * The bodies, and where they are defined: a class of their own, so that each body's key (its
   * class file and place of definition) is the same wherever a test or the child defines it.
   */
  static final class Bodies {
    static final MapBody NEST = (tf, in) -> Map.of("s", sum(tf, in.nest("xs")));
    static final MapBody SPARSE = (tf, in) -> {
      SparseOperand<TFloat32> s = in.sparse("s", TFloat32.class);
      return Map.of("rows", tf.sparse.sparseReduceSum(s.indices(), s.values(), s.denseShape(), tf.constant(1)));
    };
    static final MapBody RAGGED = (tf, in) -> Map.of("s", all(tf, in.ragged("r", TFloat32.class).flatValues()));
    static final MapBody RECORD = (tf, in) -> {
      dev.polyfn.RecordInput<Pair> r = in.record("r", Pair.class);
      return Map.of("s", tf.math.add(all(tf, r.get(Pair::a)), all(tf, r.get(Pair::b))));
    };

    /** A nest function of a nest: its SparseTensor's values times 10, and its tensor in a list. */
    @SuppressWarnings("unchecked")
    static dev.polyfn.NestFunction scaled(Path dir) {
      return Function.defineNested((tf, in) -> {
        Nest n = in.nest("xs");
        SparseOperand<TFloat32> s = n.get("s").composite(SparseOperand.class);
        return Map.of("s", new SparseOperand<>(s.indices(), tf.math.mul(s.values(), tf.constant(10f)), s.denseShape()),
            "x", List.of(n.get("x").operand(TFloat32.class)));
      }, FunctionOptions.defaults().withName("nestOut").withTraceCache(dir));
    }

    /** Function {@code name} ("record", "sparse", else a nest's sum) caching in {@code dir}. */
    static MapFunction define(String name, Path dir) {
      MapBody body = switch (name) {
        case "record" -> RECORD;
        case "sparse" -> SPARSE;
        case "ragged" -> RAGGED;
        default -> NEST;
      };
      return Function.define(body, FunctionOptions.defaults().withName(name).withTraceCache(dir));
    }
  }

  /** The functions of the child, each caching in a directory of its own (its name). */
  static final List<String> NAMES = List.of("javaValue", "enumValue", "nestedRecord", "record", "nest", "sparse", "ragged",
      "composites");

  /**
   * Child JVM: args = cache directory, "first" or "new" (which also calls a structure of each
   * cached function not called before). Prints each result, each function's trace count, and
   * the dev.polyfn DEBUG records that say what is not cached.
   */
  public static void main(String[] args) throws Exception {
    Logger logger = Logger.getLogger("dev.polyfn");
    logger.setLevel(Level.FINE);
    Handler print = new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getMessage().contains("cache")) {
          System.out.println("log " + r.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(print);
    Path dir = Path.of(args[0]);
    boolean fresh = args[1].equals("new");
    Map<String, MapFunction> fs = new java.util.LinkedHashMap<>();
    for (String name : NAMES) {
      fs.put(name, Bodies.define(name, dir.resolve(name)));
    }
    try (TFloat32 a = TFloat32.vectorOf(1f, 2f);
        TFloat32 b = TFloat32.scalarOf(10f);
        TFloat32 c = TFloat32.vectorOf(3f, 4f, 5f);
        TFloat32 d = TFloat32.vectorOf(5f, 6f);
        TInt64 idx = TInt64.tensorOf(StdArrays.ndCopyOf(new long[][] {{0, 0}, {0, 2}, {2, 1}}));
        TInt64 one = TInt64.tensorOf(StdArrays.ndCopyOf(new long[][] {{1, 3}}));
        TFloat32 vals = TFloat32.vectorOf(1f, 2f, 4f);
        TFloat32 nine = TFloat32.vectorOf(9f);
        TInt64 dense = TInt64.vectorOf(3, 4);
        TInt64 wide = TInt64.vectorOf(2, 4);
        TInt64 tall = TInt64.vectorOf(5, 4);
        TInt64 splits = TInt64.vectorOf(0, 2, 2, 3)) {
      // The refused ones first: the writer thread logs their reasons before it writes the entries
      // main waits for.
      print("enumValue", fs.get("enumValue"), "xs", Map.of("x", a, "m", Mode.DOWN));
      print("nestedRecord", fs.get("nestedRecord"), "xs", List.of(a, new Pair(b, c)));
      print("record", fs.get("record"), "r", new Pair(a, c));
      MapFunction nest = fs.get("nest");
      print("javaValue", fs.get("javaValue"), "xs", Map.of("x", a, "n", 3));
      print("nest", nest, "xs", Map.of("a", List.of(a, b), "b", List.of(c)));
      print("nest", nest, "xs", List.of(Map.of("k", a), Map.of("k", b, "j", c)));
      print("nest", nest, "xs", Map.of("a", List.of(d, b), "b", List.of(c))); // the first signature, other values
      MapFunction sparse = fs.get("sparse");
      print("sparse", sparse, "s", SparseTensor.of(idx, vals, dense));
      print("sparse", sparse, "s", SparseTensor.of(one, nine, dense)); // fewer values: the same signature
      print("sparse", sparse, "s", SparseTensor.of(one, nine, wide));
      print("ragged", fs.get("ragged"), "r", RaggedTensor.of(c, splits));
      try (dev.polyfn.NestFunction scaled = Bodies.scaled(dir.resolve("nestOut"));
          dev.polyfn.NestOutputs out = scaled.call(Map.of("xs", Map.of("s", SparseTensor.of(idx, vals, dense), "x", a)))) {
        // A nest out of a nest in: rebuilt, SparseTensor included, from a restored entry's output names.
        Map<String, Object> y = out.value(Map.class);
        SparseTensor<?> ys = (SparseTensor<?>) y.get("s");
        System.out.println("result nestOut " + java.util.Arrays.toString(StdArrays.array1dCopyOf((TFloat32) ys.values()))
            + " " + ys.denseShape().getLong(0) + " " + java.util.Arrays.toString(
            StdArrays.array1dCopyOf((TFloat32) ((List<?>) y.get("x")).get(0))));
        System.out.println("nestOut traces " + scaled.traceCount());
      }
      print("composites", fs.get("composites"), "xs",
          Map.of("s", SparseTensor.of(idx, vals, dense), "r", RaggedTensor.of(c, splits), "w", List.of(b)));
      if (fresh) {
        print("nest", nest, "xs", Map.of("a", List.of(a), "c", b));
        print("sparse", sparse, "s", SparseTensor.of(one, nine, tall));
        // Another value: its own trace, never the restored one of 3.
        print("javaValue", fs.get("javaValue"), "xs", Map.of("x", a, "n", 4));
      }
      for (String name : NAMES) {
        System.out.println(name + " traces " + fs.get(name).traceCount());
      }
    } finally {
      fs.values().forEach(MapFunction::close);
    }
    // The writes are the writer thread's: waited for, so the DEBUG records before them are printed
    // (a shutdown hook would write them, but java.util.logging may be reset by then).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (entries(dir.resolve("composites")).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
  }

  private static void print(String name, MapFunction f, String param, Object arg) {
    System.out.println("result " + name + " " + result(f, param, arg));
  }

  /** The output of a call of {@code f}, as text. */
  static String result(MapFunction f, String param, Object arg) {
    try (Outputs out = f.call(Map.of(param, arg))) {
      TFloat32 y = (TFloat32) out.get(out.names().get(0));
      float[] v = new float[(int) y.size()];
      for (int i = 0; i < v.length; i++) {
        v[i] = y.rank() == 0 ? y.getFloat() : y.getFloat(i);
      }
      return java.util.Arrays.toString(v);
    }
  }

  static List<Path> entries(Path dir) throws Exception {
    return Files.isDirectory(dir) ? FileFixtures.entries(dir) : List.of();
  }

  private static String run(Path dir, String phase) throws Exception {
    return ChildJvm.run(TraceCacheNestTest.class, dir.toString(), phase);
  }

  private static String results(String out) {
    return out.lines().filter(l -> l.startsWith("result")).collect(Collectors.joining("\n"));
  }

  @Test
  void nestsOfTensorsRestoreInTheNextJvmAndOtherNestsTrace(@TempDir Path dir) throws Exception {
    String first = run(dir, "first");
    for (String traced : List.of("javaValue traces 1", "enumValue traces 1", "nestedRecord traces 1", "record traces 1",
        "nest traces 2", "sparse traces 2", "ragged traces 1", "nestOut traces 1", "composites traces 1")) {
      assertTrue(first.contains(traced), first);
    }
    assertTrue(results(first).contains("result javaValue [6.0]") && results(first).contains("result enumValue [104.0]"),
        first);
    assertTrue(results(first).contains("result nest [25.0]") && results(first).contains("result nest [33.0]") && results(first).contains("result sparse [3.0, 0.0, 4.0]")
        && results(first).contains("result composites [29.0]") && results(first).contains("result ragged [12.0]")
        && results(first).contains("result nestOut [10.0, 20.0, 40.0] 3 [1.0, 2.0]"), first);
    // One entry per signature of the nests of tensors and numbers; none for an enum or a record, anywhere.
    assertEquals(2, entries(dir.resolve("nest")).size(), first);
    assertEquals(1, entries(dir.resolve("javaValue")).size(), first);
    assertEquals(2, entries(dir.resolve("sparse")).size(), first);
    assertEquals(1, entries(dir.resolve("composites")).size(), first);
    assertEquals(1, entries(dir.resolve("ragged")).size(), first);
    for (String refused : List.of("enumValue", "nestedRecord", "record")) {
      assertEquals(List.of(), entries(dir.resolve(refused)), refused + " must not be cached\n" + first);
    }
    // Each refusal names the parameter and where in it.
    assertTrue(first.contains("a trace of 'enumValue' is not cached: parameter 'xs' holds a Java value ("
        + Mode.class.getName() + ") at xs['m'] of a class without a text form"), first);
    assertTrue(first.contains("a trace of 'nestedRecord' is not cached: parameter 'xs' holds a record ("
        + Pair.class.getName() + ") at xs[1]"), first);
    assertTrue(first.contains("'record' is not trace-cached: parameter 'r' is a record (" + Pair.class.getName() + ")"),
        first);

    String second = run(dir, "first");
    for (String traced : List.of("javaValue traces 0", "enumValue traces 1", "nestedRecord traces 1", "record traces 1",
        "nest traces 0", "sparse traces 0", "ragged traces 0", "nestOut traces 0", "composites traces 0")) {
      assertTrue(second.contains(traced), second);
    }
    assertEquals(results(first), results(second));

    // A structure not seen before traces (once each), the others still restore.
    String third = run(dir, "new");
    assertTrue(third.contains("nest traces 1") && third.contains("sparse traces 1")
        && third.contains("composites traces 0") && third.contains("javaValue traces 1"), third);
    assertTrue(results(third).startsWith(results(first) + "\nresult nest [13.0]\nresult sparse"), third);
    assertTrue(results(third).endsWith("\nresult javaValue [7.0]"), "4 traced, not served 3's trace: " + third);
    assertEquals(3, entries(dir.resolve("nest")).size(), third);
  }

  /**
   * An entry whose nest was edited (its checksum recomputed, as a hostile or broken writer would)
   * into what the trace cache never writes, or into a type that contradicts its FunctionDef, is
   * skipped with a WARNING saying why, and its call traces: restored, it would serve a call its
   * graph cannot take, or a record or value this JVM types otherwise.
   */
  @Test
  void anEntryWhoseNestWasEditedIsSkippedAndTraced(@TempDir Path dir) throws Exception {
    try (TFloat32 a = TFloat32.vectorOf(1f, 2f);
        TFloat32 b = TFloat32.scalarOf(10f);
        TFloat32 c = TFloat32.vectorOf(3f, 4f, 5f);
        TInt64 idx = TInt64.tensorOf(StdArrays.ndCopyOf(new long[][] {{0, 0}, {2, 1}}));
        TFloat32 vals = TFloat32.vectorOf(1f, 4f);
        TInt64 dense = TInt64.vectorOf(3, 4)) {
      Map<String, Object> xs = Map.of("a", List.of(a, b), "b", List.of(c));
      // An element dropped: 2 tensors for a function of 3 inputs, and a call of that structure.
      edited(dir.resolve("dropped"), "nest", "xs", xs, Map.of("a", List.of(a), "b", List.of(c)), "[15.0]", t -> {
        ((List<?>) entries(t).get("a").get("elements")).remove(1);
        return t;
      }, "its traced type holds 2 tensors, but its function takes 3 inputs");
      edited(dir.resolve("record"), "nest", "xs", xs, xs, "[25.0]",
          t -> new java.util.LinkedHashMap<>(Map.of("kind", "record", "class", Pair.class.getName(),
              "names", List.of("a", "b"), "types", List.of(entries(t).get("a"), entries(t).get("b")))),
          "parameter 'xs' holds a record (" + Pair.class.getName() + ") at xs, whose class an entry does not keep");
      edited(dir.resolve("value"), "nest", "xs", xs, xs, "[25.0]", t -> {
        entries(t).put("n", new java.util.LinkedHashMap<>(Map.of("kind", "literal", "id", 1L, "repr", "3",
            "class", "java.lang.Integer")));
        return t;
      }, "parameter 'xs': expected a literal of a number, boolean or string class with its value's text and no id");
      edited(dir.resolve("enum"), "nest", "xs", xs, xs, "[25.0]", t -> {
        entries(t).put("n", new java.util.LinkedHashMap<>(Map.of("kind", "literal", "value", "UP", "repr", "UP",
            "class", Mode.class.getName())));
        return t;
      }, "parameter 'xs' holds a Java value (" + Mode.class.getName() + ") at xs['n'] of a class without a text form");
      edited(dir.resolve("sparse"), "sparse", "s", SparseTensor.of(idx, vals, dense), SparseTensor.of(idx, vals, dense),
          "[1.0, 0.0, 4.0]", t -> {
            ((Map<String, Object>) t).put("name", "MySparse");
            return t;
          }, "parameter 's' holds a MySparse at s, a composite type the application registered");
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Map<String, Object>> entries(Object mapType) {
    return (Map<String, Map<String, Object>>) ((Map<String, Object>) mapType).get("entries");
  }

  /**
   * Caches function {@code name}'s trace of {@code arg} in {@code dir}, edits the traced type of
   * its parameter in the entry by {@code edit}, then checks that a new definition skips the entry
   * (a WARNING holding {@code why}) and answers a call with {@code after} by tracing.
   */
  @SuppressWarnings("unchecked")
  private static void edited(Path dir, String name, String param, Object arg, Object after, String answer,
      java.util.function.UnaryOperator<Object> edit, String why) throws Exception {
    try (MapFunction f = Bodies.define(name, dir)) {
      result(f, param, arg);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (entries(dir).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    Path entry = entries(dir).get(0);
    CacheEntryFile e = CacheEntryFile.read(entry);
    Map<String, Object> doc = (Map<String, Object>) dev.polyfn.internal.saved.Json.parse(e.traced);
    Map<String, Object> p = ((List<Map<String, Object>>) ((Map<String, Object>) doc.get("function_type"))
        .get("parameters")).get(0);
    p.put("type", edit.apply(p.get("type")));
    e.traced = dev.polyfn.internal.saved.Json.write(doc);
    e.write(entry);
    byte[] damaged = Files.readAllBytes(entry);
    List<String> logged = LoggedWarnings.during(() -> {
      try (MapFunction f = Bodies.define(name, dir)) {
        assertEquals(answer, result(f, param, after));
        assertEquals(1, f.traceCount(), "the edited entry must not serve the call");
      }
    });
    assertTrue(logged.stream().anyMatch(m -> m.contains("ignoring trace cache entry " + entry) && m.contains(why)),
        logged.toString());
    // The retrace's entry (a new file, or the edited one replaced) is written by a background
    // thread: waited for, so that it does not race with the directory's removal.
    deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (entries(dir).size() == 1 && java.util.Arrays.equals(damaged, Files.readAllBytes(entry))
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
  }
}
