//! What makes retracing visible: statistics, the trace history with reasons, and the warnings
//! about frequent retracing and about Java values that take many values.
//!
//! The warnings are returned as text, not logged here: the caller logs them after releasing the
//! function's lock, because a logger is user code and may call back into the function.

use std::collections::VecDeque;

use super::Options;
use crate::wire::{
    STAT_COUNT, STAT_EVICTIONS, STAT_EXACT_HITS, STAT_INEXACT_HITS, STAT_LAST_TRACE_NANOS, STAT_MISSES,
    STAT_TOTAL_FIRST_RUN_NANOS, STAT_TOTAL_TRACE_NANOS, STAT_TRACES,
};
use crate::function_type::FunctionType;
use crate::parameter::{ParamKind, Parameter};

/// Distinct values of one Java parameter from which tracing warns (then again at each doubling).
pub const LITERAL_WARNING_THRESHOLD: usize = 8;
/// The frequent-retrace warning looks at this many most recent calls...
pub const RETRACE_WINDOW_CALLS: u64 = 10;
/// ...and warns when at least this many of them traced (tf.function's numbers).
pub const RETRACE_WARNING_TRACES: usize = 5;
/// Trace records kept per function.
pub const HISTORY_CAPACITY: usize = 64;

/// Counters of one function's calls and traces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls whose signature was cached exactly.
    pub exact_hits: u64,
    /// Calls served by a more general cached signature.
    pub inexact_hits: u64,
    /// Calls that found no concrete function (and traced).
    pub misses: u64,
    /// Successful traces.
    pub traces: u64,
    /// Concrete functions evicted by the cache bound.
    pub evictions: u64,
    /// Time spent tracing (body, graph conversion, registration), in nanoseconds.
    pub total_trace_nanos: u64,
    /// Time the most recent trace took, in nanoseconds.
    pub last_trace_nanos: u64,
    /// Time the concrete functions' first runs took (TensorFlow prepares a function in its first
    /// run), summed, in nanoseconds.
    pub total_first_run_nanos: u64,
}

impl Stats {
    /// Every call counted: hits and misses.
    pub fn calls(&self) -> u64 {
        self.exact_hits + self.inexact_hits + self.misses
    }

    /// The counters as Java reads them, indexed by the `STAT_*` constants.
    pub fn to_wire(&self) -> [i64; STAT_COUNT] {
        let mut out = [0i64; STAT_COUNT];
        out[STAT_EXACT_HITS] = self.exact_hits as i64;
        out[STAT_INEXACT_HITS] = self.inexact_hits as i64;
        out[STAT_MISSES] = self.misses as i64;
        out[STAT_TRACES] = self.traces as i64;
        out[STAT_EVICTIONS] = self.evictions as i64;
        out[STAT_TOTAL_TRACE_NANOS] = self.total_trace_nanos as i64;
        out[STAT_LAST_TRACE_NANOS] = self.last_trace_nanos as i64;
        out[STAT_TOTAL_FIRST_RUN_NANOS] = self.total_first_run_nanos as i64;
        out
    }
}

/// Why and what one trace produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// The traced monomorphic type.
    pub function_type: String,
    /// Why the call did not match a cached signature, e.g.
    /// `x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0`.
    pub reason: String,
    /// The parameter or capture whose type differed (empty for the first trace, or when no
    /// single one is to blame).
    pub parameter: String,
    /// Whether `parameter` is a capture.
    pub capture: bool,
    /// Where inside the parameter the difference is (`xs[1]['k']`), else the parameter's name.
    pub path: String,
    pub nanos: u64,
}

/// The history and the state of the frequent-retrace warning of one function.
#[derive(Default)]
pub(super) struct Monitor {
    pub(super) history: VecDeque<TraceRecord>,
    /// Call counts at which recent calls traced, with the parameter that made each trace, for
    /// the frequent-retrace warning.
    trace_calls: VecDeque<(u64, String)>,
    warned_burst: bool,
}

impl Monitor {
    pub(super) fn record(&mut self, record: TraceRecord) {
        if self.history.len() == HISTORY_CAPACITY {
            self.history.pop_front();
        }
        self.history.push_back(record);
    }

    /// tf.function's warning: when `RETRACE_WARNING_TRACES` of the last `RETRACE_WINDOW_CALLS`
    /// calls traced, say so once for the burst, naming the parameters that keep changing and the
    /// options that would help. `calls` counts every call so far, this trace's included;
    /// `parameter` is the one whose change made this call trace (empty when none is known).
    pub(super) fn frequent_retrace_warning(
        &mut self,
        name: &str,
        options: &Options,
        declared: Option<&FunctionType>,
        calls: u64,
        parameter: &str,
    ) -> Option<String> {
        self.trace_calls.push_back((calls, parameter.to_owned()));
        while self.trace_calls.front().is_some_and(|&(c, _)| c + RETRACE_WINDOW_CALLS <= calls) {
            self.trace_calls.pop_front();
        }
        if self.trace_calls.len() < RETRACE_WARNING_TRACES {
            self.warned_burst = false;
            return None;
        }
        if self.warned_burst {
            return None;
        }
        self.warned_burst = true;
        let mut changing: Vec<&str> = Vec::new();
        for (_, p) in &self.trace_calls {
            if !p.is_empty() && !changing.contains(&p.as_str()) {
                changing.push(p);
            }
        }
        let java = declared.is_some_and(|d| {
            changing.iter().any(|c| d.parameter(c).is_some_and(|p| p.kind == ParamKind::Java))
        });
        let advice = if java {
            "pass values that change from call to call as tensors, not Java values"
        } else if options.reduce_retracing {
            "declare a shape constraint with -1 dims (Inputs.input(name, type, Shape.of(-1, ...)))"
        } else {
            "use FunctionOptions.withReduceRetracing(true) or declare a shape constraint with -1 dims \
             (Inputs.input(name, type, Shape.of(-1, ...)))"
        };
        Some(format!(
            "function '{name}': {} of the last {} calls traced a new concrete function; tracing is expensive. \
             Parameters that keep changing: {}. To trace less, {advice}.",
            self.trace_calls.len(),
            RETRACE_WINDOW_CALLS.min(calls),
            if changing.is_empty() { "none identified".to_owned() } else { changing.join(", ") },
        ))
    }
}

/// Warnings for Java-value parameters traced for many distinct values: each value is a trace
/// (and a concrete function), so a parameter that takes many values should be a tensor.
pub(super) fn literal_warnings(name: &str, distinct: impl Fn(&str) -> usize, declared: &[Parameter]) -> Vec<String> {
    let mut out = Vec::new();
    for p in declared.iter().filter(|p| p.kind == ParamKind::Java) {
        let n = distinct(&p.name);
        if n >= LITERAL_WARNING_THRESHOLD && n.is_power_of_two() {
            out.push(format!(
                "function '{name}' has traced {n} distinct values of Java parameter '{}': every new value traces \
                 a new concrete function; pass the value as a tensor if it changes from call to call",
                p.name
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_written_at_their_indices() {
        let s = Stats {
            exact_hits: 1,
            inexact_hits: 2,
            misses: 3,
            traces: 4,
            evictions: 5,
            total_trace_nanos: 6,
            last_trace_nanos: 7,
            total_first_run_nanos: 8,
        };
        assert_eq!(s.to_wire(), [1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
