package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import dev.polyfn.Composites;
import dev.polyfn.Function;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.TensorSpec;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A composite type (the public SPI) that breaks its contract on demand, for the tests of what
 * Polyfn does with user code that misbehaves: a pair of float tensors whose methods return null or
 * throw as the calling thread's {@link Fault} says (a thread-local, so that a pool's threads do not
 * interfere). Registered once per JVM under the name {@value #NAME}.
 */
final class FaultyPairType implements CompositeType<FaultyPairType.Pair, FaultyPairType.PairView> {
  static final String NAME = "FaultyPair";
  static final FaultyPairType INSTANCE = new FaultyPairType();

  static {
    Composites.register(INSTANCE);
  }

  /** A pair of float tensors. */
  record Pair(TFloat32 a, TFloat32 b) {}

  /** The body's view of a pair. */
  record PairView(Operand<TFloat32> a, Operand<TFloat32> b) {}

  /** How the type misbehaves, and the method the error must then name. */
  enum Fault {
    NONE(""), COMPONENT_NULL("component(value, 0)"), COMPONENT_THROWS("component(value, 0)"),
    VIEW_NULL("view(spec, components)"), COMPONENTS_NULL("components(view)"), COMPONENTS_NULL_ELEMENT("components(view)"),
    FROM_COMPONENTS_NULL("fromComponents(tensors)"), FROM_COMPONENTS_THROWS("fromComponents(tensors)"),
    FOR_CALL_NULL("forCall(value, owner)"), FOR_CALL_THROWS("forCall(value, owner)"),
    /** Not a broken contract: forCall refuses the value's data (an IllegalArgumentException). */
    FOR_CALL_REFUSES(""),
    /** Not a broken contract: forCall hands TensorFlow a copy of component a plus 10, owned by the call. */
    FOR_CALL_COPY("");

    final String method;

    Fault(String method) {
      this.method = method;
    }

    /** Whether the type breaks its contract (NONE and forCall's refusal or copy do not). */
    boolean breaksContract() {
      return !method.isEmpty();
    }

    /** Whether only tracing reaches the broken method (a call of a traced signature does not). */
    boolean tracingOnly() {
      return this == VIEW_NULL || this == COMPONENTS_NULL || this == COMPONENTS_NULL_ELEMENT;
    }
  }

  private static final ThreadLocal<Fault> FAULT = ThreadLocal.withInitial(() -> Fault.NONE);

  private FaultyPairType() {}

  /** Makes the type misbehave on this thread as {@code fault} says (NONE: behave). */
  static void breakOnThisThread(Fault fault) {
    FAULT.set(fault);
  }

  /** swap(p) = (b * 2, a): takes and returns a pair. */
  static NestFunction swap() {
    return Function.defineNested((tf, in) -> {
      PairView p = in.composite("p", INSTANCE);
      return new PairView(tf.math.mul(p.b(), tf.constant(2f)), p.a());
    });
  }

  /** Calls {@link #swap} with a pair of float vectors of {@code length} and checks its answer. */
  static void checkSwap(NestFunction f, int length) {
    try (TFloat32 a = TFloat32.tensorOf(Shape.of(length), d -> d.setFloat(1f, 0).setFloat(2f, 1));
         TFloat32 b = TFloat32.tensorOf(Shape.of(length), d -> d.setFloat(3f, 0).setFloat(4f, 1));
         NestOutputs out = f.call(Map.of("p", new Pair(a, b)))) {
      Pair r = out.value(Pair.class);
      assertEquals(6f, r.a().getFloat(0), 0f);
      assertEquals(2f, r.b().getFloat(1), 0f);
    }
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Class<Pair> valueClass() {
    return Pair.class;
  }

  @Override
  public Class<PairView> viewClass() {
    return PairView.class;
  }

  @Override
  public CompositeSpec spec(Pair p) {
    return new CompositeSpec(TFloat32.class, p.a().shape(), null, List.of("a", "b"),
        List.of(TensorSpec.of(TFloat32.class, p.a().shape()), TensorSpec.of(TFloat32.class, p.b().shape())));
  }

  @Override
  public Tensor component(Pair p, int i) {
    return switch (FAULT.get()) {
      case COMPONENT_NULL -> null;
      case COMPONENT_THROWS -> throw new UnsupportedOperationException("no component today");
      default -> i == 0 ? p.a() : p.b();
    };
  }

  @Override
  public Pair forCall(Pair p, Consumer<Tensor> owner) {
    return switch (FAULT.get()) {
      case FOR_CALL_NULL -> null;
      case FOR_CALL_THROWS -> throw new UnsupportedOperationException("no copy today");
      case FOR_CALL_REFUSES -> throw new IllegalArgumentException("a must not be negative");
      case FOR_CALL_COPY -> {
        TFloat32 copy = TFloat32.tensorOf(p.a().shape(), d -> d.scalars().forEachIndexed((i, x) ->
            x.setFloat(p.a().getFloat(i) + 10f)));
        owner.accept(copy);
        yield new Pair(copy, p.b());
      }
      default -> p;
    };
  }

  @Override
  @SuppressWarnings("unchecked")
  public PairView view(CompositeSpec spec, List<Operand<?>> c) {
    return FAULT.get() == Fault.VIEW_NULL ? null : new PairView((Operand<TFloat32>) c.get(0), (Operand<TFloat32>) c.get(1));
  }

  @Override
  public List<Operand<?>> components(PairView v) {
    return switch (FAULT.get()) {
      case COMPONENTS_NULL -> null;
      case COMPONENTS_NULL_ELEMENT -> Arrays.asList(v.a(), null);
      default -> List.of(v.a(), v.b());
    };
  }

  @Override
  public Pair fromComponents(List<Tensor> c) {
    return switch (FAULT.get()) {
      case FROM_COMPONENTS_NULL -> null;
      case FROM_COMPONENTS_THROWS -> throw new IllegalArgumentException("cannot rebuild");
      default -> new Pair((TFloat32) c.get(0), (TFloat32) c.get(1));
    };
  }
}
