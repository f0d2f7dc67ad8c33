package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.Inputs;
import dev.polyfn.ListBody;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;

/** The harness of the ControlFlowPorts*Test classes: Python 2.21's recorded cases, the check against them and helpers. */
final class ControlFlowPorts {
  static final Map<String, Object> PY = MiniJson.resource("/control_flow_ports_more.json");

  private ControlFlowPorts() {}

  /** {@code [y, dy/dx, d2y/dx2]}. */
  static List<Operand<?>> secondDerivative(Ops tf, Operand<?> y, Operand<TFloat32> x) {
    return secondDerivative(tf, y, y, x);
  }

  /** {@code [out, dy/dx, d2y/dx2]}. */
  static List<Operand<?>> secondDerivative(Ops tf, Operand<?> out, Operand<?> y, Operand<TFloat32> x) {
    Operand<?> g = Flow.gradients(tf, y, List.of(x)).get(0);
    return List.of(out, g, Flow.gradients(tf, g, List.of(x)).get(0));
  }

  /** Python's tf.linalg.matvec: the matrix times the vector, as a vector. */
  static Operand<TFloat32> matvec(Ops tf, Operand<TFloat32> m, Operand<TFloat32> v) {
    return tf.reshape(tf.linalg.matMul(m, tf.expandDims(v, tf.constant(-1))), tf.constant(new int[] {-1}));
  }

  /** {@code outs} followed by the gradient of {@code y} with respect to each of {@code xs}. */
  static List<Operand<?>> withGradients(Ops tf, List<? extends Operand<?>> outs, Operand<?> y, Operand<?>... xs) {
    List<Operand<?>> r = new ArrayList<>(outs);
    r.addAll(Flow.gradients(tf, y, List.of(xs)));
    return r;
  }

  static Operand<TFloat32> f(Inputs in, String name) {
    return in.input(name, TFloat32.class);
  }

  @SuppressWarnings("unchecked")
  static Operand<TInt64> i64(Operand<?> o) {
    return (Operand<TInt64>) o;
  }

  @SuppressWarnings("unchecked")
  static Operand<TFloat16> f16(Operand<?> o) {
    return (Operand<TFloat16>) o;
  }

  @SuppressWarnings("unchecked")
  static Operand<TFloat64> f64(Operand<?> o) {
    return (Operand<TFloat64>) o;
  }

  /**
   * Cases also compiled with XLA (jitCompile), which must give the same numbers: those whose
   * differentiated loops are bounded and carry no TensorList (Python's XLA needs the bound too; a
   * TensorList loop's gradient is refused under XLA, see docs/control-flow.md).
   */
  static final Set<String> XLA = Set.of("while_in_cond_branch", "max_iter_early_stop", "max_iter_zero_grad",
      "cond_uneven_branches", "nested_cond_two_outputs", "cond_dict_int_float", "cond_x_only_in_pred", "cond_passes_inputs_through",
      "cond_constant_branches", "cond_mixed_second_derivative", "inner_pred_from_outer_branch", "map_fn_with_cond", "nested_map_fn",
      "map_two_inputs_by_index", "map_rank3_to_scalars", "map_float_to_int", "sqrt_rsqrt_second_derivative");

  /**
   * Defines {@code body}, calls it with each of the Python case's inputs and compares every output
   * with Python's (dtype, shape, values), then the trace count with Python's; for the cases in
   * {@link #XLA}, again compiled with XLA.
   */
  static void check(String name, ListBody body) {
    Map<String, Object> c = map(PY.get(name));
    assertTrue(c != null, "no Python record for " + name);
    check(name, c, body, FunctionOptions.defaults());
    if (XLA.contains(name)) {
      check(name + " (XLA)", c, body, FunctionOptions.defaults().withJitCompile(true));
    }
  }

  static void check(String name, Map<String, Object> c, ListBody body, FunctionOptions options) {
    try (ListFunction fn = Function.defineList(body, options)) {
      for (Object o : (List<?>) c.get("calls")) {
        Map<String, Object> call = map(o);
        Map<String, Tensor> args = new LinkedHashMap<>();
        map(call.get("inputs")).forEach((k, v) -> args.put(k, tensor(map(v))));
        try (ListOutputs out = fn.call(args)) {
          List<?> expected = (List<?>) call.get("outputs");
          String where = name + " " + call.get("inputs");
          assertEquals(expected.size(), out.size(), where + ": output count");
          for (int k = 0; k < expected.size(); k++) {
            assertTensor(where + " output " + k, map(expected.get(k)), out.get(k));
          }
        } finally {
          args.values().forEach(Tensor::close);
        }
      }
      assertEquals(((Double) c.get("traces")).intValue(), fn.traceCount(), name + ": traces");
    }
  }

