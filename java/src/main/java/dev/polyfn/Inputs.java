package dev.polyfn;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.tensorflow.Operand;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.types.family.TType;

/**
 * Declares a function's parameters while its body is traced, and returns their placeholders.
 *
 * <p>The first trace fixes the parameter list (names, kinds, order, optional flags); every later
 * trace must declare the same list. Calls are typed against it:
 *
 * <table>
 *   <caption>What each kind of parameter contributes to a call's signature</caption>
 *   <tr><th>declaration</th><th>argument</th><th>signature part</th></tr>
 *   <tr><td>{@code input}</td><td>a tensor (or a Java number/array, cast)</td><td>dtype and shape</td></tr>
 *   <tr><td>{@code list}</td><td>a {@code List} of tensors</td><td>length, and each element's dtype and shape</td></tr>
 *   <tr><td>{@code map}</td><td>a {@code Map<String, Tensor>}</td><td>the key set (order ignored), each value's dtype and shape</td></tr>
 *   <tr><td>{@code javaInput}</td><td>any Java value</td><td>the value, by {@code equals}/{@code hashCode}</td></tr>
 * </table>
 *
 * <pre>{@code
 * Operand<TFloat32> x = in.input("x", TFloat32.class);                    // any shape, exact trace
 * Operand<TFloating> v = in.input("v", TFloating.class, Shape.of(-1));    // any float dtype, any length
 * List<Operand<TFloat32>> xs = in.list("xs", TFloat32.class);             // a list of float tensors
 * Map<String, Operand<?>> feats = in.map("features");                     // named tensors
 * boolean training = in.javaInput("training", Boolean.class, false);      // a Java value with a default
 * }</pre>
 */
public interface Inputs {
  /**
   * A tensor parameter of any shape. Each new shape traces a new concrete function.
   *
   * @param name the parameter's name, the key of its argument in {@code call}
   * @param type a concrete tensor class ({@code TFloat32}) or a family ({@code TFloating},
   *     {@code TNumber}, {@code TType}) that accepts every member dtype, tracing once per dtype
   */
  <T extends TType> Operand<T> input(String name, Class<T> type);

  /**
   * A tensor parameter constrained to {@code shape}: {@code -1} is any size for a dim, {@link
   * Shape#unknown()} any rank. Calls that fit share one trace (traced with this shape); calls that
   * do not fit fail with {@link IllegalArgumentException}.
   */
  <T extends TType> Operand<T> input(String name, Class<T> type, Shape shape);

  /**
   * An optional tensor parameter: omitted, it takes {@code defaultValue}. As in TensorFlow's
   * FunctionType, only the default's type is part of the signature, so omitting the argument and
   * passing a tensor of the same dtype and shape share one trace. The default tensor stays owned
   * by the caller and must stay open while the function is used.
   */
  <T extends TType> Operand<T> input(String name, Class<T> type, T defaultValue);

  /** An optional tensor parameter constrained to {@code shape}, with a default. */
  <T extends TType> Operand<T> input(String name, Class<T> type, Shape shape, T defaultValue);

  /**
   * A list of tensors of any dtypes. Its length and each element's dtype and shape are part of the
   * signature: a new length retraces, the same length and specs reuse.
   */
  List<Operand<?>> list(String name);

  /** A list of tensors of {@code type} (a concrete type or a family). */
  <T extends TType> List<Operand<T>> list(String name, Class<T> type);

  /**
   * A map of named tensors of any dtypes. Its exact key set (order ignored) and each value's dtype
   * and shape are part of the signature. The returned map iterates in sorted key order.
   */
  Map<String, Operand<?>> map(String name);

  /** A map of named tensors of {@code type} (a concrete type or a family). */
  <T extends TType> Map<String, Operand<T>> map(String name, Class<T> type);

  /**
   * A nested parameter: any nest of lists, maps and records, to any depth, whose leaves are tensors
   * (or specs) and Java values. The signature is the structure (list lengths, key sets, record
   * classes) plus each leaf's type (a tensor's dtype and shape, a Java value by {@code equals}); with
   * reduce-retracing, calls of the same structure generalize leaf by leaf, as {@code tf.function}
   * does. A Variable cannot be nested.
   *
   * <pre>{@code
   * Nest xs = in.nest("xs");     // e.g. List.of(Map.of("k", t0), Map.of("k", t1))
   * Operand<TFloat32> k1 = xs.get(1).get("k").operand(TFloat32.class);
   * }</pre>
   */
  Nest nest(String name);

