package dev.polyfn.internal;

import java.lang.reflect.Array;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Gives map keys and Java-value arguments the small integer ids that call facts carry, registering
 * each new one with the function's Rust state once. Java values are keyed by {@code equals} and
 * {@code hashCode} together with their parameter's declared class: every distinct value is kept
 * for the life of the function (and costs a trace), so Java-value parameters suit a few values
 * (flags, modes, sizes), not data.
 */
public final class Interner {
  private static final int MAX_REPR = 80;

  private final FunctionHandle function;
  private final Map<String, Integer> strings = new ConcurrentHashMap<>();
  private final Map<LiteralKey, Integer> literals = new ConcurrentHashMap<>();
  /** The literals by id, for a save or trace cache entry that writes the values its types name by id. */
  private final Map<Integer, LiteralKey> literalsById = new ConcurrentHashMap<>();
  private int next;

  public Interner(FunctionHandle function) {
    this.function = function;
  }

  /** The id of map key {@code s}. */
  public int string(String s) {
    Integer id = strings.get(s);
    if (id != null) {
      return id;
    }
    synchronized (this) {
      return strings.computeIfAbsent(s, k -> {
        int fresh = next++;
        Native.registerString(function.address(), fresh, k);
        return fresh;
      });
    }
  }

  /** The id of Java value {@code value} for a parameter declared as {@code declared}. */
  public int literal(Class<?> declared, Object value) {
    LiteralKey key = new LiteralKey(declared, value);
    Integer id = literals.get(key);
    if (id != null) {
      return id;
    }
    synchronized (this) {
      Integer raced = literals.get(key);
      if (raced != null) {
        return raced;
      }
      int fresh = next++;
      Native.registerLiteral(function.address(), fresh, repr(value), declared.getName(), JavaValues.text(declared, value));
      LiteralKey kept = key.kept(); // an array is copied here, once, not on every call's lookup
      literalsById.put(fresh, kept);
      literals.put(kept, fresh);
      return fresh;
    }
  }

  /**
   * The text of a Java value in explanations and function types: its {@code toString()}, quoted
   * for a string, cut to {@value #MAX_REPR} characters. Dispatch never depends on it (values are
   * keyed by {@code equals}/{@code hashCode}), so a {@code toString()} that throws must not fail
   * the call: it falls back to the class name and identity hash. A null text reads {@code null},
   * as in string concatenation.
   */
  public static String repr(Object value) {
    if (value == null) {
      return "null";
    }
    String s;
    try {
      s = value instanceof String ? "\"" + value + "\"" : String.valueOf(value.toString()); // null: "null"
    } catch (Throwable t) { // user code: any failure (even a StackOverflowError) only costs the text
      s = null;
    }
    if (s == null) {
      s = value.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(value));
    }
    if (s.length() <= MAX_REPR) {
      return s;
    }
    int cut = MAX_REPR - 3;
    if (Character.isHighSurrogate(s.charAt(cut - 1))) {
      cut--; // never split a surrogate pair into an unpaired half
    }
    return s.substring(0, cut) + "...";
  }

  /**
   * The Java value interned as {@code id} (the copy kept for an array: not to be changed), or null
   * for none: a save writes the values its traced types name by id.
   */
  public Object value(int id) {
    LiteralKey k = literalsById.get(id);
    return k == null ? null : k.value;
  }

  /** The declared class of the Java value interned as {@code id}, or null for none. */
  public Class<?> declaredClass(int id) {
    LiteralKey k = literalsById.get(id);
    return k == null ? null : k.declared;
  }

  /**
   * Why map key {@code key} cannot be used, or null: one that is not well-formed UTF-16 (an
   * unpaired surrogate) reaches the native side, whose strings are UTF-8, as U+FFFD, so two keys
   * could become one and their order (which pairs values with placeholders) would differ.
   */
  public static String malformedKey(String key) {
    return JavaValues.wellFormed(key) ? null : "map key " + repr(key) + " is not well-formed UTF-16 (it holds an unpaired "
        + "surrogate); expected a string of whole characters";
  }

  /**
   * A Java value's identity for dispatch: its parameter's declared class, its own class (a
   * subclass whose inherited {@code equals} accepts its parent is another value) and the value by
   * {@code equals}; an array by its elements, kept as a copy taken now (an array's own {@code
   * equals} is identity, so a reused array changed between calls hit the trace of its old
   * contents, and a fresh one per call retraced every call).
   */
  private static final class LiteralKey {
    final Class<?> declared;
    final Class<?> runtime;
    final Object value;

    /** The key of a call's value: the caller's object itself (a lookup copies nothing). */
    LiteralKey(Class<?> declared, Object value) {
      this.declared = declared;
      this.runtime = value == null ? null : value.getClass();
      this.value = value;
    }

    /** The key to keep in the table: an array copied, so that the caller changing it changes no key. */
    LiteralKey kept() {
      return runtime != null && runtime.isArray() ? new LiteralKey(declared, deepCopy(value)) : this;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof LiteralKey k && k.declared == declared && k.runtime == runtime
          && Objects.deepEquals(k.value, value);
    }

    @Override
    public int hashCode() {
      int h = runtime != null && runtime.isArray() ? Arrays.deepHashCode(new Object[] {value}) : Objects.hashCode(value);
      return (declared.hashCode() * 31 + Objects.hashCode(runtime)) * 31 + h;
    }

    /** A copy of an array and of every array inside it (other elements shared). */
    private static Object deepCopy(Object array) {
      int n = Array.getLength(array);
      Object copy = Array.newInstance(array.getClass().getComponentType(), n);
      for (int i = 0; i < n; i++) {
        Object e = Array.get(array, i);
        Array.set(copy, i, e != null && e.getClass().isArray() ? deepCopy(e) : e);
      }
      return copy;
    }
  }
}
