package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.NestFunction;
import dev.polyfn.NestOutputs;
import dev.polyfn.tests.FaultyPairType.Fault;
import dev.polyfn.tests.FaultyPairType.Pair;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.tensorflow.types.TFloat32;

/**
 * A composite type is user code behind a public SPI: when it breaks its contract (null where a
 * tensor, view or operands are due, an exception), the error names the type's class and the
 * method, and the function stays usable once the type behaves.
 */
class CompositeContractTest {
  @ParameterizedTest
  @EnumSource(value = Fault.class, names = {"NONE", "FOR_CALL_REFUSES", "FOR_CALL_COPY"}, mode = EnumSource.Mode.EXCLUDE)
  void aBrokenTypeIsNamedWithItsMethodAndTheFunctionRecovers(Fault broken) {
    try (NestFunction f = FaultyPairType.swap(); TFloat32 a = TFloat32.vectorOf(1f, 2f); TFloat32 b = TFloat32.vectorOf(3f, 4f)) {
      FaultyPairType.breakOnThisThread(broken);
      IllegalStateException e;
      try {
        e = assertThrows(IllegalStateException.class, () -> f.call(Map.of("p", new Pair(a, b))).close());
      } finally {
        FaultyPairType.breakOnThisThread(Fault.NONE);
      }
      assertTrue(e.getMessage().contains("composite type '" + FaultyPairType.NAME + "' (" + FaultyPairType.class.getName() + ")"),
          e.getMessage());
      assertTrue(e.getMessage().contains(broken.method), e.getMessage());
      FaultyPairType.checkSwap(f, 2);
    }
  }

  /**
   * {@code forCall} is where a type checks the data TensorFlow will trust: its refusal is the
   * caller's error, naming the argument, and the value it returns (copies the call owns) is what
   * TensorFlow sees, not the caller's tensors.
   */
  @Test
  void forCallRefusesDataOrHandsTensorFlowItsCopies() {
    try (NestFunction f = FaultyPairType.swap(); TFloat32 a = TFloat32.vectorOf(1f, 2f); TFloat32 b = TFloat32.vectorOf(3f, 4f)) {
      FaultyPairType.checkSwap(f, 2);
      FaultyPairType.breakOnThisThread(Fault.FOR_CALL_REFUSES);
      IllegalArgumentException e;
      try {
        e = assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("p", new Pair(a, b))).close());
      } finally {
        FaultyPairType.breakOnThisThread(Fault.NONE);
      }
      assertEquals("argument 'p': the " + FaultyPairType.NAME + "'s data does not hold: a must not be negative", e.getMessage());
      FaultyPairType.checkSwap(f, 2);
      FaultyPairType.breakOnThisThread(Fault.FOR_CALL_COPY);
      try (NestOutputs out = f.call(Map.of("p", new Pair(a, b)))) {
        Pair r = out.value(Pair.class);
        assertEquals(11f, r.b().getFloat(0), 0f);
        assertEquals(12f, r.b().getFloat(1), 0f);
        assertEquals(6f, r.a().getFloat(0), 0f);
      } finally {
        FaultyPairType.breakOnThisThread(Fault.NONE);
      }
      assertEquals(1f, a.getFloat(0), 0f);
      FaultyPairType.checkSwap(f, 2);
    }
  }
}
