package dev.polyfn;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One traced, cached concrete function of a polymorphic function: the name TensorFlow knows it by,
 * its monomorphic {@link FunctionType}, its output names, and how long it took to become ready:
 * Polyfn's preparation ({@link #preparationTime}) and its first run ({@link #firstRunTime}), in
 * which TensorFlow prepares it. The guide's page "Logging and long work" (docs/logging.md) says more.
 */
public final class ConcreteFunctionInfo {
  private final int id;
  private final String name;
  private final FunctionType functionType;
  private final List<String> outputNames;

  private final int inputCount;
  private final Duration preparationTime;
  /** Null until the first run has finished. */
  private final Duration firstRunTime;

  /** Built by Polyfn's native library; {@code firstRunNanos} is -1 before the first run. */
  ConcreteFunctionInfo(int id, String name, FunctionType functionType, String[] outputNames, int inputCount,
      long preparationNanos, long firstRunNanos) {
    this.inputCount = inputCount;
    this.preparationTime = Duration.ofNanos(preparationNanos);
    this.firstRunTime = firstRunNanos < 0 ? null : Duration.ofNanos(firstRunNanos);
    this.id = id;
    this.name = name;
    this.functionType = functionType;
    this.outputNames = List.of(outputNames);
  }

  /** {@hidden} */
  public int id() {
    return id;
  }

  /** The TensorFlow function name registered in the eager context. */
  public String name() {
    return name;
  }

  /** The monomorphic type this function was traced for. */
  public FunctionType functionType() {
    return functionType;
  }

  /**
   * The number of graph inputs: one per tensor of the parameters and captures, and one per
   * distinct variable (a variable passed or captured twice is one input).
   */
  public int inputCount() {
    return inputCount;
  }

  /** The names of the outputs, in output order. */
  public List<String> outputNames() {
    return outputNames;
  }

  /**
   * Polyfn's part of making this function: the trace (running the body into a graph) and turning
   * the graph into a registered TensorFlow function; for a function restored from a SavedModel or
   * a trace cache, registering its saved definition.
   *
   * @return the time taken, never negative
   */
  public Duration preparationTime() {
    return preparationTime;
  }

  /**
   * The time of this function's first call in TensorFlow. TensorFlow prepares a function when it
   * first runs it (instantiation, Grappler's optimizations, XLA compilation when enabled, kernel
   * creation), and its C API does not separate that from the run: for a large body this time is
   * mostly preparation, and later calls take only the run. A first call that fails is not counted
   * (the next call is the first run).
   *
   * @return the time, or empty while the function has not run yet
   */
  public Optional<Duration> firstRunTime() {
    return Optional.ofNullable(firstRunTime);
  }

  @Override
  public String toString() {
    return name + functionType + " -> " + outputNames;
  }
}
