package dev.polyfn.internal.flow;

import dev.polyfn.internal.GraphEdits;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.TensorFlowInternals;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.types.TBool;

/**
 * Turns the operations a branch lambda adds to the enclosing graph into a TensorFlow function.
 *
 * <p>A branch is written with the body's own {@code Ops}, so it may use any operand of the body
 * (that is what makes captures free of plumbing). Its operations are built in the enclosing graph,
 * then gathered into a function with {@code TF_GraphToFunction} over exactly those operations:
 * every value they read from outside becomes an extra input (a capture). The C API cannot delete
 * operations, so the originals stay in the enclosing graph, "absorbed": each of their inputs from
 * outside is rewired to the untaken output of a {@code Switch} on {@code false}, a dead tensor,
 * so TensorFlow never executes them (a variable assignment in an untaken branch would otherwise
 * run at every call), {@link #isAbsorbed} keeps them out of the function's control outputs, and
 * the traced function is built without them and the dead values ({@link #absorbed}), which XLA
 * could not compile.
 * The branch function itself orders its stateful operations and keeps its effects and used reads
 * as control outputs ({@link Effects}), and its results wait for them, so a taken branch runs its
 * writes and a write after the cond or loop waits for its reads.
 */
public final class Regions {
  private Regions() {}

  /** Process-unique function names: a random token per loaded copy of this class, then a counter. */
  private static final String TOKEN = Long.toHexString(new SecureRandom().nextLong() & 0xffffffffffL);
  private static final AtomicLong NEXT = new AtomicLong();

  /** The operations a lambda added to the graph, in creation order, and what it returned. */
  public record Region<R>(List<GraphOperation> ops, R result) {}

  /** A function built from a region and copied into the enclosing graph's library. */
  public record Built(String name, boolean stateful, List<Output<?>> captures) {}

  /**
   * Drops what control flow recorded about {@code graph} (absorbed operations, branch lambdas kept
   * for gradients, which may reference the graph and so would keep it from being collected).
   */
  public static void forget(Graph graph) {
    if (graph == null) {
      return;
    }
    AbsorbedOps.forget(graph);
    FlowFunctions.forget(graph);
  }

  /** A function name no other function of this process has. */
  public static String uniqueName(String hint) {
    return "polyfn_" + hint + "_" + TOKEN + "_" + NEXT.incrementAndGet();
  }

  /** Whether {@code op} was gathered into a branch function (so it must not run as an effect). */
  public static boolean isAbsorbed(Graph graph, String op) {
    return AbsorbedOps.contains(graph, op);
  }

  /**
   * The operations of {@code graph} gathered into branch functions and the dead values wired into
   * them: what the function traced in the graph leaves out (none when the body has no control flow).
   */
  public static String[] absorbed(Graph graph) {
    return AbsorbedOps.of(graph);
  }

  /**
   * What the function traced in {@code graph} leaves out: the {@linkplain #absorbed absorbed}
   * operations and those of gradients that nothing reads ({@code UnbroadcastGradients}).
   */
  public static String[] leftOut(Graph graph, String[] absorbed) {
    String[] pruned = AbsorbedOps.pruned(graph);
    if (pruned.length == 0) {
      return absorbed;
    }
    String[] all = Arrays.copyOf(absorbed, absorbed.length + pruned.length);
    System.arraycopy(pruned, 0, all, absorbed.length, pruned.length);
    return all;
  }

  /**
   * Refuses a body that uses, outside its lambda, a value made inside a branch or loop lambda (kept
   * in a Java field): as an output ({@code outputOps}) or an input of an operation the function
   * keeps. Such a value exists only inside the branch function, as Python's out-of-scope tensors.
   */
  public static void requireNotUsedOutside(Graph graph, String[] absorbed, String function, String[] outputOps) {
    if (absorbed.length == 0) {
      return;
    }
    Set<String> gone = Set.of(absorbed);
    for (int i = 0; i < outputOps.length; i++) {
      if (gone.contains(outputOps[i])) {
        throw escaped(function, outputOps[i], "returned by the body");
      }
    }
    for (Iterator<GraphOperation> it = graph.operations(); it.hasNext(); ) {
      GraphOperation op = it.next();
      if (gone.contains(op.name())) {
        continue;
      }
      for (int i = 0; i < op.numInputs(); i++) {
        String from = op.input(i).op().name();
        if (gone.contains(from)) {
          throw escaped(function, from, "read by operation '" + op.name() + "'");
        }
      }
    }
  }

