package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the test scripts in {@code tests/python} with the build's Python (TensorFlow 2.21, system
 * property {@code polyfn.python}), which write models and print what Python's own restored models
 * return, so tests compare numbers with Python rather than with hard-coded results.
 */
final class PythonScripts {
  private PythonScripts() {}

  /** Runs {@code tests/python/<script> <args...>}; its standard output, after checking it exited 0. */
  static String run(String script, int timeoutSeconds, String... args) throws Exception {
    String[] command = new String[args.length + 2];
    command[0] = System.getProperty("polyfn.python", "python3");
    command[1] = Path.of("python", script).toString();
    System.arraycopy(args, 0, command, 2, args.length);
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(timeoutSeconds, TimeUnit.SECONDS), script + " timed out");
    assertEquals(0, p.exitValue(), script + " failed: " + out);
    return out;
  }

  /**
   * Runs {@code tests/python/check_saved.py} on SavedModel {@code saved} with the cases in {@code
   * spec}; its output, standard error included, after checking it exited 0.
   */
  static String checkSaved(Path saved, Path spec) throws Exception {
    Process p = new ProcessBuilder(System.getProperty("polyfn.python", "python3"), Path.of("python", "check_saved.py").toString(),
        saved.toString(), spec.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "check_saved.py timed out");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  /** Lines {@code <name> <float> <float>...} as name → values, in order. */
  static Map<String, float[]> namedValues(String out) {
    Map<String, float[]> values = new LinkedHashMap<>();
    for (String line : out.strip().split("\n")) {
      String[] parts = line.trim().split(" ");
      float[] v = new float[parts.length - 1];
      for (int i = 1; i < parts.length; i++) {
        v[i - 1] = Float.parseFloat(parts[i]);
      }
      values.put(parts[0], v);
    }
    return values;
  }
}
