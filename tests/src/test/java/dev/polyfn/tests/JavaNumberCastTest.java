package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TUint16;
import org.tensorflow.types.TUint8;

/**
 * Java numbers and primitive arrays passed for tensor parameters are cast to the parameter's dtype
 * only when the value fits, as {@code tf.constant(2**40, tf.int32)} and {@code tf.constant(1.5,
 * tf.int32)} fail in TensorFlow: never a silent wrap or truncation.
 */
class JavaNumberCastTest {
  private MapFunction f;

  @BeforeEach
  void setUp() {
    f = Function.define((tf, in) -> {
      Operand<TInt32> i = in.input("i", TInt32.class);
      Operand<TInt64> l = in.input("l", TInt64.class);
      return Map.of("i", tf.identity(i), "l", tf.identity(l));
    });
  }

  @AfterEach
  void tearDown() {
    f.close();
  }

  private static void assertMessage(RuntimeException e, String... parts) {
    for (String p : parts) {
      assertTrue(e.getMessage().contains(p), "'" + e.getMessage() + "' should contain '" + p + "'");
    }
  }

  private IllegalArgumentException rejected(Object i, Object l) {
    return assertThrows(IllegalArgumentException.class, () -> f.call(Map.of("i", i, "l", l)).close());
  }

  @Test
  void aLongOutsideInt32IsRejectedNotWrapped() {
    assertMessage(rejected(Long.MAX_VALUE, 1L), "argument 'i'", "9223372036854775807", "out of range", "INT32");
    assertMessage(rejected(Integer.MAX_VALUE + 1L, 1L), "argument 'i'", "2147483648", "out of range");
    assertMessage(rejected(Long.MIN_VALUE, 1L), "argument 'i'", "-9223372036854775808");
    try (Outputs out = f.call(Map.of("i", (long) Integer.MIN_VALUE, "l", Long.MAX_VALUE))) {
      assertEquals(Integer.MIN_VALUE, out.get("i", TInt32.class).getInt());
      assertEquals(Long.MAX_VALUE, out.get("l", TInt64.class).getLong());
    }
  }

  @Test
  void floatingPointValuesAreNotCastToIntegers() {
    assertMessage(rejected(1.5, 1L), "argument 'i'", "1.5", "INT32");
    assertMessage(rejected(2.0f, 1L), "argument 'i'", "INT32");
    assertMessage(rejected(1, Double.NaN), "argument 'l'", "NaN", "INT64");
    assertMessage(rejected(1, Double.POSITIVE_INFINITY), "argument 'l'", "Infinity", "INT64");
    assertMessage(rejected(1, 1e30), "argument 'l'", "INT64");
    assertMessage(rejected(new double[] {1, 2}, 1L), "argument 'i'", "INT32");
  }

  @Test
  void bigIntegersMustFitToo() {
    BigInteger huge = BigInteger.TWO.pow(70);
    assertMessage(rejected(1, huge), "argument 'l'", huge.toString(), "out of range", "INT64");
    try (Outputs out = f.call(Map.of("i", BigInteger.valueOf(-7), "l", BigInteger.valueOf(Long.MIN_VALUE)))) {
      assertEquals(-7, out.get("i", TInt32.class).getInt());
      assertEquals(Long.MIN_VALUE, out.get("l", TInt64.class).getLong());
    }
  }

  @Test
  void primitiveArraysAreCheckedElementByElement() {
    IllegalArgumentException e = rejected(new long[] {1, 2, Long.MAX_VALUE}, 1L);
    assertMessage(e, "argument 'i'", "[2]", "9223372036854775807", "out of range", "INT32");
    try (Outputs out = f.call(Map.of("i", new long[] {3, -4}, "l", new int[] {5}))) {
      assertEquals(-4, out.get("i", TInt32.class).getInt(1));
      assertEquals(5L, out.get("l", TInt64.class).getLong(0));
    }
  }

  @Test
  void listElementsAndMapValuesNameTheirPath() {
    try (MapFunction g = Function.define((tf, in) -> {
          List<Operand<TInt32>> xs = in.list("xs", TInt32.class);
          Map<String, Operand<TInt32>> m = in.map("m", TInt32.class);
          return Map.of("a", tf.math.add(xs.get(0), m.get("k")));
        })) {
      IllegalArgumentException list = assertThrows(IllegalArgumentException.class,
          () -> g.call(Map.of("xs", List.of(1, Long.MAX_VALUE), "m", Map.of("k", 1))).close());
      assertMessage(list, "argument 'xs[1]'", "out of range", "INT32");
      IllegalArgumentException map = assertThrows(IllegalArgumentException.class,
          () -> g.call(Map.of("xs", List.of(1), "m", Map.of("k", 1L << 40))).close());
      assertMessage(map, "argument 'm['k']'", "1099511627776", "out of range", "INT32");
      try (Outputs out = g.call(Map.of("xs", List.of(1L), "m", Map.of("k", 2)))) {
        assertEquals(3, out.get("a", TInt32.class).getInt());
      }
    }
  }

  @Test
  void unsignedDtypesTakeOnlyTheirRange() {
    try (MapFunction g = Function.define((tf, in) -> {
          Operand<TUint8> b = in.input("b", TUint8.class);
          Operand<TUint16> s = in.input("s", TUint16.class);
          return Map.of("b", tf.identity(b), "s", tf.identity(s));
        })) {
      try (Outputs out = g.call(Map.of("b", 255, "s", 65535L))) {
        assertEquals(255, Byte.toUnsignedInt(out.get("b", TUint8.class).getByte()));
        assertEquals(65535, Short.toUnsignedInt(out.get("s", TUint16.class).getShort()));
      }
      assertMessage(assertThrows(IllegalArgumentException.class, () -> g.call(Map.of("b", 256, "s", 0)).close()),
          "argument 'b'", "256", "out of range", "UINT8");
      assertMessage(assertThrows(IllegalArgumentException.class, () -> g.call(Map.of("b", -1, "s", 0)).close()),
          "argument 'b'", "-1", "out of range", "UINT8");
      assertMessage(assertThrows(IllegalArgumentException.class,
          () -> g.call(Map.of("b", 0, "s", new int[] {1, 65536})).close()), "argument 's'", "65536", "UINT16");
    }
  }

  @Test
  void theFunctionStillWorksAfterRejectedNumbers() {
    rejected(Long.MAX_VALUE, 1L);
    rejected(1.5, 1L);
    try (Outputs out = f.call(Map.of("i", 41, "l", 2L))) {
      assertEquals(41, out.get("i", TInt32.class).getInt());
    }
    assertEquals(1, f.traceCount());
    try (MapFunction floats = Function.define((tf, in) -> Map.of("y", tf.identity(in.input("x", TFloat32.class))))) {
      try (Outputs out = floats.call(Map.of("x", Long.MAX_VALUE))) { // integers to floats: rounded, as TensorFlow
        assertEquals(9.223372e18f, out.get("y", TFloat32.class).getFloat(), 1e12f);
      }
    }
  }
}
