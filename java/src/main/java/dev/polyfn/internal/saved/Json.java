package dev.polyfn.internal.saved;

import dev.polyfn.internal.Wire;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader and writer: objects (insertion order), arrays, strings, numbers (integers
 * as {@link Long}, others as {@link Double}), booleans, null. Enough for Polyfn's own small documents (saved-function metadata, signature
 * profiles); TensorFlow Java brings no JSON library and Polyfn adds no dependency for this.
 */
public final class Json {
  /**
   * Deeper nesting is refused, as a recursive reader would overflow on hostile text; Polyfn's own
   * documents nest at most this deep (a type of the deepest nest a call accepts: {@link
   * Wire#JSON_MAX_DEPTH}, the same bound as Rust's reader).
   */
  public static final int MAX_DEPTH = Wire.JSON_MAX_DEPTH;
  private final String s;
  private int at;
  private int depth;

  public Json(String s) {
    this.s = s;
  }

  public Object document() {
    Object v = value();
    space();
    if (at != s.length()) {
      throw error("text after the document");
    }
    return v;
  }

  private Object value() {
    space();
    if (at >= s.length()) {
      throw error("unexpected end");
    }
    char c = s.charAt(at);
    if ((c == '{' || c == '[') && depth == MAX_DEPTH) {
      throw error("nested deeper than " + MAX_DEPTH + " levels");
    }
    if (c == '{') {
      at++;
      depth++;
      Map<String, Object> m = new LinkedHashMap<>();
      if (peek('}')) {
        depth--;
        return m;
      }
      do {
        space();
        String k = string();
        expect(':');
        m.put(k, value());
      } while (peek(','));
      expect('}');
      depth--;
      return m;
    }
    if (c == '[') {
      at++;
      depth++;
      List<Object> l = new ArrayList<>();
      if (peek(']')) {
        depth--;
        return l;
      }
      do {
        l.add(value());
      } while (peek(','));
      expect(']');
      depth--;
      return l;
    }
    if (c == '"') {
      return string();
    }
    for (String w : new String[] {"true", "false", "null"}) {
      if (s.startsWith(w, at)) {
        at += w.length();
        return w.equals("null") ? null : Boolean.valueOf(w);
      }
    }
    return number();
  }

  /**
   * A JSON number (RFC 8259): an integer without fraction or exponent is a {@link Long} (when
   * it fits in 64 bits), any other a {@link Double}; what a field must
   * be is for its reader to say.
   */
  private Object number() {
    int start = at;
    if (at < s.length() && s.charAt(at) == '-') {
      at++;
    }
    if (at < s.length() && s.charAt(at) == '0') {
      at++;
    } else if (!digits()) {
      throw error("expected a value");
    }
    boolean integer = true;
    if (at < s.length() && s.charAt(at) == '.') {
      at++;
      integer = false;
      if (!digits()) {
        throw error("expected a digit after the decimal point");
      }
    }
    if (at < s.length() && (s.charAt(at) == 'e' || s.charAt(at) == 'E')) {
      at++;
      integer = false;
      if (at < s.length() && (s.charAt(at) == '+' || s.charAt(at) == '-')) {
        at++;
      }
      if (!digits()) {
        throw error("expected a digit in the exponent");
      }
    }
    String text = s.substring(start, at);
    if (!integer) {
      return Double.valueOf(text);
    }
    try {
      return Long.valueOf(text);
    } catch (NumberFormatException e) {
      return Double.valueOf(text); // beyond 64 bits: no field of Polyfn's takes it as an integer
    }
  }

  private boolean digits() {
    int start = at;
    while (at < s.length() && s.charAt(at) >= '0' && s.charAt(at) <= '9') {
      at++;
    }
    return at > start;
  }

  private String string() {
    if (at >= s.length() || s.charAt(at) != '"') {
      throw error("expected a string");
    }
    StringBuilder b = new StringBuilder();
    for (at++; at < s.length(); at++) {
      char c = s.charAt(at);
      if (c == '"') {
        at++;
        return b.toString();
      }
      if (c == '\\' && at + 1 < s.length()) {
        char e = s.charAt(++at);
        if (e == 'u' && at + 4 < s.length() && s.substring(at + 1, at + 5).matches("[0-9a-fA-F]{4}")) {
          b.append((char) Integer.parseInt(s.substring(at + 1, at + 5), 16));
          at += 4;
        } else if ("\"\\/bfnrt".indexOf(e) >= 0) {
          b.append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
        } else {
          throw error("an invalid escape \\" + e);
        }
      } else {
        b.append(c);
      }
    }
    throw error("unterminated string");
  }

  private boolean peek(char c) {
    space();
    if (at < s.length() && s.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("expected '" + c + "'");
    }
  }

  private void space() {
    while (at < s.length() && Character.isWhitespace(s.charAt(at))) {
      at++;
    }
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("malformed JSON at character " + at + ": " + what);
  }

  /**
   * {@code v} as an integer when it is a JSON number with an integral value ({@code 3}, {@code
   * 3.0}, {@code 3e0}: JSON does not tell integers from other numbers), else null.
   */
  public static Long integer(Object v) {
    if (v instanceof Long n) {
      return n;
    }
    if (v instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p63) {
      return d.longValue();
    }
    return null;
  }

  /** Parses {@code text}; malformed text is an {@link IllegalArgumentException} saying where. */
  public static Object parse(String text) {
    return new Json(text).document();
  }

  /** Writes maps, lists, strings, numbers, booleans and null as JSON text. */
  public static String write(Object v) {
    StringBuilder b = new StringBuilder();
    write(b, v);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof Map<?, ?> m) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) {
          b.append(',');
        }
        first = false;
        quote(b, String.valueOf(e.getKey()));
        b.append(':');
        write(b, e.getValue());
      }
      b.append('}');
    } else if (v instanceof List<?> l) {
      b.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) {
          b.append(',');
        }
        write(b, l.get(i));
      }
      b.append(']');
    } else if (v instanceof Number || v instanceof Boolean) {
      b.append(v);
    } else {
      quote(b, v.toString());
    }
  }

  private static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    b.append('"');
  }
}
