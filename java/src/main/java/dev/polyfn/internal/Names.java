package dev.polyfn.internal;

/**
 * Turns a function's display name (any non-blank text, shown as given in errors, logs and
 * {@code toString}) into a name TensorFlow accepts for the operation that calls it in a graph.
 */
public final class Names {
  /**
   * Longer display names are cut: an op name only has to be valid and readable, and makeOpName
   * adds a suffix to keep it unique.
   */
  private static final int MAX_OP_NAME = 128;

  private Names() {}

  /**
   * A valid TensorFlow op name for {@code displayName}: each character outside {@code
   * [A-Za-z0-9_.-]} becomes {@code _} (a character outside the BMP too, as one), and a name that
   * does not start with a letter or digit gets the prefix {@code fn}. The result matches TensorFlow
   * Java's name rule {@code [A-Za-z0-9.][A-Za-z0-9_.\-]*} (and so TensorFlow's own, which also
   * allows {@code /}); it is never empty. Different display names may give the same op name:
   * the graph's name scope makes each op's name unique.
   */
  public static String opName(String displayName) {
    StringBuilder b = new StringBuilder();
    if (displayName != null) {
      displayName.codePoints().limit(MAX_OP_NAME).forEach(c -> b.append(allowed(c) ? (char) c : '_'));
    }
    if (b.length() == 0 || !Character.isLetterOrDigit(b.charAt(0))) {
      // TensorFlow's rule admits '.' first too, but "." and ".." read as paths: start with a letter.
      b.insert(0, "fn");
    }
    return b.toString();
  }

  private static boolean allowed(int c) {
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
        || c == '_' || c == '.' || c == '-';
  }
}
