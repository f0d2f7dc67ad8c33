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
   * {@code d}, the registry's gradient of input {@code x} of an operation of type {@code type},
   * summed over the dimensions x was broadcast along. Where static shapes show a difference, for
   * any type; for a type in {@link #UNSUMMED}, also where an unknown rank or dimension leaves one
   * possible (x of shape [3] against y of shape [None, 3]): the sum is then over the axes
   * BroadcastGradientArgs computes at run time, none when nothing was broadcast. Else {@code d}.
   */
  static Output<?> summed(Ops g, String type, Output<?> x, Output<?> d) {
    return mayDiffer(x, d, UNSUMMED.contains(type)) ? sumBroadcast(g, x, d) : d;
  }

  /**
   * {@code d}, a gradient of input {@code x} of a broadcasting operation built as Python builds it,
   * summed over the dimensions x was broadcast along, known statically or not (then the axes are
   * computed at run time, none when nothing was broadcast).
   */
  static Output<?> summedAny(Ops g, Output<?> x, Output<?> d) {
    return mayDiffer(x, d, true) ? sumBroadcast(g, x, d) : d;
  }

  /** {@code d} summed over the axes BroadcastGradientArgs finds for x's shape against d's, at run time. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Output<?> sumBroadcast(Ops g, Output<?> x, Output<?> d) {
    Operand<TInt32> shape = g.shape(x);
    Operand<TInt32> axes = g.broadcastGradientArgs(shape, g.shape(d)).r0();
    return g.reshape(g.sum((Operand) d, axes), shape).asOutput();
  }

  /**
   * Whether the shapes of x and its gradient d differ where both are known, or (with {@code
   * unknownToo}) may differ: a rank or a dimension of either is unknown.
   */
  private static boolean mayDiffer(Output<?> x, Output<?> d, boolean unknownToo) {
    Shape xs;
    Shape ds;
    try {
      xs = x.shape();
      ds = d.shape();
    } catch (RuntimeException e) {
      return unknownToo; // a shape TensorFlow could not infer
    }
    if (xs.isUnknown() || ds.isUnknown()) {
      return unknownToo;
    }
    if (xs.numDimensions() != ds.numDimensions()) {
      return true;
    }
    for (int k = 0; k < xs.numDimensions(); k++) {
      if (xs.get(k) < 0 || ds.get(k) < 0) {
        if (unknownToo) {
          return true;
        }
      } else if (xs.get(k) != ds.get(k)) {
        return true;
      }
    }
    return false;
  }
}
