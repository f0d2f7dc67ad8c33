//! The part of a polymorphic function's cache that calls read without taking its lock: the
//! memo of facts buffers already served (facts → concrete function) and the concrete functions
//! by id, published as one immutable [`Snapshot`], plus hit counters and recency as atomics.
//!
//! A call whose facts are in the memo takes no lock: it loads the current snapshot, bumps its
//! counters and returns. The hit counters and each call shape's profile counter are striped (one
//! cache line per thread slot) and the recency stamp is rewritten only when another function was
//! used in between, so threads calling one function do not write the same memory on every call
//! (which would make them take turns). Everything that changes the cache (a trace, an eviction,
//! a new memo entry, clearing) builds the next snapshot from the current one and publishes it
//! whole while holding the function's lock, so writers are serialized ([`WriteToken`] lives in
//! the locked state) and a reader sees either the old snapshot or the new one, each complete: a
//! concrete function is built, output names included, before it can be published.
//!
//! The maps are persistent (hash array mapped tries) so that the next snapshot shares almost
//! everything with the current one: adding a memo entry costs O(log n), not a copy of the memo.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use arc_swap::ArcSwapOption;

use super::Concrete;
use crate::dispatch::Hit;

/// Bound on memoized facts buffers beyond one per cached function: past it the memo drops its
/// inexact entries (hot calls memoize again on their next slow lookup).
pub(super) const MEMO_CAPACITY: usize = 4096;

/// Bound on the distinct call types a function's profile records (calls of further types are
/// served as usual, only not recorded), so a function called with ever new shapes stays bounded.
pub const PROFILE_CAPACITY: usize = 4096;

/// How many calls had one facts buffer: shared by its memo entry (bumped by cached calls) and
/// the profile, so a count survives the memo dropping the entry. Striped like the hit counters:
/// threads calling one function with one call shape (the common case) would otherwise all write
/// this one counter on every call.
type Counter = Arc<Striped>;

/// What a call reads without the lock. Replaced, never mutated, once published.
type Memo<C> = imbl::HashMap<Arc<[i64]>, (Arc<Concrete<C>>, Hit, Counter)>;

struct Snapshot<C> {
    /// Facts served by a signature equal to their type.
    memo: Memo<C>,
    /// Facts served by a more general signature: the entries a new trace may serve better, kept
    /// apart so that a trace drops them at once instead of filtering the whole memo.
    inexact: Memo<C>,
    by_id: imbl::HashMap<u32, Arc<Concrete<C>>>,
}

impl<C> Clone for Snapshot<C> {
    fn clone(&self) -> Self {
        Snapshot { memo: self.memo.clone(), inexact: self.inexact.clone(), by_id: self.by_id.clone() }
    }
}

impl<C> Default for Snapshot<C> {
    fn default() -> Self {
        Snapshot { memo: imbl::HashMap::new(), inexact: imbl::HashMap::new(), by_id: imbl::HashMap::new() }
    }
}

/// Proof that the caller holds the function's lock: the only one lives in its locked state.
pub(super) struct WriteToken(());

impl WriteToken {
    pub(super) fn new() -> Self {
        WriteToken(())
    }
}

/// A counter split over cache lines, one per thread slot: threads counting at once write
/// different memory. Read by summing. 256 bytes, so one per call shape stays cheap.
struct Striped([Padded; STRIPES]);

const STRIPES: usize = 4;

/// One cache line (64 bytes on the x86-64 and ARM64 processors TensorFlow Java ships for).
#[repr(align(64))]
#[derive(Default)]
struct Padded(AtomicU64);

impl Striped {
    fn new() -> Self {
        Striped(Default::default())
    }

    /// This thread's stripe, given round-robin on its first count (looked up once per call).
    fn slot() -> usize {
        thread_local! {
            static SLOT: usize = {
                static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
                NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES
            };
        }
        SLOT.try_with(|s| *s).unwrap_or(0)
    }

