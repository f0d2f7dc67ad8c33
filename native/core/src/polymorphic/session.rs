//! [`TraceSession`]: the parameters and captures a body declares while it is traced, checked
//! against the parameter list fixed by the first trace and against their constraints.

use std::time::Instant;

use super::error::PolyError;
use crate::binding::BindError;
use crate::explain::RetraceReason;
use crate::function_type::{describe_mismatch, FunctionType};
use crate::parameter::{ParamKind, Parameter};
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::trace_type::TypeRef;
use crate::types::VariableSpec;

/// The parameters a body declares while it is traced.
pub struct TraceSession {
    pub(super) function: String,
    /// The parameter list fixed by the first trace, if any: every trace must declare it again.
    pub(super) known: Option<FunctionType>,
    pub(super) arg_names: Vec<String>,
    pub(super) declared: Vec<Parameter>,
    pub(super) traced: Vec<Parameter>,
    /// Captures: values the body reads from outside (variables, tensors), fed as hidden inputs
    /// at every call; their constraints...
    pub(super) declared_captures: Vec<(String, TypeRef)>,
    /// ...and the types they were traced with.
    pub(super) traced_captures: Vec<(String, TypeRef)>,
    /// Shared by parameters and captures: one placeholder per aliased value (a variable passed
    /// as an argument and also captured is one graph input).
    pub(super) placeholders: PlaceholderContext,
    /// With reduce-retracing: the call generalized against the cached signatures.
    pub(super) generalized: Option<FunctionType>,
    /// Why this trace happens, and its text.
    pub(super) why: RetraceReason,
    pub(super) reason: String,
    pub(super) started: Instant,
    /// Per-structure inferred types, when examples differed in structure.
    pub(super) structures: super::inferred::Structures,
    /// Whether a call traces (counted as a miss); a trace ahead of calls (getConcreteFunction)
    /// does not count toward the frequent-retrace warning, as in Python, where only calls do.
    pub(super) for_call: bool,
}

impl TraceSession {
    /// Why this trace happens.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Why this trace happens, by parameter and path.
    pub fn retrace_reason(&self) -> &RetraceReason {
        &self.why
    }

    /// Declares parameter `name` of `kind` under `constraint`; `value` is the type of the call's
    /// argument (`None` if absent). Returns the placeholders to build for it.
    pub fn declare<E>(
        &mut self,
        name: &str,
        kind: ParamKind,
        optional: bool,
        constraint: TypeRef,
        value: Option<TypeRef>,
    ) -> Result<Vec<PlaceholderSpec>, PolyError<E>> {
        if let Some(known) = self.known.as_ref() {
            let expected = known.parameters.get(self.declared.len());
            if expected.is_none_or(|p| p.name != name || p.kind != kind || p.optional != optional) {
                return Err(self.list_changed(Some(Parameter::new(name, kind).with_constraint(constraint))));
            }
        }
        if self.declared.iter().any(|p| p.name == name) {
            return Err(self.list_changed(Some(Parameter::new(name, kind).with_constraint(constraint))));
        }
        let Some(value) = value else {
            return Err(BindError::Missing { param: name.to_owned(), expected: Some(constraint.to_string()) }.into());
        };
        if !value.is_subtype_of(&*constraint) {
            return Err(BindError::TypeMismatch {
                param: name.to_owned(),
                expected: constraint.to_string(),
                got: describe_mismatch(&value, &constraint),
            }
            .into());
        }
        // With reduce-retracing, trace the generalized type when it still fits the constraint.
        let general = self
            .generalized
            .as_ref()
            .and_then(|g| g.parameter(name))
            .and_then(|p| p.type_constraint.clone())
            .filter(|g| value.is_subtype_of(&**g) && g.is_subtype_of(&*constraint));
        // Examples that differed in structure: trace this argument's structure as its examples
        // coalesced, so each structure traces once.
        let structure = self
            .structures
            .lock()
            .get(name)
            .and_then(|types| types.iter().find(|t| value.is_subtype_of(&***t) && t.is_subtype_of(&*constraint)).cloned());
        let traced = crate::infer::specialize(general.as_ref().unwrap_or(&value), structure.as_ref().unwrap_or(&constraint));
        let mut specs = Vec::new();
        self.placeholders.take_composite_shapes();
        traced.placeholders(name, &mut self.placeholders, &mut specs);
        self.declared.push(Parameter { name: name.to_owned(), kind, optional, type_constraint: Some(constraint) });
        self.traced.push(Parameter { name: name.to_owned(), kind, optional, type_constraint: Some(traced) });
        Ok(specs)
    }

