//! What a polymorphic function shows about itself: trace count, statistics, history, its
//! declared type and its concrete functions.

use std::sync::Arc;

use super::monitor::{Stats, TraceRecord};
use super::{Concrete, Polymorphic, State};
use crate::function_type::FunctionType;

impl<C> Polymorphic<C> {
    /// The cached concrete function with this id, without taking the lock.
    pub fn concrete_by_id(&self, id: u32) -> Option<Arc<Concrete<C>>> {
        self.published.by_id(id)
    }

    pub fn trace_count(&self) -> u32 {
        self.state.lock().stats.traces as u32
    }

    pub fn stats(&self) -> Stats {
        self.stats_of(&self.state.lock())
    }

    pub(super) fn stats_of(&self, st: &State<C>) -> Stats {
        let (exact_hits, inexact_hits) = self.published.hits();
        Stats { exact_hits, inexact_hits, total_first_run_nanos: self.total_first_run_nanos(), ..st.stats }
    }

    /// The most recent traces, oldest first (at most [`HISTORY_CAPACITY`](super::HISTORY_CAPACITY)).
    pub fn history(&self) -> Vec<TraceRecord> {
        self.state.lock().monitor.history.iter().cloned().collect()
    }

    /// Whether [`Polymorphic::close`] was called: a closed function has no concrete functions and
    /// no declared type, and refuses calls.
    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The declared type (parameters and captures with their constraints), `None` before the
    /// first trace.
    pub fn declared(&self) -> Option<FunctionType> {
        self.state.lock().declared.clone()
    }

    /// Cached concrete functions in the order they were traced.
    pub fn concrete_functions(&self) -> Vec<Arc<Concrete<C>>> {
        let st = self.state.lock();
        let mut all: Vec<_> = st.table.entries().map(|(_, c)| c.clone()).collect();
        all.sort_by_key(|c| c.id);
        all
    }
}
