package dev.polyfn;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader and writer: objects (insertion order), arrays, strings, integers,
 * booleans, null. Enough for Polyfn's own small documents (saved-function metadata, signature
 * profiles); TensorFlow Java brings no JSON library and Polyfn adds no dependency for this.
 */
final class Json {
  /** Deeper nesting is refused: Polyfn's documents are shallow; a recursive reader would overflow. */
  static final int MAX_DEPTH = 64;
  private final String s;
  private int at;
  private int depth;

  Json(String s) {
    this.s = s;
  }

  Object document() {
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
    int start = at;
    while (at < s.length() && (Character.isDigit(s.charAt(at)) || s.charAt(at) == '-')) {
      at++;
    }
    try {
      return Long.valueOf(s.substring(start, at));
    } catch (NumberFormatException e) {
      throw error("expected a value");
    }
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
        if (e == 'u' && at + 4 < s.length()) {
          b.append((char) Integer.parseInt(s.substring(at + 1, at + 5), 16));
          at += 4;
        } else {
          b.append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
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

  /** Parses {@code text}; malformed text is an {@link IllegalArgumentException} saying where. */
  static Object parse(String text) {
    return new Json(text).document();
  }

  /** Writes maps, lists, strings, numbers, booleans and null as JSON text. */
  static String write(Object v) {
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
