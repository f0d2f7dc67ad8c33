package dev.polyfn.internal.trace;

import dev.polyfn.ConcreteFunctionInfo;
import dev.polyfn.TensorSpec;
import dev.polyfn.Variable;
import dev.polyfn.internal.Aliases;
import dev.polyfn.internal.Names;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.structure.CompositeRegistry;
import dev.polyfn.internal.structure.Nests;
import dev.polyfn.internal.structure.Records;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;

/**
 * Adds a call of a Polyfn function to a graph ({@code f.apply(tf, args)}): dispatched on the
 * symbolic specs of the operand arguments, tracing a concrete function if none is cached. Inside
 * a Polyfn body the call is nested in the traced function (which keeps the callee alive); with the
 * {@code Ops} of the user's own {@code Graph}, the function is copied into it to run in a {@code
 * Session}.
 */
public final class GraphCall {
  private GraphCall() {}

  public static Traced apply(FunctionCore f, Ops tf, Map<String, ?> args) {
    if (tf.scope().env().isEager() && Tracing.currentEager() != null) {
      return EagerCall.apply(f, args); // a body that runs eagerly calls f on values
    }
    if (!(tf.scope().env() instanceof Graph graph)) {
      throw new IllegalArgumentException("apply adds a call to a graph: pass the Ops of a graph or of the body being "
          + "traced; to run '" + f.name() + "' eagerly on tensors, use call");
    }
    TracingInputs outer = Tracing.owning(graph);
    String opName = tf.scope().makeOpName(Names.opName(f.name()));
    // From the user's own Graph, this is an outermost call: it traces again after giving up a
    // trace to another thread (see TraceLock); inside a trace, the caller's call does.
    Added added = TraceLock.retrying(() -> addCall(f, tf, graph, outer, args, opName));
    ConcreteFunctionInfo concrete = added.concrete();
    int n = added.outputs();
    GraphOperation op = graph.operation(opName);
    Operand<?>[] outputs = new Operand<?>[n];
    for (int i = 0; i < n; i++) {
      outputs[i] = op.output(i);
    }
    return new Traced(concrete.outputNames().toArray(new String[0]), outputs);
  }

  /** The call's concrete function and its number of outputs. */
  private record Added(ConcreteFunctionInfo concrete, int outputs) {}

  /** Adds the call of {@code f}'s concrete function for {@code args} to {@code graph}, as op {@code opName}. */
  private static Added addCall(FunctionCore f, Ops tf, Graph graph, TracingInputs outer, Map<String, ?> args,
      String opName) {
    ConcreteFunctionInfo concrete;
    int n;
    // Under the callee's trace lock, which clearCache takes too (and evictions happen only in
    // traces): the concrete function found stays cached until its call is added.
    f.traceLock().lock();
    try {
      concrete = f.getConcreteFunction(specsOf(args));
      List<Operand<?>> flat = flatten(f, tf, outer, args);
      String[] ops = new String[flat.size()];
      int[] indices = new int[flat.size()];
      for (int i = 0; i < ops.length; i++) {
        Output<?> o = flat.get(i).asOutput();
        ops[i] = o.op().name();
        indices[i] = o.index();
      }
      try {
        n = Native.addCall(f.address(), concrete.id(), outer == null ? 0 : outer.trace(),
            TensorFlowInternals.graphAddress(graph), opName, ops, indices);
      } finally {
        Reference.reachabilityFence(f); // its native state is read until addCall returns
      }
      if (n < 0) {
        f.address(); // a close on another thread dropped it: say so (throws the closed error)
        throw new IllegalStateException("the concrete function of '" + f.name() + "' was dropped before its call "
            + "was added");
      }
    } finally {
      f.traceLock().unlock();
    }
    return new Added(concrete, n);
  }

