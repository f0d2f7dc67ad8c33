//! Constraints inferred for a polymorphic function's parameters (from examples or a profile),
//! kept for the function's life so that every trace merges them with the body's declarations
//! the same way, and so that errors say where a constraint came from.

use std::collections::HashMap;

use super::{PolyError, Polymorphic};
use crate::infer::{coalesce, merge_declared, Coalesced, Provenance};
use crate::{BindError, TypeRef};

/// Inferred constraints by parameter name, and what inference said about each parameter.
#[derive(Default)]
pub(super) struct Inferred {
    constraints: HashMap<String, (TypeRef, Provenance)>,
    notes: Vec<String>,
}

impl<C> Polymorphic<C> {
    /// Coalesces the example types of parameter `name` and remembers the result: a constraint
    /// the parameter's declaration is then merged with (see [`Polymorphic::effective_constraint`]),
    /// or a note saying why the examples keep separate traces. Returns that note, if any.
    pub fn infer_parameter(&self, name: &str, examples: &[TypeRef], source: Provenance) -> Option<String> {
        let mut st = self.state.lock();
        let inferred = &mut st.inferred;
        match coalesce(name, examples) {
            Coalesced::Constraint(c) => {
                let note = format!("{name}: {c} ({source})");
                inferred.constraints.insert(name.to_owned(), (c, source));
                inferred.notes.push(note.clone());
                Some(note)
            }
            Coalesced::Unchanged => None,
            Coalesced::PerExample(why) => {
                inferred.notes.push(why.clone());
                Some(why)
            }
        }
    }

    /// The constraint a trace declares for parameter `name`: the body's `declared` one, merged
    /// with the inferred one when there is one (the narrower wins; not comparable is an error).
    pub fn effective_constraint(&self, name: &str, declared: TypeRef) -> Result<TypeRef, BindError> {
        let st = self.state.lock();
        match st.inferred.constraints.get(name) {
            Some((inferred, source)) => merge_declared(name, &declared, inferred, source),
            None => Ok(declared),
        }
    }

    /// Where the constraint of parameter `name` came from.
    pub fn provenance(&self, name: &str) -> Provenance {
        let st = self.state.lock();
        st.inferred.constraints.get(name).map_or(Provenance::Declared, |(_, p)| p.clone())
    }

    /// What inference said, one line per parameter, in the order it was asked.
    pub fn inference_notes(&self) -> Vec<String> {
        self.state.lock().inferred.notes.clone()
    }

    /// `e` with the provenance of an inferred constraint added where it names one.
    pub fn annotate<E>(&self, e: PolyError<E>) -> PolyError<E> {
        match e {
            PolyError::Bind(b) => PolyError::Bind(self.state.lock().inferred.annotate(b)),
            other => other,
        }
    }
}

impl Inferred {
    /// Adds "(inferred from 3 examples)" after the expected type of a mismatch on a parameter
    /// whose constraint was inferred.
    pub(super) fn annotate(&self, e: BindError) -> BindError {
        match e {
            BindError::TypeMismatch { param, expected, got } => {
                let expected = match self.constraints.get(&param) {
                    Some((_, source)) => format!("{expected} ({source})"),
                    None => expected,
                };
                BindError::TypeMismatch { param, expected, got }
            }
            other => other,
        }
    }
}
