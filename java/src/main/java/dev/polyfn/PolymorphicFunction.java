package dev.polyfn;

import dev.polyfn.internal.Native;
import dev.polyfn.internal.saved.SavedModelWriter;
import dev.polyfn.internal.trace.Body;
import dev.polyfn.internal.trace.FunctionCore;
import dev.polyfn.internal.trace.GraphCall;
import dev.polyfn.internal.trace.Result;
import dev.polyfn.internal.trace.SignatureProfile;
import dev.polyfn.internal.trace.Traced;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.tensorflow.op.Ops;

/**
 * What every Polyfn function shares: typing calls, looking up or tracing concrete functions,
 * introspection and release. The subclasses differ in what the body returns and what a call
 * returns: {@link MapFunction} (named outputs), {@link ListFunction}, {@link SingleFunction},
 * {@link UnaryFunction}.
 *
 * <p>Thread-safe: any number of threads may call one function. Calls of cached signatures take
 * no lock; a new signature is traced by one thread at a time while the others wait. Close it to
 * release its concrete functions; later calls throw {@link IllegalStateException}.
 */
public abstract class PolymorphicFunction implements AutoCloseable {
  /** The state and protocol; this class checks arguments, converts results and documents. */
  private final FunctionCore core;

  PolymorphicFunction(FunctionOptions options, String kind, Class<?> unaryInput) {
    this.core = new FunctionCore(Objects.requireNonNull(options, "options"), kind, unaryInput, new BodyOf(this));
  }

  /**
   * This function's {@link #trace} as the core runs it. A class rather than {@code this::trace}:
   * the first bootstrap of a method reference costs every start that defines a function.
   */
  private static final class BodyOf implements Body {
    private final PolymorphicFunction function;

    BodyOf(PolymorphicFunction function) {
      this.function = function;
    }

    @Override
    public Traced trace(Ops tf, Inputs inputs) {
      return function.trace(tf, inputs);
    }
  }

  /** Runs the body while tracing; returns its outputs, named. */
  abstract Traced trace(Ops tf, Inputs inputs);

  /** The core the machinery works on (for the API's classes, and {@link Function}'s facades). */
  final FunctionCore core() {
    return core;
  }

  /** At definition: restores the trace cache's entries, then traces the inferred signatures. */
  final void traceInferred(Object body) {
    core.traceInferred(body);
  }

  /** Calls with named arguments. */
  final Result invoke(Map<String, ?> args) {
    return core.invoke(args);
  }

  /** Calls a single-parameter function with its one argument. */
  final Result invokeSingle(Object value) {
    return core.invokeSingle(value);
  }

  /** Adds a call of this function to the graph of {@code tf} (see {@code GraphCall}). */
  final Traced applyInGraph(Ops tf, Map<String, ?> args) {
    Objects.requireNonNull(tf, "tf");
    Objects.requireNonNull(args, "args");
    return GraphCall.apply(core, tf, args);
  }

  /**
   * The concrete function for these arguments, traced now if no cached one accepts them, without
   * executing it ({@code tf.function.get_concrete_function}). Values may be tensors or {@link
   * TensorSpec}s, also as list elements and map values:
   *
   * <pre>{@code
   * f.getConcreteFunction(Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(-1))));
   * }</pre>
   *
   * A later call whose types are subtypes of a traced spec reuses it.
   *
   * @param argsOrSpecs the arguments by parameter name: tensors, specs, Java values, variables
   * @return the cached or newly traced concrete function that accepts them
   */
  public ConcreteFunctionInfo getConcreteFunction(Map<String, ?> argsOrSpecs) {
    return core.getConcreteFunction(argsOrSpecs);
  }

  /**
   * Writes this function as a TensorFlow SavedModel in {@code dir} (Python, TensorFlow Java and
   * TensorFlow Serving load it as it is; {@link Function#load} restores its dispatch): every
   * concrete function, one signature each (named {@code <function>__<dtype>_<dims>...}, e.g.
   * {@code scale__float32_N_3}), the captured variables' current values, and Polyfn's metadata in
   * {@code assets.extra/polyfn.json}. The guide's page "Save, load, deploy" (docs/save-load.md) has the layout.
   *
   * @throws IllegalStateException when there is no concrete function yet, a capture by reference
   *     ({@code in.capture}), a Variable parameter, or a Java-value parameter whose class or value
   *     has no text form (numbers, booleans and strings save; nested Polyfn calls save too)
   * @throws java.io.UncheckedIOException when the directory cannot be written
   */
  public void save(Path dir) {
    save(dir, SaveOptions.defaults());
  }

