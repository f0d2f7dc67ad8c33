package dev.polyfn;

import dev.polyfn.internal.structure.CompositeRegistry;

/**
 * The registered {@link CompositeType}s, found by the class of a value or of a body's view. {@code
 * SparseTensor} and {@link RaggedTensor} are registered from the start.
 */
public final class Composites {
  private Composites() {}

  /**
   * Registers {@code type}, so its values can be passed to and returned from functions.
   *
   * @throws IllegalArgumentException if a registered type has the same name, or handles the same
   *     value or view class
   */
  public static void register(CompositeType<?, ?> type) {
    CompositeRegistry.register(type);
  }
}
