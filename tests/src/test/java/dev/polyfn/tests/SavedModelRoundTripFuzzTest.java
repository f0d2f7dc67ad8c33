package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.Variable;
import dev.polyfn.tests.roundtrip.RoundTripBody;
import dev.polyfn.tests.roundtrip.RoundTripCase;
import dev.polyfn.tests.roundtrip.RoundTripCase.Kind;
import dev.polyfn.tests.roundtrip.RoundTripCase.Leaf;
import dev.polyfn.tests.roundtrip.RoundTripCase.Param;
import dev.polyfn.tests.roundtrip.RoundTripCase.Signature;
import dev.polyfn.tests.roundtrip.RoundTripValues;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Tensor;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.family.TType;

/**
 * A seeded round-trip fuzzer of Polyfn's SavedModels against Python's TensorFlow 2.21. Each seed
 * generates a function ({@link RoundTripCase}: tensors of six dtypes with static, partly known or
 * unknown shapes, lists, maps, nests, records, a defaulted parameter, now and then a Java value,
 * captured variables), traces it for two or three signatures, calls each, and saves it. Then:
 * {@code Function.load} of the save must return the same outputs for the same inputs and refuse
 * an input no signature takes; and {@code tests/python/roundtrip_check.py}, one Python process for
 * all seeds, loads each SavedModel and checks that {@code m.<name>(...)} dispatches and returns
 * Polyfn's outputs, refuses the input that matches none, lists the concrete functions, that each
 * {@code m.signatures[...]} serves, and that every output's dtype and static shape are those of
 * the same body written as a Python {@code tf.function} ({@link RoundTripBody#python}) traced for
 * the same signatures, whose outputs must match Polyfn's too. A save Polyfn refuses, a mismatch
 * or a Python error fails the test.
 */
class SavedModelRoundTripFuzzTest {
  /** Seeds 1..SEEDS: a fixed range, so a failure reproduces; the whole run stays under a minute. */
  static final int SEEDS = Integer.getInteger("polyfn.roundtrip.seeds", 30);

  private final Map<String, Integer> tally = new TreeMap<>();
  private final List<String> failures = new ArrayList<>();

  private void count(String category) {
    tally.merge(category, 1, Integer::sum);
  }

  private void fail(long seed, String what) {
    count("java mismatch");
    failures.add("seed " + seed + ": " + what);
  }

  @Test
  void savedModelsRoundTripThroughPythonAndFunctionLoad(@TempDir Path temp) throws Exception {
    // -Dpolyfn.roundtrip.dir=<dir> keeps the SavedModels and cases.json there, to rerun the Python side.
    Path dir = System.getProperty("polyfn.roundtrip.dir") == null ? temp : Path.of(System.getProperty("polyfn.roundtrip.dir"));
    long first = Long.getLong("polyfn.roundtrip.first", 1);
    List<String> entries = new ArrayList<>();
    for (long seed = first; seed < first + SEEDS; seed++) {
      entries.addAll(runCase(RoundTripCase.generate(seed), dir.resolve("s" + seed)));
    }
    Path cases = dir.resolve("cases.json");
    Files.writeString(cases, "[" + String.join(",\n", entries) + "]", StandardCharsets.UTF_8);
    String out = PythonScripts.run("roundtrip_check.py", 600, cases.toString());
    List<String> python = out.lines().filter(l -> l.startsWith("FAIL") || l.startsWith("PYERROR")).toList();
    for (String line : out.lines().filter(l -> l.startsWith("COUNT ")).toList()) {
      String[] parts = line.substring(6).split("=");
      tally.merge("python " + parts[0], Integer.parseInt(parts[1]), Integer::sum);
    }
    System.out.println("round trip, seeds " + first + ".." + (first + SEEDS - 1) + ": " + tally);
    failures.forEach(System.out::println);
    python.forEach(System.out::println);
    assertTrue(failures.isEmpty() && python.isEmpty(), "round-trip failures:\n" + String.join("\n", failures) + "\n"
        + String.join("\n", python));
    assertEquals(entries.size(), tally.getOrDefault("python seeds checked", 0), out);
    // Seeds 1..30 hold Java-value parameters (1 in 4 cases): Python must have been passed literals.
    assertTrue(SEEDS < 30 || tally.getOrDefault("saved with a Java-value parameter", 0) > 0, tally.toString());
  }