  /** {@link #save(Path)} with tags, signature names or a TensorFlow Serving version directory. */
  public void save(Path dir, SaveOptions options) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(options, "options");
    try {
      SavedModelWriter.save(core, dir, options);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * What signature inference said, one line per parameter: the inferred constraint and where it
   * came from ({@code x: TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples)}), or why its
   * examples keep separate traces ({@code n: Java values 1, 2 are traced one per value; pass n as
   * a tensor to share one trace}). Empty without examples or a profile.
   *
   * @return the lines, in parameter declaration order
   */
  public List<String> inferenceReport() {
    return List.of(core.query(Native::inferenceNotes));
  }

  /**
   * The signature this function's calls suggest: every call is recorded by its type (a counter
   * per call type, bumped without a lock, on by default), and the recorded types are coalesced
   * as examples are. Null before the first trace.
   *
   * @return the suggested declarations with the trace counts before and after
   */
  public SignatureSuggestion suggestedSignature() {
    return core.query(Native::suggestedSignature);
  }

  /**
   * Writes the recorded call types, with their counts, as a signature profile (JSON) that {@link
   * FunctionOptions#withSignatureProfile} loads to trace the suggested signature when a later run
   * defines the function.
   *
   * @throws java.io.UncheckedIOException if the file cannot be written
   */
  public void writeSignatureProfile(Path file) {
    Objects.requireNonNull(file, "file");
    SignatureProfile.write(file, core.query(Native::signatureProfile));
  }

  /**
   * The function's name (from {@link FunctionOptions#withName}).
   *
   * @return the display name
   */
  public String name() {
    return core.name();
  }

  /**
   * How many concrete functions tracing has produced (failed traces do not count). A function
   * loaded from a SavedModel ({@link Function#load}) counts the saved concrete functions, traced
   * by the process that saved them; concrete functions restored from a trace cache do not count.
   *
   * @return the number of successful traces
   */
  public int traceCount() {
    return core.traceCount();
  }

  /**
   * The polymorphic type: the declared parameters and their constraints, e.g. {@code (x:
   * TensorSpec({FLOAT, DOUBLE}, [-1]), n: Literal<java.lang.Integer>)}. Empty before the first
   * trace, which fixes the parameter list.
   *
   * @return the declared type
   */
  public FunctionType functionType() {
    FunctionType t = core.query(Native::parameters);
    return t == null ? FunctionType.empty() : t;
  }

  /**
   * Every cached concrete function with its monomorphic type, in the order they were traced, with
   * its preparation and first-run times ({@link ConcreteFunctionInfo#firstRunTime}).
   *
   * @return the cached concrete functions
   */
  public List<ConcreteFunctionInfo> concreteFunctions() {
    return core.concreteFunctions();
  }

  /**
   * Releases every concrete function now; the parameter list stays, and the next call of each
   * signature traces again. ({@code tf.function} has no such method.)
   */
  public void clearCache() {
    core.clearCache();
  }

  /**
   * Counters of calls (exact and inexact hits, misses) and traces, with trace times and the
   * concrete functions' first-run times (where TensorFlow prepares them). A trace or first run
   * longer than {@code dev.polyfn.slowWorkMillis} (1000 by default) is also logged at {@code
   * INFO}; see the guide's page "Logging and long work" (docs/logging.md).
   *
   * @return a snapshot of the counters
   */
  public FunctionStatistics statistics() {
    return FunctionStatistics.fromWire(core.query(Native::statistics));
  }

  /**
   * The most recent traces (up to 64), oldest first, each with the reason no cached signature
   * matched. The same records are logged at {@code DEBUG} to the {@code System.Logger} named
   * {@code dev.polyfn}; when 5 of the last 10 calls traced, a {@code WARNING} names the function,
   * the parameters that keep changing and the options that would help.
   *
   * @return the recent traces
   */
  public List<TraceEvent> traceHistory() {
    return List.of(core.query(Native::traceHistory));
  }

  /**
   * Releases every concrete function and the variables the function created. Idempotent; later
   * calls throw {@link IllegalStateException}.
   */
  @Override
  public void close() {
    core.close();
  }

  /** {@code MapFunction(name(x: ...))}, or {@code MapFunction(name, closed)} once closed (never throws). */
  @Override
  public String toString() {
    String type;
    try {
      type = functionType().toString();
    } catch (IllegalStateException closed) {
      type = ", closed";
    }
    return getClass().getSimpleName() + "(" + name() + type + ")";
  }
}
