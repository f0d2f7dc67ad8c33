package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapBody;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.exceptions.TFInvalidArgumentException;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TString;

/**
 * Grappler runs as in Python's tf.function (same last bits as Python, recorded by
 * tests/python/record_grappler.py), can be turned off, and XLA compiles on request.
 */
class GrapplerAndXlaTest {

  /** The programs of record_grappler.py, built with the same constants. */
  private static final Map<String, MapBody> PROGRAMS = Map.of(
      "add_twice", (tf, in) -> Map.of("y", tf.math.add(tf.math.add(in.input("x", TFloat32.class), tf.constant(0.1f)), tf.constant(0.2f))),
      "mul_twice", (tf, in) -> Map.of("y", tf.math.mul(tf.math.mul(in.input("x", TFloat32.class), tf.constant(1.1f)), tf.constant(0.7f))),
      "sub_chain", (tf, in) -> Map.of("y", tf.math.sub(tf.math.add(tf.math.sub(in.input("x", TFloat32.class), tf.constant(0.3f)),
          tf.constant(0.7f)), tf.constant(0.1f))));

  private static String recorded() throws IOException {
    try (InputStream in = GrapplerAndXlaTest.class.getResourceAsStream("grappler_python_outputs.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** The integers of the JSON array {@code key} inside the object of {@code program} (or at top level). */
  private static int[] bits(String json, String program, String key) {
    String scope = json;
    if (program != null) {
      int at = json.indexOf("\"" + program + "\"");
      scope = json.substring(at, json.indexOf('}', at));
    }
    Matcher m = Pattern.compile("\"" + key + "\":\\s*\\[([^\\]]*)\\]").matcher(scope);
    assertTrue(m.find(), key);
    return Arrays.stream(m.group(1).split(",")).map(String::trim).mapToInt(s -> (int) Long.parseLong(s)).toArray();
  }

  private static int[] run(MapFunction f, int[] inputBits) {
    try (TFloat32 x = TFloat32.tensorOf(Shape.of(inputBits.length))) {
      for (int i = 0; i < inputBits.length; i++) {
        x.setFloat(Float.intBitsToFloat(inputBits[i]), i);
      }
      try (Outputs out = f.call(Map.of("x", x))) {
        TFloat32 y = out.get("y", TFloat32.class);
        int[] r = new int[inputBits.length];
        for (int i = 0; i < r.length; i++) {
          r[i] = Float.floatToRawIntBits(y.getFloat(i));
        }
        return r;
      }
    }
  }

  @Test
  void theDefaultGivesPythonsLastBitsAndGrapplerOffGivesTheOpByOpOnes() throws IOException {
    String json = recorded();
    int[] input = bits(json, null, "input");
    for (Map.Entry<String, MapBody> p : PROGRAMS.entrySet()) {
      int[] python = bits(json, p.getKey(), "tf_function");
      int[] opByOp = bits(json, p.getKey(), "op_by_op");
      assertNotEquals(Arrays.toString(python), Arrays.toString(opByOp), "the program must tell them apart");
      for (boolean fastPath : new boolean[] {true, false}) {
        FunctionOptions base = FunctionOptions.defaults().withName(p.getKey()).withFastPath(fastPath);
        try (MapFunction optimized = Function.define(p.getValue(), base);
            MapFunction plain = Function.define(p.getValue(), base.withGrappler(false))) {
          assertEquals(Arrays.toString(python), Arrays.toString(run(optimized, input)), p.getKey() + " fastPath=" + fastPath);
          assertEquals(Arrays.toString(opByOp), Arrays.toString(run(plain, input)), p.getKey() + " fastPath=" + fastPath);
        }
      }
    }
  }

  @Test
  void optionsAreKeptByEveryCopyAndShown() {
    FunctionOptions o = FunctionOptions.defaults().withJitCompile(true).withGrappler(false).withFastPath(false)
        .withName("kept").withMaxConcreteFunctions(3);
    assertTrue(o.jitCompile());
    assertTrue(!o.grappler() && !o.fastPath());
    assertTrue(o.toString().contains("fastPath=false, grappler=false, jitCompile=true"), o.toString());
    FunctionOptions d = FunctionOptions.defaults();
    assertTrue(d.fastPath() && d.grappler() && !d.jitCompile());
  }

  @Test
  void xlaCompilesAndMatchesWithinTolerance() {
    MapBody chain = (tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> y = x;
      for (int i = 0; i < 10; i++) {
        y = tf.math.add(tf.math.mul(tf.math.tanh(y), tf.constant(0.9f)), tf.constant(0.01f * i));
      }
      return Map.of("y", y);
    };
    try (MapFunction xla = Function.define(chain, FunctionOptions.defaults().withJitCompile(true));
        MapFunction plain = Function.define(chain);
        TFloat32 x = TFloat32.tensorOf(Shape.of(1000))) {
      for (int i = 0; i < 1000; i++) {
        x.setFloat((float) Math.cos(i * 0.01) * 3f, i);
      }
      try (Outputs a = xla.call(Map.of("x", x)); Outputs b = plain.call(Map.of("x", x))) {
        TFloat32 ya = a.get("y", TFloat32.class);
        TFloat32 yb = b.get("y", TFloat32.class);
        for (int i = 0; i < 1000; i++) {
          assertEquals(yb.getFloat(i), ya.getFloat(i), 1e-5f * Math.max(1f, Math.abs(yb.getFloat(i))), "element " + i);
        }
      }
    }
  }

  /**
   * XLA as the first thing a JVM does: TensorFlow registers XLA's kernels lazily, so the trace-time
   * check must not depend on something else having compiled before.
   */
  @Test
  void xlaWorksAsTheFirstCallOfAFreshJvm() throws Exception {
    String out = ChildJvm.run(GrapplerAndXlaTest.class);
    assertTrue(out.contains("xla result 1.5"), out);
  }

  /** The child JVM of {@link #xlaWorksAsTheFirstCallOfAFreshJvm}. */
  public static void main(String[] args) {
    try (MapFunction f = Function.define((tf, in) -> Map.of("y", tf.math.add(in.input("x", TFloat32.class), tf.constant(1f))),
            FunctionOptions.defaults().withJitCompile(true));
        TFloat32 x = TFloat32.scalarOf(0.5f);
        Outputs out = f.call(Map.of("x", x))) {
      System.out.println("xla result " + out.get("y", TFloat32.class).getFloat());
    }
  }

  @Test
  void anOpXlaCannotCompileFailsAtTraceTimeNamingIt() {
    try (MapFunction f = Function.define((tf, in) -> {
          Operand<TFloat32> x = in.input("x", TFloat32.class);
          Operand<TString> s = tf.dtypes.asString(x);
          return Map.of("s", s, "y", tf.math.neg(x));
        }, FunctionOptions.defaults().withJitCompile(true));
        TFloat32 x = TFloat32.vectorOf(1f, 2f)) {
      TFInvalidArgumentException e = assertThrows(TFInvalidArgumentException.class, () -> f.call(Map.of("x", x)).close());
      assertTrue(e.getMessage().contains("No registered 'AsString' OpKernel for XLA_CPU_JIT devices"), e.getMessage());
      assertTrue(e.getMessage().contains("Detected unsupported operations"), e.getMessage());
      assertEquals(0, f.traceCount(), "nothing was cached");
    }
  }
}
