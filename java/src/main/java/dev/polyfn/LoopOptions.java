package dev.polyfn;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TIntegral;

/**
 * Options of {@link Flow#whileLoop}: an iteration bound and relaxed shapes of loop variables.
 * Immutable; each method returns a new value. Start from {@link Flow#loop()}.
 */
public final class LoopOptions {
  /** The defaults, which {@link Flow#loop()} returns. {@hidden} */
  public static final LoopOptions DEFAULT = new LoopOptions(-1, null, Map.of(), 10);

  private final long maximumIterations;
  private final Operand<? extends TIntegral> maximumIterationsTensor;
  private final Map<Integer, Shape> shapes;
  private final int parallelIterations;

  private LoopOptions(long maximumIterations, Operand<? extends TIntegral> maximumIterationsTensor,
      Map<Integer, Shape> shapes, int parallelIterations) {
    this.maximumIterations = maximumIterations;
    this.maximumIterationsTensor = maximumIterationsTensor;
    this.shapes = shapes;
    this.parallelIterations = parallelIterations;
  }

  /** Stops after at most {@code n} iterations even if the condition still holds (Python's {@code maximum_iterations}). */
  public LoopOptions maximumIterations(long n) {
    if (n < 0 || n > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maximumIterations: expected 0.." + Integer.MAX_VALUE + ", got " + n);
    }
    return new LoopOptions(n, null, shapes, parallelIterations);
  }

  /**
   * Stops after at most {@code n} iterations, {@code n} a scalar INT32 or INT64 tensor of the body
   * (an input, {@code tf.shape(x)[0]}...), as Python's {@code maximum_iterations=} takes a tensor:
   * one trace serves every bound; a bound of 0 or less runs no iteration. Checked when the loop is
   * built: an operand of the body's {@code Ops}, integral, a scalar. A loop differentiated under
   * XLA needs a constant bound ({@link #maximumIterations(long)}), as in Python.
   *
   * <pre>{@code
   * Operand<TInt32> steps = in.input("steps", TInt32.class, Shape.scalar());
   * List<Operand<?>> out = Flow.whileLoop(tf, List.of(x), Flow.loop().maximumIterations(steps),
   *     v -> tf.constant(true), v -> List.of(tf.math.mul(v.get(0), tf.constant(2f))));
   * }</pre>
   */
  public LoopOptions maximumIterations(Operand<? extends TIntegral> n) {
    Objects.requireNonNull(n, "maximumIterations");
    return new LoopOptions(-1, n, shapes, parallelIterations);
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
    return new LoopOptions(maximumIterations, maximumIterationsTensor, Map.copyOf(m), parallelIterations);
  }

  /** How many iterations TensorFlow may run at once (default 10, as in Python). */
  public LoopOptions parallelIterations(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("parallelIterations: expected >= 1, got " + n);
    }
    return new LoopOptions(maximumIterations, maximumIterationsTensor, shapes, n);
  }

  /** {@hidden} */
  public long maximumIterations() {
    return maximumIterations;
  }

  /** {@hidden} The bound as a tensor of the body, or null (no bound, or a constant one). */
  public Operand<? extends TIntegral> maximumIterationsTensor() {
    return maximumIterationsTensor;
  }

  /** {@hidden} Whether the loop has a bound, constant or a tensor. */
  public boolean bounded() {
    return maximumIterations >= 0 || maximumIterationsTensor != null;
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
