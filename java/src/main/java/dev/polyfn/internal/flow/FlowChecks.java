package dev.polyfn.internal.flow;

import dev.polyfn.internal.trace.Tracing;
import dev.polyfn.internal.trace.TracingInputs;
import java.util.Iterator;
import java.util.List;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.OperationBuilder;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.DataType;
import org.tensorflow.proto.NameAttrList;
import org.tensorflow.proto.TensorShapeProto;
import org.tensorflow.types.TBool;

/** The checks {@code Flow} makes before anything reaches TensorFlow, and shape arithmetic. */
public final class FlowChecks {
  private FlowChecks() {}

  public static Graph graphOf(Ops tf, String what) {
    if (tf == null) {
      throw new IllegalArgumentException(what + ": tf is null");
    }
    if (!(tf.scope().env() instanceof Graph graph)) {
      throw new IllegalArgumentException(what + " builds TensorFlow control flow in a graph: call it inside a "
          + "Polyfn body (or with the Ops of a Graph), not eagerly");
    }
    return graph;
  }

  public static Operand<?> operandOf(Graph graph, Operand<?> o, String what, String name) {
    if (o == null) {
      throw new IllegalArgumentException(what + ": " + name + " is null");
    }
    if (o.env() != graph) {
      throw new IllegalArgumentException(what + ": " + name + " belongs to another graph or is eager; use "
          + "operands of the body being traced");
    }
    return o;
  }

  public static void scalarBool(Graph graph, Operand<TBool> pred, String what, String name) {
    operandOf(graph, pred, what, name);
    DataType t = pred.asOutput().dataType();
    if (t != DataType.DT_BOOL) {
      throw new IllegalArgumentException(what + ": " + name + " must be a scalar BOOL, got dtype " + t);
    }
    Shape s = pred.shape();
    if (!s.isUnknown() && s.numDimensions() != 0) {
      throw new IllegalArgumentException(what + ": " + name + " must be a scalar BOOL, got shape " + s);
    }
  }

  /** Both branches return as many outputs, of the same dtypes. */
  public static void sameStructure(List<Output<?>> then, List<Output<?>> otherwise, java.util.function.IntFunction<String> label) {
    if (then.size() != otherwise.size()) {
      throw new IllegalArgumentException("cond: the then branch returns " + then.size()
          + " outputs but the else branch returns " + otherwise.size());
    }
    for (int i = 0; i < then.size(); i++) {
      DataType a = then.get(i).dataType();
      DataType b = otherwise.get(i).dataType();
      if (a != b) {
        throw new IllegalArgumentException("cond: " + label.apply(i) + " is " + name(a) + " in the then branch but "
            + name(b) + " in the else branch");
      }
    }
  }

  /** The most specific shape both shapes fit (unknown dimensions where they differ). */
  public static Shape common(Shape a, Shape b) {
    if (a.isUnknown() || b.isUnknown() || a.numDimensions() != b.numDimensions()) {
      return Shape.unknown();
    }
    long[] dims = new long[a.numDimensions()];
    for (int i = 0; i < dims.length; i++) {
      dims[i] = a.get(i) == b.get(i) ? a.get(i) : Shape.UNKNOWN_SIZE;
    }
    return Shape.of(dims);
  }

  /** Whether every value of shape {@code s} also fits {@code declared}. */
  public static boolean fits(Shape s, Shape declared) {
    if (declared.isUnknown()) {
      return true;
    }
    if (s.isUnknown() || s.numDimensions() != declared.numDimensions()) {
      return false;
    }
    for (int i = 0; i < s.numDimensions(); i++) {
      if (declared.get(i) != Shape.UNKNOWN_SIZE && declared.get(i) != s.get(i)) {
        return false;
      }
    }
    return true;
  }

  /** A shape as TensorFlow prints it: [2, -1], or "unknown" for an unknown rank. */
  public static String show(Shape s) {
    return s == null || s.isUnknown() ? "unknown" : s.toString();
  }

  /**
   * Marks an If/While for lowering to TensorFlow's Switch/Merge graph form when the function is
   * instantiated, as Python's tf.function marks its own (loops then run in the function's executor
   * instead of calling a body function per iteration, several times faster); not under XLA, which
   * compiles the functional form (Python does not mark them there either).
   */
  public static void lowerLikePython(Graph graph, OperationBuilder op) {
    if (!underXla(graph)) {
      op.setAttr("_lower_using_switch_merge", true);
    }
  }

  /**
   * Refuses, for a function XLA compiles, a TensorList whose elements are TensorLists: TensorFlow's
   * XLA compiler aborts the process on some of them (a failed check, "shape.IsTuple()" in
   * TensorListPushBackOp::Compile, when a list of unknown element shape is pushed into one), so
   * none reaches it. Every TensorList operation is looked at, not only those making a list (a push
   * decides from its input); every operation of the trace is seen here, branch and loop bodies
   * included, and the functions the trace calls natively (xla_lists.rs), by the same rule.
   */
  public static void refuseListsOfListsUnderXla(Graph graph, String function) {
    for (Iterator<GraphOperation> it = graph.operations(); it.hasNext(); ) {
      GraphOperation op = it.next();
      if ((op.type().startsWith("TensorList") || op.type().equals("EmptyTensorList")) && hasListElements(op)) {
        throw new IllegalArgumentException("'" + function + "' is compiled by XLA (jitCompile) and its operation '"
            + op.name() + "' (" + op.type() + ") has a TensorList of TensorLists, which TensorFlow's XLA compiler"
            + " cannot always compile (it aborts the process on some): define it without jitCompile");
      }
    }
  }

  /** Whether a TensorList operation's elements are TensorLists (false when it has no element dtype). */
  private static boolean hasListElements(GraphOperation op) {
    try {
      return op.attributes().getAttrType("element_dtype") == DataType.DT_VARIANT;
    } catch (RuntimeException noAttribute) {
      return false; // TensorListLength, TensorListElementShape: no element_dtype
    }
  }

  /** Whether the function tracing into {@code graph} is compiled by XLA (jitCompile). */
  static boolean underXla(Graph graph) {
    TracingInputs trace = Tracing.owning(graph);
    return trace != null && trace.function().options().jitCompile();
  }

  /**
   * A list of shapes as an attribute value ({@code output_shapes}). Not TensorFlow Java's
   * {@code setAttr(String, Shape[])}: it moves its pointer back one dimension for a shape of
   * unknown rank, so the shapes after one are read from the wrong place (a loop variable of
   * unknown rank gave the next one a garbage static shape, or aborted the JVM in a TensorFlow
   * check on its size).
   */
  public static AttrValue shapes(List<Shape> shapes) {
    AttrValue.ListValue.Builder list = AttrValue.ListValue.newBuilder();
    for (Shape s : shapes) {
      TensorShapeProto.Builder proto = TensorShapeProto.newBuilder();
      if (s.isUnknown()) {
        proto.setUnknownRank(true);
      } else {
        for (long d : s.asArray()) {
          proto.addDim(TensorShapeProto.Dim.newBuilder().setSize(d));
        }
      }
      list.addShape(proto);
    }
    return AttrValue.newBuilder().setList(list).build();
  }

  public static AttrValue func(String name) {
    return AttrValue.newBuilder().setFunc(NameAttrList.newBuilder().setName(name)).build();
  }

  public static String name(DataType t) {
    return t.name().startsWith("DT_") ? t.name().substring(3) : t.name();
  }
}
