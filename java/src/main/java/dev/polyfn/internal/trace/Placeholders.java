package dev.polyfn.internal.trace;

import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.Wire;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.op.Ops;
import org.tensorflow.types.family.TType;

/**
 * The placeholders a trace built, each with its place among the function's inputs. A call feeds
 * its inputs parameters first, then captures (the facts order), whatever order the body declared
 * them in, so the graph's inputs are sorted the same way when the trace finishes.
 */
final class Placeholders {
  static final int PARAMETERS = 0;
  static final int CAPTURES = 1;

  /** A placeholder's place among the function's inputs: group, declaration index, creation order. */
  record Slot(int group, int index, int order, String name) {}

  /** The spec of a resource placeholder: dtype, rank 0. */
  private static final long[] RESOURCE = {Wire.DT_RESOURCE, 0};

  private final Graph graph;
  private final Ops tf;
  private final List<Slot> slots = new ArrayList<>();
  /** Where the next placeholder goes: group (parameters, captures), declaration index. */
  private int group;
  private int index;

  Placeholders(Graph graph, Ops tf) {
    this.graph = graph;
    this.tf = tf;
  }

  /** Sets where the placeholders built next go. */
  void at(int group, int index) {
    this.group = group;
    this.index = index;
  }

  /**
   * Builds the placeholder described at {@code spec[at]}: dtype, rank, dims. Made natively in one
   * call (TensorFlow Java's operation builder costs several times more on a first call, before
   * the JIT has compiled it), named by the trace's root scope so TensorFlow Java's names stay
   * unique (the scope of the trace's {@code Ops}: no name prefix, device or control dependency).
   */
  <T extends TType> Operand<T> build(long[] spec, int at) {
    String name = tf.scope().makeUnique("Placeholder");
    // A resource handle (a variable's) is a scalar, whatever the shape of the variable's value.
    long op = spec[at] == Wire.DT_RESOURCE
        ? Native.addPlaceholder(TensorFlowInternals.graphAddress(graph), name, RESOURCE, 0)
        : Native.addPlaceholder(TensorFlowInternals.graphAddress(graph), name, spec, at);
    slots.add(new Slot(group, index, slots.size(), name));
    return TensorFlowInternals.graphOperation(graph, op).output(0);
  }

  /** The slot of the placeholder built last. */
  Slot last() {
    return slots.get(slots.size() - 1);
  }

  /** Feeds {@code shared} (a capture's placeholder) as parameter {@code parameter} instead. */
  Slot moveToParameter(Slot shared, int parameter) {
    Slot moved = new Slot(PARAMETERS, parameter, 0, shared.name());
    slots.set(slots.indexOf(shared), moved);
    return moved;
  }

  /** The placeholder operation names in the order calls feed the function's inputs. */
  String[] names() {
    // Plain arrays: every trace runs this, often before the JIT has compiled anything.
    Slot[] sorted = slots.toArray(new Slot[0]);
    Arrays.sort(sorted, FEED_ORDER);
    String[] names = new String[sorted.length];
    for (int i = 0; i < sorted.length; i++) {
      names[i] = sorted[i].name();
    }
    return names;
  }

  /** Parameters, then captures; each group by declaration index, then creation order. */
  private static final Comparator<Slot> FEED_ORDER = (a, b) -> a.group() != b.group()
      ? Integer.compare(a.group(), b.group())
      : a.index() != b.index() ? Integer.compare(a.index(), b.index()) : Integer.compare(a.order(), b.order());
}
