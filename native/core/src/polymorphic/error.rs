//! [`PolyError`]: why an operation on a polymorphic function failed.

use crate::binding::BindError;

/// Why a polymorphic-function operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PolyError<E> {
    #[error(transparent)]
    Bind(#[from] BindError),
    #[error("function '{name}' declared parameters {now} but its first trace declared {before}; the parameter list is fixed by the first trace (declare the same parameters, in the same order, on every trace)")]
    ParameterListChanged { name: String, before: String, now: String },
    #[error("function '{name}' cannot restore the concrete function {traced}: {why}")]
    Restore { name: String, traced: String, why: String },
    #[error("function '{0}' is closed")]
    Closed(String),
    #[error(transparent)]
    Build(E),
}
