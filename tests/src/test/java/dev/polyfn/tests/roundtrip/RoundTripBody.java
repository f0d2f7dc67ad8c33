package dev.polyfn.tests.roundtrip;

import dev.polyfn.MapBody;
import dev.polyfn.Nest;
import dev.polyfn.RecordInput;
import dev.polyfn.Variable;
import dev.polyfn.tests.roundtrip.RoundTripCase.Kind;
import dev.polyfn.tests.roundtrip.RoundTripCase.Param;
import dev.polyfn.tests.roundtrip.RoundTripCase.TLeaf;
import dev.polyfn.tests.roundtrip.RoundTripCase.Term;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TString;
import org.tensorflow.types.family.TFloating;
import org.tensorflow.types.family.TIntegral;
import org.tensorflow.types.family.TType;

/**
 * A case's body twice: as a Polyfn {@link MapBody} and as the source of the Python {@code
 * tf.function} computing the same outputs ({@code o<i>} per term, {@code w<j>} per variable, and
 * {@code mix}: every leaf's sum weighted by its place in Python's flattening order, so a leaf fed
 * to the wrong input shows).
 */
public final class RoundTripBody {
  private RoundTripBody() {}

  /** The Polyfn body of {@code c}, reading {@code vars}; {@code dflt} the default tensor (or null). */
  public static MapBody body(RoundTripCase c, List<Variable<?>> vars, TFloat32 dflt) {
    return (tf, in) -> {
      List<Object> trees = new ArrayList<>();
      Integer k = null;
      for (Param p : c.params()) {
        switch (p.kind()) {
          case TENSOR -> trees.add(in.input(p.name(), family(((TLeaf) p.tpl()).family())));
          case LIST -> trees.add(new ArrayList<Object>(in.list(p.name())));
          case MAP -> trees.add(sorted(in.map(p.name())));
          case NEST -> trees.add(tree(in.nest(p.name())));
          case RECORD -> {
            RecordInput<Feat> b = in.record(p.name(), Feat.class);
            Map<String, Object> m = new TreeMap<>();
            m.put("dense", b.get(Feat::dense));
            m.put("ids", b.get(Feat::ids));
            trees.add(m);
          }
          case DEFAULT -> trees.add(in.input(p.name(), TFloat32.class, dflt));
          case JAVA -> {
            k = in.javaInput(p.name(), Integer.class);
            trees.add(k);
          }
        }
      }
      Map<String, Operand<?>> out = new LinkedHashMap<>();
      for (int i = 0; i < c.terms().size(); i++) {
        Term t = c.terms().get(i);
        out.put("o" + i, apply(tf, t.op(), resolve(trees.get(t.param()), t.path())));
      }
      List<Operand<?>> leaves = new ArrayList<>();
      for (Object t : trees) {
        flatten(t, leaves);
      }
      Operand<TFloat64> total = tf.constant(0.0);
      for (int i = 0; i < leaves.size(); i++) {
        total = tf.math.add(total, tf.math.mul(sumAll(tf, leaves.get(i)), tf.constant((double) (i + 1))));
      }
      for (int j = 0; j < vars.size(); j++) {
        Operand<?> v = vars.get(j).read(tf);
        total = tf.math.add(total, tf.math.mul(sumAll(tf, v), tf.constant(100.0 * (j + 1))));
        out.put("w" + j, apply(tf, "affine", v));
      }
      if (k != null) {
        total = tf.math.mul(total, tf.constant((double) k));
      }
      out.put("mix", total);
      return out;
    };
  }

  private static Class<? extends TType> family(String f) {
    return switch (f) {
      case "float" -> TFloating.class;
      case "int" -> TIntegral.class;
      case "bool" -> TBool.class;
      default -> TString.class;
    };
  }

  private static Map<String, Object> sorted(Map<String, ? extends Object> m) {
    Map<String, Object> out = new TreeMap<>(RoundTripCase::codePointOrder);
    out.putAll(m);
    return out;
  }

  private static Object tree(Nest n) {
    if (n.isList()) {
      List<Object> out = new ArrayList<>();
      n.elements().forEach(e -> out.add(tree(e)));
      return out;
    }
    if (n.isMap()) {
      Map<String, Object> out = new TreeMap<>(RoundTripCase::codePointOrder);
      n.entries().forEach((key, e) -> out.put(key, tree(e)));
      return out;
    }
    return n.operand();
  }

