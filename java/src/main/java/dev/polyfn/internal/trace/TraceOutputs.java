package dev.polyfn.internal.trace;

import dev.polyfn.internal.DataTypes;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import dev.polyfn.internal.flow.Effects;
import dev.polyfn.internal.flow.Regions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Output;
import org.tensorflow.proto.DataType;

/** What a trace hands to Rust about the body's outputs, checked before it reaches TensorFlow. */
public final class TraceOutputs {
  private TraceOutputs() {}

  /** The graph operation and output index of each output, in output order. */
  public record Resolved(String[] ops, int[] indices) {}

  /**
   * Checks the body's outputs and names their operations. An output must be an operand of the
   * traced graph, and not a resource handle: a handle (a variable's) means nothing outside the
   * call, so TensorFlow Java could not return it as a tensor.
   */
  public static Resolved resolve(String function, Graph graph, Traced outs) {
    int n = outs.names().length;
    if (outs.operands().length != n) {
      throw new IllegalStateException("the body of '" + function + "' returned " + n + " output names for "
          + outs.operands().length + " outputs");
    }
    String[] ops = new String[n];
    int[] indices = new int[n];
    for (int i = 0; i < n; i++) {
      String name = outs.names()[i];
      if (name == null || outs.operands()[i] == null) {
        throw new IllegalStateException("the body of '" + function + "' returned a null output or output name");
      }
      Output<?> o = outs.operands()[i].asOutput();
      if (o.env() != graph) {
        throw new IllegalStateException("output '" + name + "' of '" + function
            + "' is not an operand of the traced graph: build outputs with the Ops passed to the body");
      }
      checkDataType(function, name, o.dataType());
      ops[i] = o.op().name();
      indices[i] = o.index();
    }
    return new Resolved(ops, indices);
  }

  /**
   * Refuses an output TensorFlow Java cannot hand over as a tensor: a resource handle (a
   * variable's, meaningless outside the call), a variant, or a dtype it has no tensor class for.
   * Checked before any call runs (traced), or before the outputs are copied out (eager).
   */
  public static void checkDataType(String function, String name, DataType type) {
    if (type == DataType.DT_RESOURCE) {
      throw new IllegalArgumentException("output '" + name + "' of '" + function + "' is a resource handle (a "
          + "variable's handle), which cannot be returned as a tensor: return the variable's value "
          + "(variable.read(tf)) instead");
    }
    if (type == DataType.DT_VARIANT) {
      // TensorFlow Java has no tensor type for a variant: checked here, before any call runs.
      throw new IllegalArgumentException("output '" + name + "' of '" + function + "' is a variant (a TensorList "
          + "or another opaque value), which TensorFlow Java cannot hold as a tensor: return its contents "
          + "(for a TensorList, tf.tensorListStack) instead");
    }
    if (!DataTypes.hasTensorClass(type)) {
      // The call would run and then fail to hand the output over: refused before any call.
      throw new IllegalArgumentException("output '" + name + "' of '" + function + "' is a " + type
          + ", which TensorFlow Java has no tensor class for: cast it to a type it has (TFloat32, TFloat64, "
          + "TInt32, TInt64, TBool, TString...)");
    }
  }

  /**
   * Orders the body's stateful operations as Python's automatic control dependencies do (a read
   * after a write sees it, see {@link Effects}) and returns the operations run for their effects,
   * which become the function's control outputs so every call runs them, as Python makes every
   * stateful operation one: those with no outputs (variable assignments...), which no output
   * depends on, every stateful operation but pure reads and random ops (a cond or loop whose
   * branches write, a ResourceCountUpTo...), whose outputs may be unused: TensorFlow may prune an
   * operation that is neither an output's source nor a control output from a function's body; and
   * the reads whose values are used or returned ({@code outputOps} names the operations whose
   * outputs the function returns), so that a caller's later write waits for them. Operations
   * gathered into branch functions are left out: a branch's effects run only in its branch.
   */
  public static String[] effects(Graph graph, String[] outputOps) {
    // One native pass finds out what the walk below would for most bodies (no stateful op, no op
    // without outputs): it costs a few JNI calls per operation, 0.5 s over 10,000 operations.
    if (!Native.mayHaveEffects(TensorFlowInternals.graphAddress(graph))) {
      return new String[0];
    }
    List<GraphOperation> own = new ArrayList<>();
    for (Iterator<GraphOperation> it = graph.operations(); it.hasNext(); ) {
      GraphOperation op = it.next();
      if (!Regions.isAbsorbed(graph, op.name())) {
        own.add(op);
      }
    }
    // An operation may be returned twice.
    Effects.Ordered ordered = Effects.order(graph, own, new HashSet<>(Arrays.asList(outputOps)));
    Set<GraphOperation> mustRun = new HashSet<>(ordered.mustRun());
    // Reads whose values are used (by an operation, or returned) are control outputs too, as
    // Python's auto_control_deps makes them: TensorFlow inlines a call of this function into its
    // caller with the call's control outputs as its completion, so a caller's write after the
    // call waits only for them, and a read this function returns could see that later write.
    mustRun.addAll(ordered.usedReads());
    List<String> names = new ArrayList<>();
    for (GraphOperation op : own) {
      if (op.numOutputs() == 0 || mustRun.contains(op)) {
        names.add(op.name());
      }
    }
    return names.toArray(new String[0]);
  }
}
