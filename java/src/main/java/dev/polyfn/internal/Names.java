package dev.polyfn.internal;

/** PLACEHOLDER (lead): replaced by the Java helper's Names at merge. */
public final class Names {
  private Names() {}

  /** A valid TensorFlow operation name for a function's display name. */
  public static String opName(String displayName) {
    String s = displayName.replaceAll("[^A-Za-z0-9_.\\-]", "_");
    return s.isEmpty() || !Character.isLetterOrDigit(s.charAt(0)) ? "f" + s : s;
  }
}
