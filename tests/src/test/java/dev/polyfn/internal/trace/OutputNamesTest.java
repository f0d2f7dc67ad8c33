package dev.polyfn.internal.trace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/** A function that keeps retracing keeps one entry per distinct list of output names. */
class OutputNamesTest {
  @Test
  void equalNamesShareOneKeyHoweverOftenTraced() {
    OutputNames names = new OutputNames("f");
    String[] y = {"y", "z"};
    int key = names.record(y);
    for (int i = 0; i < 10_000; i++) {
      assertEquals(key, names.record(new String[] {"y", "z"}));
    }
    y[0] = "changed";  // the caller's array is not the one kept
    assertArrayEquals(new String[] {"y", "z"}, names.get(key));
    int other = names.record(new String[] {"z", "y"});
    assertNotEquals(key, other);
    assertArrayEquals(new String[] {"z", "y"}, names.get(other));
    assertEquals(2, names.size());
  }
}
