//! How long a concrete function took to become ready: Polyfn's preparation (the trace, the graph
//! turned into a registered function, or a restore) and its first run, in which TensorFlow does
//! its own preparation (instantiation, Grappler, XLA, kernels) before it runs the function.
//!
//! The first run is claimed by one call with one atomic load on every later call, so the cached
//! call path pays a branch for it and nothing else.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Concrete, Polymorphic};

impl<C> Polymorphic<C> {
    /// Ends the first run of `c` that a call claimed ([`FirstRun::claim`]): records its time and
    /// adds it to the statistics when it succeeded. Returns whether it did.
    pub fn first_run_finished(&self, c: &Concrete<C>, nanos: u64, succeeded: bool) -> bool {
        let recorded = c.first_run.finish(nanos, succeeded);
        if recorded {
            self.first_run_nanos.fetch_add(nanos, Ordering::Relaxed);
        }
        recorded
    }

    /// The first runs' times of this function's concrete functions (evicted ones included), summed.
    pub(super) fn total_first_run_nanos(&self) -> u64 {
        self.first_run_nanos.load(Ordering::Relaxed)
    }
}

/// Polyfn's part of making a concrete function, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preparation {
    /// Running the body into a graph (0 for a restored function).
    pub body_nanos: u64,
    /// Turning the graph into a registered TensorFlow function, or registering a restored one.
    pub build_nanos: u64,
    /// Restored (SavedModel, trace cache), not traced.
    pub restored: bool,
}

impl Preparation {
    pub fn total_nanos(&self) -> u64 {
        self.body_nanos + self.build_nanos
    }

    /// The phases as a log record names them: `body 2.10 s, graph to function 0.51 s` or
    /// `restore 3.0 ms`.
    pub fn phases(&self) -> String {
        if self.restored {
            format!("restore {}", duration_text(self.build_nanos))
        } else {
            format!("body {}, graph to function {}", duration_text(self.body_nanos), duration_text(self.build_nanos))
        }
    }
}

/// Not run yet: the next call claims the first run.
const NOT_RUN: u64 = 0;
/// Claimed by a call that has not returned yet.
const RUNNING: u64 = 1;
/// A finished first run is stored as its nanoseconds plus this, apart from the two states above.
const DONE_OFFSET: u64 = 2;

/// A concrete function's first run: not yet, in progress, or done with its time.
#[derive(Debug, Default)]
pub struct FirstRun(AtomicU64);

impl FirstRun {
    /// Whether this call is the first run and should time itself (then it must call
    /// [`FirstRun::finish`]). Every call after the first run costs one relaxed load.
    #[inline]
    pub fn claim(&self) -> bool {
        self.0.load(Ordering::Relaxed) == NOT_RUN
            && self.0.compare_exchange(NOT_RUN, RUNNING, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }

    /// Ends a claimed first run: its time when it succeeded; a failed one leaves the next call to
    /// be the first run. Returns whether the time was recorded.
    pub fn finish(&self, nanos: u64, succeeded: bool) -> bool {
        if succeeded {
            self.0.store(nanos.saturating_add(DONE_OFFSET), Ordering::Relaxed);
        } else {
            self.0.store(NOT_RUN, Ordering::Relaxed);
        }
        succeeded
    }

    /// The first run's time, once it has finished.
    pub fn nanos(&self) -> Option<u64> {
        match self.0.load(Ordering::Relaxed) {
            NOT_RUN | RUNNING => None,
            n => Some(n - DONE_OFFSET),
        }
    }
}

/// A duration as Polyfn's records write it: `12.3 ms` under a second, `2.61 s` from one.
pub fn duration_text(nanos: u64) -> String {
    if nanos < 1_000_000_000 {
        format!("{:.1} ms", nanos as f64 / 1e6)
    } else {
        format!("{:.2} s", nanos as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{spec, tensor_facts, trace, Fn};
    use super::*;
    use crate::{DType, FunctionType, ParamKind, Parameter};

    #[test]
    fn traced_and_restored_functions_carry_their_preparation_and_first_run() {
        let f = Fn::new("f");
        trace(&f, spec(DType::FLOAT, &[2]), spec(DType::FLOAT, &[2])).unwrap();
        let c = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[2])).unwrap().unwrap();
        assert!(!c.preparation.restored);
        assert!(c.preparation.build_nanos > 0 && c.preparation.body_nanos > 0, "{:?}", c.preparation);
        assert_eq!(c.preparation.total_nanos(), c.preparation.body_nanos + c.preparation.build_nanos);
        assert_eq!((c.first_run.nanos(), f.stats().total_first_run_nanos), (None, 0));
        assert!(c.first_run.claim());
        assert!(!f.first_run_finished(&c, 40, false), "a failed first run is not counted");
        assert_eq!(f.stats().total_first_run_nanos, 0);
        assert!(c.first_run.claim());
        assert!(f.first_run_finished(&c, 50, true));
        assert_eq!((c.first_run.nanos(), f.stats().total_first_run_nanos), (Some(50), 50));

        let x = FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor).with_constraint(spec(DType::FLOAT, &[3]))]);
        let r = f.restore::<String>(x.clone(), x, vec![], |_, _| Ok("restored".into())).unwrap();
        assert!(r.preparation.restored);
        assert_eq!(r.preparation.body_nanos, 0);
        assert!(r.first_run.claim());
        f.first_run_finished(&r, 7, true);
        assert_eq!(f.stats().total_first_run_nanos, 57);
    }

    #[test]
    fn one_call_claims_the_first_run_and_its_time_stays() {
        let run = FirstRun::default();
        assert_eq!(run.nanos(), None);
        assert!(run.claim());
        assert!(!run.claim(), "claimed once");
        assert_eq!(run.nanos(), None, "in progress");
        assert!(run.finish(0, true));
        assert_eq!(run.nanos(), Some(0));
        assert!(!run.claim());
        assert_eq!(run.nanos(), Some(0));
    }

    #[test]
    fn a_failed_first_run_leaves_the_next_call_to_be_the_first() {
        let run = FirstRun::default();
        assert!(run.claim());
        assert!(!run.finish(5, false));
        assert_eq!(run.nanos(), None);
        assert!(run.claim());
        assert!(run.finish(7, true));
        assert_eq!(run.nanos(), Some(7));
        let huge = FirstRun::default();
        assert!(huge.claim());
        huge.finish(u64::MAX, true);
        assert_eq!(huge.nanos(), Some(u64::MAX - DONE_OFFSET));
    }

    #[test]
    fn phases_and_durations_are_written_for_people() {
        assert_eq!(duration_text(12_345_678), "12.3 ms");
        assert_eq!(duration_text(999_949_999), "999.9 ms");
        assert_eq!(duration_text(2_614_000_000), "2.61 s");
        assert_eq!(duration_text(1_000_000_000), "1.00 s");
        let traced = Preparation { body_nanos: 2_100_000_000, build_nanos: 510_000_000, restored: false };
        assert_eq!(traced.total_nanos(), 2_610_000_000);
        assert_eq!(traced.phases(), "body 2.10 s, graph to function 510.0 ms");
        let restored = Preparation { body_nanos: 0, build_nanos: 3_000_000, restored: true };
        assert_eq!(restored.phases(), "restore 3.0 ms");
    }
}
