package dev.polyfn.tests;

import static dev.polyfn.tests.ControlFlowPorts.map;
import static dev.polyfn.tests.StatefulPorts.PY;
import static dev.polyfn.tests.StatefulPorts.f32;
import static dev.polyfn.tests.StatefulPorts.fin;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.ListFunction;
import dev.polyfn.Variable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;

/**
 * Python's {@code tf.saved_model.load} of a stateful function Polyfn saved in the middle of a run:
 * the SGD step of {@code save_load_sgd} (tests/python/stateful_ports.py) run twice by Polyfn,
 * saved, loaded by Python, whose next two calls of the loaded signature must give what Python's
 * own saved and loaded function gave (loss, weights, bias), so the saved variables and the
 * order of the saved reads and writes hold in Python.
 */
class StatefulPortsPythonLoadTest {

  @Test
  void pythonContinuesTrainingFromAPolyfnSavedStep(@TempDir Path dir) throws Exception {
    Map<String, Object> c = map(PY.get("save_load_sgd"));
    List<?> steps = (List<?>) c.get("steps");
    List<Variable<?>> vars = StatefulPorts.variables(c);
    Path saved = dir.resolve("saved");
    try (ListFunction step = Function.defineList((tf, in) -> {
          Operand<TFloat32> loss = StatefulPortsTrainingTest.sgdStep(tf, fin(in, "x"), fin(in, "y"), f32(vars, 0), f32(vars, 1));
          return List.of(loss, f32(vars, 0).read(tf), f32(vars, 1).read(tf));
        }, FunctionOptions.defaults().withName("step"))) {
      for (int i = 0; i < 2; i++) {
        StatefulPorts.call("save_load_sgd step " + i, step, map(steps.get(i)), vars);
      }
      step.save(saved);
    } finally {
      vars.forEach(Variable::close);
    }
    assertTrue(map(steps.get(2)).containsKey("save_load"), "Python saved after two steps");
    List<String> cases = new ArrayList<>();
    for (Object o : steps.subList(3, steps.size())) {
      Map<String, Object> s = map(o);
      List<?> outputs = (List<?>) s.get("outputs");
      List<String> outs = new ArrayList<>();
      for (int k = 0; k < outputs.size(); k++) {
        outs.add("\"output_" + k + "\": " + json(map(outputs.get(k))));
      }
      String inputs = map(s.get("inputs")).entrySet().stream().map(e -> "\"" + e.getKey() + "\": " + json(map(e.getValue())))
          .collect(Collectors.joining(", "));
      cases.add("{\"signature\": \"step__float32_4_3__float32_4\", \"inputs\": {" + inputs + "}, \"outputs\": {"
          + String.join(", ", outs) + "}}");
    }
    Path spec = dir.resolve("cases.json");
    Files.writeString(spec, "{\"signatures\": [\"step__float32_4_3__float32_4\"], \"cases\": [" + String.join(",\n", cases) + "]}");
    String out = PythonScripts.checkSaved(saved, spec);
    assertTrue(out.contains("OK 2"), out);
  }

  /** A recorded tensor in check_saved.py's form. */
  private static String json(Map<String, Object> t) {
    String shape = ((List<?>) t.get("shape")).stream().map(d -> Long.toString(((Double) d).longValue())).collect(Collectors.joining(", "));
    String values = ((List<?>) t.get("values")).stream().map(Object::toString).collect(Collectors.joining(", "));
    return "{\"dtype\": \"" + t.get("dtype") + "\", \"shape\": [" + shape + "], \"values\": [" + values + "]}";
  }
}
