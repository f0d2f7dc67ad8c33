package dev.polyfn.internal;

import java.util.Map;
import java.util.Set;

/**
 * The Java values that have a text form another JVM reads back as an equal value: boxed numbers,
 * booleans and strings, for a parameter declared as their class or its primitive type. A
 * signature profile and a SavedModel's {@code polyfn.json} keep Java-value arguments in this
 * form (an interning id means something to the JVM that made it only); any other value (an enum,
 * a record, an array) is refused where one would be written.
 *
 * <p>The text is {@code toString()} of a number or boolean, a string quoted: {@code 3}, {@code
 * 2.5}, {@code true}, {@code "relu"}.
 */
public final class JavaValues {
  /** The classes with a text form, all final: {@code toString()} is theirs. */
  private static final Set<Class<?>> RESTORABLE = Set.of(Integer.class, Long.class, Short.class, Byte.class,
      Double.class, Float.class, Boolean.class, String.class);

  /** A primitive parameter (declared {@code int.class}) by name, as {@code Class.getName} writes it. */
  private static final Map<String, Class<?>> PRIMITIVES = Map.of("int", int.class, "long", long.class,
      "short", short.class, "byte", byte.class, "double", double.class, "float", float.class, "boolean", boolean.class);

  private JavaValues() {}

  /**
   * The text of {@code value} for a parameter declared as {@code declared}; null for a value
   * without one (another class, a parameter declared more widely than its value's class, as
   * {@code Object}, whose values another JVM could not tell apart by text) or a string that is not
   * well-formed UTF-16 (it cannot cross to the native side, whose strings are UTF-8, and come back
   * the same).
   */
  public static String text(Class<?> declared, Object value) {
    // A primitive parameter (int.class) holds its box, the class the text reads back as.
    if (value == null || !RESTORABLE.contains(value.getClass()) || (declared != value.getClass() && !declared.isPrimitive())) {
      return null;
    }
    if (value instanceof String s) {
      return wellFormed(s) ? "\"" + s + "\"" : null;
    }
    return value.toString();
  }

  /**
   * The value {@code text} stands for in a parameter declared as class {@code cls} (by name, a
   * primitive's name too); null when {@code cls} has no text form.
   *
   * @throws NumberFormatException when {@code text} is no value of {@code cls}
   */
  public static Object parse(String cls, String text) {
    switch (cls) {
      case "java.lang.Integer", "int": return Integer.valueOf(text);
      case "java.lang.Long", "long": return Long.valueOf(text);
      case "java.lang.Short", "short": return Short.valueOf(text);
      case "java.lang.Byte", "byte": return Byte.valueOf(text);
      case "java.lang.Double", "double": return Double.valueOf(text);
      case "java.lang.Float", "float": return Float.valueOf(text);
      case "java.lang.Boolean", "boolean":
        if (text.equals("true") || text.equals("false")) {
          return Boolean.valueOf(text);
        }
        throw new NumberFormatException(text); // Boolean.valueOf would read any other text as false
      case "java.lang.String":
        if (text.length() >= 2 && text.startsWith("\"") && text.endsWith("\"")) {
          return text.substring(1, text.length() - 1);
        }
        throw new NumberFormatException(text);
      default:
        return null;
    }
  }

  /** The declared class named {@code name} when it has a text form (a box, a primitive, String); else null. */
  public static Class<?> declaredClass(String name) {
    Class<?> primitive = PRIMITIVES.get(name);
    if (primitive != null) {
      return primitive;
    }
    return RESTORABLE.stream().filter(c -> c.getName().equals(name)).findFirst().orElse(null);
  }

  /** Whether {@code s} is well-formed UTF-16 (no unpaired surrogate), so it crosses to UTF-8 and back unchanged. */
  static boolean wellFormed(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return false;
      }
    }
    return true;
  }
}
