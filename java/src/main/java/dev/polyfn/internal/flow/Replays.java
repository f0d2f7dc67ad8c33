package dev.polyfn.internal.flow;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Output;
import org.tensorflow.proto.DataType;

/**
 * Branch and loop lambdas traced again for a gradient. Python's cond_v2/while_v2 differentiate the
 * forward functions and keep their intermediate values; Polyfn traces the lambdas again and
 * recomputes them, which gives the forward pass's values only for a region whose results depend
 * on nothing the forward pass changed or drew at random. So a re-traced region's writes nothing
 * depends on are left out (the forward pass ran them), and {@link #check} refuses a region that
 * reads a variable it writes, whose results depend on a random operation, or that has any other
 * stateful operation (a call, a write something waits for), rather than differentiate it wrongly.
 */
public final class Replays {
  private Replays() {}

  /** The graphs whose lambdas gradients are re-tracing on this thread, with a depth each. */
  private static final ThreadLocal<Map<Graph, Integer>> REPLAYING = ThreadLocal.withInitial(IdentityHashMap::new);
  /** The graphs' operations when the outermost gradient of each began, in creation order. */
  private static final ThreadLocal<Map<Graph, List<GraphOperation>>> BEFORE =
      ThreadLocal.withInitial(IdentityHashMap::new);
  /** The conds and loops whose gradients are being built on this thread, innermost last. */
  private static final ThreadLocal<Deque<Forward>> WHAT = ThreadLocal.withInitial(ArrayDeque::new);

  /**
   * A cond or loop of the forward pass being differentiated, how messages name it, and the
   * resources the body wrote after it before the gradient began (the gradient runs after them).
   */
  private record Forward(String what, Map<String, GraphOperation> later) {}

  /**
   * Runs {@code work} with the branches and loop bodies it builds in {@code graph} re-traced: their
   * writes are dropped and they are checked. Per graph, so another function traced meanwhile (a
   * nested call) keeps its effects.
   */
  public static <R> R replaying(Graph graph, Supplier<R> work) {
    Map<Graph, Integer> depth = REPLAYING.get();
    if (depth.merge(graph, 1, Integer::sum) == 1) {
      List<GraphOperation> ops = new ArrayList<>();
      graph.operations().forEachRemaining(ops::add);
      BEFORE.get().put(graph, ops);
    }
    try {
      return work.get();
    } finally {
      if (depth.merge(graph, -1, Integer::sum) == 0) {
        depth.remove(graph);
        BEFORE.get().remove(graph);
      }
    }
  }

  static boolean active(Graph graph) {
    return REPLAYING.get().containsKey(graph);
  }

  /** Runs {@code work} building the gradient of {@code forward}, named {@code what} in refusals. */
  static void of(GraphOperation forward, String what, Runnable work) {
    Graph graph = (Graph) forward.env();
    Map<String, GraphOperation> later = Map.of();
    List<GraphOperation> before = BEFORE.get().get(graph);
    for (int i = 0; before != null && i < before.size(); i++) {
      if (before.get(i).name().equals(forward.name())) {
        later = writes(graph, before.subList(i + 1, before.size()));
      }
    }
    Deque<Forward> stack = WHAT.get();
    stack.addLast(new Forward(what, later));
    try {
      work.run();
    } finally {
      stack.removeLast();
    }
  }