  private static IllegalArgumentException escaped(String function, String op, String how) {
    return new IllegalArgumentException("function '" + function + "': the value of operation '" + op
        + "' was made inside a Flow.cond, whileLoop or mapFn lambda and is " + how
        + " outside it; return it from the lambda and use the result instead");
  }

  /** Runs {@code lambda} and records the operations it added to {@code graph}. */
  public static <R> Region<R> trace(Graph graph, Supplier<R> lambda) {
    Set<String> before = new HashSet<>();
    for (Iterator<GraphOperation> it = graph.operations(); it.hasNext(); ) {
      before.add(it.next().name());
    }
    R result;
    try {
      result = lambda.get();
    } catch (RuntimeException | Error e) {
      // A body may catch the failure and go on: what the branch built must not run then.
      discard(graph, added(graph, before));
      throw e;
    }
    return new Region<>(added(graph, before), result);
  }

  private static List<GraphOperation> added(Graph graph, Set<String> before) {
    List<GraphOperation> added = new ArrayList<>();
    for (Iterator<GraphOperation> it = graph.operations(); it.hasNext(); ) {
      GraphOperation op = it.next();
      if (!before.contains(op.name())) {
        added.add(op);
      }
    }
    return added;
  }

  /** Disconnects and absorbs the operations of a region that will not become a function. */
  public static void discard(Graph graph, List<GraphOperation> ops) {
    List<GraphOperation> own = new ArrayList<>();
    Set<String> inside = names(graph, ops);
    for (GraphOperation op : ops) {
      if (inside.contains(op.name())) {
        own.add(op);
      }
    }
    neutralize(graph, own);
    AbsorbedOps.add(graph, own);
  }

  /**
   * The values a region reads from outside it (not made by its operations, not one of its
   * arguments), in first-use order: the captures its function takes after its arguments.
   */
  public static List<Output<?>> captures(Graph graph, List<GraphOperation> ops, List<Output<?>> args) {
    Set<String> inside = names(graph, ops);
    Set<String> argKeys = new HashSet<>();
    for (Output<?> a : args) {
      argKeys.add(key(a));
    }
    Map<String, Output<?>> found = new LinkedHashMap<>();
    for (GraphOperation op : ops) {
      if (!inside.contains(op.name())) {
        continue;
      }
      for (int i = 0; i < op.numInputs(); i++) {
        Output<?> in = op.input(i);
        String k = key(in);
        if (!inside.contains(in.op().name()) && !argKeys.contains(k)) {
          found.putIfAbsent(k, in);
        }
      }
    }
    return new ArrayList<>(found.values());
  }

  /**
   * Builds the function of a region: its inputs are {@code args} then {@code captures}, its outputs
   * {@code outputs} (operations of the region); marks the region's operations absorbed.
   */
  public static Built build(Graph graph, String hint, List<GraphOperation> ops, List<Output<?>> args,
      List<Output<?>> captures, List<Output<?>> outputs) {
    Set<String> inside = names(graph, ops);
    List<GraphOperation> body = new ArrayList<>();
    for (GraphOperation op : ops) {
      if (inside.contains(op.name())) {
        body.add(op);
      }
    }
    String name = uniqueName(hint);
    List<Output<?>> inputs = new ArrayList<>(args);
    inputs.addAll(captures);
    List<GraphOperation> effects = List.of();
    if (Replays.active(graph)) {
      body = Replays.dropWrites(graph, body);
    } else {
      Effects.Ordered ordered = Effects.order(graph, body);
      body.addAll(ordered.added());
      List<GraphOperation> waited = new ArrayList<>(ordered.mustRun());
      waited.addAll(ordered.usedReads());
      outputs = after(graph, body, waited, outputs);
      effects = waited;
    }
    // The effects are the function's control outputs: TensorFlow runs them whenever it runs the
    // function (when a branch is taken, at each iteration of a loop), even if nothing reads them.
    // The used reads are too, as Python's auto_control_deps makes them: a lowered cond completes,
    // for what waits for it (a write after it), when its branch's control outputs have run, so a
    // branch's read could otherwise see a write made after the cond.
    byte[] def = Native.graphFunction(TensorFlowInternals.graphAddress(graph), name,
        body.stream().map(GraphOperation::name).toArray(String[]::new), opNames(inputs), indices(inputs),
        opNames(outputs), indices(outputs), effects.stream().map(GraphOperation::name).toArray(String[]::new));
    boolean stateful;
    try {
      stateful = FunctionDef.parseFrom(def).getSignature().getIsStateful();
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalStateException("reading back the function of " + hint, e);
    }
    neutralize(graph, body);
    AbsorbedOps.add(graph, body);
    return new Built(name, stateful, Collections.unmodifiableList(captures));
  }

