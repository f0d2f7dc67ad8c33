package dev.polyfn.internal.flow;

import java.util.Set;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TInt32;

/**
 * Gradients of broadcasting operations summed over the dimensions an input was broadcast along.
 * Python's gradient of every broadcasting op sums them (math_grad.py); a few gradients of
 * TensorFlow's C++ registry do not, and gave an input of shape [3] a gradient of shape [2, 3]
 * (Atan2's), which the next gradient then added to one of shape [3] and failed, or returned.
 */
final class BroadcastSums {
  private BroadcastSums() {}

  /**
   * Op types whose C++ gradient leaves broadcast dimensions in: the walk differentiates them one at
   * a time, so that {@link #summed} can sum each input's gradient (a path through one is not
   * differentiated in a single registry call).
   */
  static final Set<String> UNSUMMED = Set.of("Atan2");

  /**
   * {@code d}, the registry's gradient of input {@code x}, summed over the dimensions x was
   * broadcast along, where the static shapes show a difference; else {@code d} itself.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static Output<?> summed(Ops g, Output<?> x, Output<?> d) {
    Shape xs;
    Shape ds;
    try {
      xs = x.shape();
      ds = d.shape();
    } catch (RuntimeException e) {
      return d; // a shape TensorFlow could not infer: left as the registry built it
    }
    if (xs.isUnknown() || ds.isUnknown()) {
      return d;
    }
    boolean differs = xs.numDimensions() != ds.numDimensions();
    for (int k = 0; !differs && k < xs.numDimensions(); k++) {
      differs = xs.get(k) >= 0 && ds.get(k) >= 0 && xs.get(k) != ds.get(k);
    }
    if (!differs) {
      return d;
    }
    Operand<TInt32> shape = g.shape(x);
    Operand<TInt32> axes = g.broadcastGradientArgs(shape, g.shape(d)).r0();
    return g.reshape(g.sum((Operand) d, axes), shape).asOutput();
  }
}
