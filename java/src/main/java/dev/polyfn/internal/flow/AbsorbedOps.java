package dev.polyfn.internal.flow;

import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;

/**
 * Control flow's bookkeeping per graph: the operations gathered into branch functions (or
 * disconnected as dead) and so left out of the function traced in that graph; and, apart, the
 * unused operations of a gradient ({@link #prune}), left out too. Weak: a closed, dropped graph
 * takes its sets with it; a trace forgets its graph when it ends.
 */
final class AbsorbedOps {
  private AbsorbedOps() {}

  private static final Map<Graph, Set<String>> ABSORBED = new WeakHashMap<>();
  private static final Map<Graph, Set<String>> PRUNED = new WeakHashMap<>();

  /**
   * Marks the operations named {@code names} of {@code graph} unused: operations a gradient call
   * made that nothing reads. Apart from the absorbed ones: they were never in a lambda, so the
   * check that a body does not use a lambda's values outside it (a Java walk over every
   * operation) need not look for them.
   */
  static void prune(Graph graph, Collection<String> names) {
    if (names.isEmpty()) {
      return;
    }
    synchronized (ABSORBED) {
      PRUNED.computeIfAbsent(graph, k -> new HashSet<>()).addAll(names);
    }
  }

  /** The pruned operation names of {@code graph}. */
  static String[] pruned(Graph graph) {
    synchronized (ABSORBED) {
      Set<String> set = PRUNED.get(graph);
      return set == null ? new String[0] : set.toArray(new String[0]);
    }
  }

  /** Marks {@code ops} of {@code graph} absorbed. */
  static void add(Graph graph, Collection<GraphOperation> ops) {
    synchronized (ABSORBED) {
      Set<String> set = ABSORBED.computeIfAbsent(graph, k -> new HashSet<>());
      ops.forEach(op -> set.add(op.name()));
    }
  }

  /** Marks the operations named {@code names} of {@code graph} absorbed. */
  static void addNames(Graph graph, Collection<String> names) {
    synchronized (ABSORBED) {
      ABSORBED.computeIfAbsent(graph, k -> new HashSet<>()).addAll(names);
    }
  }

  static boolean contains(Graph graph, String op) {
    synchronized (ABSORBED) {
      Set<String> set = ABSORBED.get(graph);
      return set != null && set.contains(op);
    }
  }

  /** The absorbed operation names of {@code graph} (none when its body has no control flow). */
  static String[] of(Graph graph) {
    synchronized (ABSORBED) {
      Set<String> set = ABSORBED.get(graph);
      return set == null ? new String[0] : set.toArray(new String[0]);
    }
  }

  static void forget(Graph graph) {
    synchronized (ABSORBED) {
      ABSORBED.remove(graph);
      PRUNED.remove(graph);
    }
  }
}
