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
 *
 * @param functionType the traced monomorphic type, e.g. {@code (x: TensorSpec(FLOAT, [3]))}
 * @param parameter the parameter (or capture) whose type differed from the closest cached
 *     signature; empty for the first trace
 * @param path where inside the parameter the difference is, e.g. {@code xs[1]}; the parameter's
 *     name when it is the whole value, empty for the first trace
 * @param capture whether {@code parameter} names a capture rather than a parameter
 * @param reason why no cached signature matched, against the closest one: e.g. {@code x:
 *     TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0}, {@code n: new value 3
 *     (traced: 1, 2)}, or {@code first call}
 * @param duration time spent tracing: running the body, converting and registering the function
 */
public record TraceEvent(
    String functionType, String parameter, String path, boolean capture, String reason, Duration duration) {

  /** Built by Polyfn's native library. */
  TraceEvent(String functionType, String parameter, String path, boolean capture, String reason, long nanos) {
    this(functionType, parameter, path, capture, reason, Duration.ofNanos(nanos));
  }

  @Override
  public String toString() {
    return functionType + " because " + reason + " (" + duration.toNanos() / 1000 + " us)";
  }
}
