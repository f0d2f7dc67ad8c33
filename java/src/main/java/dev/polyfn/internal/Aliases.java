package dev.polyfn.internal;

import java.util.Arrays;

/**
 * Numbers the distinct objects (variables) of one call in order of first appearance, by identity:
 * the alias index of seed 002's PlaceholderContext. Few variables per call, so a linear scan.
 */
public final class Aliases {
  private Object[] seen = new Object[4];
  private int count;

  /** The alias index of {@code o}; as {@code ~index} (negative) when {@code o} is new to the call. */
  public int aliasOf(Object o) {
    for (int i = 0; i < count; i++) {
      if (seen[i] == o) {
        return i;
      }
    }
    if (count == seen.length) {
      seen = Arrays.copyOf(seen, count * 2);
    }
    seen[count] = o;
    return ~count++;
  }

  /** The index an {@link #aliasOf} result stands for. */
  public static int index(int aliasOf) {
    return aliasOf < 0 ? ~aliasOf : aliasOf;
  }

  void clear() {
    Arrays.fill(seen, 0, count, null);
    count = 0;
  }
}