    /// The static shapes of the composites of the parameter declared last, as traced (generalized
    /// with reduce-retracing), in flatten order: what the body's composite views are built with.
    pub fn take_composite_shapes(&mut self) -> Vec<crate::shape::Shape> {
        self.placeholders.take_composite_shapes()
    }

    /// Declares capture `name` (a value the body reads from outside, fed as a hidden input at
    /// every call) under `constraint`, with the type of its current `value`. Returns its
    /// placeholders: none when the value is aliased to one already placed (the same variable).
    pub fn declare_capture<E>(
        &mut self,
        name: &str,
        constraint: TypeRef,
        value: TypeRef,
    ) -> Result<Vec<PlaceholderSpec>, PolyError<E>> {
        if let Some(known) = self.known.as_ref() {
            if known.captures.get(self.declared_captures.len()).is_none_or(|(n, _)| n != name) {
                return Err(PolyError::ParameterListChanged {
                    name: self.function.clone(),
                    before: known.to_string(),
                    now: format!("a capture '{name}' at position {}", self.declared_captures.len()),
                });
            }
        }
        if !value.is_subtype_of(&*constraint) {
            return Err(BindError::TypeMismatch {
                param: format!("capture {name}"),
                expected: constraint.to_string(),
                got: describe_mismatch(&value, &constraint),
            }
            .into());
        }
        let mut specs = Vec::new();
        value.placeholders(name, &mut self.placeholders, &mut specs);
        self.declared_captures.push((name.to_owned(), constraint));
        self.traced_captures.push((name.to_owned(), value));
        Ok(specs)
    }

    /// The traced signature, the key of this trace's concrete function. Its variables' alias ids
    /// are renumbered by first appearance over the parameters, then the captures: the order a
    /// call writes them in. The body numbers them as it meets them, so one that reads a captured
    /// variable before it declares a variable parameter would otherwise key its trace under a
    /// numbering no call has, and every call would trace again.
    pub(super) fn traced_type(&self) -> FunctionType {
        let mut order: Vec<u64> = Vec::new();
        let mut in_call_order = |t: &TypeRef| match t.downcast_ref::<VariableSpec>() {
            Some(v) => {
                let at = order.iter().position(|a| *a == v.alias).unwrap_or_else(|| {
                    order.push(v.alias);
                    order.len() - 1
                });
                TypeRef::new(VariableSpec { alias: at as u64, ..v.clone() })
            }
            None => t.clone(),
        };
        let parameters = self
            .traced
            .iter()
            .map(|p| Parameter { type_constraint: p.type_constraint.as_ref().map(&mut in_call_order), ..p.clone() })
            .collect();
        let captures = self.traced_captures.iter().map(|(n, t)| (n.clone(), in_call_order(t))).collect();
        FunctionType::new(parameters).with_captures(captures)
    }

    /// The error for a trace whose declarations (so far, plus `next`) differ from the fixed list.
    pub(super) fn list_changed<E>(&self, next: Option<Parameter>) -> PolyError<E> {
        let mut now = self.declared.clone();
        now.extend(next);
        let before = match &self.known {
            Some(k) => k.to_string(),
            None => FunctionType::new(self.declared.clone()).to_string(),
        };
        PolyError::ParameterListChanged { name: self.function.clone(), before, now: FunctionType::new(now).to_string() }
    }
}
