package dev.polyfn.internal.flow;

import dev.polyfn.LoopOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TInt32;

/**
 * The gradient of one cond or one loop (see {@link FlowGradients}), built as control flow itself,
 * the way Python's cond_v2/while_v2 do, by tracing the user's lambdas again.
 *
 * <p>cond: a cond on the same predicate whose branches re-trace the forward branches and
 * backpropagate through them to the captured values. Loop: the loop runs again with one
 * TensorList per loop variable recording its value at the start of every iteration; a backward
 * loop then pops them in reverse order and, for each, re-traces the body on the recorded values
 * and backpropagates through it, for as many iterations as were recorded. Captured values get the
 * sum of their gradients over the iterations. A loop variable may be a TensorList (the backward
 * loop carries the recorded lists, so a loop's gradient is itself differentiable: a second
 * derivative); its gradient is a TensorList of its elements' gradients ({@link ListGradients}).
 */
public final class FlowGradientOps {
  private FlowGradientOps() {}

  public static void cond(Ops g, GraphOperation op, FlowFunctions.CondInfo info, List<Output<?>> dys,
      Map<String, List<Output<?>>> grads) {
    List<Output<?>> caps = new ArrayList<>();
    for (int i = 1; i < op.numInputs(); i++) {
      if (ListGradients.carriesGradient(op.input(i))) {
        caps.add(op.input(i));
      }
    }
    if (caps.isEmpty()) {
      return;
    }
    @SuppressWarnings("unchecked")
    Operand<TBool> pred = (Operand<TBool>) op.input(0);
    Replays.of(op, "cond '" + op.name() + "'", () -> {
      List<Operand<?>> d = FlowCond.condList(g, pred, () -> branch(g, info.then().get(), dys, caps),
          () -> branch(g, info.otherwise().get(), dys, caps));
      for (int i = 0; i < caps.size(); i++) {
        FlowGradients.add(grads, caps.get(i), d.get(i).asOutput());
      }
    });
  }

  /** Inside a gradient branch: the forward branch's outputs backpropagated to the captures. */
  private static List<Operand<?>> branch(Ops g, List<? extends Operand<?>> outs, List<Output<?>> dys,
      List<Output<?>> caps) {
    List<Output<?>> ys = new ArrayList<>();
    outs.forEach(o -> ys.add(o.asOutput()));
    List<Output<?>> d = FlowGradients.backprop(g, (org.tensorflow.Graph) g.scope().env(), ys, dys, caps);
    List<Operand<?>> out = new ArrayList<>();
    for (int i = 0; i < caps.size(); i++) {
      out.add(d.get(i) != null ? d.get(i) : g.zerosLike(caps.get(i)));
    }
    return out;
  }

