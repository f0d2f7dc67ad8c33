package dev.polyfn.bench;

import static org.tensorflow.internal.c_api.global.tensorflow.TFE_ContextAddFunction;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_ContextRemoveFunction;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_DeleteContextOptions;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_DeleteOp;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_DeleteTensorHandle;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_Execute;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_NewContext;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_NewContextOptions;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_NewOp;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_NewTensorHandle;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_OpAddInput;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_OpSetAttrString;
import static org.tensorflow.internal.c_api.global.tensorflow.TFE_TensorHandleResolve;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_AddInput;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_AllocateTensor;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_DeleteFunction;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_DeleteGraph;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_DeleteStatus;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_DeleteTensor;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_FinishOperation;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_GetCode;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_GraphToFunction;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_Message;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_NewGraph;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_NewOperation;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_NewStatus;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_SetAttrShape;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_SetAttrTensor;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_SetAttrType;
import static org.tensorflow.internal.c_api.global.tensorflow.TF_TensorData;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;
import org.tensorflow.TensorFlow;
import org.tensorflow.internal.c_api.TFE_Context;
import org.tensorflow.internal.c_api.TFE_ContextOptions;
import org.tensorflow.internal.c_api.TFE_Op;
import org.tensorflow.internal.c_api.TFE_TensorHandle;
import org.tensorflow.internal.c_api.TF_Function;
import org.tensorflow.internal.c_api.TF_Graph;
import org.tensorflow.internal.c_api.TF_Operation;
import org.tensorflow.internal.c_api.TF_OperationDescription;
import org.tensorflow.internal.c_api.TF_Output;
import org.tensorflow.internal.c_api.TF_Status;
import org.tensorflow.internal.c_api.TF_Tensor;

/**
 * The first-call floor of {@code native/tf/examples/first_call.rs} done from the JVM, through
 * TensorFlow's C API as TensorFlow Java binds it: the {@code add2} graph built (Placeholder,
 * Const, AddV2), turned into a function, registered in an eager context of its own, run once
 * with Grappler configured as Python's (the bytes Polyfn sends for a function without control
 * flow), then removed. Run in the same process as Polyfn's first calls, alternating with them, it
 * sees the same machine load, JIT and garbage collector.
 */
final class CApiFirstCall implements AutoCloseable {
  /**
   * {@code polyfn_tf::call_options::CPU_CONFIG_PROTO_NO_TFG}, the configuration Polyfn sends for
   * this function on a machine without GPUs: the floor does the same work.
   */
  private static final byte[] CONFIG = {0x32, 0x02, 0x4a, 0x00, 0x38, 0x01, 0x52, 0x07, 0x52, 0x05, 0x20, 0x06,
      (byte) 0x80, 0x02, 0x01, (byte) 0x82, 0x01, 0x00, (byte) 0x92, 0x01, 0x02, 0x4a, 0x00};
  private static final int DT_FLOAT = 1;

  private final TF_Status status;
  private final TFE_Context ctx;
  private final TF_Tensor input;
  private final BytePointer config = new BytePointer(CONFIG);
  private int next;

  CApiFirstCall() {
    TensorFlow.version(); // loads the runtime
    status = TF_NewStatus();
    TFE_ContextOptions opts = TFE_NewContextOptions();
    ctx = TFE_NewContext(opts, status);
    TFE_DeleteContextOptions(opts);
    check("TFE_NewContext");
    input = scalar(1f);
  }

  private static TF_Tensor scalar(float v) {
    TF_Tensor t = TF_AllocateTensor(DT_FLOAT, new long[0], 0, 4);
    new FloatPointer(TF_TensorData(t)).put(v);
    return t;
  }

  private void check(String what) {
    if (TF_GetCode(status) != 0) {
      throw new IllegalStateException(what + ": " + TF_Message(status).getString());
    }
  }

  /** One new function's graph, conversion, registration and first run; returns the result. */
  float firstCall() {
    String name = "capi_first_" + (next++);
    TF_Graph g = TF_NewGraph();
    try {
      TF_OperationDescription d = TF_NewOperation(g, "Placeholder", "x");
      TF_SetAttrType(d, "dtype", DT_FLOAT);
      TF_SetAttrShape(d, "shape", new long[0], 0);
      TF_Operation x = TF_FinishOperation(d, status);
      check("Placeholder");
      d = TF_NewOperation(g, "Const", "two");
      TF_Tensor two = scalar(2f);
      TF_SetAttrTensor(d, "value", two, status);
      TF_DeleteTensor(two);
      TF_SetAttrType(d, "dtype", DT_FLOAT);
      TF_Operation c = TF_FinishOperation(d, status);
      check("Const");
      d = TF_NewOperation(g, "AddV2", "y");
      TF_AddInput(d, new TF_Output().oper(x).index(0));
      TF_AddInput(d, new TF_Output().oper(c).index(0));
      TF_Operation y = TF_FinishOperation(d, status);
      check("AddV2");
      PointerPointer<BytePointer> names = new PointerPointer<>("y");
      TF_Function f = TF_GraphToFunction(g, new BytePointer(name), (byte) 0, -1, (PointerPointer<?>) null, 1,
          new TF_Output().oper(x).index(0), 1, new TF_Output().oper(y).index(0), names, null, null, status);
      check("TF_GraphToFunction");
      TFE_ContextAddFunction(ctx, f, status);
      check("TFE_ContextAddFunction");
      try {
        return run(name);
      } finally {
        TFE_ContextRemoveFunction(ctx, name, status);
        TF_DeleteFunction(f);
      }
    } finally {
      TF_DeleteGraph(g);
    }
  }

  private float run(String name) {
    TFE_Op op = TFE_NewOp(ctx, name, status);
    check("TFE_NewOp");
    TFE_TensorHandle h = TFE_NewTensorHandle(input, status);
    try {
      TFE_OpSetAttrString(op, "config_proto", config, CONFIG.length);
      TFE_OpAddInput(op, h, status);
      check("TFE_OpAddInput");
      PointerPointer<TFE_TensorHandle> out = new PointerPointer<>(1);
      IntPointer n = new IntPointer(1).put(1);
      TFE_Execute(op, out, n, status);
      check("TFE_Execute");
      TFE_TensorHandle r = out.get(TFE_TensorHandle.class, 0);
      TF_Tensor t = TFE_TensorHandleResolve(r, status);
      TFE_DeleteTensorHandle(r);
      check("TFE_TensorHandleResolve");
      float v = new FloatPointer(TF_TensorData(t)).get();
      TF_DeleteTensor(t);
      return v;
    } finally {
      TFE_DeleteTensorHandle(h);
      TFE_DeleteOp(op);
    }
  }

  @Override
  public void close() {
    TF_DeleteTensor(input);
    TF_DeleteStatus(status);
    // The context stays: deleting it while TensorFlow Java's own lives is not needed here.
  }
}
