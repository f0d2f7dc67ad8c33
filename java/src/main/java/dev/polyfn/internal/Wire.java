package dev.polyfn.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Java side of the wire contract with Polyfn's native library: every constant that crosses
 * the boundary, defined once here and once in Rust ({@code polyfn_core::wire}). A test compares
 * the two tables ({@link Native#wireNames()}, {@link Native#wireValues()}) field by field, so a
 * change made on one side only fails the build.
 *
 * <p>The facts buffer (one call's argument types) is a flat {@code long[]}; each value starts with
 * a tag:
 *
 * <pre>
 * TAG_TENSOR   [1, dtype, rank, d0 .. d(rank-1)]   rank RANK_UNKNOWN: unknown rank; d DIM_UNKNOWN: unknown size
 * TAG_LIST     [2, length, element...]
 * TAG_MAP      [3, size, (keyId, value)...]        keys interned with Native.registerString
 * TAG_LITERAL  [4, literalId]                      Java values interned with Native.registerLiteral
 * TAG_VARIABLE [5, dtype, rank, dims..., alias]    alias: which distinct variable of the call it is; rank and
 *                                                  dims as TAG_TENSOR's (a restored Python variable's declared shape)
 * </pre>
 *
 * Placeholder specs come back as {@code [count, (dtype, rank, dims...)...]}; a declared
 * parameter's are followed by its composites' traced static shapes, {@code [count, (rank, dims...)...]}.
 */
public final class Wire {
  private Wire() {}

  /**
   * The Rust side's table, by name, for the test that compares it with this class's constants.
   *
   * @return every Rust wire constant by its name
   */
  public static Map<String, Long> nativeTable() {
    String[] names = Native.wireNames();
    long[] values = Native.wireValues();
    Map<String, Long> table = new LinkedHashMap<>();
    for (int i = 0; i < names.length; i++) {
      table.put(names[i], values[i]);
    }
    return table;
  }

  public static final long TAG_TENSOR = 1;
  public static final long TAG_LIST = 2;
  public static final long TAG_MAP = 3;
  public static final long TAG_LITERAL = 4;
  public static final long TAG_VARIABLE = 5;
  public static final long TAG_RECORD = 6;
  public static final long TAG_COMPOSITE = 7;

  /** Parameter kinds, as {@code polyfn_core::ParamKind}. */
  public static final int KIND_TENSOR = 0;
  public static final int KIND_LIST = 1;
  public static final int KIND_MAP = 2;
  public static final int KIND_JAVA = 3;
  public static final int KIND_VARIABLE = 4;
  public static final int KIND_NEST = 5;

  /** A rank that is not known (in facts and placeholder specs). */
  public static final int RANK_UNKNOWN = -1;
  /** A dimension whose size is not known. */
  public static final long DIM_UNKNOWN = -1;
  /** The rank passed for a parameter declared without a shape. */
  public static final int SHAPE_UNDECLARED = -2;

  /** Indices of the statistics array. */
  public static final int STAT_EXACT_HITS = 0;
  public static final int STAT_INEXACT_HITS = 1;
  public static final int STAT_MISSES = 2;
  public static final int STAT_TRACES = 3;
  public static final int STAT_EVICTIONS = 4;
  public static final int STAT_TOTAL_TRACE_NANOS = 5;
  public static final int STAT_LAST_TRACE_NANOS = 6;
  public static final int STAT_TOTAL_FIRST_RUN_NANOS = 7;
  public static final int STAT_COUNT = 8;

  /** TensorFlow's dtype code of resource handles (variables), which TensorFlow Java cannot type. */
  public static final int DT_RESOURCE = 20;
  /** TensorFlow's limit on a tensor's rank. */
  public static final int MAX_RANK = 254;
  /**
   * A call's result starts with one long: the outputs key in its low 32 bits and, above this
   * shift, how many output addresses follow it in this call's result. After the addresses, each
   * output in turn is described by its dtype code, rank and dims: {@code [head, address × n,
   * (dtype, rank, dim × rank) × n]}.
   */
  public static final int RESULT_COUNT_SHIFT = 32;
  /** How deep the facts of one argument may nest (Rust decodes no deeper). */
  public static final int NEST_MAX_DEPTH = 64;
  /**
   * How deep a JSON document Polyfn reads may nest: a type takes two levels per level of nesting,
   * under a few levels of document, so a type as deep as {@link #NEST_MAX_DEPTH} allows fits.
   */
  public static final int JSON_MAX_DEPTH = 2 * NEST_MAX_DEPTH + 16;
}
