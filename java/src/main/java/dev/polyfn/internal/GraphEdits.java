package dev.polyfn.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bytedeco.javacpp.PointerScope;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Output;
import org.tensorflow.internal.c_api.TF_Input;
import org.tensorflow.internal.c_api.TF_Output;
import org.tensorflow.internal.c_api.TF_Status;
import org.tensorflow.internal.c_api.global.tensorflow;

/**
 * The graph edits TensorFlow Java has no API for, which control flow makes while it builds
 * (rewiring an input, asking the op registry whether an op type is stateful): through TensorFlow
 * Java's C API bindings, which only this package touches.
 */
public final class GraphEdits {
  private GraphEdits() {}

  private static final Map<String, Boolean> STATEFUL = new ConcurrentHashMap<>();

  /** Makes input {@code index} of {@code dst} read {@code src} instead ({@code TF_UpdateEdge}). */
  public static void updateEdge(Graph graph, Output<?> src, GraphOperation dst, int index) {
    try (PointerScope scope = new PointerScope()) {
      TF_Status status = TF_Status.newStatus();
      TF_Output s = new TF_Output(1).oper(((GraphOperation) src.op()).getUnsafeNativeHandle()).index(src.index());
      TF_Input d = new TF_Input(1).oper(dst.getUnsafeNativeHandle()).index(index);
      tensorflow.TF_UpdateEdge(TensorFlowInternals.graphHandle(graph), s, d, status);
      status.throwExceptionIfNotOK();
    }
  }

  /** Whether TensorFlow registers ops of type {@code type} as stateful (unknown types count as stateful). */
  public static boolean isStateful(String type) {
    return STATEFUL.computeIfAbsent(type, t -> {
      try (PointerScope scope = new PointerScope()) {
        TF_Status status = TF_Status.newStatus();
        boolean s = tensorflow.TF_OpIsStateful(t, status) != 0;
        return tensorflow.TF_GetCode(status) == tensorflow.TF_OK ? s : true;
      }
    });
  }
}
