package dev.polyfn.internal.flow;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Unique;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TInt32;

/**
 * Gradients of the TensorList operations that move several elements at once: Gather, Scatter
 * (both versions), ScatterIntoExistingList, Concat (both versions) and Split, written as Python's
 * list_ops.py registers them, except for repeated indices, where those are not the derivative: a
 * gather's copies' gradients are summed here, and a scatter's go to the row it keeps only. Each one's gradient is built from another of them (Gather's from
 * ScatterIntoExistingList, Scatter's from Gather, Concat's from Split and Split's from Concat), so
 * gradients through them can be differentiated again. {@link ListGradients} dispatches here.
 */
final class ListBulkGradients {
  private ListBulkGradients() {}

  /** The operations differentiated here. */
  static final Set<String> KNOWN = Set.of("TensorListGather", "TensorListScatter", "TensorListScatterV2",
      "TensorListScatterIntoExistingList", "TensorListConcat", "TensorListConcatV2", "TensorListSplit");

  /**
   * Adds to {@code grads} the gradients of {@code op}'s inputs (one of {@link #KNOWN}), given those
   * of its outputs ({@code dys}); the indices, shapes and lengths they read get none.
   */
  static void apply(Ops g, GraphOperation op, List<Output<?>> dys, Map<String, List<Output<?>>> grads) {
    String t = op.type();
    Output<?> d = dys.get(0);
    if (d == null) {
      return; // only Concat's lengths (integers) would have had one
    }
    switch (t) {
      case "TensorListGather" -> {
        // The gathered elements' gradients scattered into a list as long as the input, at the
        // gather's indices checked as the gather checks them: the scatter does not (a negative one
        // aborts the process, one past the end grows the list), and the gather itself may not run
        // (nothing else need read it; a control edge on it Grappler would drop).
        refuseVariants(op, op.output(0));
        Output<?> list = op.input(0);
        Output<?> length = ListGradients.length(g, list);
        Output<?> reserved = ListGradients.build(g, "TensorListReserve", ListGradients.elementShape(g, list), length,
            d.dataType()).output(0);
        // An index gathered several times gets the sum of its copies' gradients (Python's
        // list_ops.py scatters them, so that one overwrites the others: not the derivative).
        Unique<TInt32, TInt32> u = g.unique((Operand<TInt32>) op.input(1), g.constant(new int[] {0}));
        Output<?> summed = g.math.unsortedSegmentSum((Operand) d, u.idx(), g.size(u.y())).asOutput();
        FlowGradients.add(grads, list, scatterInto(g, reserved, summed, inRange(g, u.y().asOutput(), length)));
      }
      case "TensorListScatter", "TensorListScatterV2" -> {
        Output<?> tensor = op.input(0);
        refuseVariants(op, tensor);
        if (FlowGradients.isFloat(tensor.dataType())) {
          FlowGradients.add(grads, tensor, lastWrites(g, gather(g, d, op.input(1), tensor), op.input(1)));
        }
      }
      case "TensorListScatterIntoExistingList" -> {
        Output<?> list = op.input(0);
        Output<?> tensor = op.input(1);
        Output<?> indices = op.input(2);
        refuseVariants(op, tensor);
        if (FlowGradients.isFloat(tensor.dataType())) {
          FlowGradients.add(grads, tensor, lastWrites(g, gather(g, d, indices, tensor), indices));
        }
        // The overwritten elements get none; as long as the input list, which the scatter may
        // have grown (Python's leaves the grown elements, zeros, in the list's gradient).
        Output<?> cleared = scatterInto(g, d, g.zerosLike(tensor).asOutput(), indices);
        FlowGradients.add(grads, list, g.scope().opBuilder("TensorListResize", "grad_resize").addInput(cleared)
            .addInput(ListGradients.length(g, list)).build().output(0));
      }
      case "TensorListConcat", "TensorListConcatV2" -> {
        refuseVariants(op, op.output(0));
        // Split back into the elements' lengths, which Concat's second output gives.
        FlowGradients.add(grads, op.input(0), g.scope().opBuilder("TensorListSplit", "grad_split").addInput(d)
            .addInput(ListGradients.elementShape(g, op.input(0))).addInput(op.output(1)).build().output(0));
      }
      case "TensorListSplit" -> {
        Output<?> tensor = op.input(0);
        refuseVariants(op, tensor);
        if (FlowGradients.isFloat(tensor.dataType())) {
          // Elements of any first dimension and the tensor's other ones; the lengths give those
          // of elements with no gradient (uninitialized in the list), which Concat fills with zeros.
          @SuppressWarnings("unchecked")
          Operand<TInt32> tail = (Operand<TInt32>) ListGradients.tail(g, tensor);
          Output<?> shape = g.concat(List.of(g.constant(new int[] {-1}), tail), g.constant(0)).asOutput();
          FlowGradients.add(grads, tensor, g.scope().opBuilder("TensorListConcatV2", "grad_concat").addInput(d)
              .addInput(shape).addInput(op.input(2)).setAttr("element_dtype", tensor.dataType()).build().output(0));
        }
      }
      default -> throw new IllegalStateException("not a bulk TensorList operation: " + t);
    }
  }