  /**
   * {@code outputs}, each passed through an Identity that waits for {@code effects} (added to
   * {@code body}), as Python makes a function's results wait for its effects and used reads: what
   * reads a cond's results sees its branch's writes, and a loop's next iteration starts after this
   * one's writes and reads.
   */
  private static List<Output<?>> after(Graph graph, List<GraphOperation> body, List<GraphOperation> effects,
      List<Output<?>> outputs) {
    if (effects.isEmpty()) {
      return outputs;
    }
    Ops tf = Ops.create(graph).withSubScope("polyfn_effects");
    var noOp = tf.scope().opBuilder("NoOp", "effects");
    effects.forEach(noOp::addControlInput);
    GraphOperation done = (GraphOperation) noOp.build();
    body.add(done);
    List<Output<?>> out = new ArrayList<>();
    for (Output<?> o : outputs) {
      GraphOperation id = (GraphOperation) tf.scope().opBuilder("Identity", "result").addInput(o)
          .addControlInput(done).build();
      body.add(id);
      out.add(id.output(0));
    }
    return out;
  }

  /** Marks the operations of {@code outputs} absorbed (placeholders standing for branch arguments). */
  public static void absorb(Graph graph, List<Output<?>> outputs) {
    List<GraphOperation> ops = new ArrayList<>();
    for (Output<?> o : outputs) {
      ops.add((GraphOperation) o.op());
    }
    neutralize(graph, ops);
    AbsorbedOps.add(graph, ops);
  }

  /** Neutralizes {@code ops} and marks them absorbed: they never run. */
  static void neutralizeAndAbsorb(Graph graph, List<GraphOperation> ops) {
    neutralize(graph, ops);
    AbsorbedOps.add(graph, ops);
  }

  /** Rewires every input {@code ops} take from outside them to a dead copy of it (see the class comment). */
  private static void neutralize(Graph graph, List<GraphOperation> ops) {
    Set<String> inside = new HashSet<>();
    for (GraphOperation op : ops) {
      inside.add(op.name());
    }
    Ops tf = Ops.create(graph).withSubScope("polyfn_absorbed");
    Operand<TBool> never = null;
    Map<String, Output<?>> dead = new HashMap<>();
    // The constant and Switch operations made here are absorbed too: no function holds them
    // (XLA has no Switch kernel, and a branch enclosing this one must not capture through them).
    Set<String> helpers = new HashSet<>();
    for (GraphOperation op : ops) {
      for (int i = 0; i < op.numInputs(); i++) {
        Output<?> in = op.input(i);
        if (inside.contains(in.op().name())) {
          continue;
        }
        if (never == null) {
          never = tf.constant(false);
          helpers.add(never.op().name());
        }
        Operand<TBool> pred = never;
        Output<?> d = dead.computeIfAbsent(key(in), k -> tf.switchCond(in, pred).outputTrue().asOutput());
        helpers.add(d.op().name());
        GraphEdits.updateEdge(graph, d, op, i);
      }
    }
    AbsorbedOps.addNames(graph, helpers);
  }

  /**
   * The region's operations that are its own: not already absorbed by a branch nested in it, and
   * not a placeholder (a variable or a capture first used in the branch becomes an input of the
   * enclosing function; the branch takes it as a capture like any outer value).
   */
  static Set<String> names(Graph graph, List<GraphOperation> ops) {
    Set<String> set = new HashSet<>();
    for (GraphOperation op : ops) {
      if (!isAbsorbed(graph, op.name()) && !op.type().equals("Placeholder")) {
        set.add(op.name());
      }
    }
    return set;
  }

  private static String key(Operand<?> o) {
    Output<?> out = o.asOutput();
    return out.op().name() + ":" + out.index();
  }

  private static String[] opNames(List<Output<?>> outputs) {
    return outputs.stream().map(o -> o.op().name()).toArray(String[]::new);
  }

  private static int[] indices(List<Output<?>> outputs) {
    return outputs.stream().mapToInt(Output::index).toArray();
  }
}
