package dev.polyfn.internal.flow;

import dev.polyfn.LoopOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.TensorListReserve;
import org.tensorflow.op.core.TensorListStack;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TNumber;
import org.tensorflow.types.family.TType;

/**
 * Builds {@code Flow.whileLoop}: the condition and the body are traced as regions over
 * placeholders of the loop variables (with their declared shapes, defaulting to the initial
 * values so the abandoned copies stay computable), then both become functions of the loop
 * variables followed by every captured value, which the body passes through unchanged.
 */
public final class FlowLoops {
  private FlowLoops() {}

  public static List<Operand<?>> whileLoop(Ops tf, List<? extends Operand<?>> loopVars, LoopOptions options,
      Function<List<Operand<?>>, Operand<TBool>> cond, Function<List<Operand<?>>, List<? extends Operand<?>>> body) {
    return whileLoop(tf, loopVars, options, cond, body, i -> "loop variable " + i);
  }

  /** As above; {@code label} names loop variable i in errors (by key when the caller flattened a map or record). */
  @SuppressWarnings("unchecked")
  public static List<Operand<?>> whileLoop(Ops tf, List<? extends Operand<?>> loopVars, LoopOptions options,
      Function<List<Operand<?>>, Operand<TBool>> cond, Function<List<Operand<?>>, List<? extends Operand<?>>> body,
      IntFunction<String> label) {
    if (FlowEager.applies(tf)) {
      return FlowEager.whileLoop(loopVars, options, cond, body, label);
    }
    Graph graph = FlowChecks.graphOf(tf, "whileLoop");
    LoopChecks.arguments(loopVars, options, cond, body);
    boolean bounded = options.bounded();
    int skip = bounded ? 1 : 0; // a hidden iteration counter comes first when the loop is bounded
    // A bound given as a tensor of the body (checked) is captured by the condition; the counter
    // has its dtype, as Python's while_v2 makes it. A constant bound is a constant of the condition.
    Operand<?> boundTensor = options.maximumIterationsTensor() == null ? null
        : LoopChecks.bound(FlowChecks.operandOf(graph, options.maximumIterationsTensor(), "whileLoop", "maximumIterations"));
    boolean wide = boundTensor != null && boundTensor.asOutput().dataType() == DataType.DT_INT64;
    List<Output<?>> init = new ArrayList<>();
    List<Shape> shapes = new ArrayList<>();
    if (bounded) {
      init.add((wide ? tf.constant(0L) : tf.constant(0)).asOutput());
      shapes.add(Shape.scalar());
    }
    for (int i = 0; i < loopVars.size(); i++) {
      Output<?> v = FlowChecks.operandOf(graph, loopVars.get(i), "whileLoop", label.apply(i)).asOutput();
      init.add(v);
      shapes.add(LoopChecks.declaredShape(v.shape(), options, i, label));
    }
    List<Output<?>> condArgs = placeholders(tf, init, shapes);
    Regions.Region<List<Output<?>>> c = Regions.trace(graph, () -> {
      Operand<TBool> p = cond.apply(userView(condArgs, skip));
      FlowChecks.scalarBool(graph, p, "whileLoop", "the result of cond");
      if (bounded) {
        Operand<?> bound = boundTensor != null ? boundTensor : tf.constant((int) options.maximumIterations());
        p = tf.math.logicalAnd(tf.math.less((Operand<TNumber>) condArgs.get(0), (Operand<TNumber>) bound), p);
      }
      return List.of(tf.identity(p).asOutput());
    });
    List<Output<?>> bodyArgs = placeholders(tf, init, shapes);
    Regions.Region<List<Output<?>>> b = null;
    try {
      b = Regions.trace(graph, () -> {
        List<? extends Operand<?>> next = body.apply(userView(bodyArgs, skip));
        List<DataType> entering = new ArrayList<>();
        for (Output<?> v : init.subList(skip, init.size())) {
          entering.add(v.dataType());
        }
        LoopChecks.next(next, entering, shapes.subList(skip, shapes.size()),
            (o, name) -> FlowChecks.operandOf(graph, o, "whileLoop", name), label);
        List<Output<?>> out = new ArrayList<>();
        if (bounded) {
          Operand<TNumber> i = (Operand<TNumber>) bodyArgs.get(0);
          Operand<?> one = wide ? tf.constant(1L) : tf.constant(1);
          out.add(tf.identity(tf.math.add(i, (Operand<TNumber>) one)).asOutput());
        }
        for (Operand<?> o : next) {
          out.add(tf.identity(o).asOutput());
        }
        return out;
      });
      Replays.check(graph, "loop's condition or body", List.of(c, b));
    } catch (RuntimeException | Error failure) {
      Regions.discard(graph, c.ops());
      if (b != null) {
        Regions.discard(graph, b.ops());
      }
      Regions.absorb(graph, condArgs);
      Regions.absorb(graph, bodyArgs);
      throw failure;
    }
    List<Output<?>> captures = FlowCond.union(Regions.captures(graph, c.ops(), condArgs),
        Regions.captures(graph, b.ops(), bodyArgs));
    // The body hands every captured value on to the next iteration unchanged.
    Regions.Region<List<Output<?>>> pass = Regions.trace(graph, () -> {
      List<Output<?>> out = new ArrayList<>();
      for (Output<?> cap : captures) {
        out.add(tf.identity(cap).asOutput());
      }
      return out;
    });
    List<GraphOperation> bodyOps = new ArrayList<>(b.ops());
    bodyOps.addAll(pass.ops());
    List<Output<?>> bodyOuts = new ArrayList<>(b.result());
    bodyOuts.addAll(pass.result());
    Regions.Built cb = Regions.build(graph, "while_cond", c.ops(), condArgs, captures, c.result());
    Regions.Built bb = Regions.build(graph, "while_body", bodyOps, bodyArgs, captures, bodyOuts);
    Regions.absorb(graph, condArgs);
    Regions.absorb(graph, bodyArgs);
    List<Output<?>> inputs = new ArrayList<>(init);
    inputs.addAll(captures);
    List<Shape> allShapes = new ArrayList<>(shapes);
    for (Output<?> cap : captures) {
      allShapes.add(cap.shape());
    }
    var w = tf.scope().opBuilder(cb.stateful() || bb.stateful() ? "While" : "StatelessWhile", "while");
    w.addInputList(inputs.toArray(new Output<?>[0]));
    w.setAttr("cond", FlowChecks.func(cb.name()));
    w.setAttr("body", FlowChecks.func(bb.name()));
    w.setAttr("output_shapes", FlowChecks.shapes(allShapes));
    w.setAttr("parallel_iterations", options.parallel());
    FlowChecks.lowerLikePython(graph, w);
    GraphOperation op = (GraphOperation) tf.scope().apply(w).build();
    FlowFunctions.record(graph, op, new FlowFunctions.LoopInfo(cond, body, options, skip, init.size() - skip,
        List.copyOf(shapes.subList(skip, shapes.size()))));
    List<Operand<?>> result = new ArrayList<>();
    for (int i = skip; i < init.size(); i++) {
      result.add(op.output(i));
    }
    return result;
  }

