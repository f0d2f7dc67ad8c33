package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/** Lists inferred from examples: position by position, and one trace per list length. */
class ListInferenceTest {

  /** y = the sum of every element of every tensor in xs. */
  private static MapFunction sumAll(FunctionOptions options) {
    return Function.define((tf, in) -> {
      List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
      List<Operand<TFloat32>> sums = xs.stream().map(x -> tf.sum(x, tf.constant(0))).collect(Collectors.toList());
      return Map.of("y", tf.math.addN(sums));
    }, options);
  }

  private static Map<String, ?> example(long... sizes) {
    List<TensorSpec> xs = new ArrayList<>();
    for (long n : sizes) {
      xs.add(TensorSpec.of(TFloat32.class, Shape.of(n)));
    }
    return Map.of("xs", xs);
  }

  /** Calls f with vectors of ones of these sizes; returns y. */
  private static float call(MapFunction f, long... sizes) {
    List<TFloat32> xs = new ArrayList<>();
    for (long n : sizes) {
      xs.add(TFloat32.tensorOf(Shape.of(n), d -> d.scalars().forEach(s -> s.setFloat(1f))));
    }
    try (Outputs out = f.call(Map.of("xs", xs))) {
      return out.get("y", TFloat32.class).getFloat();
    } finally {
      xs.forEach(TFloat32::close);
    }
  }

  @Test
  void eachPositionIsCoalescedWithItselfOnly() {
    try (MapFunction f = sumAll(FunctionOptions.defaults().withExampleInputs(example(2, 7), example(5, 7)))) {
      assertEquals(List.of("xs: List[TensorSpec(FLOAT, [-1]), TensorSpec(FLOAT, [7])] (inferred from 2 examples)"),
          f.inferenceReport());
      assertEquals(1, f.traceCount());
      assertEquals(16f, call(f, 9, 7));
      assertEquals(1, f.traceCount(), "a new size at the varying position hits the inferred trace");
      IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> call(f, 9, 8));
      assertEquals(true, e.getMessage().contains("(inferred from 2 examples)"), e.getMessage());
    }
  }

  @Test
  void listsOfTwoLengthsTraceOncePerLengthEachCoalesced() {
    try (MapFunction f = sumAll(FunctionOptions.defaults().withExampleInputs(
        example(2, 7), example(3), example(5, 7), example(4)))) {
      assertEquals(List.of("xs: lists of lengths 1, 2 are traced one per length (pass one stacked tensor to share a trace)"),
          f.inferenceReport());
      assertEquals(2, f.traceCount(), "one trace per length");
      assertEquals(10f, call(f, 10));
      assertEquals(17f, call(f, 10, 7));
      assertEquals(2, f.traceCount(), "calls of either length hit the trace of their length");
      assertEquals(18f, call(f, 10, 8));
      assertEquals(3, f.traceCount(), "a call outside both structures traces as usual");
    }
  }
}
