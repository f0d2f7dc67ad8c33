//! The last call that missed, remembered so that the retry and the trace that follow it do not
//! decode and look the call up again while the cached signatures are unchanged.

use super::State;
use crate::function_type::FunctionType;

pub(super) struct LastMiss {
    pub(super) facts: Box<[i64]>,
    /// [`crate::DispatchTable::generation`] when it missed.
    pub(super) generation: u64,
    pub(super) call: FunctionType,
}

impl<C> State<C> {
    /// The call type of `facts` if they are the last miss and nothing was cached since.
    pub(super) fn known_miss(&self, facts: &[i64]) -> Option<&FunctionType> {
        self.last_miss
            .as_ref()
            .filter(|m| m.generation == self.table.generation() && *m.facts == *facts)
            .map(|m| &m.call)
    }
}
