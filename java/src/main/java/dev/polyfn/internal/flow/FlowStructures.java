package dev.polyfn.internal.flow;

import dev.polyfn.LoopOptions;
import dev.polyfn.internal.structure.Records;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TBool;

/**
 * {@code Flow.condMap}, {@code Flow.condRecord} and the map and record forms of {@link
 * Flow#whileLoop}: thin layers over the list forms. A map is flattened in sorted key order (as
 * Python's {@code tf.nest} orders dict keys), a record in component declaration order; the results
 * are rebuilt into the same structure. Only flat structures: every value is one operand.
 */
public final class FlowStructures {
  private FlowStructures() {}

  public static Object whileLoop(Ops tf, Object loopVars, LoopOptions options, Function<Object, Operand<TBool>> cond,
      Function<Object, Object> body) {
    if (cond == null || body == null) {
      throw new IllegalArgumentException("whileLoop: " + (cond == null ? "cond" : "body") + " is null");
    }
    Layout layout = Layout.of(loopVars, "whileLoop", "loopVars");
    List<Operand<?>> out = FlowLoops.whileLoop(tf, layout.flatten(loopVars), options,
        v -> cond.apply(layout.rebuild(v)),
        v -> {
          Object next = body.apply(layout.rebuild(v));
          Layout got = Layout.of(next, "whileLoop", "the result of the body");
          if (!got.equals(layout)) {
            throw new IllegalArgumentException("whileLoop: the loop variables are " + layout + " but the body returns "
                + got + ": " + layout.difference(got, "the body's result", "the loop variables"));
          }
          return got.flatten(next);
        },
        i -> "loop variable '" + layout.keys().get(i) + "'");
    return layout.rebuild(out);
  }

  public static Object cond(Ops tf, Operand<TBool> pred, Supplier<?> then, Supplier<?> otherwise) {
    Objects.requireNonNull(then, "then");
    Objects.requireNonNull(otherwise, "otherwise");
    if (FlowEager.applies(tf)) {
      // Only the selected branch runs: its structure is the result's (the other is not compared).
      boolean taken = FlowEager.test(pred, "cond", "pred");
      Object r = (taken ? then : otherwise).get();
      Layout layout = Layout.of(r, "cond", "the result of the " + (taken ? "then" : "else") + " branch");
      List<Operand<?>> flat = layout.flatten(r);
      for (int i = 0; i < flat.size(); i++) {
        FlowEager.operand(flat.get(i), "cond", "output '" + layout.keys().get(i) + "'");
      }
      return layout.rebuild(flat);
    }
    // The then branch is traced first and fixes the structure the else branch must match.
    Layout[] seen = new Layout[1];
    List<Operand<?>> out = FlowCond.condList(tf, pred,
        () -> {
          Object r = then.get();
          seen[0] = Layout.of(r, "cond", "the result of the then branch");
          return seen[0].flatten(r);
        },
        () -> {
          Object r = otherwise.get();
          Layout got = Layout.of(r, "cond", "the result of the else branch");
          if (!got.equals(seen[0])) {
            throw new IllegalArgumentException("cond: the then branch returns " + seen[0] + " but the else branch "
                + "returns " + got + ": " + seen[0].difference(got, "the else branch", "the then branch"));
          }
          return got.flatten(r);
        },
        i -> "output '" + seen[0].keys().get(i) + "'");
    return seen[0].rebuild(out);
  }

  /**
   * The shape of a flat structure: {@code recordClass} null for a map, whose {@code keys} are
   * sorted; else the record's component names in declaration order.
   */
  public record Layout(Class<?> recordClass, List<String> keys) {
    static Layout of(Object value, String what, String whose) {
      if (value == null) {
        throw new IllegalArgumentException(what + ": " + whose + " is null");
      }
      if (value instanceof Map<?, ?> m) {
        TreeSet<String> keys = new TreeSet<>();
        for (Object k : m.keySet()) {
          if (!(k instanceof String s)) {
            throw new IllegalArgumentException(what + ": the keys of " + whose + " must be non-null strings, got "
                + (k == null ? "null" : k.getClass().getName()));
          }
          keys.add(s);
        }
        return new Layout(null, List.copyOf(keys));
      }
      if (value instanceof Record r) {
        Records.Info info = Records.of(r.getClass());
        for (int i = 0; i < info.size(); i++) {
          // Results are rebuilt from graph outputs, so each component must be able to hold one.
          if (!info.types()[i].isAssignableFrom(Output.class)) {
            throw new IllegalArgumentException(what + ": component '" + info.names()[i] + "' of "
                + r.getClass().getSimpleName() + " is declared as " + info.types()[i].getSimpleName()
                + "; every component of a record of operands must be declared as an Operand");
          }
        }
        return new Layout(r.getClass(), List.of(info.names()));
      }
      throw new IllegalArgumentException(what + ": " + whose + " must be a Map<String, Operand> or a record of "
          + "operands, got " + value.getClass().getName());
    }

    /** The values of {@code value} (of this layout), in this layout's order. */
    List<Operand<?>> flatten(Object value) {
      List<Operand<?>> out = new ArrayList<>(keys.size());
      if (recordClass == null) {
        Map<?, ?> m = (Map<?, ?>) value;
        for (String k : keys) {
          out.add(operand(m.get(k), k));
        }
      } else {
        Records.Info info = Records.of(recordClass);
        for (int i = 0; i < keys.size(); i++) {
          out.add(operand(info.get(value, i), keys.get(i)));
        }
      }
      return out;
    }

    /** A value as an operand; null passes, for the list form to report it by name. */
    private static Operand<?> operand(Object o, String key) {
      if (o != null && !(o instanceof Operand<?>)) {
        throw new IllegalArgumentException("'" + key + "' holds a " + o.getClass().getName() + ", not an Operand");
      }
      return (Operand<?>) o;
    }

    /** A map (in key order, unmodifiable) or a record holding {@code flat}. */
    Object rebuild(List<? extends Operand<?>> flat) {
      if (recordClass == null) {
        Map<String, Operand<?>> m = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
          m.put(keys.get(i), flat.get(i));
        }
        return Collections.unmodifiableMap(m);
      }
      return Records.of(recordClass).make(flat.toArray());
    }

    /** Why {@code other} differs from this layout, naming the first key or component that differs. */
    String difference(Layout other, String otherWho, String thisWho) {
      String word = recordClass == null ? "key" : "component";
      for (String k : keys) {
        if (!other.keys.contains(k)) {
          return word + " '" + k + "' is missing from " + otherWho;
        }
      }
      for (String k : other.keys) {
        if (!keys.contains(k)) {
          return word + " '" + k + "' is not in " + thisWho;
        }
      }
      return "both must be the same record class";
    }

    @Override
    public String toString() {
      String names = String.join(", ", keys);
      return recordClass == null ? "{" + names + "}" : recordClass.getSimpleName() + "(" + names + ")";
    }
  }
}
