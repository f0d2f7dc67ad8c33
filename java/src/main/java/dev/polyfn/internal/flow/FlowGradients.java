package dev.polyfn.internal.flow;

import dev.polyfn.internal.GraphEdits;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;

/**
 * Reverse-mode gradients through the control flow {@code Flow} builds. TensorFlow's C++ gradient
 * registry (what {@code tf.gradients} uses) has no gradient for {@code If} or {@code While}, and it
 * cannot be extended from Java. Where no cond, loop or map is on the way, the registry
 * differentiates the whole path in one call, as {@code tf.gradients}. Else this walks the operations
 * between the xs and y itself: each
 * ordinary operation is differentiated by that registry, one operation at a time (its inputs are
 * first routed through Identity operations, so the registry sees that operation only and no path is
 * counted twice), and each cond or loop gets a gradient built as control flow, the way Python's
 * cond_v2/while_v2 do ({@link FlowGradientOps}). TensorFlow's {@code SymbolicGradient} would
 * differentiate a branch function at run time, but TensorFlow 2's function runtime does not run it.
 */
public final class FlowGradients {
  private FlowGradients() {}

  public static List<Operand<?>> gradients(Ops tf, Operand<?> y, List<? extends Operand<?>> xs) {
    if (FlowEager.applies(tf)) {
      throw FlowEager.noGradients();
    }
    Graph graph = FlowChecks.graphOf(tf, "gradients");
    FlowChecks.operandOf(graph, y, "gradients", "y");
    if (!isFloat(y.asOutput().dataType())) {
      throw new IllegalArgumentException("gradients: y must be a floating-point tensor, got "
          + FlowChecks.name(y.asOutput().dataType()));
    }
    if (xs == null || xs.isEmpty()) {
      throw new IllegalArgumentException("gradients: xs must hold at least one operand");
    }
    for (int i = 0; i < xs.size(); i++) {
      FlowChecks.operandOf(graph, xs.get(i), "gradients", "xs[" + i + "]");
    }
    List<Output<?>> x = new ArrayList<>();
    xs.forEach(o -> x.add(o.asOutput()));
    Ops g = tf.withSubScope("gradients");
    // Branch and loop lambdas traced again for the gradient must not write again.
    // As tf.gradients, each x's gradient is its total derivative, paths through another x included.
    List<Output<?>> d = Replays.replaying(graph,
        () -> backprop(g, graph, List.of(y.asOutput()), List.of(g.onesLike(y).asOutput()), x, false));
    List<Operand<?>> out = new ArrayList<>();
    for (int i = 0; i < x.size(); i++) {
      out.add(d.get(i) != null ? d.get(i) : g.zerosLike(x.get(i)).asOutput());
    }
    return out;
  }

  /**
   * The sum over {@code ys} of their gradients (seeded with {@code seeds}) with respect to each of
   * {@code xs}; null for an x nothing flows back to. A TensorList y or x (a loop's gradient
   * differentiated again pops them) has a TensorList of gradients. Backpropagation stops at the xs: a path from
   * one x through another is counted once, at the other.
   */
  public static List<Output<?>> backprop(Ops g, Graph graph, List<Output<?>> ys, List<Output<?>> seeds, List<Output<?>> xs) {
    return backprop(g, graph, ys, seeds, xs, true);
  }

