package dev.polyfn;

import dev.polyfn.internal.flow.FlowCond;
import dev.polyfn.internal.flow.FlowGradients;
import dev.polyfn.internal.flow.FlowLoops;
import dev.polyfn.internal.flow.FlowStructures;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.TensorListReserve;
import org.tensorflow.proto.DataType;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TType;

/**
 * TensorFlow control flow inside a body: {@link #cond}, {@link #whileLoop} and {@link #mapFn},
 * named after Python's {@code tf.cond}, {@code tf.while_loop} and {@code tf.map_fn} so code ports
 * line by line ({@code while} is a Java keyword, hence {@code whileLoop}).
 *
 * <p>Each branch, loop condition and loop body is a Java lambda traced once, when the enclosing
 * body is traced, into its own TensorFlow function; the graph holds one {@code If}/{@code
 * StatelessIf} or {@code While}/{@code StatelessWhile} operation that runs the right function at
 * call time, so the value of the predicate decides at run time without retracing. Lambdas use the
 * body's own {@code tf} and may read any operand of the body (inputs, captures, variables): those
 * values become inputs of the branch functions automatically. Like the body itself, Java side
 * effects in a lambda happen once, at trace time. TensorFlow effects (variable assignments, file
 * writes) run as in Python's {@code tf.function}: in the taken branch once, in a loop body once per
 * iteration, never in an untaken branch, in program order.
 */
public final class Flow {
  private Flow() {}

  /**
   * {@code pred ? then() : otherwise()} as one TensorFlow operation: only the branch selected at
   * run time is executed.
   *
   * @throws IllegalArgumentException if the branches' outputs differ in dtype, or {@code pred} is
   *     not a scalar boolean
   */
  @SuppressWarnings("unchecked")
  public static <T extends TType> Operand<T> cond(Ops tf, Operand<TBool> pred, Supplier<? extends Operand<T>> then,
      Supplier<? extends Operand<T>> otherwise) {
    Objects.requireNonNull(then, "then");
    Objects.requireNonNull(otherwise, "otherwise");
    return (Operand<T>) condList(tf, pred, () -> java.util.Collections.singletonList(then.get()),
        () -> java.util.Collections.singletonList(otherwise.get())).get(0);
  }

  /**
   * {@link #cond} for branches that return several values: both lists must have the same length
   * and, position by position, the same dtype; each output's shape is the most specific shape both
   * branches' shapes fit.
   */
  public static List<Operand<?>> condList(Ops tf, Operand<TBool> pred,
      Supplier<? extends List<? extends Operand<?>>> then, Supplier<? extends List<? extends Operand<?>>> otherwise) {
    return FlowCond.condList(tf, pred, then, otherwise, i -> "output " + i);
  }

  /** Options of a loop: {@code Flow.loop().maximumIterations(100).shape(1, Shape.of(-1))}. */
  public static LoopOptions loop() {
    return LoopOptions.DEFAULT;
  }

  /** {@link #whileLoop(Ops, List, LoopOptions, Function, Function)} with default options. */
  public static List<Operand<?>> whileLoop(Ops tf, List<? extends Operand<?>> loopVars,
      Function<List<Operand<?>>, Operand<TBool>> cond, Function<List<Operand<?>>, List<? extends Operand<?>>> body) {
    return whileLoop(tf, loopVars, LoopOptions.DEFAULT, cond, body);
  }

  /**
   * Repeats {@code vars = body(vars)} while {@code cond(vars)} holds, as one TensorFlow {@code
   * While}: the number of iterations is decided at run time. The body returns the next loop
   * variables, as many as given, each of the same dtype; a variable whose shape changes needs a
   * relaxed shape declared with {@link LoopOptions#shape} (TensorFlow's shape invariants).
   *
   * @return the loop variables after the last iteration
   */
  public static List<Operand<?>> whileLoop(Ops tf, List<? extends Operand<?>> loopVars, LoopOptions options,
      Function<List<Operand<?>>, Operand<TBool>> cond, Function<List<Operand<?>>, List<? extends Operand<?>>> body) {
    return FlowLoops.whileLoop(tf, loopVars, Objects.requireNonNull(options, "options"), cond, body);
  }

  /**
   * {@link #whileLoop} over named loop variables: the lambdas see, and the body returns, a map with
   * the same keys (else an {@code IllegalArgumentException} naming the key and both key sets).
   * Keys are ordered as sorted strings; {@link LoopOptions#shape} indexes loop variables in that
   * order.
   *
   * @return the loop variables after the last iteration, keys in sorted order (unmodifiable)
   */
  public static Map<String, Operand<?>> whileLoop(Ops tf, Map<String, ? extends Operand<?>> loopVars,
      Function<Map<String, Operand<?>>, Operand<TBool>> cond,
      Function<Map<String, Operand<?>>, ? extends Map<String, ? extends Operand<?>>> body) {
    return whileLoop(tf, loopVars, LoopOptions.DEFAULT, cond, body);
  }

  /** {@link #whileLoop(Ops, Map, Function, Function)} with options. */
  @SuppressWarnings("unchecked")
  public static Map<String, Operand<?>> whileLoop(Ops tf, Map<String, ? extends Operand<?>> loopVars,
      LoopOptions options, Function<Map<String, Operand<?>>, Operand<TBool>> cond,
      Function<Map<String, Operand<?>>, ? extends Map<String, ? extends Operand<?>>> body) {
    return (Map<String, Operand<?>>) FlowStructures.whileLoop(tf, loopVars, Objects.requireNonNull(options, "options"),
        cond == null ? null : v -> cond.apply((Map<String, Operand<?>>) v),
        body == null ? null : v -> body.apply((Map<String, Operand<?>>) v));
  }

