package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.NestFunction;
import dev.polyfn.tests.FaultyPairType.Fault;
import dev.polyfn.tests.FaultyPairType.Pair;
import java.util.Map;
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
  @EnumSource(value = Fault.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
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
}
