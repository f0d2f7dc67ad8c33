package dev.polyfn;

import java.time.Duration;

/**
 * Counters of one function's calls and traces, from {@link PolymorphicFunction#statistics()}.
 * Every call is exactly one of an exact hit, an inexact hit (served by a more general cached
 * signature) or a miss (which traced).
 */
public final class FunctionStatistics {
  private final long exactHits;
  private final long inexactHits;
  private final long misses;
  private final long traces;
  private final long evictions;
  private final Duration totalTraceTime;
  private final Duration lastTraceTime;

  FunctionStatistics(long[] v) {
    this.exactHits = v[0];
    this.inexactHits = v[1];
    this.misses = v[2];
    this.traces = v[3];
    this.evictions = v[4];
    this.totalTraceTime = Duration.ofNanos(v[5]);
    this.lastTraceTime = Duration.ofNanos(v[6]);
  }

  /** Calls served by a concrete function traced for exactly their signature. */
  public long exactHits() {
    return exactHits;
  }

  /** Calls served by a concrete function traced for a more general signature. */
  public long inexactHits() {
    return inexactHits;
  }

  /** Lookups that found no concrete function (the call then traced). */
  public long misses() {
    return misses;
  }

  /** Concrete functions traced (each miss traces once). */
  public long traces() {
    return traces;
  }

  /** Concrete functions evicted by {@link FunctionOptions#withMaxConcreteFunctions}. */
  public long evictions() {
    return evictions;
  }

  /** Time spent tracing, over all traces. */
  public Duration totalTraceTime() {
    return totalTraceTime;
  }

  /** Time the most recent trace took (zero before the first). */
  public Duration lastTraceTime() {
    return lastTraceTime;
  }

  @Override
  public String toString() {
    return "FunctionStatistics(exactHits=" + exactHits + ", inexactHits=" + inexactHits + ", misses=" + misses
        + ", traces=" + traces + ", evictions=" + evictions + ", totalTraceTime=" + totalTraceTime
        + ", lastTraceTime=" + lastTraceTime + ")";
  }
}