  /** One placeholder per loop variable, of its declared shape, defaulting to its initial value. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static List<Output<?>> placeholders(Ops tf, List<Output<?>> init, List<Shape> shapes) {
    List<Output<?>> out = new ArrayList<>();
    for (int i = 0; i < init.size(); i++) {
      out.add(tf.placeholderWithDefault((Operand) init.get(i), shapes.get(i)).asOutput());
    }
    return out;
  }

  private static List<Operand<?>> userView(List<Output<?>> args, int skip) {
    return List.copyOf(args.subList(skip, args.size()));
  }

  /** {@code Flow.mapFn}: a loop over the first dimension of {@code elems}, its results stacked in a TensorList. */
  @SuppressWarnings("unchecked")
  public static <T extends TType, U extends TType> Operand<U> mapFn(Ops tf, Operand<T> elems, Class<U> outType,
      Function<Operand<T>, Operand<U>> fn) {
    if (FlowEager.applies(tf)) {
      return FlowEager.mapFn(tf, elems, outType, fn);
    }
    Graph graph = FlowChecks.graphOf(tf, "mapFn");
    if (elems.shape().isUnknown() || elems.shape().numDimensions() == 0) {
      throw new IllegalArgumentException("mapFn: elems must have at least one dimension (the one mapped over), "
          + "got shape " + elems.shape());
    }
    Operand<TInt32> n = tf.reshape(tf.slice(tf.shape(elems), tf.constant(new int[] {0}), tf.constant(new int[] {1})),
        tf.constant(new int[0]));
    TensorListReserve acc = tf.tensorListReserve(tf.constant(-1), n, outType);
    Shape[] resultShape = {Shape.unknown()};
    List<Operand<?>> vars = List.of(tf.constant(0), acc);
    List<Operand<?>> done = whileLoop(tf, vars, LoopOptions.DEFAULT,
        v -> tf.math.less((Operand<TInt32>) v.get(0), n),
        v -> {
          Operand<TInt32> i = (Operand<TInt32>) v.get(0);
          Operand<T> e = tf.gather(elems, i, tf.constant(0));
          Operand<U> y = fn.apply(e);
          FlowChecks.operandOf(graph, y, "mapFn", "the result of fn");
          if (y.type() != outType) {
            throw new IllegalArgumentException("mapFn: fn returned dtype " + y.asOutput().dataType()
                + " but the results were declared as " + outType.getSimpleName());
          }
          resultShape[0] = y.shape();
          return List.of(tf.math.add(i, tf.constant(1)), tf.tensorListSetItem(v.get(1), i, y));
        });
    // The element shape fn's results have statically (so an empty elems stacks to [0, ...]).
    Shape s = resultShape[0];
    Operand<TInt32> elementShape = tf.constant(-1);
    if (!s.isUnknown() && !s.hasUnknownDimension()) {
      int[] dims = new int[s.numDimensions()];
      for (int k = 0; k < dims.length; k++) {
        dims[k] = (int) s.get(k);
      }
      elementShape = tf.constant(dims);
    }
    // As Python's map_fn, the results keep elems' static first dimension (a loop variable fed by
    // mapFn keeps its shape).
    long count = elems.shape().get(0);
    Operand<U> stacked = count < 0 ? tf.tensorListStack(done.get(1), elementShape, outType)
        : tf.tensorListStack(done.get(1), elementShape, outType, TensorListStack.numElements(count));
    FlowFunctions.record(graph, (GraphOperation) stacked.op(), new FlowFunctions.MapInfo(
        (GraphOperation) done.get(1).op(), elems.asOutput(), n, e -> fn.apply((Operand<T>) e)));
    return stacked;
  }
}
