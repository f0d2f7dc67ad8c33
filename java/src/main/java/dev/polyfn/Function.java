package dev.polyfn;

import dev.polyfn.internal.saved.SavedModelLoader;
import dev.polyfn.internal.trace.EagerCall;
import dev.polyfn.internal.trace.Facades;
import dev.polyfn.internal.trace.FunctionCore;
import java.nio.file.Path;
import java.util.Objects;
import org.tensorflow.types.family.TType;

/**
 * Entry point: defines polymorphic functions, Polyfn's counterpart of Python's {@code
 * tf.function}.
 *
 * <pre>{@code
 * try (MapFunction addTwo = Function.define((tf, in) -> {
 *       Operand<TFloat32> x = in.input("x", TFloat32.class);
 *       return Map.of("y", tf.math.add(x, tf.constant(2f)));
 *     });
 *     TFloat32 x = TFloat32.scalarOf(1f);
 *     Outputs out = addTwo.call(Map.of("x", x))) {
 *   float y = out.get("y", TFloat32.class).getFloat();   // 3.0
 * }
 * }</pre>
 *
 * <p>The body is traced into a real TensorFlow function once per input signature, cached, and
 * executed natively by TensorFlow's runtime on later calls. The output form picks the class:
 * named outputs ({@link #define}), a list ({@link #defineList}), one tensor ({@link
 * #defineSingle}), or one typed tensor to one typed tensor ({@link #unary}).
 */
public final class Function {
  private Function() {}

  /** How the SavedModel loader, which works on cores, makes the public functions it returns. */
  private static final Facades<PolymorphicFunction> FACADES = new Facades<>() {
    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public PolymorphicFunction define(String kind, Object body, Class<?> unaryInput, FunctionOptions options) {
      return switch (kind) {
        case "map" -> new MapFunction((MapBody) body, options);
        case "list" -> new ListFunction((ListBody) body, options);
        case "single" -> new SingleFunction((SingleBody) body, options);
        case "nest" -> new NestFunction((NestBody) body, options);
        default -> new UnaryFunction((Class) unaryInput, (UnaryBody) body, options);
      };
    }

    @Override
    public FunctionCore core(PolymorphicFunction function) {
      return function.core();
    }
  };

  /** A function with named outputs. */
  public static MapFunction define(MapBody body) {
    return define(body, FunctionOptions.defaults());
  }

  /** A function with named outputs and options. */
  public static MapFunction define(MapBody body, FunctionOptions options) {
    return new MapFunction(body, options);
  }

  /** A function whose outputs are a list. */
  public static ListFunction defineList(ListBody body) {
    return defineList(body, FunctionOptions.defaults());
  }

  /** A function whose outputs are a list, with options. */
  public static ListFunction defineList(ListBody body, FunctionOptions options) {
    return new ListFunction(body, options);
  }

  /** A function with one output. */
  public static SingleFunction defineSingle(SingleBody body) {
    return defineSingle(body, FunctionOptions.defaults());
  }

  /** A function with one output, with options. */
  public static SingleFunction defineSingle(SingleBody body, FunctionOptions options) {
    return new SingleFunction(body, options);
  }

  /** A function whose outputs are a nest of lists, maps and records of tensors. */
  public static NestFunction defineNested(NestBody body) {
    return defineNested(body, FunctionOptions.defaults());
  }

  /** A function whose outputs are a nest, with options. */
  public static NestFunction defineNested(NestBody body, FunctionOptions options) {
    return new NestFunction(body, options);
  }

  /**
   * A type-safe function of one tensor {@code x} of {@code inputType} (a concrete type or a family)
   * to one tensor: {@code call(I)} returns {@code O} without casts.
   */
  public static <I extends TType, O extends TType> UnaryFunction<I, O> unary(Class<I> inputType, UnaryBody<I, O> body) {
    return unary(inputType, body, FunctionOptions.defaults());
  }

  /** A type-safe unary function, with options. */
  public static <I extends TType, O extends TType> UnaryFunction<I, O> unary(
      Class<I> inputType, UnaryBody<I, O> body, FunctionOptions options) {
    return new UnaryFunction<>(inputType, body, options);
  }

  /**
   * Debug mode for every function, as Python's {@code tf.config.run_functions_eagerly}: while on,
   * every call of every function with a body (those defined before, too) runs the body eagerly,
   * as {@link FunctionOptions#withRunEagerly} does for one function; turned off, calls use the
   * traced functions again (their caches are kept). The system property {@code
   * dev.polyfn.runEagerly=true} turns it on at start. Functions loaded without a body run their
   * saved concrete functions either way.
   *
   * <pre>{@code
   * Function.runFunctionsEagerly(true);    // bodies run op by op: breakpoints see values
   * try (Outputs out = f.call(Map.of("x", x))) {
   *   ...
   * } finally {
   *   Function.runFunctionsEagerly(false);
   * }
   * }</pre>
   *
   * @param runEagerly true to run every function's calls eagerly
   */
  public static void runFunctionsEagerly(boolean runEagerly) {
    EagerCall.runEveryFunctionEagerly(runEagerly);
  }

  /**
   * Whether {@link #runFunctionsEagerly} is on (Python's {@code
   * tf.config.functions_run_eagerly}).
   *
   * @return the JVM-wide switch's state
   */
  public static boolean functionsRunEagerly() {
    return EagerCall.everyFunctionRunsEagerly();
  }

