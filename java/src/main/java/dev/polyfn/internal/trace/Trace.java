package dev.polyfn.internal.trace;

import dev.polyfn.internal.CallBuffer;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.NativeLog;
import dev.polyfn.internal.SlowWork;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.flow.FlowChecks;
import dev.polyfn.internal.flow.Regions;
import org.tensorflow.Graph;
import org.tensorflow.op.Ops;

/**
 * One trace of a function's body: the native trace begun, the body run in a fresh graph over
 * {@link TracingInputs}, its outputs checked, the graph turned into a concrete function (less
 * what control flow absorbed into branch functions) and, for a call, run on the call's arguments.
 */
final class Trace {
  private Trace() {}

  /** Runs under {@code f}'s trace lock, with its reentry recorded (see {@link FunctionCore#traceLocked}). */
  static Result run(FunctionCore f, long fn, Arguments.Lookup lookup, CallBuffer call, boolean forCall, boolean run,
      Inference inference) {
    // Read once here, so that Rust need not call back into Java to ask (see Native.beginTrace).
    long slow = SlowWork.thresholdNanos();
    int level = NativeLog.wantedLevel();
    long trace = call == null
        ? Native.beginTrace(fn, lookup.names(), null, 0, forCall, slow, level)
        : Native.beginTrace(fn, lookup.names(), call.facts(), call.factCount(), forCall, slow, level);
    if (inference != null) {
      Native.traceExamples(trace);
    }
    TracingInputs inputs = null;
    Graph traced = null;
    try (Graph graph = new Graph()) {
      traced = graph;
      Ops tf = Ops.create(graph);
      inputs = new TracingInputs(f, trace, graph, tf, lookup, f.interner(), f.params() == null);
      inputs.inferFrom(inference);
      Tracing.push(inputs);
      Traced outs = f.body().trace(tf, inputs);
      TraceOutputs.Resolved resolved = TraceOutputs.resolve(f.name(), graph, outs);
      if (f.options().jitCompile()) {
        FlowChecks.refuseListsOfListsUnderXla(graph, f.name());
      }
      String[] absorbed = Regions.absorbed(graph);
      Regions.requireNotUsedOutside(graph, absorbed, f.name(), resolved.ops());
      if (f.params() != null) {
        LaterTraces.requireSameAsFirst(f.name(), f.params(), f.captures(), inputs);
      }
      int key = f.outputNames().record(outs.names());
      int id = Native.finishTrace(trace, TensorFlowInternals.graphAddress(graph), inputs.placeholderNames(),
          outs.names(), resolved.ops(), resolved.indices(), TraceOutputs.effects(graph, resolved.ops()), Regions.leftOut(graph, absorbed), key);
      f.traced(inputs, id, outs.names());
      return run ? f.runTraced(trace, lookup.asMap()) : null;
    } finally {
      if (inputs != null) {
        Tracing.pop(inputs);
        inputs.close();
      }
      Native.freeTrace(trace);
      Regions.forget(traced); // control flow's bookkeeping of the graph (it holds branch lambdas)
    }
  }
}
