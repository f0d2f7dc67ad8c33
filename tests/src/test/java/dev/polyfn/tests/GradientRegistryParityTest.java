package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.Inputs;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.OperationBuilder;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * {@code Flow.gradients} of one TensorFlow op at a time against Python's gradient of that op
 * (TensorFlow 2.21's {@code GradientTape} in a {@code tf.function}, recorded by
 * tests/python/gradient_registry_parity.py in gradient_registry_parity.json). Polyfn differentiates
 * with TensorFlow's C++ gradient registry, whose gradients are other code than Python's: this
 * table of small programs (broadcasting, ties, zeros, empty and unknown-shape inputs, float64 and
 * half) shows where the two differ, and that Polyfn then gives Python's value or refuses naming
 * the op. Each case runs twice: as one registry call (no control flow on the path) and through
 * the per-op walk (the loss goes through a cond).
 */
class GradientRegistryParityTest {

  /**
   * Ops whose gradient TensorFlow's C++ registry does not have and Polyfn does not build either
   * (MissingGradients builds the others Python has): differentiating them fails naming the op
   * (TensorFlow's "No gradient defined for op"), never a wrong answer.
   */
  private static final List<String> NO_REGISTRY_GRADIENT = List.of("Cumprod", "EuclideanNorm", "MatrixDiagPart",
      "MatrixSetDiag", "Conv3D", "Cholesky", "FusedBatchNorm", "BiasAddV1", "TensorScatterUpdate", "TensorScatterAdd",
      "QuantizeAndDequantizeV2", "MatrixDiagV3", "MatrixDiagPartV3", "MatrixSetDiagV3", "Conv2DBackpropFilter",
      "MaxPoolGrad", "ExtractImagePatches", "UnsortedSegmentProd", "SegmentMean", "Betainc", "Igamma", "Dilation2D",
      "ComplexAbs");

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> cases() throws Exception {
    try (InputStream s = GradientRegistryParityTest.class.getResourceAsStream("/gradient_registry_parity.json")) {
      Map<String, Object> all = (Map<String, Object>) MiniJson.parse(new String(s.readAllBytes(), StandardCharsets.UTF_8));
      return (List<Map<String, Object>>) all.get("cases");
    }
  }

  @TestFactory
  Stream<DynamicTest> gradientsMatchPythons() throws Exception {
    List<DynamicTest> tests = new ArrayList<>();
    for (Map<String, Object> c : cases()) {
      for (boolean walk : new boolean[] {false, true}) {
        String name = c.get("name") + (walk ? " (per-op walk)" : " (one registry call)");
        tests.add(DynamicTest.dynamicTest(name, () -> {
          try {
            check(c, walk);
          } catch (Throwable e) {
            // The report names the dynamic test only by its factory: the case goes in the message.
            throw new AssertionError(name + ": " + e.getMessage(), e);
          }
        }));
      }
    }
    return tests.stream();
  }

  /** The table is broad: at least 60 cases over 40 op types. */
  @Test
  void theTableCoversManyOps() throws Exception {
    List<Map<String, Object>> cases = cases();
    assertTrue(cases.size() >= 60, "cases: " + cases.size());
    assertTrue(cases.stream().map(c -> c.get("op")).distinct().count() >= 40);
  }