  static Tensor tensor(Map<String, Object> t) {
    Shape shape = Shape.of(((List<?>) t.get("shape")).stream().mapToLong(d -> ((Double) d).longValue()).toArray());
    List<?> v = (List<?>) t.get("values");
    switch ((String) t.get("dtype")) {
      case "float32": {
        float[] a = new float[v.size()];
        for (int k = 0; k < a.length; k++) {
          a[k] = ((Double) v.get(k)).floatValue();
        }
        return TFloat32.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      case "float16": {
        float[] a = new float[v.size()];
        for (int k = 0; k < a.length; k++) {
          a[k] = ((Double) v.get(k)).floatValue();
        }
        return TFloat16.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      case "int64":
        return TInt64.tensorOf(shape, DataBuffers.of(v.stream().mapToLong(d -> ((Double) d).longValue()).toArray(), true, false));
      case "float64": {
        double[] a = v.stream().mapToDouble(d -> (Double) d).toArray();
        return TFloat64.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      case "int32":
        return TInt32.tensorOf(shape, DataBuffers.of(v.stream().mapToInt(d -> ((Double) d).intValue()).toArray(), true, false));
      case "bool": {
        boolean[] a = new boolean[v.size()];
        for (int k = 0; k < a.length; k++) {
          a[k] = (Boolean) v.get(k);
        }
        return TBool.tensorOf(shape, DataBuffers.of(a, true, false));
      }
      default:
        throw new IllegalArgumentException("dtype " + t.get("dtype"));
    }
  }

  static void assertTensor(String where, Map<String, Object> expected, Tensor actual) {
    assertTensor(where, expected, actual, 1e-5);
  }

  /**
   * Compares {@code actual} with Python's {@code expected}: dtype, shape, and values (integers
   * exactly, floats within {@code tolerance} relative, float16 within 1e-3).
   */
  static void assertTensor(String where, Map<String, Object> expected, Tensor actual, double tolerance) {
    long[] dims = ((List<?>) expected.get("shape")).stream().mapToLong(d -> ((Double) d).longValue()).toArray();
    assertArrayEquals(dims, actual.shape().asArray(), where + ": shape");
    List<?> e = (List<?>) expected.get("values");
    List<Number> a = new ArrayList<>();
    String dtype = (String) expected.get("dtype");
    if (actual instanceof TFloat32 t) {
      t.scalars().forEach(s -> a.add(s.getFloat()));
    } else if (actual instanceof TFloat16 t) {
      t.scalars().forEach(s -> a.add(s.getFloat()));
    } else if (actual instanceof TFloat64 t) {
      t.scalars().forEach(s -> a.add(s.getDouble()));
    } else if (actual instanceof TInt32 t) {
      t.scalars().forEach(s -> a.add(s.getInt()));
    } else if (actual instanceof TInt64 t) {
      t.scalars().forEach(s -> a.add(s.getLong()));
    }
    String actualType = actual instanceof TFloat32 ? "float32" : actual instanceof TFloat16 ? "float16" : actual instanceof TFloat64 ? "float64"
        : actual instanceof TInt32 ? "int32" : actual instanceof TInt64 ? "int64" : actual.getClass().getSimpleName();
    assertEquals(dtype, actualType, where + ": dtype");
    assertEquals(e.size(), a.size(), where + ": size");
    for (int k = 0; k < e.size(); k++) {
      double want = (Double) e.get(k);
      if (dtype.startsWith("int")) {
        assertEquals((long) want, a.get(k).longValue(), where + " [" + k + "]");
      } else {
        // float16 keeps 11 significant bits: the same kernels may round a last bit differently
        double tol = dtype.equals("float16") ? 1e-3 : tolerance;
        assertEquals(want, a.get(k).doubleValue(), tol * Math.max(1, Math.abs(want)), where + " [" + k + "]: Python " + e + ", Polyfn " + a);
      }
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }
}
