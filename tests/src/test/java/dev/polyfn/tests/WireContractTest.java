package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.polyfn.internal.Wire;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Java's and Rust's copies of the wire constants are the same table. */
class WireContractTest {
  @Test
  void everyConstantHasTheSameNameAndValueOnBothSides() throws IllegalAccessException {
    Map<String, Long> java = new TreeMap<>();
    for (Field f : Wire.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && Modifier.isFinal(f.getModifiers())) {
        java.put(f.getName(), ((Number) f.get(null)).longValue());
      }
    }
    assertEquals(new TreeMap<>(Wire.nativeTable()), java);
  }
}