  /**
   * A cond reading a complex value that depends on the xs is refused naming it: a cond's gradient
   * carries floating-point values only, and left that path's gradient zeros. (Outside control
   * flow, the walk differentiates complex values: the table's Complex cases.)
   */
  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void aCondOnAComplexPathIsRefused() {
    for (boolean capture : new boolean[] {true, false}) {
      try (MapFunction f = Function.define((tf, in) -> {
            Operand<TFloat32> x = in.input("x", TFloat32.class, Shape.of(3));
            Operand c = (Operand) tf.scope().opBuilder("Complex", "complex").addInput(x.asOutput())
                .addInput(tf.math.mul(x, tf.constant(0.5f)).asOutput()).build().output(0);
            Operand<TFloat32> y = capture
                ? Flow.cond(tf, tf.constant(true), () -> tf.math.real(tf.math.exp(c)), () -> tf.math.real(c))
                : tf.math.real((Operand) Flow.cond(tf, tf.constant(true), () -> tf.math.exp(c), () -> c));
            return Map.of("g", Flow.gradients(tf, tf.sum(y, tf.constant(0)), List.of(x)).get(0));
          });
           TFloat32 x = TFloat32.vectorOf(0.1f, 0.2f, 0.3f)) {
        Exception e = assertThrows(Exception.class, () -> f.call(Map.of("x", x)).close());
        assertTrue(String.valueOf(e.getMessage()).matches("(?s).*no gradient through \\w+ '.*': its (input|output) \\d+ is"
            + " complex and on the path from the xs.*"), e::toString);
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static void check(Map<String, Object> c, boolean walk) {
    String op = (String) c.get("op");
    List<Map<String, Object>> inputs = (List<Map<String, Object>>) c.get("inputs");
    Map<String, TFloat32> feeds = new LinkedHashMap<>();
    try (MapFunction f = Function.define((tf, in) -> program(tf, in, c, walk))) {
      List<Object> ops = new ArrayList<>(List.of(op));
      ops.addAll((List<Object>) c.getOrDefault("then", List.of()));
      String missing = (String) ops.stream().filter(NO_REGISTRY_GRADIENT::contains).findFirst().orElse(null);
      if (missing != null) {
        Exception e = assertThrows(Exception.class, () -> call(f, inputs, feeds).close());
        assertTrue(String.valueOf(e.getMessage()).contains(missing), e::toString);
        return;
      }
      try (Outputs out = call(f, inputs, feeds)) {
        List<List<Object>> want = (List<List<Object>>) c.get("grads");
        List<List<Object>> shapes = (List<List<Object>>) c.get("grad_shapes");
        for (int k = 0; k < want.size(); k++) {
          TFloat32 got = out.get("g" + k, TFloat32.class);
          assertEquals(shape(shapes.get(k)), got.shape(), "the shape of the gradient of x" + k);
          float[] values = new float[(int) got.size()];
          got.asRawTensor().data().asFloats().read(values);
          compare(want.get(k), values, tolerance(inputs), "x" + k);
        }
      }
    } finally {
      feeds.values().forEach(TFloat32::close);
    }
  }

  private static Outputs call(MapFunction f, List<Map<String, Object>> inputs, Map<String, TFloat32> feeds) {
    int[] k = {0};
    for (Map<String, Object> i : inputs) {
      feed(i, k, feeds);
    }
    return f.call(new LinkedHashMap<>(feeds));
  }

  @SuppressWarnings("unchecked")
  private static void feed(Map<String, Object> i, int[] k, Map<String, TFloat32> feeds) {
    if (i.containsKey("list")) {
      ((List<Map<String, Object>>) i.get("list")).forEach(j -> feed(j, k, feeds));
    } else if (i.containsKey("x")) {
      feeds.computeIfAbsent("x" + k[0]++, n -> TFloat32.tensorOf(shape((List<Object>) i.get("shape")),
          DataBuffers.of(floats((List<Object>) i.get("x")))));
    }
  }

  /** Relative tolerance: half's 11-bit significand, else float32's (values summed in either order). */
  private static double tolerance(List<Map<String, Object>> inputs) {
    return inputs.toString().contains("dtype=half") ? 2e-3 : 1e-5;
  }

  private static void compare(List<Object> want, float[] got, double tolerance, String x) {
    assertEquals(want.size(), got.length, "the size of the gradient of " + x);
    for (int i = 0; i < got.length; i++) {
      double w = number(want.get(i));
      boolean ok = Double.isNaN(w) ? Float.isNaN(got[i])
          : Double.isInfinite(w) ? w == got[i] : Math.abs(w - got[i]) <= tolerance * Math.max(1, Math.abs(w));
      if (!ok) {
        fail("the gradient of " + x + " at " + i + ": Python " + w + ", Polyfn " + got[i] + " (Python's "
            + want + ")");
      }
    }
  }

  /** The case's program, its loss and the gradients g0, g1, ... of its float32 parameters. */
  @SuppressWarnings("unchecked")
  private static Map<String, Operand<?>> program(Ops tf, Inputs in, Map<String, Object> c, boolean walk) {
    List<Operand<?>> xs = new ArrayList<>();
    OperationBuilder b = tf.scope().opBuilder((String) c.get("op"), "op");
    for (Map<String, Object> i : (List<Map<String, Object>>) c.get("inputs")) {
      if (i.containsKey("list")) {
        List<Output<?>> list = new ArrayList<>();
        ((List<Map<String, Object>>) i.get("list")).forEach(j -> list.add(input(tf, in, j, xs)));
        b.addInputList(list.toArray(new Output<?>[0]));
      } else {
        b.addInput(input(tf, in, i, xs));
      }
    }
    ((Map<String, Map<String, Object>>) c.get("attrs")).forEach((k, v) -> attr(b, k, v));
    GraphOperation op = (GraphOperation) b.build();
    Operand<TFloat32> loss = tf.constant(0f);
    for (Object k : (List<Object>) c.get("outputs")) {
      Output<?> o = op.output(((Double) k).intValue());
      for (Object t : (List<Object>) c.getOrDefault("then", List.of())) {
        o = tf.scope().opBuilder((String) t, "then").addInput(o).build().output(0);
      }
      Operand<TFloat32> v = o.dataType() == DataType.DT_FLOAT ? (Operand<TFloat32>) o : tf.dtypes.cast(o, TFloat32.class);
      Operand<TFloat32> w = tf.reshape(tf.math.add(tf.constant(1f), tf.math.mul(tf.constant(0.1f),
          tf.dtypes.cast(tf.range(tf.constant(0), tf.size(v), tf.constant(1)), TFloat32.class))), tf.shape(v));
      Operand<TFloat32> p = tf.math.mul(v, w);
      loss = tf.math.add(loss, tf.sum(p, tf.range(tf.constant(0), tf.rank(p), tf.constant(1))));
    }
    Operand<TFloat32> l = loss;
    Operand<TFloat32> y = walk ? Flow.cond(tf, tf.constant(true), () -> l, () -> l) : l;
    List<Operand<?>> d = Flow.gradients(tf, y, xs);
    Map<String, Operand<?>> out = new LinkedHashMap<>();
    for (int k = 0; k < d.size(); k++) {
      out.put("g" + k, d.get(k));
    }
    return out;
  }

  /** A float32 parameter (cast to the case's dtype), or a constant. */
  @SuppressWarnings("unchecked")
  private static Output<?> input(Ops tf, Inputs in, Map<String, Object> i, List<Operand<?>> xs) {
    String dtype = (String) i.get("dtype");
    if (i.containsKey("x")) {
      Operand<TFloat32> x = in.input("x" + xs.size(), TFloat32.class, shape((List<Object>) i.get("sig")));
      xs.add(x);
      return (switch (dtype) {
        case "float32" -> x;
        case "float64" -> tf.dtypes.cast(x, TFloat64.class);
        case "half" -> tf.dtypes.cast(x, TFloat16.class);
        default -> throw new IllegalArgumentException(dtype);
      }).asOutput();
    }
    Shape s = shape((List<Object>) i.get("shape"));
    List<Object> v = (List<Object>) i.get("const");
    return (switch (dtype) {
      case "int32" -> tf.constant(s, DataBuffers.of(v.stream().mapToInt(o -> ((Double) o).intValue()).toArray()));
      case "int64" -> tf.constant(s, DataBuffers.of(v.stream().mapToLong(o -> ((Double) o).longValue()).toArray()));
      case "float32" -> tf.constant(s, DataBuffers.of(floats(v)));
      case "bool" -> tf.constant(s, DataBuffers.ofBooleans(v.size()).write(booleans(v)));
      default -> throw new IllegalArgumentException(dtype);
    }).asOutput();
  }

  @SuppressWarnings("unchecked")
  private static void attr(OperationBuilder b, String name, Map<String, Object> v) {
    Map.Entry<String, Object> e = v.entrySet().iterator().next();
    Object x = e.getValue();
    switch (e.getKey()) {
      case "i" -> b.setAttr(name, ((Double) x).longValue());
      case "f" -> b.setAttr(name, ((Double) x).floatValue());
      case "b" -> b.setAttr(name, (Boolean) x);
      case "s" -> b.setAttr(name, (String) x);
      case "li" -> b.setAttr(name, ((List<Object>) x).stream().mapToLong(o -> ((Double) o).longValue()).toArray());
      case "shape" -> b.setAttr(name, shape((List<Object>) x));
      case "t" -> b.setAttr(name, switch ((String) x) {
        case "float64" -> DataType.DT_DOUBLE;
        case "float32" -> DataType.DT_FLOAT;
        case "complex64" -> DataType.DT_COMPLEX64;
        default -> throw new IllegalArgumentException((String) x);
      });
      default -> throw new IllegalArgumentException(e.getKey());
    }
  }

  /** The shape of these dimensions (null ones unknown); an unknown rank for null. */
  private static Shape shape(List<Object> dims) {
    return dims == null ? Shape.unknown() : Shape.of(dims.stream().mapToLong(o -> o == null ? -1 : ((Double) o).longValue()).toArray());
  }

  private static float[] floats(List<Object> v) {
    float[] f = new float[v.size()];
    for (int i = 0; i < f.length; i++) {
      f[i] = (float) number(v.get(i));
    }
    return f;
  }

  private static boolean[] booleans(List<Object> v) {
    boolean[] f = new boolean[v.size()];
    for (int i = 0; i < f.length; i++) {
      f[i] = (Boolean) v.get(i);
    }
    return f;
  }

  private static double number(Object o) {
    return o instanceof Double d ? d : switch ((String) o) {
      case "nan" -> Double.NaN;
      case "inf" -> Double.POSITIVE_INFINITY;
      default -> Double.NEGATIVE_INFINITY;
    };
  }
}
