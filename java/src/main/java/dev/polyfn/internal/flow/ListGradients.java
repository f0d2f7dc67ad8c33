package dev.polyfn.internal.flow;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;

/**
 * Gradients of the TensorList operations, which TensorFlow's C++ registry has none of, written as
 * Python's list_ops.py registers them: the gradient of a TensorList is a TensorList of the
 * elements' gradients. A loop's gradient records its loop variables in TensorLists and pops them
 * again, so these are what let {@link FlowGradients} differentiate a loop's gradient (a second
 * derivative) and loops that carry TensorLists. The operations moving several elements at once
 * (Gather, Scatter, Concat, Split) are {@link ListBulkGradients}'. Also EnsureShape, whose gradient
 * (Python's array_grad.py) is the incoming one, and Identity, PlaceholderWithDefault, AddN and
 * StopGradient of TensorLists, which the registry (given floating-point values only here) does not
 * see. TensorListLength and ElementShape give integers, which no gradient reaches.
 */
final class ListGradients {
  private ListGradients() {}

  /** The TensorList operations that have a gradient here; any other on a gradient's path is refused. */
  private static final Set<String> KNOWN = Set.of("TensorListPushBack", "TensorListPopBack", "TensorListStack",
      "TensorListFromTensor", "TensorListGetItem", "TensorListSetItem", "TensorListResize", "TensorListReserve", "EmptyTensorList");

  /** Operations whose variant output is a TensorList when their first input is one. */
  private static final Set<String> FOLLOWED = Set.of("Identity", "PlaceholderWithDefault", "EnsureShape", "ZerosLike",
      "AddN");

  /** Operations the registry would see on floating-point values only, here on TensorLists. */
  private static final Set<String> ON_VARIANTS = Set.of("Identity", "PlaceholderWithDefault", "AddN", "StopGradient");

  /** Whether {@code op}'s gradient is built here rather than by TensorFlow's registry. */
  static boolean handles(GraphOperation op) {
    String t = op.type();
    return t.startsWith("TensorList") || t.equals("EmptyTensorList") || t.equals("EnsureShape")
        || (ON_VARIANTS.contains(t) && op.output(0).dataType() == DataType.DT_VARIANT);
  }

  /** Whether a value of this dtype can carry a gradient: floating point, or a TensorList (variant). */
  static boolean differentiable(DataType t) {
    return FlowGradients.isFloat(t) || t == DataType.DT_VARIANT;
  }

  /**
   * Whether a gradient flows back to {@code o}: floating point, or a TensorList of such values (or
   * of TensorLists), as Python's while_v2 treats a list of integers as not trainable. A cond's or
   * loop's captured values of these kinds get gradients; backpropagation inside the branches and
   * bodies stops at them.
   */
  static boolean carriesGradient(Output<?> o) {
    if (o.dataType() != DataType.DT_VARIANT) {
      return FlowGradients.isFloat(o.dataType());
    }
    DataType e = listElement(o);
    return e != null && differentiable(e);
  }

  /** Whether a variant value is a TensorList (see {@link #listElement}). */
  static boolean isList(Output<?> o) {
    return listElement(o) != null;
  }

  /**
   * The element dtype of a TensorList, null if {@code o} is not one: made by a TensorList
   * operation, possibly through identities, placeholders with that default, the loop variables of
   * loops, the outputs of conds whose branches both return one, zeros like one and sums.
   * DT_VARIANT where the list's element dtype is not known (an element of a list of lists).
   */
  static DataType listElement(Output<?> o) {
    for (int hops = 0; hops < 10_000; hops++) {
      GraphOperation op = (GraphOperation) o.op();
      String t = op.type();
      if (t.startsWith("TensorList") || t.equals("EmptyTensorList")) {
        if (t.equals("TensorListPopBack") && o.index() == 1) {
          return DataType.DT_VARIANT; // an element of a list of lists
        }
        if (t.equals("TensorListResize")) {
          o = op.input(0);
          continue;
        }
        try {
          return op.attributes().getAttrType("element_dtype");
        } catch (RuntimeException noAttribute) {
          return DataType.DT_VARIANT;
        }
      }
      if (t.equals("While") || t.equals("StatelessWhile")) {
        o = op.input(o.index());
      } else if (t.equals("If") || t.equals("StatelessIf")) {
        // What both branches return, recorded when the cond was built (FlowCond).
        return FlowFunctions.info((Graph) op.env(), op.name()) instanceof FlowFunctions.CondInfo c
            ? c.listElements().get(o.index()) : null;
      } else if (FOLLOWED.contains(t) && op.numInputs() > 0) {
        o = op.input(0);
      } else {
        return null;
      }
    }
    return null;
  }

