package dev.polyfn.internal;

import static org.tensorflow.internal.c_api.global.tensorflow.TF_DeleteStatus;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_GetCode;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_GraphOperationByName;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_GraphSetTensorShape;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_Message;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_NewStatus;

import org.bytedeco.javacpp.Pointer;
import org.tensorflow.Graph;
import org.tensorflow.Output;
import org.tensorflow.internal.c_api.TF_Graph;
import org.tensorflow.internal.c_api.TF_Operation;
import org.tensorflow.internal.c_api.TF_Output;
import org.tensorflow.internal.c_api.TF_Status;

/**
 * Records a known static shape on a graph output whose shape TensorFlow cannot infer. A variable's
 * resource placeholder carries no shape-and-type data in a trace graph, so a {@code
 * ReadVariableOp} of it has an unknown shape, where TensorFlow gives the variable's. Telling the
 * graph's shape inference the shape (TensorFlow merges it with what it inferred) keeps shape-
 * dependent bodies as in TensorFlow, at trace time only: no op runs at each call.
 */
public final class StaticShapes {
  private StaticShapes() {}

  /**
   * Sets the static shape of {@code output}, an output of an operation of {@code graph}, to
   * {@code dims} (all known).
   *
   * @throws IllegalStateException if TensorFlow finds the shape incompatible with what it inferred
   */
  public static void declare(Graph graph, Output<?> output, long[] dims) {
    TF_Graph g = new TF_Graph(new Address(TensorFlowInternals.graphAddress(graph)));
    TF_Operation op = TF_GraphOperationByName(g, output.op().name());
    if (op == null || op.isNull()) {
      throw new IllegalStateException("no operation '" + output.op().name() + "' in the graph");
    }
    TF_Status status = TF_NewStatus();
    try (TF_Output o = new TF_Output()) {
      o.oper(op).index(output.index());
      TF_GraphSetTensorShape(g, o, dims, dims.length, status);
      if (TF_GetCode(status) != 0) {
        throw new IllegalStateException("setting the shape of '" + output.op().name() + "': "
            + TF_Message(status).getString());
      }
    } finally {
      TF_DeleteStatus(status);
    }
  }

  /** A JavaCPP pointer at a raw address (not owned). */
  private static final class Address extends Pointer {
    Address(long address) {
      this.address = address;
    }
  }
}