  /**
   * {@link #backprop(Ops, Graph, List, List, List)}, stopping at the xs or (with {@code stopAtXs}
   * false) going on through them, so that an x computed from another x passes its gradient on.
   * The gradients of branches and loop bodies stop: their xs are the values the enclosing
   * backpropagation goes on from.
   */
  private static List<Output<?>> backprop(Ops g, Graph graph, List<Output<?>> ys, List<Output<?>> seeds,
      List<Output<?>> xs, boolean stopAtXs) {
    List<GraphOperation> path = reverseTopological(ys, xs, stopAtXs);
    if (!stopAtXs && registryAlone(graph, path)) {
      return registryAll(g, graph, ys, seeds, xs, path);
    }
    Map<String, List<Output<?>>> grads = new HashMap<>();
    for (int i = 0; i < ys.size(); i++) {
      if (ListGradients.differentiable(ys.get(i).dataType())) {
        add(grads, ys.get(i), seeds.get(i));
      }
    }
    Set<String> reached = new HashSet<>();
    path.forEach(op -> reached.add(op.name()));
    xs.forEach(x -> reached.add(key(x)));
    for (GraphOperation op : path) {
      if (NOT_DIFFERENTIABLE.contains(op.type())) {
        continue;
      }
      List<Output<?>> dys = new ArrayList<>();
      boolean any = false;
      for (int j = 0; j < op.numOutputs(); j++) {
        Output<?> dy = sum(g, grads.get(key(op.output(j))));
        any |= dy != null;
        dys.add(dy);
      }
      if (!any) {
        continue;
      }
      Object info = FlowFunctions.info(graph, op.name());
      if (info != null) {
        refuseComplexPaths(op, reached, dys);
      }
      if (info instanceof FlowFunctions.CondInfo c) {
        FlowGradientOps.cond(g, op, c, filled(g, op, dys), grads);
      } else if (info instanceof FlowFunctions.MapInfo m) {
        FlowGradientOps.map(g, m, dys.get(0), grads);
      } else if (info instanceof FlowFunctions.LoopInfo l) {
        FlowGradientOps.loop(g, op, l, filled(g, op, dys), grads);
      } else if (ListGradients.handles(op)) {
        ListGradients.apply(g, op, dys, grads);
      } else if (CorrectedGradients.handles(op)) {
        CorrectedGradients.apply(g, graph, op, dys.get(0), grads);
      } else if (MissingGradients.handles(op)) {
        MissingGradients.apply(g, op, dys, grads);
      } else {
        refuseVariantPaths(op, reached);
        registry(g, graph, op, dys, grads);
      }
    }
    List<Output<?>> out = new ArrayList<>();
    for (Output<?> x : xs) {
      out.add(ListGradients.differentiable(x.dataType()) ? sum(g, grads.get(key(x))) : null);
    }
    return out;
  }

