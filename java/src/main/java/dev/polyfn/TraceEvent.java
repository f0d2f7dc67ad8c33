package dev.polyfn;

import java.time.Duration;

/**
 * One trace of a function: what it traced, why, and how long it took. From {@link
 * PolymorphicFunction#traceHistory()}.
 *
 * <pre>{@code
 * for (TraceEvent e : f.traceHistory()) {
 *   System.out.println(e);  // (x: TensorSpec(FLOAT, [3])) because x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0
 * }
 * }</pre>
 */
public final class TraceEvent {
  private final String functionType;
  private final String parameter;
  private final String reason;
  private final Duration duration;

  TraceEvent(String functionType, String parameter, String reason, Duration duration) {
    this.functionType = functionType;
    this.parameter = parameter;
    this.reason = reason;
    this.duration = duration;
  }

  /** The traced monomorphic type, e.g. {@code (x: TensorSpec(FLOAT, [3]))}. */
  public String functionType() {
    return functionType;
  }

  /** The parameter whose type differed from the closest cached signature (empty for the first trace). */
  public String parameter() {
    return parameter;
  }

  /**
   * Why no cached signature matched, against the closest one: e.g. {@code x: TensorSpec(FLOAT,
   * [3]) does not match TensorSpec(FLOAT, [2]) at dim 0}, {@code n: new value 3 (traced: 1, 2)},
   * or {@code first call}.
   */
  public String reason() {
    return reason;
  }

  /** Time spent tracing: running the body, converting and registering the function. */
  public Duration duration() {
    return duration;
  }

  @Override
  public String toString() {
    return functionType + " because " + reason + " (" + duration.toNanos() / 1000 + " us)";
  }
}
