package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import dev.polyfn.Composites;
import dev.polyfn.Function;
import dev.polyfn.FunctionOptions;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import dev.polyfn.TensorSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt64;

/**
 * Under reduce-retracing, a composite's {@code view} gets the spec the trace is keyed and cached
 * under (dims generalized to -1), not the call's exact spec, as tf.function builds placeholders
 * from the relaxed TypeSpec: a view that bakes the static shape into the graph stays right for
 * the later calls the relaxed trace serves.
 */
class CompositeViewSpecTest {
  /** A matrix as a composite of one component, its static shape the matrix's. */
  record Box(TFloat32 data) {}

  /** The body's view: the component and the spec the view was built from. */
  record BoxView(Operand<TFloat32> data, CompositeSpec spec) {}

  record Holder(Box box, TFloat32 weight) {}

  /** The specs every view was built with, in order. */
  static final List<CompositeSpec> SEEN = new CopyOnWriteArrayList<>();

  static final class BoxType implements CompositeType<Box, BoxView> {
    static final BoxType INSTANCE = new BoxType();

    @Override
    public String name() {
      return "ViewSpecBox";
    }

    @Override
    public Class<Box> valueClass() {
      return Box.class;
    }

    @Override
    public Class<BoxView> viewClass() {
      return BoxView.class;
    }

    @Override
    public CompositeSpec spec(Box value) {
      Shape s = value.data().shape();
      return new CompositeSpec(TFloat32.class, s, null, List.of("data"), List.of(TensorSpec.of(TFloat32.class, s)));
    }

    @Override
    public Tensor component(Box value, int i) {
      return value.data();
    }

    @Override
    @SuppressWarnings("unchecked")
    public BoxView view(CompositeSpec spec, List<Operand<?>> components) {
      SEEN.add(spec);
      return new BoxView((Operand<TFloat32>) components.get(0), spec);
    }

    @Override
    public List<Operand<?>> components(BoxView view) {
      return List.of(view.data());
    }

    @Override
    public Box fromComponents(List<Tensor> components) {
      return new Box((TFloat32) components.get(0));
    }
  }

  @BeforeAll
  static void register() {
    Composites.register(BoxType.INSTANCE);
  }

  @BeforeEach
  void forget() {
    SEEN.clear();
  }

  /** The row count, a constant when the view's spec knows it (as a view using static shapes does). */
  static Operand<TInt64> rows(Ops tf, BoxView b) {
    long known = b.spec().shape().get(0);
    return known >= 0 ? tf.constant(known) : tf.squeeze(tf.slice(tf.shape(b.data(), TInt64.class),
        tf.constant(new long[] {0}), tf.constant(new long[] {1})));
  }

  private static long call(MapFunction f, String name, java.util.function.Function<Box, Object> wrap, int rows) {
    try (TFloat32 data = TFloat32.tensorOf(Shape.of(rows, 4));
        Outputs out = f.call(Map.of(name, wrap.apply(new Box(data))))) {
      return out.get("rows", TInt64.class).getLong();
    }
  }

  private static List<List<Long>> shapesSeen() {
    List<List<Long>> out = new ArrayList<>();
    for (CompositeSpec s : SEEN) {
      out.add(Arrays.stream(s.shape().asArray()).boxed().toList());
      // Shape.equals says false for unknown dims: compare the dims.
      assertEquals(out.get(out.size() - 1), Arrays.stream(s.components().get(0).shape().asArray()).boxed().toList(),
          "the component's dims, as traced");
      assertEquals(TFloat32.class, s.components().get(0).type());
      assertEquals(List.of("data"), s.names());
    }
    return out;
  }

  private static void relaxesAndServes(MapFunction f, String name, java.util.function.Function<Box, Object> wrap) {
    assertEquals(3, call(f, name, wrap, 3));
    assertEquals(5, call(f, name, wrap, 5));
    assertEquals(2, f.traceCount(), "a new row count relaxes the trace");
    assertEquals(7, call(f, name, wrap, 7), "the relaxed trace must not bake the row count of the call that made it");
    assertEquals(2, f.traceCount(), "served by the relaxed trace, as tf.function's reduce_retracing does");
    assertEquals(List.of(List.of(3L, 4L), List.of(-1L, 4L)), shapesSeen(), "view sees the spec the trace is keyed under");
  }

  @Test
  void aTopLevelCompositeViewSeesTheRelaxedSpec() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("rows", rows(tf, in.composite("b", BoxType.INSTANCE))),
        FunctionOptions.defaults().withReduceRetracing(true))) {
      relaxesAndServes(f, "b", b -> b);
    }
  }

  @Test
  void aCompositeInANestViewSeesTheRelaxedSpec() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("rows", rows(tf, in.nest("xs").get(0).composite(BoxView.class))),
        FunctionOptions.defaults().withReduceRetracing(true))) {
      relaxesAndServes(f, "xs", b -> List.of(b));
    }
  }

  @Test
  void aCompositeInARecordViewSeesTheRelaxedSpec() {
    try (TFloat32 w = TFloat32.scalarOf(1f);
        MapFunction f = Function.define((tf, in) -> Map.of("rows",
            rows(tf, in.record("h", Holder.class).asNest().get("box").composite(BoxView.class))),
        FunctionOptions.defaults().withReduceRetracing(true))) {
      relaxesAndServes(f, "h", b -> new Holder(b, w));
    }
  }

  @Test
  void withoutReduceRetracingTheViewSeesTheCallsExactSpec() {
    try (MapFunction f = Function.define((tf, in) -> Map.of("rows", rows(tf, in.composite("b", BoxType.INSTANCE))))) {
      assertEquals(3, call(f, "b", b -> b, 3));
      assertEquals(5, call(f, "b", b -> b, 5));
      assertEquals(2, f.traceCount());
      assertEquals(List.of(List.of(3L, 4L), List.of(5L, 4L)), shapesSeen());
    }
  }
}
