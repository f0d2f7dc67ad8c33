package dev.polyfn.internal.saved;

import dev.polyfn.internal.structure.Nests;
import java.util.List;
import java.util.Set;

/**
 * What Python's {@code collections.namedtuple} accepts as a type or field name, which Python's
 * loader calls for every named tuple in an object graph (a name it refuses fails the whole load):
 * an identifier that is no Python keyword, a field name not starting with {@code _}.
 */
final class PythonNames {
  private PythonNames() {}

  /** Python's hard keywords that are valid Java identifiers (and so possible record names). */
  private static final Set<String> KEYWORDS = Set.of("False", "None", "True", "and", "as", "async", "await", "def",
      "del", "elif", "except", "from", "global", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
      "with", "yield", "assert", "break", "class", "continue", "else", "finally", "for", "if", "import", "return",
      "try", "while");

  /**
   * Refuses parameter names Python's loader cannot take for the restored {@code tf.function} of
   * {@code function}: a keyword, or two names that {@link #argName} makes the same.
   */
  static void checkParameters(String function, List<String> names) {
    checkArgNames(names, name -> name, new Refusal<>() {
      @Override
      public String keyword(String name, String python) {
        return "cannot save '" + function + "': parameter '" + name + "' would be Python's parameter '" + python
            + "', a Python keyword, so Python's tf.saved_model.load would refuse the SavedModel; rename it";
      }

      @Override
      public String clash(String before, String name, String python) {
        return "cannot save '" + function + "': parameters '" + before + "' and '" + name + "' would both be Python's"
            + " parameter '" + python + "' (Python names a parameter that does not start with a letter arg_<name>, and"
            + " replaces other characters with _), so Python's tf.saved_model.load would refuse the SavedModel;"
            + " rename one of them";
      }
    });
  }

  /** What {@link #checkArgNames} says of a name Python's loader would refuse. */
  interface Refusal<T> {
    /** {@code item}'s name would be Python's parameter {@code python}, a keyword. */
    String keyword(T item, String python);

    /** {@code before} and {@code item}, in that order, would both be Python's parameter {@code python}. */
    String clash(T before, T item, String python);
  }

  /**
   * Refuses {@code items} whose names ({@code name}) Python's loader cannot take as parameter names
   * of one function: one that {@link #argName} makes a keyword, or two it makes the same. The
   * first refused item, in order, is named; {@code refusal} says how.
   */
  static <T> void checkArgNames(List<T> items, java.util.function.Function<T, String> name, Refusal<T> refusal) {
    java.util.Map<String, T> seen = new java.util.HashMap<>();
    for (T item : items) {
      String python = argName(name.apply(item));
      if (keyword(python)) {
        throw new IllegalArgumentException(refusal.keyword(item, python));
      }
      T before = seen.putIfAbsent(python, item);
      if (before != null) {
        throw new IllegalArgumentException(refusal.clash(before, item, python));
      }
    }
  }

  /** Whether {@code s} is one of Python's hard keywords, which no parameter may be named. */
  static boolean keyword(String s) {
    return KEYWORDS.contains(s);
  }

  /** Whether {@code s} is a Python identifier (ASCII letters, digits, {@code _}) and no keyword. */
  static boolean identifier(String s) {
    if (s == null || s.isEmpty() || Character.isDigit(s.charAt(0)) || KEYWORDS.contains(s)) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!(c < 128 && (Character.isLetterOrDigit(c) || c == '_'))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The parameter name Python gives signature key {@code key} ({@code sanitize_arg_name} in
   * TensorFlow's function_type.py): a character other than a letter or digit becomes {@code _},
   * and a name not starting with a letter gets {@code arg_} in front ({@code _b} is {@code
   * arg__b}). Signature keys are already ASCII letters, digits and {@code _} (where Java's and
   * Python's notions of a letter agree), so for them only the prefix changes; a parameter's own
   * name (checked at save) may change in other characters too.
   */
  static String argName(String key) {
    StringBuilder b = new StringBuilder();
    key.codePoints().forEach(c -> b.appendCodePoint(Character.isLetterOrDigit(c) ? c : '_'));
    return !b.isEmpty() && Character.isLetter(b.codePointAt(0)) ? b.toString() : "arg_" + b;
  }

  /**
   * The order Python passes a signature's flat inputs in, given their keys: sorted by {@link
   * #argName} in code point order ({@code FunctionType.unpack_inputs} sorts keyword-only
   * parameters by name); {@code _b} comes after {@code a}, as {@code arg__b}.
   */
  static java.util.Comparator<String> argOrder() {
    return (a, b) -> Nests.compareCodePoints(argName(a), argName(b));
  }

  /** The named tuple's type name for record class {@code className}: its simple name, else "Record". */
  static String tupleName(String className) {
    String simple = className == null ? "" : className.substring(Math.max(className.lastIndexOf('.'), className.lastIndexOf('$')) + 1);
    return identifier(simple) && !simple.startsWith("_") ? simple : "Record";
  }

  /** Whether every name in {@code names} can be a named tuple field. */
  static boolean fields(List<Object> names) {
    return names.stream().allMatch(n -> n instanceof String s && identifier(s) && !s.startsWith("_"));
  }
}