  /**
   * Refuses re-traced regions (the branches of one cond, or one loop's condition and body: one
   * {@code kind}) whose recomputed values could differ from the forward pass's; nothing outside a
   * re-trace. Nested conds and loops were checked when built; their operations are among {@code
   * regions}' (absorbed), so their writes and reads count here too.
   */
  static void check(Graph graph, String kind, List<Regions.Region<List<Output<?>>>> regions) {
    if (!active(graph)) {
      return;
    }
    Map<String, GraphOperation> written = writes(graph, regions.stream().flatMap(r -> r.ops().stream()).toList());
    Map<String, GraphOperation> later = WHAT.get().isEmpty() ? Map.of() : WHAT.get().getLast().later();
    for (Regions.Region<List<Output<?>>> r : regions) {
      for (GraphOperation op : r.ops()) {
        if (Effects.READS.contains(op.type())) {
          for (String k : resources(graph, op)) {
            GraphOperation w = written.get(k);
            if (w != null) {
              throw refused(kind + " reads a variable it also writes (" + op.type() + " '" + op.name()
                  + "', written by " + w.type() + " '" + w.name() + "'): traced again, the read would see the value "
                  + "the forward pass left; move the write out of the cond or loop being differentiated, or read "
                  + "the variable before it and use that value inside");
            }
            w = later.get(k);
            if (w != null) {
              throw refused(kind + " reads a variable (" + op.type() + " '" + op.name() + "') written after the "
                  + "cond or loop, before the gradient (" + w.type() + " '" + w.name() + "'): traced again, the "
                  + "read would see that write; move the read out of the cond or loop (read the variable before "
                  + "it and use that value inside), or build the gradient before the write");
            }
          }
        }
      }
      Set<String> own = Regions.names(graph, r.ops());
      Set<String> used = ancestors(r.result(), own);
      for (GraphOperation op : r.ops()) {
        String t = op.type();
        if (!own.contains(op.name()) || !Effects.stateful(t) || Effects.READS.contains(t)
            || FlowFunctions.info(graph, op.name()) != null || droppable(op)
            || (Effects.UNORDERED.contains(t) && !used.contains(op.name()))) {
          continue;
        }
        throw refused(kind + " has the stateful operation " + t + " '" + op.name() + "'"
            + (Effects.UNORDERED.contains(t) ? ", whose values its results depend on: traced again, it would draw "
                + "new ones" : ", which could not be left out of it traced again: it would run again")
            + "; move it out of the cond or loop being differentiated (compute the value before it and use it "
            + "inside), or keep only pure operations and reads of variables the region does not write in it");
      }
    }
  }

  /**
   * The resources written by {@code ops}: by each stateful operation that is not a read, a random
   * operation or a cond or loop of {@code Flow} (whose writes are among the operations, absorbed).
   */
  private static Map<String, GraphOperation> writes(Graph graph, List<GraphOperation> ops) {
    Map<String, GraphOperation> written = new LinkedHashMap<>();
    for (GraphOperation op : ops) {
      if (Effects.stateful(op.type()) && !Effects.READS.contains(op.type())
          && !Effects.UNORDERED.contains(op.type()) && FlowFunctions.info(graph, op.name()) == null) {
        resources(graph, op).forEach(k -> written.putIfAbsent(k, op));
      }
    }
    return written;
  }

  private static IllegalArgumentException refused(String why) {
    String what = WHAT.get().isEmpty() ? "a cond or loop" : WHAT.get().getLast().what();
    return new IllegalArgumentException("Flow.gradients through " + what + " (its lambdas are traced again to "
        + "differentiate them): a " + why);
  }

  /** A write nothing depends on (no outputs, no control consumers): the re-trace leaves it out. */
  private static boolean droppable(GraphOperation op) {
    return op.numOutputs() == 0 && op.numControlConsumers() == 0 && Effects.stateful(op.type());
  }

  /**
   * The body without its effects that nothing depends on (variable writes, prints...), which are
   * absorbed so they never run: the forward pass ran them.
   */
  static List<GraphOperation> dropWrites(Graph graph, List<GraphOperation> body) {
    List<GraphOperation> kept = new ArrayList<>();
    List<GraphOperation> dropped = new ArrayList<>();
    for (GraphOperation op : body) {
      (droppable(op) ? dropped : kept).add(op);
    }
    if (!dropped.isEmpty()) {
      Regions.neutralizeAndAbsorb(graph, dropped);
    }
    return kept;
  }

  /** The region's own operations its results depend on (through inputs and control inputs). */
  private static Set<String> ancestors(List<Output<?>> results, Set<String> own) {
    Set<String> seen = new HashSet<>();
    Deque<GraphOperation> todo = new ArrayDeque<>();
    results.forEach(o -> todo.add((GraphOperation) o.op()));
    while (!todo.isEmpty()) {
      GraphOperation op = todo.removeLast();
      if (!own.contains(op.name()) || !seen.add(op.name())) {
        continue;
      }
      for (int i = 0; i < op.numInputs(); i++) {
        todo.add((GraphOperation) op.input(i).op());
      }
      todo.addAll(op.controlInputs());
    }
    return seen;
  }

  /**
   * The resources {@code op} takes, each named by the operation making it, looking through
   * Identity operations and the dead Switch an absorbed (nested) operation was rewired to.
   */
  private static List<String> resources(Graph graph, GraphOperation op) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < op.numInputs(); i++) {
      Output<?> o = op.input(i);
      if (o.dataType() != DataType.DT_RESOURCE) {
        continue;
      }
      while ((o.op().type().equals("Identity") && o.index() == 0)
          || (o.op().type().equals("Switch") && Regions.isAbsorbed(graph, o.op().name()))) {
        o = ((GraphOperation) o.op()).input(0);
      }
      out.add(o.op().name() + ":" + o.index());
    }
    return out;
  }
}
