package dev.polyfn.internal.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.family.TType;

/** The shared state of the outputs types (internal, hence this package). */
class OwnedTensorsTest {

  /** A tensor that records its close, or throws {@code failure} from it. */
  private static TType tensor(List<Integer> closed, int id, RuntimeException failure) {
    return (TType) Proxy.newProxyInstance(TType.class.getClassLoader(), new Class<?>[] {TType.class}, (p, m, a) -> {
      if (m.getName().equals("close")) {
        closed.add(id);
        if (failure != null) {
          throw failure;
        }
        return null;
      }
      throw new UnsupportedOperationException(m.getName());
    });
  }

  @Test
  void aTensorWhoseCloseFailsDoesNotKeepTheOthersOpen() {
    List<Integer> closed = new ArrayList<>();
    IllegalStateException first = new IllegalStateException("first");
    IllegalStateException second = new IllegalStateException("second");
    OwnedTensors ts = new OwnedTensors(new TType[] {
        tensor(closed, 0, null), tensor(closed, 1, first), tensor(closed, 2, null), tensor(closed, 3, second)});
    IllegalStateException thrown = assertThrows(IllegalStateException.class, ts::close);
    assertSame(first, thrown);
    assertSame(second, thrown.getSuppressed()[0]);
    assertEquals(List.of(0, 1, 2, 3), closed);
    assertTrue(ts.isClosed());
    ts.close(); // idempotent: nothing is closed twice
    assertEquals(List.of(0, 1, 2, 3), closed);
    assertThrows(IllegalStateException.class, () -> ts.get(0));
  }
}
