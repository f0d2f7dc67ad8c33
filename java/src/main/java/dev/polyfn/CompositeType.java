package dev.polyfn;

import java.util.List;
import java.util.function.Consumer;
import org.tensorflow.Operand;
import org.tensorflow.Tensor;

/**
 * The protocol of a composite tensor type: a tensor-like value made of several tensors (a ragged
 * tensor's values and row splits), which functions take as arguments, see as a symbolic view in
 * their bodies, and return. Register an implementation once with {@link Composites#register};
 * Polyfn then handles its values anywhere a tensor may be nested (as a parameter of {@link
 * Inputs#composite}, in a {@link Inputs#nest}, in a record, as an output), through these methods
 * only. {@code SparseTensor} and {@link RaggedTensor} are built in this
 * way.
 *
 * <p>The type of a value ({@link #spec}) is declarative, so dispatch never runs this code: two
 * values share a trace when they have the same {@link #name}, values dtype and metadata, and
 * their static shapes and component specs fit, dim by dim; with reduce-retracing, the static shape
 * and each component's dims generalize independently (a dim set to -1 in a spec is never part of
 * the signature).
 *
 * @param <V> the class of the eager values (what callers pass and get back)
 * @param <B> the class of the body's view (built from placeholders, returned as an output)
 */
public interface CompositeType<V, B> {
  /** A name unique among registered types, part of every signature (e.g. {@code "Ragged"}). */
  String name();

  /** The class of the values this type handles (subclasses included). */
  Class<V> valueClass();

  /** The class of the body's views (subclasses included): outputs of this class are rebuilt as values. */
  Class<B> viewClass();

  /** The type of {@code value}: called at every call, so keep it cheap. */
  CompositeSpec spec(V value);

  /** Component {@code i} of {@code value}, in the order of {@link CompositeSpec#components()}. */
  Tensor component(V value, int i);

  /**
   * The value whose components a call hands to TensorFlow, after {@link #spec}: {@code value}
   * itself by default. A type whose kernels trust the data of a component (a ragged tensor's row
   * splits, an index that must be in range) checks that data here and returns a value holding
   * copies it made of the checked components, giving each to {@code owner}, which closes it after
   * the call: another thread that rewrites the caller's tensors between the check and the run
   * then changes nothing TensorFlow sees. The value returned must have {@code value}'s spec (its
   * components are checked against it), and {@code owner} is for this call only. Throw {@link
   * IllegalArgumentException} for data that does not hold; the call names the argument.
   *
   * <pre>{@code
   * public Interval forCall(Interval v, Consumer<Tensor> owner) {
   *   long[] bounds = StdArrays.array1dCopyOf(v.bounds());   // read once
   *   if (bounds[0] > bounds[1]) throw new IllegalArgumentException("lower bound above upper");
   *   TInt64 copy = TInt64.vectorOf(bounds);
   *   owner.accept(copy);
   *   return new Interval(copy);
   * }
   * }</pre>
   */
  default V forCall(V value, Consumer<Tensor> owner) {
    return value;
  }

  /**
   * The body's view of a value of type {@code spec}, from one placeholder per component. When the
   * body is traced, {@code spec} is the type the trace is keyed and cached under, which later calls
   * of other values share: with reduce-retracing, the generalized spec (static shape and component
   * dims -1 where calls differed, e.g. {@code [-1, 4]} rather than the call's {@code [5, 4]}),
   * matching the components' placeholders; so static dims read from it hold for every call the
   * trace serves. When the body runs eagerly, it is the call's value's {@link #spec}. For the
   * output of a function called inside another's body, {@code spec} is null.
   */
  B view(CompositeSpec spec, List<Operand<?>> components);

  /** The operands an output view is made of, in component order. */
  List<Operand<?>> components(B view);

  /** A value from the output tensors of a view's components (the caller owns them). */
  V fromComponents(List<Tensor> components);
}
