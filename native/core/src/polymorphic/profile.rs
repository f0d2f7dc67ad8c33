//! The calls a polymorphic function recorded, as call types with counts, and what they suggest.

use super::Polymorphic;
use crate::profile::{suggest, to_json, Suggestion};
use crate::facts::decode_call_with_captures;
use crate::function_type::FunctionType;

impl<C> Polymorphic<C> {
    /// The recorded calls: each call type (parameters only) with how many calls had it, most
    /// frequent first. Empty before the first trace.
    pub fn recorded_calls(&self) -> Vec<(FunctionType, u64)> {
        let recorded = self.published.profile();
        let st = self.state.lock();
        let Some(declared) = st.declared.as_ref() else { return Vec::new() };
        let mut calls: Vec<(FunctionType, u64)> = Vec::new();
        for (facts, n) in recorded {
            let Ok(call) = decode_call_with_captures(declared, &facts, &st.strings, &st.literals) else { continue };
            // Facts that differ only in captures are one signature of the parameters.
            let call = FunctionType::new(call.parameters);
            match calls.iter_mut().find(|(t, _)| *t == call) {
                Some((_, count)) => *count += n,
                None => calls.push((call, n)),
            }
        }
        calls.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.to_string().cmp(&b.0.to_string())));
        calls
    }

    /// The signature the recorded calls suggest; `None` before the first trace.
    pub fn suggested_signature(&self) -> Option<Suggestion> {
        let declared = self.declared()?;
        Some(suggest(&declared, &self.recorded_calls()))
    }

    /// The profile file (JSON, see [`crate::profile`]) of the recorded calls.
    pub fn profile_json(&self) -> String {
        let calls = self.recorded_calls();
        // Literal ids are never unregistered: every id the calls hold is still in the table.
        to_json(&self.name, &calls, &self.state.lock().literals)
    }
}