  private static Operand<?> resolve(Object tree, List<Object> path) {
    Object at = tree;
    for (Object step : path) {
      at = step instanceof Integer i ? ((List<?>) at).get(i) : ((Map<?, ?>) at).get(step);
    }
    return (Operand<?>) at;
  }

  private static void flatten(Object tree, List<Operand<?>> out) {
    if (tree instanceof Operand<?> o) {
      out.add(o);
    } else if (tree instanceof List<?> l) {
      l.forEach(e -> flatten(e, out));
    } else if (tree instanceof Map<?, ?> m) {
      m.values().forEach(e -> flatten(e, out));
    }
  }

  /** The sum of all elements as float64; a string's lengths. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Operand<TFloat64> sumAll(Ops tf, Operand<?> x) {
    Operand o = x.type() == TString.class ? tf.strings.stringLength((Operand<TString>) x) : x;
    Operand<TFloat64> d = tf.dtypes.cast(o, TFloat64.class);
    return tf.sum(tf.reshape(d, tf.constant(new int[] {-1})), tf.constant(0));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Operand<?> apply(Ops tf, String op, Operand x) {
    return switch (op) {
      case "sq" -> tf.math.square(x);
      case "abs" -> tf.math.abs(x);
      case "affine" -> tf.math.add(tf.math.mul(x, tf.dtypes.cast(tf.constant(3), x.type())), tf.dtypes.cast(tf.constant(1), x.type()));
      case "sum" -> tf.sum(tf.reshape(x, tf.constant(new int[] {-1})), tf.constant(0));
      case "mean" -> tf.math.mean(tf.reshape(x, tf.constant(new int[] {-1})), tf.constant(0));
      case "tanh" -> tf.math.tanh(x);
      case "floordiv" -> tf.math.floorDiv(x, tf.dtypes.cast(tf.constant(2), x.type()));
      case "not" -> tf.math.logicalNot(x);
      case "any" -> tf.reduceAny(tf.reshape(x, tf.constant(new int[] {-1})), tf.constant(0));
      case "len" -> tf.strings.stringLength(x);
      case "join" -> tf.strings.join(List.of(x, tf.constant("!")));
      default -> throw new IllegalArgumentException(op);
    };
  }

  /**
   * The Python source of the same function: {@code def make(V, D)} returning the {@code
   * tf.function}, for variables {@code V} (a list of {@code tf.Variable}) and default tensor
   * {@code D}; the ops are roundtrip_check.py's {@code OPS}, each the Python of {@link #apply}.
   */
  public static String python(RoundTripCase c) {
    StringBuilder b = new StringBuilder("def make(V, D):\n  @tf.function\n  def f" + c.seed() + "(");
    List<String> names = new ArrayList<>();
    for (Param p : c.params()) {
      names.add(p.name());
      b.append(names.size() > 1 ? ", " : "").append(p.name()).append(p.kind() == Kind.DEFAULT ? "=D" : "");
    }
    b.append("):\n    out = {}\n");
    for (int i = 0; i < c.terms().size(); i++) {
      Term t = c.terms().get(i);
      Param p = c.params().get(t.param());
      StringBuilder x = new StringBuilder(p.name());
      for (Object step : t.path()) {
        x.append(p.kind() == Kind.RECORD ? "." + step : step instanceof Integer ? "[" + step + "]" : "[" + quote((String) step) + "]");
      }
      b.append("    out['o").append(i).append("'] = OPS['").append(t.op()).append("'](").append(x).append(")\n");
    }
    List<String> structured = c.params().stream().filter(p -> p.kind() != Kind.JAVA).map(Param::name).toList();
    b.append("    total = tf.constant(0.0, tf.float64)\n")
        .append("    for i, t in enumerate(tf.nest.flatten([").append(String.join(", ", structured)).append("])):\n")
        .append("      total = total + SUM(t) * float(i + 1)\n");
    for (int j = 0; j < c.variables().size(); j++) {
      b.append("    total = total + SUM(V[").append(j).append("]) * ").append(100.0 * (j + 1)).append("\n");
      b.append("    out['w").append(j).append("'] = OPS['affine'](V[").append(j).append("])\n");
    }
    for (Param p : c.params()) {
      if (p.kind() == Kind.JAVA) {
        b.append("    total = total * float(").append(p.name()).append(")\n");
      }
    }
    return b.append("    out['mix'] = total\n    return out\n  return f").append(c.seed()).append("\n").toString();
  }

  private static String quote(String s) {
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
