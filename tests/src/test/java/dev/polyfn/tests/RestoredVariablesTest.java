package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.SingleFunction;
import dev.polyfn.Variable;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorflow.EagerSession;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TType;

/**
 * Variables as {@code Function.load} restores them from a Python SavedModel ({@code
 * Variable.restored}): of a dtype TensorFlow Java has no tensor class for (int8, as a quantized
 * Keras model's kernels), and of a declared shape whose rank is unknown ({@code shape=None}).
 * Real SavedModels with both: {@code KerasModelCorpusMoreTest}.
 */
class RestoredVariablesTest {
  private static final Ops EAGER = Ops.create(EagerSession.getDefault());

  /** {@code values} as an eager int8 operand (TensorFlow Java has no int8 tensor class). */
  private static Operand<?> int8(int... values) {
    return EAGER.scope().opBuilder("Cast", "Cast").addInput(EAGER.constant(values).asOutput())
        .setAttr("DstT", DataType.DT_INT8).build().output(0);
  }

  private static int[] ints(org.tensorflow.Tensor t) {
    int[] out = new int[(int) t.shape().size()];
    ((TInt32) t).copyTo(DataBuffers.of(out, false, false));
    return out;
  }

  @Test
  void anInt8VariableIsReadAndAssignedByFunctionsButNotHandedToJava() {
    try (Variable<?> v = Variable.restored(int8(1, -2, 3), DataType.DT_INT8, Shape.of(3));
         SingleFunction read = Function.defineSingle((tf, in) -> tf.dtypes.cast(v.read(tf), TInt32.class));
         SingleFunction bump = Function.defineSingle((tf, in) -> {
           Operand<?> one = tf.scope().opBuilder("Cast", "Cast").addInput(tf.constant(new int[] {1, 1, 1}).asOutput())
               .setAttr("DstT", DataType.DT_INT8).build().output(0);
           tf.assignAddVariableOp(v.handle(tf), one);
           return tf.constant(0);
         })) {
      assertEquals(TType.class, v.type());
      assertEquals("Variable(DT_INT8, [3])", v.toString());
      try (TType t = read.call(Map.of())) {
        assertArrayEquals(new int[] {1, -2, 3}, ints(t));
      }
      bump.call(Map.of()).close();
      try (TType t = read.call(Map.of())) {
        assertArrayEquals(new int[] {2, -1, 4}, ints(t));
      }
      UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, v::value);
      assertTrue(e.getMessage().contains("DT_INT8"), e.getMessage());
      try (TFloat32 f = TFloat32.vectorOf(1f, 2f, 3f)) {
        @SuppressWarnings("unchecked")
        Variable<TType> raw = (Variable<TType>) v;
        IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class, () -> raw.assign(f));
        assertTrue(wrong.getMessage().contains("DT_INT8") && wrong.getMessage().contains("DT_FLOAT"), wrong.getMessage());
      }
    }
  }

  @Test
  void anInt8VariableIsSavedAndLoadedBack(@TempDir Path dir) {
    Path saved = dir.resolve("int8");
    try (Variable<?> v = Variable.restored(int8(1, -2, 3), DataType.DT_INT8, Shape.of(3));
         MapFunction read = Function.define((tf, in) -> Map.of("y", tf.dtypes.cast(v.read(tf), TInt32.class)),
             FunctionOptions.defaults().withName("read"))) {
      read.call(Map.of()).close();
      read.save(saved); // its checkpoint written from the variable's int8 value
    }
    try (MapFunction loaded = (MapFunction) Function.load(saved); Outputs out = loaded.call(Map.of())) {
      assertArrayEquals(new int[] {1, -2, 3}, ints(out.get("y")));
    }
  }

  @Test
  void aVariableOfUnknownRankTakesValuesOfAnyShapeUnderOneSignature() {
    try (Variable<?> declared = Variable.restored(EAGER.constant(new float[][] {{1f, 2f}, {3f, 4f}}), DataType.DT_FLOAT,
             Shape.unknown());
         TFloat32 three = TFloat32.vectorOf(5f, 6f, 7f)) {
      @SuppressWarnings("unchecked")
      Variable<TFloat32> v = (Variable<TFloat32>) declared;
      assertTrue(v.shape().isUnknown(), v.shape().toString());
      try (SingleFunction size = Function.defineSingle((tf, in) -> tf.size(v.read(tf)))) {
        try (TType n = size.call(Map.of())) {
          assertArrayEquals(new int[] {4}, ints(n));
        }
        v.assign(three);
        try (TType n = size.call(Map.of())) {
          assertArrayEquals(new int[] {3}, ints(n));
        }
        assertEquals(1, size.traceCount(), "one signature, VariableSpec(FLOAT, <unknown>), serves both shapes");
      }
      assertEquals(Shape.of(3), v.value().shape()); // the eager session's tensor: not closed here
    }
  }

  /**
   * A traced assignment to a variable declared [None, 2] takes a value of another first size, as
   * an eager one does: TensorFlow's validated assignment compared it with the value held ([1, 2]),
   * not with the declared shape, and refused [3, 2]; Python validates only a fully known shape.
   */
  @Test
  void aTracedAssignmentTakesAnyShapeTheDeclaredOneAccepts() {
    try (Variable<?> declared = Variable.restored(EAGER.constant(new float[][] {{1f, 2f}}), DataType.DT_FLOAT,
        Shape.of(-1, 2))) {
      @SuppressWarnings("unchecked")
      Variable<TFloat32> v = (Variable<TFloat32>) declared;
      try (SingleFunction set = Function.defineSingle((tf, in) -> {
            var x = in.input("x", TFloat32.class, Shape.of(-1, 2));
            return tf.withControlDependencies(List.of(v.assign(tf, x))).sum(v.read(tf), tf.constant(new int[] {0, 1}));
          });
           TFloat32 three = TFloat32.tensorOf(Shape.of(3, 2), DataBuffers.of(1f, 2f, 3f, 4f, 5f, 6f));
           TType sum = set.call(Map.of("x", three))) {
        assertEquals(21f, ((TFloat32) sum).getFloat());
      }
      assertEquals(Shape.of(3, 2), v.value().shape());
    }
  }

  @Test
  void aDeclaredShapeRefusesAValueItCannotHold() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Variable.restored(EAGER.constant(new float[] {1f, 2f}), DataType.DT_FLOAT, Shape.of(-1, 2)).close());
    assertTrue(e.getMessage().contains("[-1, 2]") && e.getMessage().contains("[2]"), e.getMessage());
  }
}
