package dev.polyfn.internal;

import java.util.Arrays;
import org.tensorflow.ndarray.Shape;

/**
 * Shapes compared as values, the way Python's {@code TensorShape} compares them: TensorFlow Java's
 * {@link Shape#equals} is false for two shapes with an unknown dimension or rank, even {@code
 * [-1]} and {@code [-1]} (only an instance equals itself), so a declaration read back from a file
 * never equals the one the body made, and two equal {@code TensorSpec}s would not be equal.
 */
public final class ShapeValues {
  private ShapeValues() {}

  /** Whether {@code a} and {@code b} are both null, both of unknown rank, or of the same dimensions (-1 unknown). */
  public static boolean equal(Shape a, Shape b) {
    if (a == null || b == null) {
      return a == b;
    }
    return a.isUnknown() ? b.isUnknown() : !b.isUnknown() && Arrays.equals(a.asArray(), b.asArray());
  }

  /** A hash consistent with {@link #equal}. */
  public static int hash(Shape s) {
    return s == null ? 0 : s.isUnknown() ? -2 : Arrays.hashCode(s.asArray());
  }
}
