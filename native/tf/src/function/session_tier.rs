//! When a function's calls use its sessions (`session_path`): the count of eager calls until
//! promotion, the sessions themselves (one slot per core), and the trial that keeps the session
//! path only where it is faster.
//!
//! The session path runs a function on the calling thread with no hand-off, which wins for small
//! functions; a heavy one (20 element-wise ops over a million floats) ran about 1.4× slower there
//! than on TensorFlow's thread pool, whose executor runs independent ops side by side. So the
//! tier times the last [`TRIAL_CALLS`] eager calls before promotion and the first [`TRIAL_CALLS`]
//! session calls after it, and compares the fastest of each (the fastest is the call least
//! disturbed by other work on the machine): a session slower than the eager path is retired for
//! good and calls go back to the eager path. Timing costs two clock reads on those calls only;
//! after the trial a call pays one more atomic load.

use super::session_path::SessionCall;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Calls timed on each path before the session path is kept or retired.
pub(crate) const TRIAL_CALLS: u32 = 16;

/// How many sessions a promoted function gets: one per core (at most 4). Threads running one
/// session share its executor lock and counters; threads spread over separate sessions do not.
fn session_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4))
}

/// This thread's index among the threads that called a promoted function (round robin), which
/// picks its session.
fn thread_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    SLOT.try_with(|s| *s).unwrap_or(0)
}

/// A function's session path: its call count until promotion, then its sessions, one slot per
/// core; slot 0 is built at promotion, the others by the first thread that needs them.
#[derive(Debug)]
pub(crate) struct SessionTier {
    /// Eager calls counted until promotion (not counted when the function cannot take the path).
    count: CallCount,
    slots: Box<[Slot]>,
    /// The fastest of the last [`TRIAL_CALLS`] eager calls before promotion, in nanoseconds.
    eager_best: AtomicU64,
    /// Session calls timed so far, and the fastest of them.
    session_timed: AtomicU32,
    session_best: AtomicU64,
    /// Set when the trial found the session slower: the sessions are no longer used.
    retired: AtomicBool,
}

/// Counting a function's calls up to a promotion count, and telling the last [`TRIAL_CALLS`]
/// before it (timed for a trial); the session tier's and the executor trial's (`executor_trial`).
#[derive(Debug)]
pub(crate) struct CallCount {
    /// Still counting (cleared by the call that reaches the count; never set for a count of 0).
    counting: AtomicBool,
    calls: AtomicU32,
    after: u32,
}

impl CallCount {
    /// A count to `after` calls, if `on` and `after` is not 0.
    pub(crate) fn new(on: bool, after: u32) -> Self {
        CallCount { counting: AtomicBool::new(on && after > 0), calls: AtomicU32::new(0), after }
    }

    /// Whether the next call is one of the last [`TRIAL_CALLS`] before the count.
    pub(crate) fn near(&self) -> bool {
        self.counting.load(Ordering::Relaxed) && self.calls.load(Ordering::Relaxed) + TRIAL_CALLS >= self.after
    }

    /// Counts a call; true for exactly one caller, the one whose call reached the count.
    pub(crate) fn count(&self) -> bool {
        if !self.counting.load(Ordering::Relaxed) {
            return false;
        }
        if self.calls.fetch_add(1, Ordering::Relaxed) + 1 < self.after {
            return false;
        }
        self.counting.swap(false, Ordering::AcqRel)
    }
}

/// One session of a function, and whether a thread has taken on building it.
#[derive(Debug, Default)]
struct Slot {
    session: OnceLock<SessionCall>,
    claimed: AtomicBool,
}

impl Slot {
    /// Whether this caller is the one to build the slot's session (it was not claimed yet).
    fn claim(&self) -> bool {
        !self.claimed.load(Ordering::Relaxed) && !self.claimed.swap(true, Ordering::AcqRel)
    }

    /// Gives a claim back (the claiming call failed, so nothing was built).
    fn unclaim(&self) {
        self.claimed.store(false, Ordering::Release);
    }
}

/// The session a call should use: its thread's own, or the first one while its own is missing
/// (`build_own` then holds the slot this call claimed to build).
pub(crate) struct Chosen<'a> {
    pub(crate) session: &'a SessionCall,
    build_own: Option<&'a Slot>,
}