  /**
   * Loads a function {@link PolymorphicFunction#save saved} by Polyfn, with its dispatch: the
   * result is the saved kind ({@link MapFunction}, {@link ListFunction}, {@link SingleFunction} or
   * {@link UnaryFunction}; cast it), its {@code functionType()} and {@code concreteFunctions()} are
   * those saved, its {@code traceCount()} is the number of saved concrete functions, and a call
   * whose types a saved signature accepts runs that concrete function without tracing. It has no body: a call no saved signature
   * accepts throws {@link IllegalArgumentException} listing the saved signatures and the closest
   * mismatch. Captured variables come back as new {@link Variable}s with the saved values, owned
   * (and closed) by the function. A directory holding numeric version subdirectories (TensorFlow
   * Serving's layout) loads the highest version.
   *
   * @throws IllegalArgumentException when the directory is not a SavedModel Polyfn wrote, or is
   *     corrupt or truncated (the message names the file); nothing stays registered then
   */
  public static PolymorphicFunction load(Path dir) {
    return SavedModelLoader.load(FACADES, Objects.requireNonNull(dir, "dir"), null, null);
  }

  /**
   * The directory {@link #load(Path)} reads for {@code dir}: {@code dir} itself when it holds a
   * {@code saved_model.pb}, else its highest numeric version subdirectory holding one (TensorFlow
   * Serving's layout: {@code dir/1}, {@code dir/2}...), else {@code dir}. For callers that must
   * know which version a load will serve (Spark's executors check it).
   *
   * @return the SavedModel directory a load of {@code dir} reads
   */
  public static Path savedModelDirectory(Path dir) {
    return SavedModelLoader.versionDir(Objects.requireNonNull(dir, "dir"));
  }

  /** {@link #load(Path)} of a saved {@link MapFunction}, tracing {@code body} on a miss (warm start). */
  public static MapFunction load(Path dir, MapBody body) {
    return (MapFunction) SavedModelLoader.load(FACADES, Objects.requireNonNull(dir, "dir"), Objects.requireNonNull(body, "body"), "map");
  }

  /** {@link #load(Path)} of a saved {@link ListFunction}, tracing {@code body} on a miss. */
  public static ListFunction loadList(Path dir, ListBody body) {
    return (ListFunction) SavedModelLoader.load(FACADES, Objects.requireNonNull(dir, "dir"), Objects.requireNonNull(body, "body"), "list");
  }

  /** {@link #load(Path)} of a saved {@link SingleFunction}, tracing {@code body} on a miss. */
  public static SingleFunction loadSingle(Path dir, SingleBody body) {
    return (SingleFunction) SavedModelLoader.load(FACADES, Objects.requireNonNull(dir, "dir"), Objects.requireNonNull(body, "body"), "single");
  }

  /** {@link #load(Path)} of a saved {@link NestFunction}, tracing {@code body} on a miss. */
  public static NestFunction loadNested(Path dir, NestBody body) {
    return (NestFunction) SavedModelLoader.load(FACADES, Objects.requireNonNull(dir, "dir"), Objects.requireNonNull(body, "body"), "nest");
  }

  /**
   * Loads function {@code name} of a SavedModel that Python's {@code tf.saved_model.save} wrote for
   * a {@code tf.Module} (or any object) with several {@code tf.function}s: its concrete functions
   * with the dispatch rebuilt from their input signatures (tensors, lists, tuples and dicts of
   * them; a Python literal, e.g. {@code training=True}, becomes a Java-value parameter matched by
   * {@code equals}: bool as Boolean, int as Integer or Long, float as Double, str as String), the variables
   * they capture with the checkpoint's values. {@link #load(Path)} loads such a SavedModel too
   * when it holds a single function. Outputs are named by the returned dict's keys ({@code
   * output_0}... for other structures). A {@code SparseTensorSpec} argument is a {@code
   * SparseTensor}, a {@code RaggedTensorSpec} one a {@link RaggedTensor}, an extension type a
   * {@code Map} of its fields (a static field a Java value, matched by equals). A function that returns
   * composite tensors is loaded with {@link #loadNested(Path, String)} (and by {@link #load(Path)}).
   *
   * @throws IllegalArgumentException when there is no such function, or nothing of it can be
   *     represented, or it returns composite tensors
   */
  public static MapFunction load(Path dir, String name) {
    return (MapFunction) SavedModelLoader.load(FACADES, Objects.requireNonNull(dir, "dir"), null, "map",
        Objects.requireNonNull(name, "name"));
  }

  /**
   * {@link #load(Path, String)} as a {@link NestFunction}: its outputs are the returned structure
   * (dicts as Maps, lists and tuples as Lists), a returned {@code tf.RaggedTensor} a {@link
   * RaggedTensor}, a {@code tf.sparse.SparseTensor} a {@code SparseTensor}, an extension type a
   * {@code Map} of its fields.
   *
   * <pre>{@code
   * try (NestFunction f = Function.loadNested(dir, "tokenize");
   *      NestOutputs out = f.call(Map.of("text", text))) {
   *   RaggedTensor<?> tokens = (RaggedTensor<?>) out.<Map<String, Object>>value().get("tokens");
   * }
   * }</pre>
   *
   * @throws IllegalArgumentException when there is no such function, or nothing of it can be represented
   */
  public static NestFunction loadNested(Path dir, String name) {
    return (NestFunction) SavedModelLoader.load(FACADES, Objects.requireNonNull(dir, "dir"), null, "nest",
        Objects.requireNonNull(name, "name"));
  }
}