  /**
   * A record parameter: an instance of record class {@code type} (a Java record, or a Kotlin
   * {@code @JvmRecord data class}) whose components are tensors, Java values or nests. Its class,
   * its Java-value components and each tensor component's dtype and shape are the signature. Read
   * the components through the record's accessors: {@code batch.get(Batch::features)}.
   */
  <R extends Record> RecordInput<R> record(String name, Class<R> type);

  /**
   * A parameter of a registered composite tensor type (see {@link CompositeType}): the body gets
   * the type's view, built from one placeholder per component.
   */
  <B> B composite(String name, CompositeType<?, B> type);

  /**
   * A sparse tensor parameter ({@code org.tensorflow.SparseTensor}) whose values are of {@code type}
   * (a concrete type or a family): its indices, values and dense shape are three graph inputs. The
   * values' dtype and the dense shape are the signature, not the number of non-zeros.
   */
  <T extends TType> SparseOperand<T> sparse(String name, Class<T> type);

  /**
   * A ragged tensor parameter ({@link RaggedTensor}) whose flat values are of {@code type} (a
   * concrete type or a family): its flat values and the row splits of each ragged dimension are
   * graph inputs, in Python's order. The values' dtype, the ragged rank, the row splits' dtype
   * (int64 or int32), the number of rows and the flat values' inner dims are the signature, as in
   * Python's {@code RaggedTensorSpec}; the numbers of values and of inner rows are not. Row splits
   * are checked at every call (see {@link RaggedTensor}).
   */
  <T extends TType> RaggedOperand<T> ragged(String name, Class<T> type);

  /**
   * A Java value: returned as is while tracing, so the body can branch on it. Keyed by {@code
   * equals}/{@code hashCode}: an equal value reuses its trace, a new value traces again and is
   * kept for the life of the function. Use it for a few values (flags, modes, sizes); a value that
   * changes from call to call should be a tensor (Polyfn logs a warning when one parameter has
   * traced many values).
   */
  <T> T javaInput(String name, Class<T> type);

  /** An optional Java value: omitted, it is {@code defaultValue} (same trace as passing it). */
  <T> T javaInput(String name, Class<T> type, T defaultValue);

  /**
   * A constant capture: {@code value} (an eager tensor) is copied into the function when it is
   * traced. Later changes to the tensor do not reach the function, as a Python closure over an eager
   * tensor in {@code tf.function} behaves. Not part of the signature.
   */
  <T extends TType> Operand<T> constCapture(T value);

  /**
   * A capture by reference: {@code value} is called at every call and its result fed to the
   * function as a hidden input, so the function sees the current value without retracing. The
   * result's dtype and shape are part of the signature (a change retraces). The tensor it returns
   * stays owned by whoever made it and must be open at each call.
   *
   * <pre>{@code
   * TFloat32[] scale = {TFloat32.scalarOf(2f)};
   * Operand<TFloat32> s = in.capture(() -> scale[0]);   // re-read at every call
   * }</pre>
   */
  <T extends TType> Operand<T> capture(Supplier<T> value);

  /** A capture by reference with a name (shown in the FunctionType and in errors). */
  <T extends TType> Operand<T> capture(String name, Supplier<T> value);

  /**
   * A variable created on the function's first trace (in the eager context, once) from a copy of
   * {@code initialValue}, and owned by the function; later traces get the same variable by name.
   * A new name on a later trace throws {@link IllegalStateException}, as {@code tf.function} does.
   */
  <T extends TType> Variable<T> variable(String name, T initialValue);

  /**
   * A parameter that takes a {@link Variable} of {@code type}, passed by handle: the body reads or
   * assigns it through the returned resource handle ({@code tf.readVariableOp(h, type)}, {@code
   * tf.assignVariableOp(h, value)}). Calls with other variables of the same dtype and shape reuse
   * the trace; the same variable passed twice is one graph input.
   */
  <T extends TType> Operand<? extends TType> variableInput(String name, Class<T> type);
}