    /// Adds `n` in stripe `slot` (from [`Striped::slot`]).
    fn add(&self, slot: usize, n: u64) {
        self.0[slot].0.fetch_add(n, Ordering::Relaxed);
    }

    fn sum(&self) -> u64 {
        self.0.iter().map(|p| p.0.load(Ordering::Relaxed)).sum()
    }
}

/// The lock-free side of the cache.
pub(super) struct Published<C> {
    /// None while nothing is published: an empty snapshot's maps cost kilobytes, which every
    /// function not yet traced, and every closed one, would keep.
    snapshot: ArcSwapOption<Snapshot<C>>,
    /// Logical time for least-recently-used eviction: a concrete function used after another
    /// gets a new stamp; its stamp equals the clock while nothing else has been used since.
    clock: AtomicU64,
    exact_hits: Striped,
    inexact_hits: Striped,
    /// The call profile: a counter per facts buffer seen. Only writers (who hold the function's
    /// lock) touch the map; cached calls bump the counter their memo entry shares.
    counters: Mutex<HashMap<Arc<[i64]>, Counter>>,
}

impl<C> Published<C> {
    pub(super) fn new() -> Self {
        Published {
            snapshot: ArcSwapOption::empty(),
            // Above every new function's stamp (0), so a new function's first use stamps it.
            clock: AtomicU64::new(1),
            exact_hits: Striped::new(),
            inexact_hits: Striped::new(),
            counters: Mutex::new(HashMap::new()),
        }
    }

    /// The memoized concrete function for `facts`, counted as a hit when `count`. Lock-free.
    pub(super) fn find(&self, facts: &[i64], count: bool) -> Option<Arc<Concrete<C>>> {
        self.find_with(facts, count, Arc::clone)
    }

    /// [`Published::find`], running `run` on the function borrowed from the snapshot, which
    /// stays alive until `run` returns: no reference count is taken.
    pub(super) fn find_with<R>(&self, facts: &[i64], count: bool, run: impl FnOnce(&Arc<Concrete<C>>) -> R) -> Option<R> {
        let guard = self.snapshot.load();
        let snapshot = guard.as_deref()?;
        let (c, hit, calls) = snapshot.memo.get(facts).or_else(|| snapshot.inexact.get(facts))?;
        if count {
            let slot = Striped::slot();
            self.count_at(slot, c, *hit);
            calls.add(slot, 1);
        }
        Some(run(c))
    }

    /// Counts a call served by `c` and marks `c` as just used.
    pub(super) fn count(&self, c: &Concrete<C>, hit: Hit) {
        self.count_at(Striped::slot(), c, hit);
    }

    fn count_at(&self, slot: usize, c: &Concrete<C>, hit: Hit) {
        let counter = match hit {
            Hit::Exact => &self.exact_hits,
            Hit::Inexact => &self.inexact_hits,
        };
        counter.add(slot, 1);
        self.touch(c);
    }

