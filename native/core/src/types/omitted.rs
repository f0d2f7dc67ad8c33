//! [`Omitted`]: the realized type of an optional parameter the call left out.

use std::fmt;

use crate::{PlaceholderContext, PlaceholderSpec, TraceType, TypeRef};

/// An optional argument that was not passed. It is its own trace type (not "no type") so a
/// call that omits `x` never reuses a function traced with `x`, and vice versa.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Omitted;

impl fmt::Display for Omitted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<omitted>")
    }
}

impl TraceType for Omitted {
    fn kind(&self) -> &'static str {
        "omitted"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        self.dyn_eq(other)
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        others
            .iter()
            .all(|o| self.dyn_eq(*o))
            .then(|| TypeRef::new(Omitted))
    }

    fn placeholders(
        &self,
        _path: &str,
        _ctx: &mut PlaceholderContext,
        _out: &mut Vec<PlaceholderSpec>,
    ) {
    }

    fn flat_len(&self) -> usize {
        0
    }

    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        (!self.is_subtype_of(traced)).then(|| format!("omitted, but traced with {traced}"))
    }

    crate::trace_type_common!();
}