  public static void loop(Ops g, GraphOperation op, FlowFunctions.LoopInfo info, List<Output<?>> dys,
      Map<String, List<Output<?>>> grads) {
    Replays.of(op, "loop '" + op.name() + "'", () -> loopGradient(g, op, info, dys, grads));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void loopGradient(Ops g, GraphOperation op, FlowFunctions.LoopInfo info, List<Output<?>> dys,
      Map<String, List<Output<?>>> grads) {
    int skip = info.skip();
    int nv = info.vars();
    List<Output<?>> vars = new ArrayList<>();
    List<Output<?>> caps = new ArrayList<>();
    for (int i = skip; i < op.numInputs(); i++) {
      (i < skip + nv ? vars : caps).add(op.input(i));
    }
    for (int i = 0; i < nv; i++) {
      DataType t = vars.get(i).dataType();
      if (t == DataType.DT_RESOURCE || (t == DataType.DT_VARIANT && !ListGradients.isList(vars.get(i)))) {
        throw new IllegalArgumentException("gradients through loop '" + op.name() + "': loop variable " + i + " is "
            + FlowChecks.name(t) + (t == DataType.DT_VARIANT ? " and not a TensorList" : "")
            + "; gradients go through loops over numeric tensors and TensorLists only");
      }
      if (t == DataType.DT_VARIANT && FlowChecks.underXla((org.tensorflow.Graph) op.env())) {
        // TensorFlow's XLA compiler aborts the process (a failed check) on a TensorList pushed
        // into a TensorList, which recording this loop variable would build.
        throw new IllegalArgumentException("gradients through loop '" + op.name() + "' under XLA (jitCompile): loop "
            + "variable " + i + " is a TensorList (as a loop's gradient carries), and recording it pushes it into a "
            + "TensorList, which XLA does not compile (TensorFlow aborts the process); differentiate it in a function "
            + "without jitCompile");
      }
    }
    List<Output<?>> gradCaps = new ArrayList<>();
    caps.forEach(c -> {
      if (ListGradients.carriesGradient(c)) {
        gradCaps.add(c);
      }
    });
    int nc = gradCaps.size();
    // 1. The loop again, recording each iteration's loop variables.
    List<Operand<?>> recIn = new ArrayList<>(vars);
    LoopOptions recOptions = info.options();
    // A bounded loop records at most maximumIterations values: a list of that fixed size is what
    // XLA needs to compile it (as Python's while_v2 sizes its accumulators in an XLA context). At
    // least one: XLA refuses to compile the push into a list of none, though it never runs.
    int maxRecorded = recOptions.maximumIterations() < 0 ? -1 : (int) Math.max(1, recOptions.maximumIterations());
    for (int i = 0; i < nv; i++) {
      recIn.add(g.scope().opBuilder("EmptyTensorList", "record").addInput(g.constant(-1).asOutput())
          .addInput(g.constant(maxRecorded).asOutput()).setAttr("element_dtype", vars.get(i).dataType())
          .build().output(0));
    }
    // The iterations run, counted: the backward loop runs as many. Not the lists' length, which
    // under XLA is their fixed size (maximumIterations) whether or not the condition stopped the
    // loop first, as Python's while_v2 counts them too.
    recIn.add(g.constant(0));
    List<Operand<?>> rec = FlowLoops.whileLoop(g, recIn, recOptions, v -> info.cond().apply(v.subList(0, nv)), v -> {
      List<Operand<?>> next = new ArrayList<>(info.body().apply(List.copyOf(v.subList(0, nv))));
      for (int i = 0; i < nv; i++) {
        next.add(g.scope().opBuilder("TensorListPushBack", "push").addInput(v.get(nv + i).asOutput())
            .addInput(v.get(i).asOutput()).build().output(0));
      }
      next.add(g.math.add((Operand<TInt32>) v.get(2 * nv), g.constant(1)));
      return next;
    });
    // 2. Backward: [k, d(vars), d(captures), recorded lists], k counting the iterations down.
    List<Operand<?>> bIn = new ArrayList<>();
    bIn.add(rec.get(2 * nv));
    for (int i = 0; i < nv; i++) {
      bIn.add(dys.get(skip + i));
    }
    for (Output<?> c : gradCaps) {
      bIn.add(g.zerosLike(c));
    }
    // Gradients built by the registry may not know their static shapes.
    LoopOptions bOptions = LoopOptions.DEFAULT;
    for (int i = 1; i < 1 + nv + nc; i++) {
      bOptions = bOptions.shape(i, Shape.unknown());
    }
    bIn.addAll(rec.subList(nv, 2 * nv));
    List<Operand<?>> back = FlowLoops.whileLoop(g, bIn, bOptions,
        v -> g.math.greater((Operand<TInt32>) v.get(0), g.constant(0)),
        v -> {
          List<Output<?>> popped = new ArrayList<>();
          List<Operand<?>> lists = new ArrayList<>();
          for (int i = 0; i < nv; i++) {
            GraphOperation pop = (GraphOperation) g.scope().opBuilder("TensorListPopBack", "pop")
                .addInput(v.get(1 + nv + nc + i).asOutput()).addInput(elementShape(g, info.shapes().get(i)))
                .setAttr("element_dtype", vars.get(i).dataType()).build();
            lists.add(pop.output(0));
            // A popped element has no static shape; the body is re-traced on values of the shapes it
            // was traced for (a body may need them, as mapFn needs its elements' rank).
            Shape s = info.shapes().get(i);
            popped.add(s.isUnknown() || isList(vars.get(i)) ? pop.output(1)
                : g.ensureShape((Operand) pop.output(1), s).asOutput());
          }
          List<Operand<?>> outs = new ArrayList<>(info.body().apply(List.copyOf(popped)));
          List<Output<?>> ys = new ArrayList<>();
          List<Output<?>> seeds = new ArrayList<>();
          for (int i = 0; i < nv; i++) {
            ys.add(outs.get(i).asOutput());
            seeds.add(v.get(1 + i).asOutput());
          }
          List<Output<?>> xs = new ArrayList<>(popped);
          xs.addAll(gradCaps);
          List<Output<?>> d = FlowGradients.backprop(g, (org.tensorflow.Graph) g.scope().env(), ys, seeds, xs);
          List<Operand<?>> next = new ArrayList<>();
          next.add(g.math.sub((Operand<TInt32>) v.get(0), g.constant(1)));
          for (int i = 0; i < nv; i++) {
            if (isList(vars.get(i)) && !ListGradients.carriesGradient(vars.get(i))) {
              next.add(v.get(1 + i)); // a list of integers has no gradient: its (unread) seed goes on
              continue;
            }
            // No gradient for a TensorList: a list of zeros as long as the one popped (lists grow).
            Operand<?> like = isList(vars.get(i)) ? popped.get(i) : v.get(1 + i);
            next.add(d.get(i) != null ? d.get(i) : g.zerosLike((Operand) like));
          }
          for (int j = 0; j < nc; j++) {
            Operand<?> acc = v.get(1 + nv + j);
            Output<?> dj = d.get(nv + j);
            next.add(dj == null ? acc : FlowGradients.sum(g, List.of(acc.asOutput(), dj)));
          }
          next.addAll(lists);
          return next;
        });
    for (int i = 0; i < nv; i++) {
      if (ListGradients.carriesGradient(vars.get(i))) {
        FlowGradients.add(grads, vars.get(i), back.get(1 + i).asOutput());
      }
    }
    for (int j = 0; j < nc; j++) {
      FlowGradients.add(grads, gradCaps.get(j), back.get(1 + nv + j).asOutput());
    }
  }

  /**
   * The gradient of a {@code Flow.mapFn}'s stacked results, {@code dy}: a loop over the elements
   * that re-traces {@code fn} on each and backpropagates the element's slice of {@code dy} to the
   * element (its gradients stacked into the gradient of {@code elems}) and to the float values
   * {@code fn} captures (summed over the elements), as Python's map_fn gradient gives.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static void map(Ops g, FlowFunctions.MapInfo info, Output<?> dy, Map<String, List<Output<?>>> grads) {
    GraphOperation op = info.loop();
    FlowFunctions.LoopInfo loop = (FlowFunctions.LoopInfo) FlowFunctions.info((org.tensorflow.Graph) op.env(), op.name());
    List<Output<?>> caps = new ArrayList<>();
    for (int i = loop.skip() + loop.vars(); i < op.numInputs(); i++) {
      if (ListGradients.carriesGradient(op.input(i))) {
        caps.add(op.input(i));
      }
    }
    Output<?> elems = info.elems();
    boolean floatElems = FlowGradients.isFloat(elems.dataType());
    if (caps.isEmpty() && !floatElems) {
      return;
    }
    Operand<TInt32> n = (Operand<TInt32>) info.n();
    // The shape of one element, as a tensor: known at run time even when elems is empty.
    Operand<TInt32> elementShape = g.slice(g.shape(elems), g.constant(new int[] {1}), g.constant(new int[] {-1}));
    Replays.of(op, "mapFn '" + op.name() + "'", () -> {
      List<Operand<?>> init = new ArrayList<>();
      init.add(g.constant(0));
      init.add(g.tensorListReserve(elementShape, n, (Class) elems.type()));
      LoopOptions options = LoopOptions.DEFAULT;
      for (Output<?> c : caps) {
        options = options.shape(init.size(), Shape.unknown()); // registry gradients may lack static shapes
        init.add(g.zerosLike(c));
      }
      List<Operand<?>> done = FlowLoops.whileLoop(g, init, options, v -> g.math.less((Operand<TInt32>) v.get(0), n), v -> {
        Operand<TInt32> i = (Operand<TInt32>) v.get(0);
        Output<?> e = g.gather((Operand) elems, i, g.constant(0)).asOutput();
        Output<?> y = info.fn().apply(e).asOutput();
        Output<?> dyi = g.gather((Operand) dy, i, g.constant(0)).asOutput();
        List<Output<?>> xs = new ArrayList<>();
        xs.add(e);
        xs.addAll(caps);
        List<Output<?>> d = FlowGradients.backprop(g, (org.tensorflow.Graph) g.scope().env(), List.of(y), List.of(dyi), xs);
        List<Operand<?>> next = new ArrayList<>();
        next.add(g.math.add(i, g.constant(1)));
        next.add(g.tensorListSetItem(v.get(1), i, d.get(0) != null ? d.get(0) : g.zerosLike(e)));
        for (int j = 0; j < caps.size(); j++) {
          Output<?> dj = d.get(1 + j);
          next.add(dj == null ? v.get(2 + j) : FlowGradients.sum(g, List.of(v.get(2 + j).asOutput(), dj)));
        }
        return next;
      });
      if (floatElems) {
        FlowGradients.add(grads, elems, g.tensorListStack(done.get(1), elementShape, (Class) elems.type()).asOutput());
      }
      for (int j = 0; j < caps.size(); j++) {
        FlowGradients.add(grads, caps.get(j), done.get(2 + j).asOutput());
      }
    });
  }

  private static boolean isList(Output<?> v) {
    return v.dataType() == DataType.DT_VARIANT;
  }

  /** A TensorList element shape: the declared one, -1 for unknown dimensions or rank. */
  private static Output<?> elementShape(Ops g, Shape s) {
    if (s.isUnknown()) {
      return g.constant(-1).asOutput();
    }
    long[] dims = s.asArray();
    int[] d = new int[dims.length];
    for (int i = 0; i < d.length; i++) {
      d[i] = (int) dims[i];
    }
    return g.constant(d).asOutput();
  }
}