  /** The elements of {@code list} at {@code indices}, stacked, each shaped as one of {@code like}'s. */
  private static Output<?> gather(Ops g, Output<?> list, Output<?> indices, Output<?> like) {
    return g.scope().opBuilder("TensorListGather", "grad_gather").addInput(list).addInput(indices)
        .addInput(ListGradients.tail(g, like)).setAttr("element_dtype", like.dataType()).build().output(0);
  }

  private static Output<?> scatterInto(Ops g, Output<?> list, Output<?> tensor, Output<?> indices) {
    return g.scope().opBuilder("TensorListScatterIntoExistingList", "grad_scatter").addInput(list).addInput(tensor)
        .addInput(indices).build().output(0);
  }

  /**
   * {@code rows} (the gradients of a scattered tensor's rows) with zeros for every row but the last
   * of those written at one index: the scatter keeps the last write, so only that row reaches the
   * result (Python's list_ops.py passes a gradient to each of them: not the derivative).
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Output<?> lastWrites(Ops g, Output<?> rows, Output<?> indices) {
    Operand<TInt32> idx = (Operand<TInt32>) indices;
    Unique<TInt32, TInt32> u = g.unique(idx, g.constant(new int[] {0}));
    Operand<TInt32> positions = g.range(g.constant(0), g.size(idx), g.constant(1));
    Operand<TInt32> last = g.math.unsortedSegmentMax(positions, u.idx(), g.size(u.y()));
    Operand keep = g.dtypes.cast(g.math.equal(positions, g.gather(last, u.idx(), g.constant(0))),
        (Class) rows.type());
    // [n] as [n, 1, ..., 1], to scale each row of rows.
    Operand<TInt32> ones = g.fill(g.expandDims(g.math.sub(g.rank(rows), g.constant(1)), g.constant(0)), g.constant(1));
    Operand<TInt32> shape = g.concat(List.of(g.constant(new int[] {-1}), ones), g.constant(0));
    return g.math.mul((Operand) rows, g.reshape(keep, shape)).asOutput();
  }

  /**
   * {@code indices} (int32), read through a gather from {@code [0, length)}: the same values, and
   * an error naming the bad one ("indices[0] = -3 is not in [0, 3)") when one is out of range.
   */
  @SuppressWarnings("unchecked")
  private static Output<?> inRange(Ops g, Output<?> indices, Output<?> length) {
    Operand<TInt32> all = g.range(g.constant(0), (Operand<TInt32>) length, g.constant(1));
    return g.gather(all, (Operand<TInt32>) indices, g.constant(0)).asOutput();
  }

  /**
   * Refuses a tensor of TensorLists (elements that are lists themselves) moving in or out: no test
   * covers its gradient, so rather than risk a wrong one it is refused naming the operation.
   */
  private static void refuseVariants(GraphOperation op, Output<?> tensor) {
    if (tensor.dataType() == DataType.DT_VARIANT) {
      throw new IllegalArgumentException("gradients through '" + op.name() + "' (" + op.type() + ") of a tensor of "
          + "TensorLists are not supported");
    }
  }
}