  /**
   * Whether TensorFlow's C++ registry can differentiate every operation on the path by itself: no
   * cond, loop or map (which it has no gradient for), no TensorList operation ({@link
   * ListGradients}), none of the operations it refuses that pass no gradient ({@link
   * #NOT_DIFFERENTIABLE}), none whose gradient it leaves unsummed ({@link BroadcastSums}) and none
   * whose gradient it gets wrong ({@link CorrectedGradients}).
   */
  private static boolean registryAlone(Graph graph, List<GraphOperation> path) {
    for (GraphOperation op : path) {
      if (NOT_DIFFERENTIABLE.contains(op.type()) || FlowFunctions.info(graph, op.name()) != null
          || ListGradients.handles(op) || BroadcastSums.UNSUMMED.contains(op.type())
          || CorrectedGradients.handles(op) || MissingGradients.handles(op)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The gradients of {@code ys} (seeded) with respect to {@code xs} in one call of the registry, as
   * {@code tf.gradients} in TensorFlow Java: total derivatives, as the walk with {@code stopAtXs}
   * false gives. One operation at a time, each call searches the graph above that operation
   * again: tracing a chain of 1,000 multiplications took 17 s, 0.7 s with one call. The
   * registry's reductions that static shapes show reduce nothing are then taken out
   * ({@link UnbroadcastGradients}): TensorFlow constant-folded them before the first run, 7 s for
   * that chain.
   */
  private static List<Output<?>> registryAll(Ops g, Graph graph, List<Output<?>> ys, List<Output<?>> seeds,
      List<Output<?>> xs, List<GraphOperation> path) {
    Set<String> onPath = new HashSet<>();
    path.forEach(op -> onPath.add(op.name()));
    List<Output<?>> y = new ArrayList<>();
    List<Output<?>> dy = new ArrayList<>();
    for (int i = 0; i < ys.size(); i++) {
      if (isFloat(ys.get(i).dataType())) {
        y.add(ys.get(i));
        dy.add(seeds.get(i));
      }
    }
    // Each distinct floating-point x once: the registry answers one of a repeated input only.
    Map<String, Integer> at = new LinkedHashMap<>();
    List<Output<?>> x = new ArrayList<>();
    for (Output<?> o : xs) {
      // The registry refuses an x that y does not depend on ("unreachable from the output
      // node(s)"); its gradient is zeros, as the walk gives and Python's None means.
      boolean connected = y.stream().anyMatch(v -> key(v).equals(key(o)))
          || ((GraphOperation) o.op()).consumers(o.index()).stream().anyMatch(c -> onPath.contains(c.name()));
      if (connected && isFloat(o.dataType()) && at.putIfAbsent(key(o), x.size()) == null) {
        x.add(o);
      }
    }
    List<Output<?>> out = new ArrayList<>();
    String prefix = g.scope().makeOpName("grad");
    Output<?>[] dx = y.isEmpty() || x.isEmpty() ? new Output<?>[0]
        : UnbroadcastGradients.simplify(graph, prefix, graph.addGradients(prefix, y.toArray(new Output<?>[0]),
            x.toArray(new Output<?>[0]), dy.toArray(new Output<?>[0])));
    for (Output<?> o : xs) {
      Integer i = at.get(key(o));
      out.add(i == null || i >= dx.length || !isGradient(dx[i]) ? null : dx[i]);
    }
    return out;
  }

  /** Whether the registry gave a gradient: its "no gradient" (a StopGradient's input) is an output of no operation. */
  static boolean isGradient(Output<?> d) {
    return d != null && d.op() != null && ((GraphOperation) d.op()).getUnsafeNativeHandle() != null
        && !((GraphOperation) d.op()).getUnsafeNativeHandle().isNull();
  }

  /**
   * Refuses an operation the registry would differentiate that reads a variant from the path (an
   * x, or an operation on the path): the registry sees floating-point inputs only, so the
   * gradient would silently leave out that path. TensorLists have their gradients ({@link
   * ListGradients}); other variants (an Optional, a dataset) have none.
   */
  private static void refuseVariantPaths(GraphOperation op, Set<String> reached) {
    for (int i = 0; i < op.numInputs(); i++) {
      Output<?> in = op.input(i);
      if (in.dataType() == DataType.DT_VARIANT && (reached.contains(in.op().name()) || reached.contains(key(in)))) {
        throw new IllegalArgumentException("gradients: no gradient through " + op.type() + " '" + op.name()
            + "': its input " + i + " is a variant that depends on the xs; gradients go through TensorLists only");
      }
    }
  }

  /**
   * Refuses a cond, loop or map that reads a complex value from the path or passes a gradient
   * back through a complex output: their gradients carry floating-point values and TensorLists
   * only, so that path's gradient would silently be zeros.
   */
  private static void refuseComplexPaths(GraphOperation op, Set<String> reached, List<Output<?>> dys) {
    for (int i = 0; i < op.numInputs(); i++) {
      Output<?> in = op.input(i);
      if (isComplex(in.dataType()) && (reached.contains(in.op().name()) || reached.contains(key(in)))) {
        throw complexRefusal(op, "its input " + i);
      }
    }
    for (int j = 0; j < dys.size(); j++) {
      if (dys.get(j) != null && isComplex(op.output(j).dataType())) {
        throw complexRefusal(op, "its output " + j);
      }
    }
  }

  private static IllegalArgumentException complexRefusal(GraphOperation op, String what) {
    return new IllegalArgumentException("gradients: no gradient through " + op.type() + " '" + op.name() + "': "
        + what + " is complex and on the path from the xs; a cond, loop or mapFn is differentiated for"
        + " floating-point values and TensorLists only (take the complex values' real parts out of it)");
  }

  /** One ordinary operation, differentiated by TensorFlow's C++ registry. */
  private static void registry(Ops g, Graph graph, GraphOperation op, List<Output<?>> dys,
      Map<String, List<Output<?>>> grads) {
    List<Output<?>> ys = new ArrayList<>();
    List<Output<?>> dy = new ArrayList<>();
    for (int j = 0; j < op.numOutputs(); j++) {
      if (carriesGradient(op.output(j).dataType())) {
        ys.add(op.output(j));
        dy.add(dys.get(j) != null ? dys.get(j) : g.zerosLike(op.output(j)).asOutput());
      }
    }
    // Each distinct floating-point or complex input, and an Identity of it that the operation reads instead.
    Map<String, Output<?>> originals = new LinkedHashMap<>();
    Map<String, Output<?>> standIns = new HashMap<>();
    for (int i = 0; i < op.numInputs(); i++) {
      Output<?> in = op.input(i);
      if (!carriesGradient(in.dataType())) {
        continue;
      }
      String k = key(in);
      if (!originals.containsKey(k)) {
        originals.put(k, in);
        standIns.put(k, g.identity(in).asOutput());
      }
      rewire(graph, standIns.get(k), op, i);
    }
    if (ys.isEmpty() || originals.isEmpty()) {
      return;
    }
    List<Output<?>> xs = new ArrayList<>();
    for (String k : originals.keySet()) {
      xs.add(standIns.get(k));
    }
    Output<?>[] dx = graph.addGradients(g.scope().makeOpName("grad_" + op.type()), ys.toArray(new Output<?>[0]),
        xs.toArray(new Output<?>[0]), dy.toArray(new Output<?>[0]));
    int i = 0;
    for (Output<?> orig : originals.values()) {
      Output<?> d = dx[i++];
      if (isGradient(d)) {
        add(grads, orig, BroadcastSums.summed(g, op.type(), orig, d));
      }
    }
  }

  /**
   * The gradient of every output, zeros where nothing flowed back; null for a resource (a
   * variable a loop captures and hands on), which has no zeros (no ZerosLike kernel) and no gradient.
   */
  private static List<Output<?>> filled(Ops g, GraphOperation op, List<Output<?>> dys) {
    List<Output<?>> out = new ArrayList<>();
    for (int j = 0; j < dys.size(); j++) {
      boolean none = dys.get(j) == null;
      out.add(!none ? dys.get(j)
          : op.output(j).dataType() == DataType.DT_RESOURCE ? null : g.zerosLike(op.output(j)).asOutput());
    }
    return out;
  }

  /** The operations on a path from an x to a y (not through another x), consumers before their inputs. */
  private static List<GraphOperation> reverseTopological(List<Output<?>> ys, List<Output<?>> xs, boolean stopAtXs) {
    Set<String> fromX = new HashSet<>();
    Set<String> stops = new HashSet<>();
    List<GraphOperation> queue = new ArrayList<>();
    for (Output<?> o : xs) {
      if (stopAtXs) {
        stops.add(key(o));
      }
      queue.addAll(((GraphOperation) o.op()).consumers(o.index()));
    }
    while (!queue.isEmpty()) {
      GraphOperation op = queue.remove(queue.size() - 1);
      if (fromX.add(op.name())) {
        queue.addAll(op.consumers());
      }
    }
    List<GraphOperation> post = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (Output<?> y : ys) {
      if (!stops.contains(key(y))) {
        visit((GraphOperation) y.op(), fromX, stops, seen, post);
      }
    }
    List<GraphOperation> out = new ArrayList<>();
    for (int i = post.size() - 1; i >= 0; i--) {
      out.add(post.get(i));
    }
    return out;
  }

  /**
   * Appends to {@code post} the operations above {@code root} on a path from an x, inputs before
   * their consumers. Iterative, not recursive: a chain of thousands of operations would overflow
   * the tracing thread's stack.
   */
  private static void visit(GraphOperation root, Set<String> fromX, Set<String> stops, Set<String> seen,
      List<GraphOperation> post) {
    if (!fromX.contains(root.name()) || !seen.add(root.name())) {
      return;
    }
    ArrayDeque<GraphOperation> ops = new ArrayDeque<>();
    ArrayDeque<int[]> nextInput = new ArrayDeque<>();
    ops.push(root);
    nextInput.push(new int[] {0});
    while (!ops.isEmpty()) {
      GraphOperation op = ops.peek();
      int[] next = nextInput.peek();
      if (next[0] < op.numInputs()) {
        Output<?> in = op.input(next[0]++);
        GraphOperation from = (GraphOperation) in.op();
        if (!stops.contains(key(in)) && fromX.contains(from.name()) && seen.add(from.name())) {
          ops.push(from);
          nextInput.push(new int[] {0});
        }
      } else {
        ops.pop();
        nextInput.pop();
        post.add(op);
      }
    }
  }

  private static void rewire(Graph graph, Output<?> src, GraphOperation dst, int index) {
    GraphEdits.updateEdge(graph, src, dst, index);
  }

  /**
   * Operations nothing flows back through, whose gradient TensorFlow's C++ registry does not know:
   * those whose outputs do not depend on their inputs' values (Python's NotDifferentiable; a
   * gradient's own seed, {@code onesLike(y)}, is on the path when that gradient is differentiated
   * again), and the rounding ops, whose gradient Python's math_grad.py defines as none.
   */
  private static final Set<String> NOT_DIFFERENTIABLE = Set.of("OnesLike", "ZerosLike", "Round", "Rint", "Ceil", "Floor");

  public static Output<?> sum(Ops g, List<Output<?>> list) {
    if (list == null || list.isEmpty()) {
      return null;
    }
    if (list.size() == 1) {
      return list.get(0);
    }
    @SuppressWarnings({"unchecked", "rawtypes"})
    Output<?> s = g.math.addN((Iterable) list).asOutput();
    return s;
  }

  public static void add(Map<String, List<Output<?>>> grads, Output<?> to, Output<?> d) {
    grads.computeIfAbsent(key(to), k -> new ArrayList<>()).add(d);
  }

  /**
   * Whether the registry differentiates values of this dtype: floating point, or complex (a path
   * from a float through Complex, Exp and Real, say), whose gradients it conjugates as Python's.
   * Left out, a path through complex values got a gradient of zeros in the walk.
   */
  private static boolean carriesGradient(DataType t) {
    return isFloat(t) || isComplex(t);
  }

  private static boolean isComplex(DataType t) {
    return t == DataType.DT_COMPLEX64 || t == DataType.DT_COMPLEX128;
  }

  public static boolean isFloat(DataType t) {
    return t == DataType.DT_FLOAT || t == DataType.DT_DOUBLE || t == DataType.DT_HALF || t == DataType.DT_BFLOAT16;
  }

  public static String key(Output<?> o) {
    return o.op().name() + ":" + o.index();
  }
}