  /**
   * Runs one case in Java; the JSON cases the Python checker reads (the save, and the save of its
   * {@code Function.load}), none when the save was refused.
   */
  private List<String> runCase(RoundTripCase c, Path saved) {
    List<Tensor> owned = new ArrayList<>();
    List<Variable<?>> vars = new ArrayList<>();
    try {
      for (Leaf v : c.variables()) {
        Tensor t = RoundTripValues.tensor(v);
        owned.add(t);
        vars.add(Variable.create((TType) t));
      }
      TFloat32 dflt = null;
      if (c.dflt() != null) {
        dflt = (TFloat32) RoundTripValues.tensor(c.dflt());
        owned.add(dflt);
      }
      try (MapFunction f = Function.define(RoundTripBody.body(c, vars, dflt), FunctionOptions.defaults().withName("f" + c.seed()))) {
        return trace(c, f, saved, owned);
      }
    } finally {
      vars.forEach(Variable::close);
      owned.forEach(Tensor::close);
    }
  }

  private List<String> trace(RoundTripCase c, MapFunction f, Path saved, List<Tensor> owned) {
    List<Map<String, Object>> args = new ArrayList<>();
    List<ConcreteFunctionInfo> traced = new ArrayList<>();
    for (Signature s : c.signatures()) {
      Map<String, Object> a = arguments(c, s, owned, false);
      Map<String, Object> specs = arguments(c, s, owned, true);
      args.add(a);
      try {
        traced.add(f.getConcreteFunction(s.bySpecs() ? specs : a));
      } catch (RuntimeException e) {
        fail(c.seed(), "trace of " + a.keySet() + " failed: " + e);
        return List.of();
      }
    }
    List<ConcreteFunctionInfo> concrete = f.concreteFunctions();
    List<Map<String, Leaf>> outputs = new ArrayList<>();
    for (Map<String, Object> a : args) {
      outputs.add(call(f, a));
    }
    try {
      f.save(saved);
      count("saved");
      if (c.params().stream().anyMatch(p -> p.kind() == RoundTripCase.Kind.JAVA)) {
        count("saved with a Java-value parameter");
      }
    } catch (IllegalStateException | IllegalArgumentException e) {
      // Everything the generator makes, Polyfn traces, so it must save too (issue 24).
      fail(c.seed(), "save refused: " + e.getMessage());
      return List.of();
    }
    Map<String, Object> nomatch = arguments(c, c.unmatched(), owned, false);
    Path resaved = saved.resolveSibling(saved.getFileName() + "-resaved");
    checkLoad(c, saved, args, outputs, nomatch, concrete.size(), resaved);
    StringBuilder b = new StringBuilder();
    b.append(", \"name\": \"f").append(c.seed()).append("\", \"count\": ").append(concrete.size()).append(", \"python\": ");
    RoundTripValues.string(RoundTripBody.python(c), b);
    b.append(", \"variables\": ");
    RoundTripValues.json(c.variables(), b);
    b.append(", \"default\": ");
    if (c.dflt() == null) {
      b.append("null");
    } else {
      RoundTripValues.json(c.dflt(), b);
    }
    b.append(", \"calls\": [");
    for (int k = 0; k < args.size(); k++) {
      Signature s = c.signatures().get(k);
      b.append(k > 0 ? ", " : "").append("{\"index\": ").append(concrete.indexOf(find(concrete, traced.get(k))));
      b.append(", \"args\": ").append(tree(c, s, true, false)).append(", \"full\": ").append(tree(c, s, false, false));
      b.append(", \"spec\": ").append(tree(c, s, true, true)).append(", \"outputs\": ");
      b.append('{');
      int n = 0;
      for (Map.Entry<String, Leaf> e : outputs.get(k).entrySet()) {
        b.append(n++ > 0 ? ", " : "");
        RoundTripValues.string(e.getKey(), b);
        b.append(": ");
        RoundTripValues.json(e.getValue(), b);
      }
      b.append("}}");
    }
    b.append("], \"nomatch\": ").append(tree(c, c.unmatched(), true, false)).append('}');
    List<String> entries = new ArrayList<>();
    for (Path p : Files.isDirectory(resaved) ? List.of(saved, resaved) : List.of(saved)) {
      StringBuilder head = new StringBuilder("{\"seed\": \"").append(c.seed()).append(p == saved ? "" : " resaved").append("\", \"dir\": ");
      RoundTripValues.string(p.toString(), head);
      entries.add(head.append(b).toString());
    }
    return entries;
  }

