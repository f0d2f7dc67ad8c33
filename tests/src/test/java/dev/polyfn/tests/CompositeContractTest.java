package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.CompositeSpec;
import dev.polyfn.CompositeType;
import dev.polyfn.Composites;
import dev.polyfn.Function;
import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.TensorSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.TFloat32;

/**
 * A composite type is user code behind a public SPI: when it breaks its contract (null where a
 * tensor, view or operands are due, an exception), the error names the type's class and the
 * method, and the function stays usable once the type behaves.
 */
class CompositeContractTest {
  /** A pair of float tensors. */
  record Pair(TFloat32 a, TFloat32 b) {}

  /** The body's view of a pair. */
  record PairView(Operand<TFloat32> a, Operand<TFloat32> b) {}

  /** How the type misbehaves in the next calls. */
  enum Fault { NONE, COMPONENT_NULL, COMPONENT_THROWS, VIEW_NULL, COMPONENTS_NULL,
    COMPONENTS_NULL_ELEMENT, FROM_COMPONENTS_NULL, FROM_COMPONENTS_THROWS }

  static volatile Fault fault = Fault.NONE;

  /** A pair type that breaks its contract in the way {@link #fault} says. */
  static final class PairType implements CompositeType<Pair, PairView> {
    static final PairType INSTANCE = new PairType();

    @Override
    public String name() {
      return "ContractPair";
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
      if (fault == Fault.COMPONENT_NULL) {
        return null;
      }
      if (fault == Fault.COMPONENT_THROWS) {
        throw new UnsupportedOperationException("no component today");
      }
      return i == 0 ? p.a() : p.b();
    }

    @Override
    @SuppressWarnings("unchecked")
    public PairView view(CompositeSpec spec, List<Operand<?>> c) {
      if (fault == Fault.VIEW_NULL) {
        return null;
      }
      return new PairView((Operand<TFloat32>) c.get(0), (Operand<TFloat32>) c.get(1));
    }

    @Override
    public List<Operand<?>> components(PairView v) {
      if (fault == Fault.COMPONENTS_NULL) {
        return null;
      }
      if (fault == Fault.COMPONENTS_NULL_ELEMENT) {
        return java.util.Arrays.asList(v.a(), null);
      }
      return List.of(v.a(), v.b());
    }

    @Override
    public Pair fromComponents(List<Tensor> c) {
      if (fault == Fault.FROM_COMPONENTS_NULL) {
        return null;
      }
      if (fault == Fault.FROM_COMPONENTS_THROWS) {
        throw new IllegalArgumentException("cannot rebuild");
      }
      return new Pair((TFloat32) c.get(0), (TFloat32) c.get(1));
    }
  }

  @BeforeAll
  static void register() {
    try {
      Composites.register(PairType.INSTANCE);
    } catch (IllegalArgumentException alreadyRegistered) {
      // registered by an earlier run in this JVM
    }
  }

  @AfterEach
  void behave() {
    fault = Fault.NONE;
  }

  /** swap(p) = (b * 2, a): takes and returns a pair. */
  private static NestFunction swap() {
    return Function.defineNested((tf, in) -> {
      PairView p = in.composite("p", PairType.INSTANCE);
      return new PairView(tf.math.mul(p.b(), tf.constant(2f)), p.a());
    });
  }

  @ParameterizedTest
  @EnumSource(value = Fault.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
  void aBrokenTypeIsNamedWithItsMethodAndTheFunctionRecovers(Fault broken) {
    try (NestFunction f = swap(); TFloat32 a = TFloat32.vectorOf(1f, 2f); TFloat32 b = TFloat32.vectorOf(3f, 4f)) {
      fault = broken;
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> f.call(Map.of("p", new Pair(a, b))).close());
      assertTrue(e.getMessage().contains("composite type 'ContractPair' (" + PairType.class.getName() + ")"),
          e.getMessage());
      String method = switch (broken) {
        case COMPONENT_NULL, COMPONENT_THROWS -> "component(value, 0)";
        case VIEW_NULL -> "view(spec, components)";
        case COMPONENTS_NULL, COMPONENTS_NULL_ELEMENT -> "components(view)";
        default -> "fromComponents(tensors)";
      };
      assertTrue(e.getMessage().contains(method), e.getMessage());
      fault = Fault.NONE;
      try (NestOutputs out = f.call(Map.of("p", new Pair(a, b)))) {
        Pair r = out.value(Pair.class);
        assertEquals(6f, r.a().getFloat(0), 0f);
        assertEquals(2f, r.b().getFloat(1), 0f);
      }
    }
  }
}
