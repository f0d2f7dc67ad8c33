package dev.polyfn.tests;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A small JSON reader for recorded test data (objects → Map, arrays → List, numbers → Double). */
final class MiniJson {
  private final String s;
  private int i;

  private MiniJson(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    MiniJson p = new MiniJson(text);
    Object v = p.value();
    p.ws();
    if (p.i != text.length()) {
      throw new IllegalArgumentException("trailing text at " + p.i);
    }
    return v;
  }

  /** The JSON object in test resource {@code path} (e.g. {@code "/control_flow_parity.json"}). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> resource(String path) {
    try (InputStream in = MiniJson.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("no test resource " + path);
      }
      return (Map<String, Object>) parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Object value() {
    ws();
    char c = s.charAt(i);
    if (c == '{') {
      Map<String, Object> m = new LinkedHashMap<>();
      i++;
      ws();
      if (s.charAt(i) == '}') {
        i++;
        return m;
      }
      while (true) {
        ws();
        String k = string();
        ws();
        expect(':');
        m.put(k, value());
        ws();
        if (s.charAt(i++) == '}') {
          return m;
        }
      }
    }
    if (c == '[') {
      List<Object> l = new ArrayList<>();
      i++;
      ws();
      if (s.charAt(i) == ']') {
        i++;
        return l;
      }
      while (true) {
        l.add(value());
        ws();
        if (s.charAt(i++) == ']') {
          return l;
        }
      }
    }
    if (c == '"') {
      return string();
    }
    if (s.startsWith("true", i) || s.startsWith("false", i) || s.startsWith("null", i)) {
      String w = s.startsWith("true", i) ? "true" : s.startsWith("false", i) ? "false" : "null";
      i += w.length();
      return w.equals("null") ? null : Boolean.valueOf(w);
    }
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
      i++;
    }
    return Double.valueOf(s.substring(start, i));
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (s.charAt(i) != '"') {
      char c = s.charAt(i++);
      b.append(c == '\\' ? s.charAt(i++) : c);
    }
    i++;
    return b.toString();
  }

  private void expect(char c) {
    if (s.charAt(i++) != c) {
      throw new IllegalArgumentException("expected " + c + " at " + (i - 1));
    }
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }
}
