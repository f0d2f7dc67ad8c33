package dev.polyfn;

import dev.polyfn.internal.trace.OwnedTensors;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.tensorflow.Tensor;
import org.tensorflow.types.family.TType;

/**
 * The named output tensors of one call. Closing it closes every output tensor, so use
 * try-with-resources:
 *
 * <pre>{@code
 * try (Outputs out = f.call(Map.of("x", x))) {
 *   TFloat32 y = out.get("y", TFloat32.class);
 *   ...
 * }
 * }</pre>
 *
 * Iterating yields the output names.
 */
public final class Outputs implements AutoCloseable, Iterable<String> {
  private final String[] names;
  private final OwnedTensors tensors;

  Outputs(String[] names, TType[] tensors) {
    this.names = names;
    this.tensors = new OwnedTensors(tensors);
  }

  /**
   * The output called {@code name}.
   *
   * @throws IllegalArgumentException if there is no such output
   * @throws IllegalStateException if the outputs are closed
   */
  public Tensor get(String name) {
    return tensors.get(indexOf(name));
  }

  /**
   * The output called {@code name} as {@code type}.
   *
   * @throws IllegalArgumentException if there is no such output or it is not a {@code type}
   */
  public <T extends TType> T get(String name, Class<T> type) {
    TType t = tensors.get(indexOf(name));
    if (!type.isInstance(t)) {
      throw new IllegalArgumentException(
          "output '" + name + "' is a " + t.type().getSimpleName() + ", not a " + type.getSimpleName());
    }
    return type.cast(t);
  }

  /** The output names, in the order the body returned them. */
  public List<String> names() {
    return List.of(names);
  }

  /** The number of outputs. */
  public int size() {
    return names.length;
  }

  @Override
  public Iterator<String> iterator() {
    return names().iterator();
  }

  /** Closes every output tensor. Idempotent. */
  @Override
  public void close() {
    tensors.close();
  }

  private int indexOf(String name) {
    tensors.checkOpen();
    for (int i = 0; i < names.length; i++) {
      if (names[i].equals(name)) {
        return i;
      }
    }
    throw new IllegalArgumentException("no output '" + name + "'; the outputs are " + Arrays.toString(names));
  }

  @Override
  public String toString() {
    return "Outputs" + Arrays.toString(names);
  }
}