  /** The call's graph inputs in the concrete function's order: parameters, then captures. */
  private static List<Operand<?>> flatten(FunctionCore f, Ops tf, TracingInputs outer, Map<String, ?> args) {
    List<Operand<?>> flat = new ArrayList<>();
    Aliases seen = new Aliases();
    for (Param p : f.params()) {
      Object v = Arguments.valueFor(p, args);
      switch (p.kind()) {
        case TENSOR -> flat.add((Operand<?>) v);
        case LIST -> {
          for (Object e : (List<?>) v) {
            flat.add((Operand<?>) e);
          }
        }
        case MAP -> {
          for (String key : Arguments.sortedKeys(p, (Map<?, ?>) v)) {
            flat.add((Operand<?>) ((Map<?, ?>) v).get(key));
          }
        }
        case NEST -> nestOperands(p.name(), v, flat);
        case VARIABLE -> {
          if (seen.aliasOf(v) < 0) {
            flat.add(Tracing.captureVariable(tf, (Variable<?>) v));
          }
        }
        default -> { }
      }
    }
    for (Capture c : f.captures()) {
      if (c.variable() != null) {
        if (seen.aliasOf(c.variable()) < 0) {
          flat.add(Tracing.captureVariable(tf, c.variable()));
        }
      } else if (c.resource() != null && outer != null) {
        // The caller captures the table in turn, fed by handle and held by each call as a variable
        // is; the loaded function owns it, and once that is closed the caller's calls say so.
        flat.add(outer.captureResource(f.name() + "." + c.name(), c.resource()));
      } else if (c.resource() != null) {
        throw new IllegalStateException("function '" + f.name() + "' captures " + c.resource().name() + ", a resource"
            + " restored from a SavedModel (a lookup table); it can be called inside another Polyfn function's body, "
            + "but not from your own Graph");
      } else if (outer == null) {
        throw new IllegalStateException("function '" + f.name() + "' captures values by reference; it can be called "
            + "inside another Polyfn function's body, but not from your own Graph");
      } else {
        flat.add(outer.capture(f.name() + "." + c.name(), c.supplier()));
      }
    }
    return flat;
  }

  /**
   * The operands of a nested argument in the order its placeholders were made (lists by index,
   * maps by key); Java values have none. Records and composites of operands cannot be built from
   * their classes, so a nested call refuses them rather than feed a wrong number of inputs.
   */
  private static void nestOperands(String path, Object v, List<Operand<?>> flat) {
    if (v instanceof Operand<?> o) {
      flat.add(o);
    } else if (v instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        nestOperands(path + "[" + i + "]", list.get(i), flat);
      }
    } else if (v instanceof Map<?, ?> map) {
      for (String key : Nests.sortedKeys(map)) {
        nestOperands(path + "['" + key + "']", map.get(key), flat);
      }
    } else if ((v instanceof Record r && holdsOperand(r)) || v instanceof Tensor
        || (v != null && CompositeRegistry.forValue(v.getClass()) != null)) {
      throw new IllegalArgumentException("argument '" + path + "': a nested call (apply) takes lists and maps of "
          + "operands and Java values; pass this " + v.getClass().getSimpleName() + "'s operands in a list or map");
    }
  }

  private static boolean holdsOperand(Record r) {
    Records.Info info = Records.of(r.getClass());
    for (int i = 0; i < info.size(); i++) {
      if (info.get(r, i) instanceof Operand) {
        return true;
      }
    }
    return false;
  }

  /** Symbolic arguments as specs: each operand becomes a TensorSpec of its dtype and static shape. */
  private static Map<String, Object> specsOf(Map<String, ?> args) {
    Map<String, Object> specs = new LinkedHashMap<>();
    for (Map.Entry<String, ?> e : args.entrySet()) {
      specs.put(e.getKey(), specOf(e.getKey(), e.getValue()));
    }
    return specs;
  }

  private static Object specOf(String path, Object v) {
    if (v instanceof Operand<?> o) {
      return TensorSpec.of(o.type(), o.shape());
    }
    if (v instanceof List<?> list) {
      List<Object> out = new ArrayList<>();
      for (Object e : list) {
        out.add(specOf(path, e));
      }
      return out;
    }
    if (v instanceof Map<?, ?> map) {
      Map<Object, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        out.put(e.getKey(), specOf(path, e.getValue()));
      }
      return out;
    }
    if (v instanceof Record r && holdsOperand(r)) {
      // Refused before anything is traced (see nestOperands); a record of Java values is a Java value.
      throw new IllegalArgumentException("argument '" + path + "': a nested call (apply) takes lists and maps of "
          + "operands and Java values; pass this " + v.getClass().getSimpleName() + "'s operands in a list or map");
    }
    if (v instanceof Tensor) {
      throw new IllegalArgumentException("argument '" + path + "': apply takes operands of the graph, not tensors; "
          + "bring a tensor in with tf.constantOf or Inputs.constCapture");
    }
    return v; // Java values, variables
  }
}
