package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowPorts.assertTensor;
import static dev.polyfn.tests.ControlFlowPorts.map;
import static dev.polyfn.tests.ControlFlowPorts.tensor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.ListBody;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import dev.polyfn.Variable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * The harness of the StatefulPorts*Test classes: replays the stateful programs {@code
 * tests/python/stateful_ports.py} ran with TensorFlow 2.21 (recorded in {@code
 * stateful_ports.json}) written with Polyfn, and compares every call's outputs and every
 * variable's value after every step with Python's (integers exactly, floats within 1e-6 relative).
 */
final class StatefulPorts {
  static final Map<String, Object> PY = MiniJson.resource("/stateful_ports.json");
  /** Floats: the same kernels (TensorFlow 2.18 here, 2.21 in Python) on the same values. */
  static final double TOLERANCE = 1e-6;

  private StatefulPorts() {}

  /** A case's functions, by the names Python's steps call them, over its variables (Python's order). */
  interface Program {
    Map<String, ListBody> bodies(List<Variable<?>> vars);
  }

  /**
   * Creates the case's variables from Python's initial values, defines its functions, replays its
   * steps (calls, eager assignments, a save and load after which calls go to the loaded function)
   * comparing outputs and variables after each, then compares trace counts with Python's but for
   * the functions in {@code traceExceptions} (name → Polyfn's expected count, with the reason
   * where it is used).
   */
  static void check(String name, Program program, Map<String, Integer> traceExceptions) {
    Map<String, Object> c = map(PY.get(name));
    assertTrue(c != null, "no Python record for " + name);
    List<Variable<?>> vars = new ArrayList<>();
    Map<String, ListFunction> fns = new LinkedHashMap<>();
    List<Path> dirs = new ArrayList<>();
    try {
      vars.addAll(variables(c));
      program.bodies(vars).forEach((k, body) -> fns.put(k, Function.defineList(body, FunctionOptions.defaults().withName(k))));
      Map<String, Integer> traces = new HashMap<>();
      int n = 0;
      for (Object o : (List<?>) c.get("steps")) {
        Map<String, Object> step = map(o);
        String where = name + " step " + n++;
        if (step.containsKey("fn")) {
          call(where + " " + step.get("fn"), fns.get((String) step.get("fn")), step, vars);
        } else if (step.containsKey("assign")) {
          assignEagerly(vars.get(((Double) step.get("assign")).intValue()), map(step.get("value")));
        } else {
          String fn = (String) step.get("save_load");
          traces.put(fn, fns.get(fn).traceCount());
          Path dir = tempDir();
          dirs.add(dir);
          fns.get(fn).save(dir);
          fns.put(fn, (ListFunction) Function.load(dir));
        }
        List<?> expectedVars = (List<?>) step.get("vars");
        for (int i = 0; i < expectedVars.size(); i++) {
          assertTensor(where + " variable " + i, map(expectedVars.get(i)), vars.get(i).value(), TOLERANCE);
        }
      }
      map(c.get("traces")).forEach((fn, count) -> assertEquals(traceExceptions.getOrDefault(fn, ((Double) count).intValue()),
          traces.getOrDefault(fn, fns.get(fn).traceCount()), name + " " + fn + ": traces"));
    } finally {
      fns.values().forEach(ListFunction::close);
      vars.forEach(Variable::close);
      dirs.forEach(StatefulPorts::delete);
    }
  }

  static void check(String name, Program program) {
    check(name, program, Map.of());
  }

  /** New variables holding case {@code c}'s initial values (the caller closes them). */
  static List<Variable<?>> variables(Map<String, Object> c) {
    List<Variable<?>> vars = new ArrayList<>();
    for (Object init : (List<?>) c.get("init")) {
      try (Tensor t = tensor(map(init))) {
        vars.add(Variable.create((TType) t));
      }
    }
    return vars;
  }

  /** One recorded call: its inputs ({@code {"var": i}} passes variable i), then its outputs compared. */
  static void call(String where, ListFunction fn, Map<String, Object> step, List<Variable<?>> vars) {
    Map<String, Object> args = new LinkedHashMap<>();
    map(step.get("inputs")).forEach((k, v) -> args.put(k,
        map(v).containsKey("var") ? vars.get(((Double) map(v).get("var")).intValue()) : tensor(map(v))));
    try (ListOutputs out = fn.call(args)) {
      List<?> expected = (List<?>) step.get("outputs");
      assertEquals(expected.size(), out.size(), where + ": output count");
      for (int k = 0; k < expected.size(); k++) {
        assertTensor(where + " output " + k, map(expected.get(k)), out.get(k), TOLERANCE);
      }
    } finally {
      args.values().stream().filter(a -> a instanceof Tensor).forEach(a -> ((Tensor) a).close());
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void assignEagerly(Variable<?> v, Map<String, Object> value) {
    try (Tensor t = tensor(value)) {
      ((Variable) v).assign((TType) t);
    }
  }

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("stateful-ports");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void delete(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  static Variable<TFloat32> f32(List<Variable<?>> vars, int i) {
    return (Variable<TFloat32>) vars.get(i);
  }

  @SuppressWarnings("unchecked")
  static Variable<TFloat64> f64(List<Variable<?>> vars, int i) {
    return (Variable<TFloat64>) vars.get(i);
  }

  @SuppressWarnings("unchecked")
  static Variable<TInt32> i32(List<Variable<?>> vars, int i) {
    return (Variable<TInt32>) vars.get(i);
  }

  @SuppressWarnings("unchecked")
  static Variable<TInt64> i64(List<Variable<?>> vars, int i) {
    return (Variable<TInt64>) vars.get(i);
  }

  @SuppressWarnings("unchecked")
  static Operand<TFloat32> asF32(Operand<?> o) {
    return (Operand<TFloat32>) o;
  }

  @SuppressWarnings("unchecked")
  static Operand<TInt32> asI32(Operand<?> o) {
    return (Operand<TInt32>) o;
  }

  static Operand<TFloat32> fin(Inputs in, String name) {
    return in.input(name, TFloat32.class);
  }

  static Operand<TInt32> iin(Inputs in, String name) {
    return in.input(name, TInt32.class);
  }

  /** One function named {@code f}. */
  static Map<String, ListBody> f(ListBody body) {
    return Map.of("f", body);
  }
}
