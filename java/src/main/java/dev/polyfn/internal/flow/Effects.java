package dev.polyfn.internal.flow;

import dev.polyfn.internal.GraphEdits;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;

/**
 * TensorFlow's automatic control dependencies (Python's {@code auto_control_deps}), for one traced
 * body, branch or loop body: its stateful operations run in the order the body created them, and
 * the ones run for their effect are named so they are kept.
 *
 * <p>Ordering follows Python: an operation using a resource (a variable) runs after the last write
 * to it, and a write also after the reads since that write; stateful operations using no resource
 * run in creation order among themselves. A TensorFlow graph cannot gain a control edge after an
 * operation is built, so an operation that must wait gets its first input through a new {@code
 * Identity} that carries the control inputs (an operation without inputs cannot be ordered), and
 * a control-flow operation or call ({@link #FUNCTIONAL}) every input: TensorFlow lowers a {@code
 * While}/{@code If} to Switch/Merge and Enter operations, and inlines a call, starting what each
 * input feeds as soon as that input is ready, so one gated input would not hold back the others
 * (a loop's first write could run before a write made before the loop).
 */
public final class Effects {
  private Effects() {}

  /** Operations that only read the resources they take. */
  static final Set<String> READS = Set.of("ReadVariableOp", "ResourceGather", "ResourceGatherNd",
      "VariableShape");
  /** Stateful only for their random state: neither ordered nor kept, as in Python. */
  static final Set<String> UNORDERED = Set.of("RandomUniform", "RandomUniformInt", "RandomStandardNormal",
      "ParameterizedTruncatedNormal", "TruncatedNormal", "RandomShuffle", "Multinomial", "RandomGamma",
      "RandomGammaGrad", "RandomPoisson", "RandomPoissonV2");
  /** Stateful operations that run other functions (control flow, calls): every input is gated. */
  static final Set<String> FUNCTIONAL = Set.of("If", "While", "StatefulPartitionedCall");

  /** Whether TensorFlow registers ops of type {@code type} as stateful (unknown types count as stateful). */
  public static boolean stateful(String type) {
    return GraphEdits.isStateful(type);
  }

  /**
   * What {@link #order} did: the operations that must run for their effect (every stateful one but
   * pure reads and random ops), the reads whose values are used or returned ({@code usedReads}: what waits for
   * a body's effects must wait for them too, as Python's auto_control_deps adds a consumed read to
   * the ops that must run; else a loop's next iteration could write before this one reads), and
   * the Identity operations it added.
   */
  public record Ordered(List<GraphOperation> mustRun, List<GraphOperation> usedReads, List<GraphOperation> added) {}

  /** Orders the stateful operations among {@code ops} (in creation order). */
  public static Ordered order(Graph graph, List<GraphOperation> ops) {
    return order(graph, ops, Set.of());
  }

  /**
   * {@link #order}, where the operations named in {@code returned} are the function's results:
   * a read returned as it is has no consumer in the graph, and is a used read all the same.
   */
  public static Ordered order(Graph graph, List<GraphOperation> ops, Set<String> returned) {
    Map<String, GraphOperation> lastWrite = new HashMap<>();
    Map<String, List<GraphOperation>> readsSince = new HashMap<>();
    GraphOperation lastUnkeyed = null;
    List<GraphOperation> mustRun = new ArrayList<>();
    List<GraphOperation> usedReads = new ArrayList<>();
    List<GraphOperation> added = new ArrayList<>();
    Ops tf = null;
    for (GraphOperation op : ops) {
      if (!stateful(op.type())) {
        continue;
      }
      Set<GraphOperation> after = new LinkedHashSet<>();
      Set<String> seen = new LinkedHashSet<>();
      boolean read = READS.contains(op.type());
      for (int i = 0; i < op.numInputs(); i++) {
        Output<?> in = op.input(i);
        if (in.dataType() != DataType.DT_RESOURCE) {
          continue;
        }
        String key = source(in);
        if (!seen.add(key)) {
          continue;
        }
        GraphOperation w = lastWrite.get(key);
        if (w != null) {
          after.add(w);
        }
        List<GraphOperation> reads = readsSince.computeIfAbsent(key, k -> new ArrayList<>());
        if (read) {
          reads.add(op);
        } else {
          after.addAll(reads);
          reads.clear();
          lastWrite.put(key, op);
        }
      }
      if (seen.isEmpty() && !UNORDERED.contains(op.type())) {
        if (lastUnkeyed != null) {
          after.add(lastUnkeyed);
        }
        lastUnkeyed = op;
      }
      after.remove(op);
      if (!after.isEmpty() && op.numInputs() > 0) {
        if (tf == null) {
          tf = Ops.create(graph).withSubScope("polyfn_ordered");
        }
        waitFor(graph, tf, op, after, added);
      }
      if (!read && !UNORDERED.contains(op.type())) {
        mustRun.add(op);
      } else if (read && (op.numConsumers() > 0 || returned.contains(op.name()))) {
        usedReads.add(op);
      }
    }
    return new Ordered(mustRun, usedReads, added);
  }

  /**
   * Routes {@code op}'s first input (every input of a control-flow operation or call) through an
   * Identity that runs after {@code after}; adds the Identities to {@code added}.
   */
  private static void waitFor(Graph graph, Ops tf, GraphOperation op, Set<GraphOperation> after,
      List<GraphOperation> added) {
    int gated = FUNCTIONAL.contains(op.type()) ? op.numInputs() : 1;
    for (int i = 0; i < gated; i++) {
      var b = tf.scope().opBuilder("Identity", "identity").addInput(op.input(i));
      for (GraphOperation a : after) {
        b.addControlInput(a);
      }
      GraphOperation id = (GraphOperation) b.build();
      GraphEdits.updateEdge(graph, id.output(0), op, i);
      added.add(id);
    }
  }

  /** The resource a handle comes from, looking through Identity operations (ours included). */
  private static String source(Output<?> handle) {
    Output<?> o = handle;
    while (o.op().type().equals("Identity") && o.index() == 0) {
      o = ((GraphOperation) o.op()).input(0);
    }
    return o.op().name() + ":" + o.index();
  }
}
