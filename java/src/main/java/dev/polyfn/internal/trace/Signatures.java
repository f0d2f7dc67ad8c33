package dev.polyfn.internal.trace;

import dev.polyfn.TensorSpec;
import dev.polyfn.internal.DataTypes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;

/**
 * A comparable stand-in for the signature of a call's arguments, for telling a recursive trace
 * of the same signature (endless) from one of another signature (a recursion that may end) when
 * the call's facts are not known yet (a nested call during the function's first trace).
 *
 * <p>Tensors, operands and specs stand for their dtype and shape, lists and maps for their
 * elements' stand-ins, and any other value for itself (its {@code equals}), as Java values select
 * signatures by value.
 */
public final class Signatures {
  private Signatures() {}

  /** The stand-in of every argument in {@code args}, by name. */
  public static Object of(Arguments.Lookup args) {
    Map<String, ?> map = args.asMap();
    if (map.isEmpty() && args.single() != null) {
      return of(args.single());
    }
    Map<String, Object> keys = new TreeMap<>();
    map.forEach((k, v) -> keys.put(k, of(v)));
    return keys;
  }

  private static Object of(Object v) {
    if (v instanceof Operand<?> o) {
      return List.of("tensor", o.asOutput().dataType().getNumber(), o.shape());
    }
    if (v instanceof Tensor t) {
      return List.of("tensor", t.dataType().getNumber(), t.shape());
    }
    if (v instanceof TensorSpec s) { // a nested call's operands arrive as specs
      return List.of("tensor", DataTypes.isConcrete(s.type()) ? DataTypes.code(s.type()) : s.type(), s.shape());
    }
    if (v instanceof List<?> l) {
      List<Object> keys = new ArrayList<>(l.size());
      l.forEach(e -> keys.add(of(e)));
      return keys;
    }
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> keys = new TreeMap<>();
      m.forEach((k, e) -> keys.put(String.valueOf(k), of(e)));
      return keys;
    }
    return v == null ? "null" : v;
  }
}
