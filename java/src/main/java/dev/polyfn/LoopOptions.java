package dev.polyfn;

import java.util.Map;
import java.util.TreeMap;
import org.tensorflow.ndarray.Shape;

/**
 * Options of {@link Flow#whileLoop}: an iteration bound and relaxed shapes of loop variables.
 * Immutable; each method returns a new value. Start from {@link Flow#loop()}.
 */
public final class LoopOptions {
  /** The defaults, which {@link Flow#loop()} returns. {@hidden} */
  public static final LoopOptions DEFAULT = new LoopOptions(-1, Map.of(), 10);

  private final long maximumIterations;
  private final Map<Integer, Shape> shapes;
  private final int parallelIterations;

  private LoopOptions(long maximumIterations, Map<Integer, Shape> shapes, int parallelIterations) {
    this.maximumIterations = maximumIterations;
    this.shapes = shapes;
    this.parallelIterations = parallelIterations;
  }

  /** Stops after at most {@code n} iterations even if the condition still holds (Python's {@code maximum_iterations}). */
  public LoopOptions maximumIterations(long n) {
    if (n < 0 || n > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maximumIterations: expected 0.." + Integer.MAX_VALUE + ", got " + n);
    }
    return new LoopOptions(n, shapes, parallelIterations);
  }

  /**
   * Declares the shape loop variable {@code index} keeps across iterations, relaxed where it
   * changes ({@code Shape.of(-1)} for a vector that grows; Python's {@code shape_invariants}).
   */
  public LoopOptions shape(int index, Shape shape) {
    if (index < 0) {
      throw new IllegalArgumentException("shape: index must be >= 0, got " + index);
    }
    if (shape == null) {
      throw new IllegalArgumentException("shape: the shape of loop variable " + index + " is null");
    }
    Map<Integer, Shape> m = new TreeMap<>(shapes);
    m.put(index, shape);
    return new LoopOptions(maximumIterations, Map.copyOf(m), parallelIterations);
  }

  /** How many iterations TensorFlow may run at once (default 10, as in Python). */
  public LoopOptions parallelIterations(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("parallelIterations: expected >= 1, got " + n);
    }
    return new LoopOptions(maximumIterations, shapes, n);
  }

  /** {@hidden} */
  public long maximumIterations() {
    return maximumIterations;
  }

  /** {@hidden} */
  public Map<Integer, Shape> shapes() {
    return shapes;
  }

  /** {@hidden} */
  public int parallel() {
    return parallelIterations;
  }
}