  /** Signature {@code s}'s Java arguments (or specs), without the default where the call omits it. */
  private static Map<String, Object> arguments(RoundTripCase c, Signature s, List<Tensor> owned, boolean specs) {
    Map<String, Object> a = new LinkedHashMap<>();
    for (int i = 0; i < c.params().size(); i++) {
      Param p = c.params().get(i);
      if (p.kind() != Kind.DEFAULT || !s.omitDefault()) {
        Object v = s.values().get(i);
        a.put(p.name(), specs ? RoundTripValues.spec(v, owned) : RoundTripValues.argument(v, owned));
      }
    }
    return a;
  }

  private static ConcreteFunctionInfo find(List<ConcreteFunctionInfo> all, ConcreteFunctionInfo one) {
    return all.stream().filter(i -> i.id() == one.id()).findFirst().orElse(null);
  }

  /** The JSON of signature {@code s}'s arguments: omitting the default if the call does, as specs. */
  private static String tree(RoundTripCase c, Signature s, boolean asCalled, boolean specs) {
    StringBuilder b = new StringBuilder("{");
    int n = 0;
    for (int i = 0; i < c.params().size(); i++) {
      Param p = c.params().get(i);
      Object v = s.values().get(i);
      if (p.kind() == Kind.DEFAULT && s.omitDefault()) {
        if (asCalled) {
          continue;
        }
        v = c.dflt();
      }
      b.append(n++ > 0 ? ", " : "");
      RoundTripValues.string(p.name(), b);
      b.append(": ");
      if (specs) {
        RoundTripValues.specJson(v, b);
      } else {
        RoundTripValues.json(v, b);
      }
    }
    return b.append('}').toString();
  }

  private Map<String, Leaf> call(MapFunction f, Map<String, Object> args) {
    Map<String, Leaf> out = new LinkedHashMap<>();
    try (Outputs o = f.call(args)) {
      for (String n : o.names()) {
        out.put(n, RoundTripValues.leaf(o.get(n)));
      }
    }
    return out;
  }

  private void checkLoad(RoundTripCase c, Path saved, List<Map<String, Object>> args, List<Map<String, Leaf>> want,
      Map<String, Object> nomatch, int count, Path resaved) {
    try (MapFunction loaded = (MapFunction) Function.load(saved)) {
      if (loaded.concreteFunctions().size() != count) {
        fail(c.seed(), "Function.load has " + loaded.concreteFunctions().size() + " concrete functions, saved " + count);
      }
      for (int k = 0; k < args.size(); k++) {
        Map<String, Leaf> got = call(loaded, args.get(k));
        for (Map.Entry<String, Leaf> e : want.get(k).entrySet()) {
          String diff = got.containsKey(e.getKey()) ? RoundTripValues.difference(e.getValue(), got.get(e.getKey())) : "missing";
          if (diff != null) {
            fail(c.seed(), "Function.load, call " + k + ", output " + e.getKey() + ": " + diff);
          }
        }
        count("load call matched");
      }
      try {
        loaded.call(nomatch).close();
        fail(c.seed(), "Function.load served an input no signature takes: " + nomatch.keySet());
      } catch (IllegalArgumentException e) {
        count("load refused the unmatched input");
      }
      // A loaded function saves again (to be loaded by Python in turn, as the first save).
      loaded.save(resaved);
      count("load saved again");
    } catch (RuntimeException e) {
      fail(c.seed(), "Function.load: " + e);
    }
  }
}
