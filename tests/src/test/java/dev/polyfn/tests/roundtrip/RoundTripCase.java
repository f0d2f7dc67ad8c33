package dev.polyfn.tests.roundtrip;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * One seeded case of the SavedModel round-trip fuzzer: a function's parameters (each a template
 * that every traced signature shares: kind, structure, dtype family per leaf), the terms its body
 * computes, its captured variables, and the signatures traced (one value tree per parameter each).
 * Generated from a small grammar by {@link #generate}; {@link RoundTripBody} runs it in Java and
 * writes the same body in Python. {@code dflt}: the default of the trailing DEFAULT parameter.
 */
@SuppressWarnings("unchecked")
public record RoundTripCase(long seed, List<Param> params, List<Term> terms, List<Leaf> variables, List<Signature> signatures,
    Leaf dflt) {
  /** Parameter kinds, as a Polyfn body declares them. */
  public enum Kind { TENSOR, LIST, MAP, NEST, RECORD, DEFAULT, JAVA }

  /** A structure template: a leaf of a dtype family, a list, a map (keys sorted as Python sorts them). */
  public sealed interface Tpl permits TLeaf, TList, TMap {}

  /** A tensor leaf of family {@code float}, {@code int}, {@code bool} or {@code string}. */
  public record TLeaf(String family) implements Tpl {}

  /** A list; {@code varLen}: each signature takes 1..size elements (all of the first's family). */
  public record TList(List<Tpl> elements, boolean varLen) implements Tpl {}

  /** A map of fixed keys. */
  public record TMap(TreeMap<String, Tpl> entries) implements Tpl {}

  /** A parameter; {@code tpl} null for RECORD (a {@link Feat}) and JAVA (an {@code Integer}). */
  public record Param(String name, Kind kind, Tpl tpl) {}

  /**
   * A body term: op {@code op} applied to the leaf at {@code path} of parameter {@code param} (list
   * indices as Integer, map keys and record components as String); the output {@code o<i>}.
   */
  public record Term(int param, List<Object> path, String family, String op) {}

  /** A realized tensor: dtype (Python's name), dims, the dims traced (-1 unknown, null unknown rank), values. */
  public record Leaf(String dtype, long[] dims, long[] specDims, Object[] values) {}

  /**
   * One traced signature: per parameter a value tree (Leaf, List, TreeMap; a record as a Map with
   * its two leaves; a Java value as Integer); {@code bySpecs}: traced from TensorSpecs ahead of
   * the call; {@code omitDefault}: the call leaves the defaulted parameter out.
   */
  public record Signature(List<Object> values, boolean bySpecs, boolean omitDefault) {}

  private static final String[] KEYS = {"a", "b", "c", "Beta", "x-y"};
  private static final String[] STRINGS = {"", "a", "tf", "h\u00e9llo", "x y", "\u4e2d"};

  /** The case of {@code seed}. */
  public static RoundTripCase generate(long seed) {
    Random r = new Random(seed);
    List<Param> params = new ArrayList<>();
    int n = 1 + r.nextInt(4);
    boolean withDefault = r.nextInt(4) == 0;
    boolean withJava = r.nextInt(4) == 0; // saved as Python literals since 2026-11-28: checked often
    for (int i = 0; i < n; i++) {
      Kind k = Kind.values()[r.nextInt(5)];
      params.add(new Param(prefix(k) + i, k, template(k, r)));
    }
    if (withJava) {
      params.add(new Param("k" + params.size(), Kind.JAVA, null));
    }
    if (withDefault) { // last: Python allows defaults on trailing parameters only
      params.add(new Param("d" + params.size(), Kind.DEFAULT, new TLeaf("float")));
    }
    List<Term> terms = new ArrayList<>();
    for (int i = 0; i < params.size(); i++) {
      Param p = params.get(i);
      if (p.kind() == Kind.JAVA) {
        continue;
      }
      for (int t = r.nextInt(3); t > 0; t--) {
        List<Object> path = new ArrayList<>();
        String family = stablePath(p, r, path);
        terms.add(new Term(i, path, family, op(family, r)));
      }
    }
    List<Leaf> variables = new ArrayList<>();
    for (int v = r.nextInt(3); v > 0; v--) {
      String dtype = new String[] {"float32", "float64", "int32"}[r.nextInt(3)];
      long[] dims = r.nextBoolean() ? new long[0] : new long[] {1 + r.nextInt(3)};
      variables.add(leaf(dtype, dims, dims, r));
    }
    List<Signature> sigs = new ArrayList<>();
    long[] dfltDims = r.nextBoolean() ? new long[0] : new long[] {2};
    Leaf dflt = leaf("float32", dfltDims, dfltDims, r);
    for (int s = 2 + r.nextInt(2); s > 0; s--) {
      boolean bySpecs = r.nextBoolean();
      List<Object> values = new ArrayList<>();
      for (Param p : params) {
        values.add(switch (p.kind()) {
          case JAVA -> 1 + r.nextInt(3);
          case DEFAULT -> leaf("float32", dfltDims, dfltDims, r);
          case RECORD -> {
            Map<String, Object> rec = new TreeMap<>();
            long[] dense = dims(r);
            long[] ids = dims(r);
            rec.put("dense", leaf("float32", dense, dense, r));
            rec.put("ids", leaf("int64", ids, ids, r));
            yield rec;
          }
          default -> realize(p.tpl(), bySpecs, r);
        });
      }
      sigs.add(new Signature(values, bySpecs, withDefault && r.nextBoolean()));
    }
    return new RoundTripCase(seed, params, terms, variables, sigs, withDefault ? dflt : null);
  }

  private static String prefix(Kind k) {
    return switch (k) {
      case TENSOR -> "x";
      case LIST -> "xs";
      case MAP -> "feats";
      case NEST -> "n";
      default -> "batch";
    };
  }

  private static Tpl template(Kind k, Random r) {
    return switch (k) {
      case TENSOR -> new TLeaf(family(r));
      case LIST -> {
        String f = family(r);
        List<Tpl> e = new ArrayList<>();
        for (int i = 1 + r.nextInt(3); i > 0; i--) {
          e.add(new TLeaf(f));
        }
        yield new TList(e, r.nextBoolean());
      }
      case MAP -> map(r, 0);
      case NEST -> r.nextBoolean() ? map(r, 1 + r.nextInt(3)) : new TList(List.of(nest(r, 1 + r.nextInt(3)), nest(r, 2)), false);
      default -> null;
    };
  }

  private static TMap map(Random r, int depth) {
    TreeMap<String, Tpl> m = new TreeMap<>(RoundTripCase::codePointOrder);
    for (int i = 1 + r.nextInt(3); i > 0; i--) {
      m.put(KEYS[r.nextInt(KEYS.length)], depth <= 0 ? new TLeaf(family(r)) : nest(r, depth));
    }
    return new TMap(m);
  }

  /** A nest of lists and maps {@code depth} levels deep (a leaf at 0). */
  private static Tpl nest(Random r, int depth) {
    if (depth <= 0 || r.nextInt(5) == 0) {
      return new TLeaf(family(r));
    }
    if (r.nextBoolean()) {
      return map(r, depth - 1);
    }
    List<Tpl> e = new ArrayList<>();
    for (int i = 1 + r.nextInt(2); i > 0; i--) {
      e.add(nest(r, depth - 1));
    }
    return new TList(e, false);
  }

  /** Python sorts dict keys by code point; Java's String order is by UTF-16 unit (the same for these keys). */
  static int codePointOrder(String a, String b) {
    return java.util.Arrays.compare(a.codePoints().toArray(), b.codePoints().toArray());
  }

  private static String family(Random r) {
    int f = r.nextInt(10);
    return f < 4 ? "float" : f < 7 ? "int" : f < 8 ? "bool" : "string";
  }

  /** A path to a leaf every signature of {@code p} has; its family. */
  private static String stablePath(Param p, Random r, List<Object> path) {
    if (p.kind() == Kind.RECORD) {
      boolean dense = r.nextBoolean();
      path.add(dense ? "dense" : "ids");
      return dense ? "float" : "int";
    }
    Tpl t = p.tpl();
    while (!(t instanceof TLeaf leaf)) {
      if (t instanceof TList l) {
        int i = l.varLen() ? 0 : r.nextInt(l.elements().size());
        path.add(i);
        t = l.elements().get(i);
      } else {
        List<String> keys = new ArrayList<>(((TMap) t).entries().keySet());
        String k = keys.get(r.nextInt(keys.size()));
        path.add(k);
        t = ((TMap) t).entries().get(k);
      }
    }
    return leaf.family();
  }

  private static String op(String family, Random r) {
    String[] ops = switch (family) {
      case "float" -> new String[] {"sq", "abs", "affine", "sum", "mean", "tanh"};
      case "int" -> new String[] {"sq", "abs", "affine", "sum", "floordiv"};
      case "bool" -> new String[] {"not", "any"};
      default -> new String[] {"len", "join"};
    };
    return ops[r.nextInt(ops.length)];
  }

  private static Object realize(Tpl t, boolean bySpecs, Random r) {
    if (t instanceof TLeaf l) {
      String dtype = switch (l.family()) {
        case "float" -> r.nextBoolean() ? "float32" : "float64";
        case "int" -> r.nextBoolean() ? "int32" : "int64";
        default -> l.family();
      };
      long[] dims = dims(r);
      return leaf(dtype, dims, bySpecs ? spec(dims, r) : dims, r);
    }
    if (t instanceof TList l) {
      int n = l.varLen() ? 1 + r.nextInt(l.elements().size()) : l.elements().size();
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        out.add(realize(l.elements().get(i), bySpecs, r));
      }
      return out;
    }
    TreeMap<String, Object> out = new TreeMap<>(RoundTripCase::codePointOrder);
    ((TMap) t).entries().forEach((k, v) -> out.put(k, realize(v, bySpecs, r)));
    return out;
  }

  /** Rank 0 to 2, dims 1 to 3 (0 now and then). */
  private static long[] dims(Random r) {
    long[] d = new long[r.nextInt(3)];
    for (int i = 0; i < d.length; i++) {
      d[i] = r.nextInt(20) == 0 ? 0 : 1 + r.nextInt(3);
    }
    return d;
  }

  /** The traced dims of {@code dims}: some unknown, now and then an unknown rank. */
  private static long[] spec(long[] dims, Random r) {
    if (r.nextInt(12) == 0) {
      return null;
    }
    long[] s = dims.clone();
    for (int i = 0; i < s.length; i++) {
      if (r.nextInt(3) == 0) {
        s[i] = -1;
      }
    }
    return s;
  }

  /**
   * The first signature with one leaf made float16 (a dtype no signature takes), the first of a
   * tensor, list, map or nest parameter; without one, the record's dense leaf of rank 4.
   */
  public Signature unmatched() {
    Signature first = signatures.get(0);
    List<Object> values = new ArrayList<>(first.values());
    for (int i = 0; i < params.size(); i++) {
      Kind k = params.get(i).kind();
      if (k == Kind.TENSOR || k == Kind.LIST || k == Kind.MAP || k == Kind.NEST) {
        values.set(i, halfFirstLeaf(values.get(i), new boolean[1]));
        return new Signature(values, false, first.omitDefault());
      }
    }
    for (int i = 0; i < params.size(); i++) {
      if (params.get(i).kind() == Kind.RECORD) {
        Map<String, Object> rec = new TreeMap<>((Map<String, Object>) values.get(i));
        rec.put("dense", new Leaf("float32", new long[] {1, 1, 1, 1}, new long[] {1, 1, 1, 1}, new Object[] {1f}));
        values.set(i, rec);
      }
    }
    return new Signature(values, false, first.omitDefault());
  }

  private static Object halfFirstLeaf(Object v, boolean[] done) {
    if (done[0]) {
      return v;
    }
    if (v instanceof Leaf l) {
      done[0] = true;
      Object[] halves = new Object[l.values().length];
      java.util.Arrays.fill(halves, 0.5f);
      return new Leaf("float16", l.dims(), l.dims(), halves);
    }
    if (v instanceof List<?> list) {
      List<Object> out = new ArrayList<>();
      list.forEach(e -> out.add(halfFirstLeaf(e, done)));
      return out;
    }
    TreeMap<String, Object> out = new TreeMap<>(RoundTripCase::codePointOrder);
    ((Map<String, Object>) v).forEach((k, e) -> out.put(k, halfFirstLeaf(e, done)));
    return out;
  }

  /** A leaf of random values. */
  static Leaf leaf(String dtype, long[] dims, long[] specDims, Random r) {
    long size = 1;
    for (long d : dims) {
      size *= d;
    }
    Object[] values = new Object[(int) size];
    for (int i = 0; i < values.length; i++) {
      values[i] = switch (dtype) {
        case "float32" -> (float) (r.nextDouble() * 6 - 3);
        case "float64" -> r.nextDouble() * 6 - 3;
        case "int32" -> r.nextInt(19) - 9;
        case "int64" -> (long) (r.nextInt(19) - 9);
        case "bool" -> r.nextBoolean();
        default -> STRINGS[r.nextInt(STRINGS.length)];
      };
    }
    return new Leaf(dtype, dims, specDims, values);
  }
}
