package dev.polyfn;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Options of a polymorphic function; immutable, each {@code with...} returns a copy.
 *
 * <pre>{@code
 * MapFunction f = Function.define(body, FunctionOptions.defaults()
 *     .withName("scale")
 *     .withReduceRetracing(true)        // shapes that vary share generic traces
 *     .withMaxConcreteFunctions(64));   // evict the least recently used beyond 64
 * }</pre>
 */
public final class FunctionOptions {
  private static final FunctionOptions DEFAULTS = new FunctionOptions("function", false, 0, List.of(), null, null, "", CallSettings.DEFAULTS);

  private final String name;
  private final boolean reduceRetracing;
  private final int maxConcreteFunctions;
  private final List<Map<String, ?>> exampleInputs;
  private final Path signatureProfile;
  private final Path traceCache;
  private final String traceCacheVersion;
  private final CallSettings calls;

  private FunctionOptions(String name, boolean reduceRetracing, int maxConcreteFunctions,
      List<Map<String, ?>> exampleInputs, Path signatureProfile, Path traceCache, String traceCacheVersion,
      CallSettings calls) {
    this.calls = calls;
    this.traceCache = traceCache;
    this.traceCacheVersion = traceCacheVersion;
    this.name = name;
    this.reduceRetracing = reduceRetracing;
    this.maxConcreteFunctions = maxConcreteFunctions;
    this.exampleInputs = exampleInputs;
    this.signatureProfile = signatureProfile;
  }

  /** The defaults: name {@code "function"}, exact retracing, an unbounded cache. */
  public static FunctionOptions defaults() {
    return DEFAULTS;
  }

