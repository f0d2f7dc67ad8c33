package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Flow;
import dev.polyfn.Function;
import dev.polyfn.ListFunction;
import dev.polyfn.ListOutputs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/** Calls and checks shared by the ports of TensorFlow's tests (TfFunctionPortsTest, TfFunctionGradientPortsTest, TfFunctionControlFlowPortsTest). */
final class PortCalls {
  private PortCalls() {}


  /** A function of a float {@code x} returning {@code y(x)} and its gradient with respect to x. */
  static ListFunction valueAndGradient(java.util.function.BiFunction<Ops, Operand<TFloat32>, Operand<TFloat32>> y) {
    return Function.defineList((tf, in) -> {
      Operand<TFloat32> x = in.input("x", TFloat32.class);
      Operand<TFloat32> v = y.apply(tf, x);
      return List.of(v, Flow.gradients(tf, v, List.of(x)).get(0));
    });
  }

  /** Calls {@code f} with Java numbers and booleans for its tensor parameters (cast to their dtypes), its float outputs. */
  static List<float[]> floats(ListFunction f, Map<String, Object> args) {
    try (ListOutputs out = f.call(args)) {
      List<float[]> values = new ArrayList<>();
      for (int k = 0; k < out.size(); k++) {
        values.add(SavedModelTest.floats(out.get(k, TFloat32.class)));
      }
      return values;
    }
  }

  static List<Float> scalars(ListFunction f, Map<String, Object> args) {
    List<Float> l = new ArrayList<>();
    for (float[] v : floats(f, args)) {
      assertEquals(1, v.length);
      l.add(v[0]);
    }
    return l;
  }

  static int[] ints(TInt32 t) {
    int[] v = new int[(int) t.size()];
    for (int k = 0; k < v.length; k++) {
      v[k] = t.getInt(k);
    }
    return v;
  }

  /** Rank then dims (-1 unknown), or [-1] for an unknown rank, as the Python programs record them. */
  static int[] staticShape(Shape s) {
    if (s.isUnknown()) {
      return new int[] {-1};
    }
    int[] out = new int[s.numDimensions() + 1];
    out[0] = s.numDimensions();
    for (int k = 0; k < s.numDimensions(); k++) {
      out[k + 1] = (int) s.size(k);
    }
    return out;
  }
}
