package dev.polyfn.internal.saved;

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
