//! Constraints inferred for a polymorphic function's parameters (from examples or a profile),
//! kept for the function's life so that every trace merges them with the body's declarations
//! the same way, and so that errors say where a constraint came from.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;

use super::Polymorphic;
use super::error::PolyError;
use crate::infer::{coalesce, merge_declared, narrow, structures, Coalesced, Provenance};
use crate::binding::BindError;
use crate::explain::RetraceReason;
use crate::facts::decode_call_with_captures;
use crate::function_type::FunctionType;
use crate::parameter::Parameter;
use crate::trace_type::TypeRef;

/// Inferred constraints by parameter name, and what inference said about each parameter.
#[derive(Default)]
pub(super) struct Inferred {
    constraints: HashMap<String, (TypeRef, Provenance)>,
    /// Parameters whose declaration was narrower than the inferred constraint in every part, so
    /// that their constraint is the declared one after all.
    declared_won: HashSet<String>,
    notes: Vec<String>,
    /// The example types of each inferred parameter, in order: the first trace takes the first
    /// that fits the declaration, and the notes name those outside it.
    examples: HashMap<String, Vec<TypeRef>>,
    /// Parameters whose declaration was merged once already (their notes say how).
    merged: HashSet<String>,
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
        inferred.examples.insert(name.to_owned(), examples.to_vec());
        inferred.merged.remove(name);
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
    /// with the inferred one when there is one (the narrower wins part by part; nothing in common
    /// is an error, and so is a declaration that no example fits).
    pub fn effective_constraint(&self, name: &str, declared: TypeRef) -> Result<TypeRef, BindError> {
        let mut st = self.state.lock();
        let Some((inferred, source)) = st.inferred.constraints.get(name).cloned() else { return Ok(declared) };
        let merged = merge_declared(name, &declared, &inferred, &source)?;
        if st.inferred.merged.insert(name.to_owned()) {
            st.inferred.explain_merge(name, &declared, &inferred, &source, &merged)?;
        }
        if merged == declared {
            st.inferred.declared_won.insert(name.to_owned());
        } else {
            st.inferred.declared_won.remove(name);
        }
        Ok(merged)
    }

    /// The type a trace of examples declares parameter `name` with, under `constraint`: the
    /// example's `value` narrowed to the constraint, or (when the declaration leaves that example
    /// out) the first example of `name` it admits, so that the first trace at definition is of an
    /// example the function accepts. `value` itself when none fits (the trace then fails).
    pub fn example_argument(&self, name: &str, constraint: &TypeRef, value: Option<TypeRef>) -> Option<TypeRef> {
        if let Some(narrowed) = value.as_ref().and_then(|v| narrow(v, constraint)) {
            return Some(narrowed);
        }
        let st = self.state.lock();
        let examples = st.inferred.examples.get(name);
        examples.and_then(|es| es.iter().find_map(|e| narrow(e, constraint))).or(value)
    }

    /// Whether an example call (its `facts`, typed against the parameter list) needs no trace of
    /// its own: a concrete function serves it once narrowed to the declared constraints, or the
    /// declaration leaves it out (an argument outside it; the notes say so).
    pub fn example_served(&self, facts: &[i64]) -> Result<bool, BindError> {
        let mut st = self.state.lock();
        let Some(declared) = st.declared.clone() else { return Ok(false) };
        let call = decode_call_with_captures(&declared, facts, &st.strings, &st.literals)?;
        let mut parameters = Vec::with_capacity(call.parameters.len());
        for (p, d) in call.parameters.iter().zip(&declared.parameters) {
            let narrowed = match (&p.type_constraint, &d.type_constraint) {
                (Some(v), Some(c)) => match narrow(v, c) {
                    Some(n) => Some(n),
                    None => return Ok(true),
                },
                (v, _) => v.clone(),
            };
            parameters.push(Parameter { type_constraint: narrowed, ..p.clone() });
        }
        let call = FunctionType::new(parameters).with_captures(call.captures);
        Ok(st.table.lookup(&call, None).is_some())
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
    /// The notes of a parameter whose declaration met its inferred constraint for the first time:
    /// how the two combined, and which examples the declaration leaves out; an error when it
    /// leaves out every example (the examples together may still meet it: `[5, 3]` and `[6, 3]`
    /// give `[-1, 3]`, which a declared `[4, 3]` narrows, yet neither is a `[4, 3]`).
    fn explain_merge(&mut self, name: &str, declared: &TypeRef, inferred: &TypeRef, source: &Provenance, merged: &TypeRef) -> Result<(), BindError> {
        let mut outside: Vec<String> = Vec::new();
        let mut fits = false;
        for e in self.examples.get(name).into_iter().flatten() {
            if narrow(e, merged).is_some() {
                fits = true;
            } else if !outside.contains(&e.to_string()) {
                outside.push(e.to_string());
            }
        }
        if !fits && !outside.is_empty() {
            return Err(BindError::Conflict {
                param: name.to_owned(),
                declared: declared.to_string(),
                inferred: format!("every example: {}", outside.join(", ")),
            });
        }
        if merged != inferred {
            let was = format!("{name}: {inferred} ({source})");
            let now = format!("{name}: {merged} (declared {declared} narrowing {inferred} {source})");
            if let Some(note) = self.notes.iter_mut().find(|n| **n == was) {
                *note = now;
            }
        }
        if !outside.is_empty() {
            let which = if matches!(source, Provenance::Profile(_)) { "of the profile's calls" } else { "of the examples" };
            let verb = if outside.len() == 1 { "is" } else { "are" };
            self.notes.push(format!("{name}: {} {which} {verb} outside the declared {declared} and not traced", outside.join(", ")));
        }
        Ok(())
    }

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
