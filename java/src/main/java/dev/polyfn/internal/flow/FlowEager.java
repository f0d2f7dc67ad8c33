package dev.polyfn.internal.flow;

import dev.polyfn.LoopOptions;
import dev.polyfn.internal.EagerLock;
import dev.polyfn.internal.trace.EagerInputs;
import dev.polyfn.internal.trace.Tracing;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.family.TType;

/**
 * {@code Flow} in a body that runs eagerly (a function in debug mode, see {@code
 * internal.trace.EagerCall}): control flow run as Java, as Python's {@code tf.cond} and {@code
 * tf.while_loop} run eagerly. A cond evaluates its predicate and runs the one branch it selects;
 * a loop iterates in Java; the checks a trace makes on values it can see (dtypes, declared loop
 * shapes) are made on the values, with the same messages.
 */
public final class FlowEager {
  private FlowEager() {}

  /** Whether {@code tf} is the eager {@code Ops} of a body that runs eagerly on this thread. */
  public static boolean applies(Ops tf) {
    return tf != null && tf.scope().env().isEager() && Tracing.currentEager() != null;
  }

  /** The value of predicate {@code pred}, checked as a trace checks it. */
  public static boolean test(Operand<TBool> pred, String what, String name) {
    operand(pred, what, name);
    DataType t = pred.asOutput().dataType();
    if (t != DataType.DT_BOOL) {
      throw new IllegalArgumentException(what + ": " + name + " must be a scalar BOOL, got dtype " + t);
    }
    Shape s = pred.shape();
    if (s.numDimensions() != 0) {
      throw new IllegalArgumentException(what + ": " + name + " must be a scalar BOOL, got shape " + s);
    }
    synchronized (EagerLock.LOCK) { // recorded in the eager session, which is not thread-safe
      return ((TBool) pred.asTensor()).getBoolean();
    }
  }

  /** The value of scalar integer {@code n} (INT32 or INT64 of a known shape: checked by LoopChecks.bound). */
  private static long value(Operand<?> n) {
    synchronized (EagerLock.LOCK) { // recorded in the eager session, which is not thread-safe
      Object t = n.asTensor();
      return t instanceof TInt64 l ? l.getLong() : ((TInt32) t).getInt();
    }
  }

  /** {@code o}, checked: not null, and eager. */
  static Operand<?> operand(Operand<?> o, String what, String name) {
    if (o == null) {
      throw new IllegalArgumentException(what + ": " + name + " is null");
    }
    if (!o.env().isEager()) {
      throw new IllegalArgumentException(what + ": " + name + " is an operand of a graph, but the function runs "
          + "eagerly; use operands of the body's Ops");
    }
    return o;
  }

  /** {@code Flow.condList}: the selected branch's results. */
  public static List<Operand<?>> condList(Operand<TBool> pred, Supplier<? extends List<? extends Operand<?>>> then,
      Supplier<? extends List<? extends Operand<?>>> otherwise, IntFunction<String> label) {
    boolean taken = test(pred, "cond", "pred");
    String branch = taken ? "then" : "else";
    List<? extends Operand<?>> results = (taken ? then : otherwise).get();
    if (results == null) {
      throw new IllegalArgumentException("cond: the " + branch + " branch returned null");
    }
    List<Operand<?>> out = new ArrayList<>();
    for (int i = 0; i < results.size(); i++) {
      out.add(operand(results.get(i), "cond", branch + " " + label.apply(i)));
    }
    return Collections.unmodifiableList(out);
  }

  /** {@code Flow.whileLoop}: iterates in Java, checking each iteration's loop variables as a trace checks its body. */
  public static List<Operand<?>> whileLoop(List<? extends Operand<?>> loopVars, LoopOptions options,
      Function<List<Operand<?>>, Operand<TBool>> cond, Function<List<Operand<?>>, List<? extends Operand<?>>> body,
      IntFunction<String> label) {
    LoopChecks.arguments(loopVars, options, cond, body);
    List<Operand<?>> vars = new ArrayList<>();
    List<Shape> shapes = new ArrayList<>();
    List<DataType> entering = new ArrayList<>();
    for (int i = 0; i < loopVars.size(); i++) {
      Operand<?> v = operand(loopVars.get(i), "whileLoop", label.apply(i));
      shapes.add(LoopChecks.declaredShape(v.shape(), options, i, label));
      vars.add(v);
      entering.add(v.asOutput().dataType());
    }
    long max = options.maximumIterationsTensor() == null ? options.maximumIterations()
        : Math.max(0, value(LoopChecks.bound(operand(options.maximumIterationsTensor(), "whileLoop", "maximumIterations"))));
    for (long n = 0; max < 0 || n < max; n++) {
      if (!test(cond.apply(List.copyOf(vars)), "whileLoop", "the result of cond")) {
        break;
      }
      List<? extends Operand<?>> next = body.apply(List.copyOf(vars));
      LoopChecks.next(next, entering, shapes, (o, name) -> operand(o, "whileLoop", name), label);
      vars = new ArrayList<>(next);
    }
    return Collections.unmodifiableList(vars);
  }

  /** {@code Flow.mapFn}: {@code fn} applied to each element in Java, the results stacked. */
  @SuppressWarnings("unchecked")
  public static <T extends TType, U extends TType> Operand<U> mapFn(Ops tf, Operand<T> elems, Class<U> outType,
      Function<Operand<T>, Operand<U>> fn) {
    operand(elems, "mapFn", "elems");
    if (elems.shape().isUnknown() || elems.shape().numDimensions() == 0) {
      throw new IllegalArgumentException("mapFn: elems must have at least one dimension (the one mapped over), "
          + "got shape " + elems.shape());
    }
    long n = elems.shape().get(0);
    if (n == 0) {
      // Traced, fn is traced once and gives the element shape of an empty result; eagerly it never runs.
      throw new IllegalArgumentException("mapFn: elems is empty (shape " + elems.shape() + "), and function '"
          + functionName() + "' runs eagerly (FunctionOptions.withRunEagerly or Function.runFunctionsEagerly): fn "
          + "never runs, so the shape of its results is unknown. Run the function traced for empty inputs");
    }
    List<Operand<U>> results = new ArrayList<>();
    for (Operand<T> e : tf.unstack(elems, n).output()) {
      Operand<U> y = fn.apply(e);
      operand(y, "mapFn", "the result of fn");
      if (y.type() != outType) {
        throw new IllegalArgumentException("mapFn: fn returned dtype " + y.asOutput().dataType()
            + " but the results were declared as " + outType.getSimpleName());
      }
      results.add(y);
    }
    return tf.stack(results);
  }

  /** {@code Flow.gradients} needs a graph: refused in a body that runs eagerly, naming the option. */
  public static IllegalStateException noGradients() {
    return new IllegalStateException("gradients: Flow.gradients differentiates a traced graph, and function '"
        + functionName() + "' runs eagerly (FunctionOptions.withRunEagerly(true) or "
        + "Function.runFunctionsEagerly(true)); TensorFlow Java has no gradient tape. Run the function traced to "
        + "take gradients");
  }

  private static String functionName() {
    EagerInputs e = Tracing.currentEager();
    return e == null ? "?" : e.function().name();
  }
}
