package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.util.List;
import java.util.Map;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.junit.jupiter.api.Test;

/**
 * A body's declaration combined with example inputs, as the README promises: the declaration
 * wins where it is narrower, the examples give the rest, and only a true conflict fails,
 * naming both the declaration and the examples.
 */
class DeclaredWithExamplesTest {

  /** s = sum of x, x declared as TFloat32 with {@code shape} (null: no shape). */
  private static MapFunction rowSum(Shape shape, FunctionOptions options) {
    return Function.define((tf, in) -> {
      Operand<TFloat32> x = shape == null ? in.input("x", TFloat32.class) : in.input("x", TFloat32.class, shape);
      return Map.of("s", tf.sum(x, tf.constant(new int[] {0, 1})));
    }, options);
  }

  private static Map<String, ?> spec(Class<? extends org.tensorflow.types.family.TType> type, long... dims) {
    return Map.of("x", TensorSpec.of(type, Shape.of(dims)));
  }

  private static FunctionOptions examples(Map<String, ?>... examples) {
    return FunctionOptions.defaults().withExampleInputs(examples);
  }

  private static float call(MapFunction f, long rows, long cols) {
    try (TFloat32 x = TFloat32.tensorOf(Shape.of(rows, cols), d -> d.scalars().forEach(s -> s.setFloat(1f)));
         Outputs out = f.call(Map.of("x", x))) {
      return out.get("s", TFloat32.class).getFloat();
    }
  }

  @Test
  void aDeclaredShapeNarrowerThanTheExampleSpecWins() {
    try (MapFunction f = rowSum(Shape.of(4, 3), examples(spec(TFloat32.class, -1, 3)))) {
      assertEquals(1, f.traceCount(), "traced when defined");
      assertEquals("(x: TensorSpec(FLOAT, [4, 3]))", f.functionType().toString());
      assertEquals(12f, call(f, 4, 3));
      assertEquals(1, f.traceCount());
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> call(f, 5, 3));
      assertEquals("argument 'x': expected TensorSpec(FLOAT, [4, 3]), got TensorSpec(FLOAT, [5, 3])", e.getMessage());
    }
  }

  @Test
  void theDeclaredDtypeWinsAndTheExamplesGiveTheShape() {
    // The DOUBLE example comes first: the declaration narrows it away, the FLOAT one is traced.
    try (MapFunction f = rowSum(null, examples(spec(TFloat64.class, 2, 3), spec(TFloat32.class, 5, 3)))) {
      assertEquals(1, f.traceCount(), "one trace, of the declared dtype");
      assertEquals("(x: TensorSpec(FLOAT, [-1, 3]))", f.functionType().toString());
      assertEquals(List.of(
          "x: TensorSpec(FLOAT, [-1, 3]) (declared TensorSpec(FLOAT, *) narrowing "
              + "TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1, 3]) inferred from 2 examples)",
          "x: TensorSpec(DOUBLE, [2, 3]) of the examples is outside the declared TensorSpec(FLOAT, *) and not traced"),
          f.inferenceReport());
      for (int rows = 1; rows <= 5; rows++) {
        assertEquals(rows * 3f, call(f, rows, 3));
      }
      assertEquals(1, f.traceCount(), "every batch size hits the one trace");
    }
  }

  @Test
  void aDeclaredDimAndInferredDimsCombineDimByDim() {
    // The declaration knows the batch, the example spec the features.
    try (MapFunction f = rowSum(Shape.of(4, -1), examples(spec(TFloat32.class, -1, 3)))) {
      assertEquals(1, f.traceCount());
      assertEquals("(x: TensorSpec(FLOAT, [4, 3]))", f.functionType().toString());
      assertEquals(12f, call(f, 4, 3));
      assertThrows(IllegalArgumentException.class, () -> call(f, 4, 2));
      assertEquals(1, f.traceCount());
    }
  }

  @Test
  void aTrueConflictFailsTheDefinitionNamingTheDeclarationAndTheExample() {
    IllegalArgumentException dtype = assertThrows(IllegalArgumentException.class,
        () -> rowSum(null, examples(spec(TInt32.class, 2, 3), spec(TInt32.class, 5, 3))));
    assertEquals("parameter 'x': the declared TensorSpec(FLOAT, *) conflicts with TensorSpec(INT32, [-1, 3]) "
        + "(inferred from 2 examples)", dtype.getMessage());
    IllegalArgumentException rank = assertThrows(IllegalArgumentException.class,
        () -> rowSum(Shape.of(-1, -1), examples(spec(TFloat32.class, 2, 3, 4))));
    assertEquals("parameter 'x': the declared TensorSpec(FLOAT, [-1, -1]) conflicts with TensorSpec(FLOAT, [2, 3, 4]) "
        + "(inferred from 1 example)", rank.getMessage());
    IllegalArgumentException dim = assertThrows(IllegalArgumentException.class,
        () -> rowSum(Shape.of(4, 3), examples(spec(TFloat32.class, 5, 3))));
    assertEquals("parameter 'x': the declared TensorSpec(FLOAT, [4, 3]) conflicts with TensorSpec(FLOAT, [5, 3]) "
        + "(inferred from 1 example)", dim.getMessage());
    // The examples together are wider than the declaration, but not one of them fits it.
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> rowSum(Shape.of(4, 3), examples(spec(TFloat32.class, 5, 3), spec(TFloat32.class, 6, 3))));
    assertEquals("parameter 'x': the declared TensorSpec(FLOAT, [4, 3]) conflicts with every example: "
        + "TensorSpec(FLOAT, [5, 3]), TensorSpec(FLOAT, [6, 3])", none.getMessage());
  }

  @Test
  void aListDeclaredInTheBodyNarrowsTheExamplesPositionByPosition() {
    try (MapFunction f = Function.define((tf, in) -> {
      List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
      return Map.of("y", tf.math.addN(xs.stream().map(x -> tf.sum(x, tf.constant(0))).collect(java.util.stream.Collectors.toList())));
    }, FunctionOptions.defaults().withExampleInputs(
        Map.of("xs", List.of(TensorSpec.of(TFloat64.class, Shape.of(2)), TensorSpec.of(TFloat32.class, Shape.of(7)))),
        Map.of("xs", List.of(TensorSpec.of(TFloat32.class, Shape.of(3)), TensorSpec.of(TFloat32.class, Shape.of(7))))))) {
      assertEquals(1, f.traceCount());
      assertEquals("(xs: List[TensorSpec(FLOAT, [-1]), TensorSpec(FLOAT, [7])])",
          f.concreteFunctions().get(0).functionType().toString());
    }
  }
}