  /**
   * A name for the function, shown as given in errors, logs and {@code toString}: any text with a
   * non-blank character ({@code "ü-名前"}, {@code "_private"}). TensorFlow's names for its
   * concrete functions and graph ops are derived from it, keeping only the characters TensorFlow
   * allows.
   *
   * @throws IllegalArgumentException if {@code name} is empty or blank
   */
  public FunctionOptions withName(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("a function name must not be empty or blank (got \"" + name
          + "\"); any other text is allowed");
    }
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions, exampleInputs, signatureProfile, traceCache, traceCacheVersion, calls);
  }

  /**
   * tf.function's {@code reduce_retracing}: when a call matches no cached signature, trace the
   * most specific common supertype of the call and the cached signatures instead of the call's
   * exact types. Calls with shapes {@code [2]}, {@code [3]}, {@code [4]}, {@code [2, 2]} then
   * trace {@code [2]}, {@code [-1]} (which serves {@code [4]}) and an unknown rank: 3 traces.
   */
  public FunctionOptions withReduceRetracing(boolean reduceRetracing) {
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions, exampleInputs, signatureProfile, traceCache, traceCacheVersion, calls);
  }

  /**
   * Bounds the cache: beyond {@code max} concrete functions the least recently used is evicted
   * and its TensorFlow function released (a later call of its signature traces again).
   *
   * @param max at least 1
   */
  public FunctionOptions withMaxConcreteFunctions(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max concrete functions must be at least 1, got " + max);
    }
    return new FunctionOptions(name, reduceRetracing, max, exampleInputs, signatureProfile, traceCache, traceCacheVersion, calls);
  }

  /**
   * Example argument sets from which Polyfn infers the signature: each is typed (never run),
   * the types are coalesced parameter by parameter, and the coalesced signature is traced once
   * when the function is defined, so that calls of any example-like shape hit it:
   *
   * <pre>{@code
   * FunctionOptions.defaults().withExampleInputs(
   *     Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(2, 3))),
   *     Map.of("x", TensorSpec.of(TFloat32.class, Shape.of(5, 3))));   // x: [-1, 3], one trace
   * }</pre>
   *
   * Tensors coalesce to the most specific common shape and the smallest dtype family holding
   * their dtypes (FLOAT and DOUBLE: {@code TFloating}); lists and maps element by element when
   * every example has the same length or keys; Java values that differ, and differing list
   * lengths or key sets, keep one trace each ({@link PolymorphicFunction#inferenceReport} says
   * so). A constraint the body declares wins where it is narrower and the examples give the rest
   * (declared {@code TFloat32}, examples of FLOAT and DOUBLE {@code [2, 3]}, {@code [5, 3]}:
   * {@code TensorSpec(FLOAT, [-1, 3])}); an example outside the declaration is left out, and the
   * report says so. A true conflict (no dtype, rank or dim in common, or no example that fits)
   * fails the definition with an {@link IllegalArgumentException} naming the parameter, the
   * declaration and the examples. Arguments outside the inferred constraint fail as for a
   * declared one, and the message says it was inferred.
   *
   * @param examples argument sets by parameter name: tensors (only their types are read, during
   *     the definition), {@link TensorSpec}s, lists and maps of them, Java values
   * @throws IllegalArgumentException if no example is given
   */
  @SafeVarargs
  public final FunctionOptions withExampleInputs(Map<String, ?>... examples) {
    return withExampleInputs(List.of(examples));
  }

  /**
   * {@link #withExampleInputs(Map[])} with a list of example argument sets.
   *
   * @throws IllegalArgumentException if the list is empty
   */
  public FunctionOptions withExampleInputs(List<? extends Map<String, ?>> examples) {
    Objects.requireNonNull(examples, "examples");
    if (examples.isEmpty()) {
      throw new IllegalArgumentException("withExampleInputs needs at least one example argument set");
    }
    List<Map<String, ?>> copy = new ArrayList<>();
    for (Map<String, ?> e : examples) {
      copy.add(Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(e, "example"))));
    }
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions, List.copyOf(copy), signatureProfile, traceCache, traceCacheVersion, calls);
  }

  /**
   * A signature profile (written by {@link PolymorphicFunction#writeSignatureProfile}) whose
   * recorded signatures are coalesced and traced when the function is defined, as examples are,
   * so that the first production calls never trace. The file is read at definition; a missing or
   * malformed file fails it with an {@link IllegalArgumentException} naming the file. A profile
   * recorded for a function of another name (its {@code "function"}, from {@link #withName}) is
   * still applied, as a function may be renamed on purpose, but the definition logs a {@code
   * WARNING} on the {@code dev.polyfn} logger naming both names and the file.
   */
  public FunctionOptions withSignatureProfile(Path profile) {
    Objects.requireNonNull(profile, "profile");
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions, exampleInputs, profile, traceCache,
        traceCacheVersion, calls);
  }

  /**
   * Keeps traced concrete functions in {@code dir} across restarts (warm start): each trace is
   * written there, and when a later run defines a function with the same name, version and body
   * code, the entries are restored, so calls of known signatures run without tracing. Only
   * functions whose parameters are tensors, lists or maps of tensors, nests of tensors (with
   * SparseTensors and RaggedTensors) and of numbers, booleans and strings, or Java numbers,
   * booleans and strings (no records, no other Java values, no defaults), with no captures, no
   * variables and a body that captures no values, are cached; the guide ("Save, load, deploy", docs/save-load.md)
   * says exactly what a cache key detects. Entries written by another Polyfn or TensorFlow version
   * are never restored (both versions are in the key). Same as {@code withTraceCache(dir, "")}.
   *
   * <p>A restored entry's graph runs as if this process had traced it, so where the file system
   * has Unix permissions, entries are read only if nobody but this user (or root) could have
   * written them: {@code dir} and every directory above it must belong to this user or root and
   * not be writable by group or others (a sticky directory such as {@code /tmp} may be above it),
   * and each entry must be such a regular file, not a link. Otherwise a warning names the
   * directory or entry and why, and the function traces as if the cache were empty; {@code define}
   * never fails for it. Directories the cache creates are private to this user (0700); do not
   * share one cache directory between users.
   *
   * <p>The directory stays bounded: with {@link #withMaxConcreteFunctions(int)}, only the {@code
   * max} entries used last (written, restored, or held and run until the function was closed) are
   * restored and the function's older entries are deleted; cache files of any key nobody wrote or
   * used for 30 days are deleted.
   */
  public FunctionOptions withTraceCache(Path dir) {
    return withTraceCache(dir, "");
  }

  /**
   * {@link #withTraceCache(Path)} with a version of your own in the key: change it to drop the
   * entries when something the key cannot see changed (a helper class, a constant read by the body).
   */
  public FunctionOptions withTraceCache(Path dir, String version) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(version, "version");
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions, exampleInputs, signatureProfile, dir,
        version, calls);
  }

  /** The trace cache directory, or null; see {@link #withTraceCache(Path)}. */
  public Path traceCache() {
    return traceCache;
  }

  /** The user's version in the trace cache key ({@code ""} unless set). */
  public String traceCacheVersion() {
    return traceCacheVersion;
  }

  /** The example argument sets (empty: none); see {@link #withExampleInputs(List)}. */
  public List<Map<String, ?>> exampleInputs() {
    return exampleInputs;
  }

  /** The signature profile to load at definition, or null; see {@link #withSignatureProfile}. */
  public Path signatureProfile() {
    return signatureProfile;
  }

  /** The function's name, shown in logs, errors and traced function names. */
  public String name() {
    return name;
  }

  /** Whether a miss traces a generalized signature; see {@link #withReduceRetracing}. */
  public boolean reduceRetracing() {
    return reduceRetracing;
  }

  /** The cache bound, 0 when unbounded. */
  public int maxConcreteFunctions() {
    return maxConcreteFunctions;
  }

  // ---- How calls run: call path, Grappler, XLA ----

  /**
   * The call settings; see {@link #withFastPath}, {@link #withGrappler}, {@link #withJitCompile},
   * {@link #withRunEagerly}.
   */
  private record CallSettings(boolean fastPath, boolean grappler, boolean jitCompile, boolean runEagerly) {
    static final CallSettings DEFAULTS = new CallSettings(true, true, false, false);
  }

  private FunctionOptions withCalls(CallSettings c) {
    return new FunctionOptions(name, reduceRetracing, maxConcreteFunctions, exampleInputs, signatureProfile, traceCache,
        traceCacheVersion, c);
  }

  /**
   * Whether calls may take the caller-thread paths (default true). A concrete function free of
   * control flow, nested calls, effects, stateful ops and variables moves, after 64 calls (by
   * default), to a TensorFlow session of its own on the calling thread, the fastest path (that
   * call pays a few milliseconds to build it; the system property {@code
   * dev.polyfn.sessionPathAfter} changes the count, 0 never moves); its other calls, and every
   * call of other functions, run on TensorFlow's inter-op thread pool, as Python's {@code
   * tf.function} does, except that a function with variables (a loaded model) tries TensorFlow's
   * single-threaded executor on the calling thread after the same count, kept only if faster. The system property {@code dev.polyfn.eagerOpAsFunction=true} also runs
   * those on the calling thread, under a TensorFlow mode that can make the program's own eager
   * constants wrong (see the guide's performance page). Results are the same on every path.
   * {@code false} keeps every call on the thread pool; the system property {@code
   * dev.polyfn.fastPath=false} does so for every function.
   *
   * <pre>{@code
   * Function.define(body, FunctionOptions.defaults().withFastPath(false));
   * }</pre>
   */
  public FunctionOptions withFastPath(boolean fastPath) {
    return withCalls(new CallSettings(fastPath, calls.grappler(), calls.jitCompile(), calls.runEagerly()));
  }

  /**
   * Whether TensorFlow's graph optimizer (Grappler) optimizes the concrete functions as Python's
   * {@code tf.function} does (default true: constant folding, arithmetic simplification, fused
   * kernels; results then match Python's, and may differ from the unoptimized graph in the last
   * bits). {@code false} runs the traced graph op by op, as written: bitwise reproducible
   * against the ops run one at a time.
   */
  public FunctionOptions withGrappler(boolean grappler) {
    return withCalls(new CallSettings(calls.fastPath(), grappler, calls.jitCompile(), calls.runEagerly()));
  }

  /**
   * Compiles each concrete function with XLA, as Python's {@code tf.function(jit_compile=True)}
   * (default false). The function is compiled for each input shape at its first call; a body
   * using an op XLA cannot compile fails when it is traced, with TensorFlow's message naming the
   * op. Results equal the uncompiled ones within floating-point tolerance, not bitwise.
   */
  public FunctionOptions withJitCompile(boolean jitCompile) {
    return withCalls(new CallSettings(calls.fastPath(), calls.grappler(), jitCompile, calls.runEagerly()));
  }

  /**
   * Debug mode, as Python's {@code tf.config.run_functions_eagerly(True)} for one function
   * (default false): every call runs the body eagerly, op by op, on the call's tensors, instead
   * of tracing it and running the traced function. A breakpoint or a print in the body then sees
   * values ({@code operand.asTensor()} works there), and the body's Java code (a counter, a log
   * line) runs at every call. Results are those of the traced function on the same inputs
   * (bitwise without Grappler, but for Softmax's last bit), and the arguments are checked with the
   * same messages. What differs: calls are slower (each op is
   * dispatched from Java, and eager calls run one at a time in the JVM); nothing is traced or cached ({@code traceCount()} stays as it was,
   * eager calls are not counted in {@code statistics()}); {@link Flow} runs as Java (a cond
   * evaluates its predicate and runs one branch, so the branches are not compared; a loop
   * iterates in Java; {@link Flow#gradients} is refused); a variable may be created only on the
   * first call, as on the first trace. {@link Function#runFunctionsEagerly} does this for every
   * function. The guide's page "Debugging" (docs/debugging.md) has the details.
   *
   * <pre>{@code
   * MapFunction f = Function.define(body, FunctionOptions.defaults().withRunEagerly(true));
   * }</pre>
   */
  public FunctionOptions withRunEagerly(boolean runEagerly) {
    return withCalls(new CallSettings(calls.fastPath(), calls.grappler(), calls.jitCompile(), runEagerly));
  }

  /** Whether calls may take the caller-thread path; see {@link #withFastPath}. */
  public boolean fastPath() {
    return calls.fastPath();
  }

  /** Whether Grappler optimizes the concrete functions; see {@link #withGrappler}. */
  public boolean grappler() {
    return calls.grappler();
  }

  /** Whether XLA compiles the concrete functions; see {@link #withJitCompile}. */
  public boolean jitCompile() {
    return calls.jitCompile();
  }

  /**
   * Whether this function's calls run the body eagerly; see {@link #withRunEagerly}. (The
   * JVM-wide {@link Function#runFunctionsEagerly} switch is not reflected here.)
   */
  public boolean runEagerly() {
    return calls.runEagerly();
  }

  // ---- end of the call settings ----

  @Override
  public String toString() {
    return "FunctionOptions(name=" + name + ", reduceRetracing=" + reduceRetracing
        + ", maxConcreteFunctions=" + (maxConcreteFunctions == 0 ? "unbounded" : maxConcreteFunctions)
        + (exampleInputs.isEmpty() ? "" : ", exampleInputs=" + exampleInputs.size())
        + (signatureProfile == null ? "" : ", signatureProfile=" + signatureProfile)
        + (traceCache == null ? "" : ", traceCache=" + traceCache)
        + (calls.equals(CallSettings.DEFAULTS) ? "" : ", fastPath=" + calls.fastPath() + ", grappler=" + calls.grappler()
            + ", jitCompile=" + calls.jitCompile() + ", runEagerly=" + calls.runEagerly()) + ")";
  }
}