    fn touch(&self, c: &Concrete<C>) {
        // Relaxed: recency only orders evictions; it guards no other memory. A function whose
        // stamp is the clock is already the most recent: stamping it again changes no order.
        let now = self.clock.load(Ordering::Relaxed);
        if c.last_used.load(Ordering::Relaxed) != now {
            // fetch_max: a racing older stamp never overwrites a newer one.
            c.last_used.fetch_max(self.clock.fetch_add(1, Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }

    /// `(exact, inexact)` hits so far.
    pub(super) fn hits(&self) -> (u64, u64) {
        (self.exact_hits.sum(), self.inexact_hits.sum())
    }

    /// Memoized facts buffers now published.
    #[cfg(test)]
    pub(super) fn memo_len(&self) -> usize {
        self.snapshot.load().as_deref().map_or(0, |s| s.memo.len() + s.inexact.len())
    }

    /// The cached concrete function with this id. Lock-free.
    pub(super) fn by_id(&self, id: u32) -> Option<Arc<Concrete<C>>> {
        self.snapshot.load().as_deref()?.by_id.get(&id).cloned()
    }

    /// The counter of `facts` in the profile, created if there is room (else a counter of its
    /// own that nothing reads).
    fn counter(&self, facts: &[i64]) -> Counter {
        let mut counters = self.counters.lock();
        if let Some(c) = counters.get(facts) {
            return c.clone();
        }
        let c = Counter::new(Striped::new());
        if counters.len() < PROFILE_CAPACITY {
            counters.insert(facts.into(), c.clone());
        }
        c
    }

    /// Records one call with `facts` in the profile (a miss, or a call memoized under the lock).
    pub(super) fn record_call(&self, _: &mut WriteToken, facts: &[i64]) {
        self.counter(facts).add(Striped::slot(), 1);
    }

    /// The recorded calls: each facts buffer with its count.
    pub(super) fn profile(&self) -> Vec<(Arc<[i64]>, u64)> {
        self.counters.lock().iter().map(|(f, c)| (f.clone(), c.sum())).filter(|(_, n)| *n > 0).collect()
    }

    fn publish(&self, _: &mut WriteToken, change: impl FnOnce(&mut Snapshot<C>)) {
        let mut next = self.snapshot.load().as_deref().cloned().unwrap_or_default();
        change(&mut next);
        self.snapshot.store(Some(Arc::new(next)));
    }

    /// Memoizes `facts` → `c` (facts the memo does not hold: the caller looked under the lock).
    /// When the memo is full its inexact entries go first; returns whether that happened.
    /// `cached` is the number of cached functions.
    pub(super) fn memoize(
        &self,
        token: &mut WriteToken,
        facts: &[i64],
        c: Arc<Concrete<C>>,
        hit: Hit,
        cached: usize,
    ) -> bool {
        let mut cleared = false;
        let calls = self.counter(facts);
        self.publish(token, |s| {
            // Exact memos are bounded by the cached functions; inexact ones (one per call shape
            // served by a general signature) are what can grow, so they are what gets dropped.
            if s.memo.len() + s.inexact.len() >= MEMO_CAPACITY + cached {
                s.inexact = imbl::HashMap::new();
                cleared = true;
            }
            let memo = if hit == Hit::Exact { &mut s.memo } else { &mut s.inexact };
            memo.insert(facts.into(), (c, hit, calls));
        });
        cleared
    }

    /// Publishes a newly traced `c` (replacing the function of id `replaced`, when the same
    /// signature was traced twice). Inexact memo entries go: `c` may serve them more exactly.
    pub(super) fn added(&self, token: &mut WriteToken, c: Arc<Concrete<C>>, replaced: Option<u32>) {
        self.touch(&c);
        self.publish(token, |s| {
            s.inexact = imbl::HashMap::new();
            if replaced.is_some() {
                s.memo.retain(|_, (m, _, _)| Some(m.id) != replaced);
            }
            if let Some(id) = replaced {
                s.by_id.remove(&id);
            }
            s.by_id.insert(c.id, c);
        });
    }

    /// Unpublishes the function of id `id` and every memo entry that led to it.
    pub(super) fn removed(&self, token: &mut WriteToken, id: u32) {
        self.publish(token, |s| {
            s.by_id.remove(&id);
            s.memo.retain(|_, (m, _, _)| m.id != id);
            s.inexact.retain(|_, (m, _, _)| m.id != id);
        });
    }

    /// Unpublishes everything.
    pub(super) fn clear(&self, _: &mut WriteToken) {
        self.snapshot.store(None);
    }

    /// Unpublishes everything and forgets the call profile (the function is closed).
    pub(super) fn release(&self, token: &mut WriteToken) {
        self.clear(token);
        drop(std::mem::take(&mut *self.counters.lock()));
    }
}
