package dev.polyfn.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.polyfn.Function;
import dev.polyfn.MapFunction;
import dev.polyfn.Outputs;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.tensorflow.Operand;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

/** Wrong kinds and elements for list, map and Java parameters; the function stays usable. */
class ParameterKindsBadInputTest {
  private MapFunction f;
  private TFloat32 one;
  private TInt32 intOne;

  @BeforeEach
  void setUp() {
    f = Function.define((tf, in) -> {
      List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);
      Map<String, Operand<TFloat32>> m = in.map("m", TFloat32.class);
      int n = in.javaInput("n", Integer.class);
      return Map.of("y", tf.math.add(tf.math.add(xs.get(0), m.get("k")), tf.constant((float) n)));
    });
    one = TFloat32.scalarOf(1f);
    intOne = TInt32.scalarOf(1);
  }

  @AfterEach
  void tearDown() {
    f.close();
    one.close();
    intOne.close();
  }

  private Map<String, Object> args(Object xs, Object m, Object n) {
    Map<String, Object> a = new HashMap<>();
    a.put("xs", xs);
    a.put("m", m);
    a.put("n", n);
    return a;
  }

  private void assertFails(Map<String, Object> args, String... parts) {
    for (int round = 0; round < 2; round++) { // before and after the parameters are known
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.call(args));
      for (String p : parts) {
        assertTrue(e.getMessage().contains(p), "'" + e.getMessage() + "' should contain '" + p + "'");
      }
      try (Outputs out = f.call(args(List.of(one), Map.of("k", one), 1))) {
        assertEquals(3f, out.get("y", TFloat32.class).getFloat(), 0f);
      }
    }
  }

  @Test
  void aListWhereAMapIsDeclared() {
    assertFails(args(List.of(one), List.of(one), 1), "'m'", "map");
  }

  @Test
  void aTensorWhereAListIsDeclared() {
    assertFails(args(one, Map.of("k", one), 1), "'xs'", "list");
  }

  @Test
  void aListWithANullElement() {
    assertFails(args(Arrays.asList(one, null), Map.of("k", one), 1), "'xs[1]'", "null");
  }

  @Test
  void aListWithANonTensorElement() {
    assertFails(args(List.of(one, "two"), Map.of("k", one), 1), "'xs[1]'", "java.lang.String");
  }

  @Test
  void aMapWithANonStringKey() {
    assertFails(args(List.of(one), Map.of(7, one), 1), "'m'", "key 7", "java.lang.Integer");
  }

  @Test
  void aWrongElementDtypeForATypedList() {
    assertFails(args(List.of(one, intOne), Map.of("k", one), 1), "'xs'", "element 1", "INT32");
  }

  @Test
  void aWrongValueDtypeForATypedMap() {
    assertFails(args(List.of(one), Map.of("k", intOne), 1), "'m'", "'k'", "INT32");
  }

  @Test
  void aJavaValueOfTheWrongClass() {
    assertFails(args(List.of(one), Map.of("k", one), "1"), "'n'", "java.lang.Integer", "java.lang.String");
  }
}