  /**
   * {@link #whileLoop} over a record of loop variables, e.g. {@code record State(Operand<TInt32>
   * i, Operand<TFloat32> acc) {}}: every component must be declared as an {@code Operand} (the
   * loop rebuilds the record from graph outputs through its canonical constructor) and the record
   * readable by Polyfn (public, or its package open to {@code dev.polyfn}). Components are loop
   * variables in declaration order, the order {@link LoopOptions#shape} indexes.
   *
   * @return a new record of the loop variables after the last iteration
   */
  public static <R extends Record> R whileLoop(Ops tf, R loopVars, Function<? super R, Operand<TBool>> cond,
      Function<? super R, ? extends R> body) {
    return whileLoop(tf, loopVars, LoopOptions.DEFAULT, cond, body);
  }

  /** {@link #whileLoop(Ops, Record, Function, Function)} with options. */
  @SuppressWarnings("unchecked")
  public static <R extends Record> R whileLoop(Ops tf, R loopVars, LoopOptions options,
      Function<? super R, Operand<TBool>> cond, Function<? super R, ? extends R> body) {
    return (R) FlowStructures.whileLoop(tf, loopVars, Objects.requireNonNull(options, "options"),
        cond == null ? null : v -> cond.apply((R) v), body == null ? null : v -> body.apply((R) v));
  }

  /**
   * {@link #condList} for branches that return maps: both must have the same keys (else an
   * {@code IllegalArgumentException} naming the key and both key sets), key by key of the same
   * dtype.
   *
   * @return the selected branch's values, keys in sorted order (unmodifiable)
   */
  @SuppressWarnings("unchecked")
  public static Map<String, Operand<?>> condMap(Ops tf, Operand<TBool> pred,
      Supplier<? extends Map<String, ? extends Operand<?>>> then,
      Supplier<? extends Map<String, ? extends Operand<?>>> otherwise) {
    return (Map<String, Operand<?>>) FlowStructures.cond(tf, pred, then, otherwise);
  }

  /**
   * {@link #condList} for branches that return a record of operands (the same record class from
   * both, components declared as {@code Operand}, as for {@link #whileLoop(Ops, Record, Function,
   * Function)}).
   *
   * @return a new record of the selected branch's values
   */
  @SuppressWarnings("unchecked")
  public static <R extends Record> R condRecord(Ops tf, Operand<TBool> pred, Supplier<? extends R> then,
      Supplier<? extends R> otherwise) {
    return (R) FlowStructures.cond(tf, pred, then, otherwise);
  }

  /**
   * Applies {@code fn} to each element of {@code elems} along its first dimension and stacks the
   * results (Python's {@code tf.map_fn}), in one {@code While}; results have {@code elems}' dtype
   * and, as in Python, its static first dimension. {@link #gradients} goes through it, to {@code
   * elems} and to what {@code fn} captures.
   */
  public static <T extends TType> Operand<T> mapFn(Ops tf, Operand<T> elems, Function<Operand<T>, Operand<T>> fn) {
    return mapFn(tf, elems, elems.type(), fn);
  }

  /** {@link #mapFn(Ops, Operand, Function)} whose results have dtype {@code outType}. */
  @SuppressWarnings("unchecked")
  public static <T extends TType, U extends TType> Operand<U> mapFn(Ops tf, Operand<T> elems, Class<U> outType,
      Function<Operand<T>, Operand<U>> fn) {
    return FlowLoops.mapFn(tf, elems, outType, Objects.requireNonNull(fn, "fn"));
  }

  /**
   * The gradient of {@code y} (summed over its elements, as {@code tf.gradients}) with respect to
   * each of {@code xs}, through {@link #cond}, {@link #whileLoop} and {@link #mapFn} (and of a
   * gradient so built, for second and higher derivatives) and TensorList operations, as Python's
   * list_ops.py differentiates them: TensorFlow's C++ gradient registry, which {@code
   * tf.gradients} uses, has no gradient for their operations. Other operations are differentiated
   * by that registry; one it has no gradient for fails naming it, as does one reading another
   * variant (an Optional, a dataset) that depends on the xs.
   * Branches and loop bodies are differentiated when the body is traced, by tracing their lambdas
   * again. Values that should be trained must be read (variables) outside the cond or loop.
   * The gradient traces the branch and loop lambdas again and recomputes their values (rather than
   * keeping the forward pass's, as Python does), leaving out the writes nothing in them depends on,
   * so it does not repeat them. So it differentiates lambdas that are pure or only read variables
   * nothing writes between the forward pass and the gradient.
   *
   * @return one gradient per x, its total derivative as {@code tf.gradients} gives (paths through
   *     another of the xs included), zeros for an x that y does not depend on
   * @throws IllegalArgumentException naming the cond or loop and the operation, for lambdas whose
   *     recomputed values could differ: one reading a variable it writes (or one written after the
   *     cond or loop, before the gradient), drawing random numbers its results depend on, or with
   *     another stateful operation (a write something waits for, a call of a function with
   *     effects); move that operation out of the cond or loop and use its value inside; for a
   *     loop carrying a variant that is not a TensorList; and under XLA (jitCompile) for a loop
   *     carrying a TensorList, such as a loop's gradient differentiated again
   */
  public static List<Operand<?>> gradients(Ops tf, Operand<?> y, List<? extends Operand<?>> xs) {
    return FlowGradients.gradients(tf, y, xs);
  }
}
