package dev.polyfn;

import dev.polyfn.internal.Wire;
import java.time.Duration;

/**
 * Counters of one function's calls and traces, from {@link PolymorphicFunction#statistics()}.
 * Every call is exactly one of an exact hit, an inexact hit (served by a more general cached
 * signature) or a miss (which traced): {@code exactHits + inexactHits + misses} is the number of
 * calls.
 *
 * @param exactHits calls whose signature was cached exactly
 * @param inexactHits calls served by a more general cached signature
 * @param misses calls that found no concrete function (and traced)
 * @param traces traces that produced a concrete function
 * @param evictions concrete functions evicted by {@link FunctionOptions#withMaxConcreteFunctions}
 * @param totalTraceTime time spent tracing, in all
 * @param lastTraceTime time the last trace took
 * @param totalFirstRunTime time the concrete functions' first runs took, in all (evicted ones
 *     included): TensorFlow prepares a function in its first run, see {@link
 *     ConcreteFunctionInfo#firstRunTime}
 */
public record FunctionStatistics(long exactHits, long inexactHits, long misses, long traces, long evictions,
    Duration totalTraceTime, Duration lastTraceTime, Duration totalFirstRunTime) {

  /** From the native counters, indexed by {@code Wire.STAT_*}. */
  static FunctionStatistics fromWire(long[] v) {
    return new FunctionStatistics(v[Wire.STAT_EXACT_HITS], v[Wire.STAT_INEXACT_HITS], v[Wire.STAT_MISSES],
        v[Wire.STAT_TRACES], v[Wire.STAT_EVICTIONS], Duration.ofNanos(v[Wire.STAT_TOTAL_TRACE_NANOS]),
        Duration.ofNanos(v[Wire.STAT_LAST_TRACE_NANOS]), Duration.ofNanos(v[Wire.STAT_TOTAL_FIRST_RUN_NANOS]));
  }
}