  /**
   * Adds to {@code grads} the gradients of {@code op}'s inputs, given those of its outputs ({@code
   * dys}, null where none flowed back, at least one not null).
   */
  static void apply(Ops g, GraphOperation op, List<Output<?>> dys, Map<String, List<Output<?>>> grads) {
    String t = op.type();
    if (t.equals("EnsureShape") || t.equals("Identity") || t.equals("PlaceholderWithDefault") || t.equals("AddN")) {
      for (int i = 0; i < (t.equals("AddN") ? op.numInputs() : 1); i++) {
        FlowGradients.add(grads, op.input(i), dys.get(0));
      }
      return;
    }
    if (t.equals("StopGradient")) {
      return;
    }
    if (ListBulkGradients.KNOWN.contains(t)) {
      ListBulkGradients.apply(g, op, dys, grads);
      return;
    }
    if (!KNOWN.contains(t)) {
      throw new IllegalArgumentException("gradients: no gradient for " + t + " '" + op.name() + "'; Polyfn "
          + "differentiates TensorListPushBack, PopBack, Stack, FromTensor, GetItem, SetItem, Resize, Gather, Scatter, "
          + "ScatterV2, ScatterIntoExistingList, Concat, ConcatV2 and Split");
    }
    switch (t) {
      case "TensorListPushBack" -> {
        Output<?> item = op.input(1);
        if (differentiable(item.dataType())) {
          GraphOperation pop = build(g, "TensorListPopBack", dys.get(0), g.shape(item).asOutput(), item.dataType());
          FlowGradients.add(grads, op.input(0), pop.output(0));
          FlowGradients.add(grads, item, pop.output(1));
        }
      }
      case "TensorListPopBack" -> {
        Output<?> item = op.output(1);
        if (differentiable(item.dataType())) {
          // Python's list_ops.py starts from an empty list where the rest of the list has no
          // gradient; zeros as long as the rest keep the gradient as long as the list, which
          // adding it to another gradient of the list (a second derivative's) needs.
          Output<?> dlist = dys.get(0) != null ? dys.get(0) : g.zerosLike(op.output(0)).asOutput();
          Output<?> ditem = dys.get(1) != null ? dys.get(1) : g.zerosLike(item).asOutput();
          FlowGradients.add(grads, op.input(0), build(g, "TensorListPushBack", dlist, ditem, null).output(0));
        }
      }
      case "TensorListStack" -> FlowGradients.add(grads, op.input(0), build(g, "TensorListFromTensor", dys.get(0),
          tail(g, dys.get(0)), null).output(0));
      case "TensorListFromTensor" -> {
        Output<?> tensor = op.input(0);
        if (tensor.dataType() == DataType.DT_VARIANT) {
          // A tensor of TensorLists: its gradient would be lost silently, so it is refused.
          throw new IllegalArgumentException("gradients through '" + op.name() + "' (TensorListFromTensor) of a tensor of"
              + " TensorLists are not supported");
        }
        if (FlowGradients.isFloat(tensor.dataType())) {
          long n = tensor.shape().isUnknown() || tensor.shape().numDimensions() == 0 ? -1 : tensor.shape().get(0);
          FlowGradients.add(grads, tensor, g.scope().opBuilder("TensorListStack", "grad_stack")
              .addInput(dys.get(0)).addInput(tail(g, tensor)).setAttr("element_dtype", tensor.dataType())
              .setAttr("num_elements", n).build().output(0));
        }
      }
      case "TensorListGetItem" -> {
        Output<?> list = op.input(0);
        Output<?> reserved = build(g, "TensorListReserve", elementShape(g, list), length(g, list),
            op.output(0).dataType()).output(0);
        FlowGradients.add(grads, list, g.scope().opBuilder("TensorListSetItem", "grad_set").addInput(reserved)
            .addInput(op.input(1)).addInput(dys.get(0)).build().output(0));
      }
      case "TensorListSetItem" -> {
        Output<?> list = op.input(0);
        Output<?> index = op.input(1);
        Output<?> item = op.input(2);
        Output<?> cleared = g.scope().opBuilder("TensorListSetItem", "grad_set").addInput(dys.get(0)).addInput(index)
            .addInput(g.zerosLike(item).asOutput()).build().output(0);
        // As long as the input list (SetItem may have grown it past its end).
        FlowGradients.add(grads, list, g.scope().opBuilder("TensorListResize", "grad_resize").addInput(cleared)
            .addInput(length(g, list)).build().output(0));
        if (differentiable(item.dataType())) { // a TensorList set into a list of lists too
          FlowGradients.add(grads, item, g.scope().opBuilder("TensorListGetItem", "grad_get").addInput(dys.get(0))
              .addInput(index).addInput(g.shape(item).asOutput()).setAttr("element_dtype", item.dataType())
              .build().output(0));
        }
      }
      case "TensorListResize" -> FlowGradients.add(grads, op.input(0), g.scope().opBuilder("TensorListResize",
          "grad_resize").addInput(dys.get(0)).addInput(length(g, op.input(0))).build().output(0));
      default -> { } // TensorListReserve, EmptyTensorList: only shapes and counts enter
    }
  }

  /** A two-input list operation, with {@code element_dtype} set unless null. */
  static GraphOperation build(Ops g, String type, Output<?> a, Output<?> b, DataType elementDtype) {
    var builder = g.scope().opBuilder(type, "grad_" + type).addInput(a).addInput(b);
    if (elementDtype != null) {
      builder.setAttr("element_dtype", elementDtype);
    }
    return (GraphOperation) builder.build();
  }

  static Output<?> elementShape(Ops g, Output<?> list) {
    return g.scope().opBuilder("TensorListElementShape", "grad_element_shape").addInput(list)
        .setAttr("shape_type", DataType.DT_INT32).build().output(0);
  }

  static Output<?> length(Ops g, Output<?> list) {
    return g.scope().opBuilder("TensorListLength", "grad_length").addInput(list).build().output(0);
  }

  /** The shape of one element of a stacked tensor: its shape without the first dimension. */
  static Output<?> tail(Ops g, Output<?> stacked) {
    return g.slice(g.shape(stacked), g.constant(new int[] {1}), g.constant(new int[] {-1})).asOutput();
  }
}
