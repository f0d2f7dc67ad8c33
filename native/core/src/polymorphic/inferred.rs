//! Constraints inferred for a polymorphic function's parameters (from examples or a profile),
//! kept for the function's life so that every trace merges them with the body's declarations
//! the same way, and so that errors say where a constraint came from.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{PolyError, Polymorphic};
use crate::infer::{coalesce, merge_declared, structures, Coalesced, Provenance};
use crate::{BindError, RetraceReason, TypeRef};

/// Inferred constraints by parameter name, and what inference said about each parameter.
#[derive(Default)]
pub(super) struct Inferred {
    constraints: HashMap<String, (TypeRef, Provenance)>,
    /// Parameters whose declaration was narrower than the inferred constraint in every part, so
    /// that their constraint is the declared one after all.
    declared_won: HashSet<String>,
    notes: Vec<String>,
    /// Parameters whose examples differ in structure: one coalesced type per structure, which a
    /// trace of an argument of that structure is specialized by. Shared with trace sessions
    /// (inference runs inside the first trace, after its session began).
    pub(super) structures: Structures,
}

/// Per-structure inferred types by parameter name (see [`Inferred::structures`]).
pub(crate) type Structures = Arc<Mutex<HashMap<String, Vec<TypeRef>>>>;

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
                inferred.structures.lock().insert(name.to_owned(), structures(name, examples));
                inferred.notes.push(why.clone());
                Some(why)
            }
        }
    }

    /// The constraint a trace declares for parameter `name`: the body's `declared` one, merged
    /// with the inferred one when there is one (the narrower wins; not comparable is an error).
    pub fn effective_constraint(&self, name: &str, declared: TypeRef) -> Result<TypeRef, BindError> {
        let mut st = self.state.lock();
        let Some((inferred, source)) = st.inferred.constraints.get(name) else { return Ok(declared) };
        let merged = merge_declared(name, &declared, inferred, source)?;
        if merged == declared {
            st.inferred.declared_won.insert(name.to_owned());
        } else {
            st.inferred.declared_won.remove(name);
        }
        Ok(merged)
    }

    /// Where the constraint of parameter `name` came from.
    pub fn provenance(&self, name: &str) -> Provenance {
        let st = self.state.lock();
        st.inferred.source(name).cloned().unwrap_or(Provenance::Declared)
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
    /// Where the constraint of `name` came from, when inference shaped it.
    fn source(&self, name: &str) -> Option<&Provenance> {
        self.constraints.get(name).filter(|_| !self.declared_won.contains(name)).map(|(_, p)| p)
    }

    /// The text of a retrace reason, naming the inferred constraint of the parameter it is about
    /// ("...; x is constrained to TensorSpec({FLOAT, DOUBLE, ...}, [-1]) (inferred from 2 examples)").
    pub(super) fn explain(&self, why: &RetraceReason) -> String {
        let text = why.to_string();
        let param = why.parameter.as_str();
        match (self.constraints.get(param), self.source(param)) {
            (Some((c, _)), Some(source)) if !why.capture => format!("{text}; {param} is constrained to {c} ({source})"),
            _ => text,
        }
    }

    /// Adds "(inferred from 3 examples)" after the expected type of a mismatch on a parameter
    /// whose constraint was inferred.
    pub(super) fn annotate(&self, e: BindError) -> BindError {
        match e {
            BindError::TypeMismatch { param, expected, got } => {
                let expected = match self.source(&param) {
                    Some(source) => format!("{expected} ({source})"),
                    None => expected,
                };
                BindError::TypeMismatch { param, expected, got }
            }
            other => other,
        }
    }
}