impl<'a> Chosen<'a> {
    /// Where to put the thread's own session, if this call claimed its building: after a call
    /// that succeeded; a failed call gives the claim back ([`Chosen::give_back_claim`]).
    pub(crate) fn build_own(&self) -> Option<&'a OnceLock<SessionCall>> {
        self.build_own.map(|slot| &slot.session)
    }

    /// After a failed call: the slot is not built, and the next call of a thread mapped to it
    /// may claim it (one bad call kept it claimed and empty for good, its threads on the first
    /// session's locks).
    pub(crate) fn give_back_claim(&self) {
        if let Some(slot) = self.build_own {
            slot.unclaim();
        }
    }
}

impl SessionTier {
    /// A tier that promotes after `after` eager calls, or never when `after` is 0 or the
    /// function cannot take the path (`blocked`).
    pub(crate) fn new(blocked: bool, after: u32) -> Self {
        let slots = (0..session_count()).map(|_| Slot::default()).collect();
        SessionTier {
            count: CallCount::new(!blocked, after),
            slots,
            eager_best: AtomicU64::new(u64::MAX),
            session_timed: AtomicU32::new(0),
            session_best: AtomicU64::new(u64::MAX),
            retired: AtomicBool::new(false),
        }
    }

    /// The session this thread's call should use, once the function is promoted and while its
    /// session path is kept (atomic loads and a thread-local read).
    pub(crate) fn ready(&self) -> Option<Chosen<'_>> {
        let first = self.slots[0].session.get()?;
        if self.retired.load(Ordering::Relaxed) {
            return None;
        }
        let own = &self.slots[thread_slot() % self.slots.len()];
        if let Some(session) = own.session.get() {
            return Some(Chosen { session, build_own: None });
        }
        // One thread builds each slot, after a call that succeeded; a slot whose build failed
        // stays claimed (and empty).
        let build_own = own.claim().then_some(own);
        Some(Chosen { session: first, build_own })
    }

    /// Whether an eager call should be timed: one of the last [`TRIAL_CALLS`] before promotion.
    pub(crate) fn times_eager(&self) -> bool {
        self.count.near()
    }

    /// Records how long a timed eager call took.
    pub(crate) fn eager_took(&self, nanos: u64) {
        self.eager_best.fetch_min(nanos, Ordering::Relaxed);
    }

    /// The fastest timed eager call (`u64::MAX` if none was timed).
    pub(crate) fn eager_best(&self) -> u64 {
        self.eager_best.load(Ordering::Relaxed)
    }

    /// Whether a session call should be timed: the trial is still on.
    pub(crate) fn times_session(&self) -> bool {
        self.session_timed.load(Ordering::Relaxed) < TRIAL_CALLS
    }

    /// Records how long a timed session call took; the call that completes the trial decides
    /// whether the session path is kept.
    pub(crate) fn session_took(&self, nanos: u64) -> Option<Verdict> {
        self.session_best.fetch_min(nanos, Ordering::Relaxed);
        if self.session_timed.fetch_add(1, Ordering::AcqRel) + 1 != TRIAL_CALLS {
            return None;
        }
        let (eager, session) = (self.eager_best.load(Ordering::Relaxed), self.session_best.load(Ordering::Relaxed));
        // No eager call timed (a count of 0 or 1 times only the first, slow call): keep it.
        let slower = eager != u64::MAX && session > eager;
        if slower {
            self.retired.store(true, Ordering::Relaxed);
        }
        Some(Verdict { kept: !slower, eager_nanos: eager, session_nanos: session })
    }

    /// Counts an eager call; true for exactly one caller, the one that should build the session.
    pub(crate) fn count_call(&self) -> bool {
        self.count.count()
    }

    /// Publishes the first session (the builder's; a failed build publishes nothing and the
    /// function stays on the eager path, counting no more).
    pub(crate) fn publish(&self, built: SessionCall) {
        // Only the builder gets here, once: the slot is empty.
        let _ = self.slots[0].session.set(built);
    }

    /// Whether calls run through the session.
    pub(crate) fn is_ready(&self) -> bool {
        self.slots[0].session.get().is_some() && !self.retired.load(Ordering::Relaxed)
    }
}

/// The outcome of a session path's trial: kept or retired, and the fastest call of each path.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) kept: bool,
    pub(crate) eager_nanos: u64,
    pub(crate) session_nanos: u64,
}

#[cfg(test)]
#[path = "session_tier_tests.rs"]
mod tests;
