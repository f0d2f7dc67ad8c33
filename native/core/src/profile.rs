//! Signature profiles: the call types a function recorded (with how many calls had each), the
//! signature they suggest (the constraints that would have served them with the fewest traces),
//! and the profile file's JSON.
//!
//! The file (`"format": "polyfn-signature-profile"`, version 1) lists each recorded signature
//! with its count; a value is `{"dtype": "FLOAT", "shape": [2, 3]}` for a tensor (`"shape": null`
//! for an unknown rank, `-1` for an unknown dim), `{"list": [...]}`, `{"map": {"key": ...}}`,
//! `{"java": "java.lang.Integer", "value": "3"}` or `{"variable": {"dtype": ..., "shape": ...}}`;
//! an optional parameter left out of a call is left out of its signature.

use std::collections::HashSet;
use std::fmt::Write;

use crate::infer::{coalesce, declaration_lines, merge_declared, specialize, structures, Coalesced, Provenance};
use crate::function_type::FunctionType;
use crate::intern::LiteralTable;
use crate::parameter::Parameter;
use crate::shape::Shape;
use crate::trace_type::TypeRef;
use crate::types::{ListType, Literal, MapType, TensorSpec, VariableSpec};

/// The signature suggested by recorded calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// Calls recorded.
    pub calls: u64,
    /// Traces the recorded calls need as declared: one per distinct call type.
    pub traces_before: usize,
    /// Traces they need under the suggested constraints.
    pub traces_after: usize,
    /// The suggested declarations, as Java and as Kotlin lines (parameters whose declaration
    /// would not change are left out).
    pub java: Vec<String>,
    pub kotlin: Vec<String>,
    /// Why some parameters keep several traces (Java values, list lengths...).
    pub notes: Vec<String>,
}

/// The suggestion for `calls` (each call type with its count) of a function whose parameters
/// are `declared` (with the body's constraints).
pub fn suggest(declared: &FunctionType, calls: &[(FunctionType, u64)]) -> Suggestion {
    let total = calls.iter().map(|(_, n)| n).sum();
    let mut suggestion = Suggestion {
        calls: total,
        traces_before: calls.iter().map(|(t, _)| t).collect::<HashSet<_>>().len(),
        traces_after: 0,
        java: Vec::new(),
        kotlin: Vec::new(),
        notes: Vec::new(),
    };
    let mut constraints: Vec<Option<TypeRef>> = Vec::new();
    // Per parameter whose calls differ in structure: the coalesced type of each structure.
    let mut by_structure: Vec<Vec<TypeRef>> = Vec::new();
    for p in &declared.parameters {
        let examples: Vec<TypeRef> =
            calls.iter().filter_map(|(t, _)| t.parameter(&p.name).and_then(|a| a.type_constraint.clone())).collect();
        let inferred = match coalesce(&p.name, &examples) {
            Coalesced::Constraint(c) => Some(c),
            Coalesced::Unchanged => None,
            Coalesced::PerExample(why) => {
                suggestion.notes.push(why);
                None
            }
        };
        by_structure.push(if inferred.is_none() { structures(&p.name, &examples) } else { Vec::new() });
        let merged = match (&inferred, &p.type_constraint) {
            (Some(i), Some(d)) => Some(merge_declared(&p.name, d, i, &Provenance::Profile(total)).unwrap_or_else(|_| i.clone())),
            (i, _) => i.clone(),
        };
        if let Some(m) = merged.as_ref().filter(|m| Some(*m) != p.type_constraint.as_ref()) {
            if let Some((java, kotlin)) = declaration_lines(&p.name, m) {
                suggestion.java.push(java);
                suggestion.kotlin.push(kotlin);
            }
        }
        constraints.push(merged);
    }
    let after: HashSet<Vec<Option<TypeRef>>> = calls
        .iter()
        .map(|(t, _)| {
            declared
                .parameters
                .iter()
                .zip(constraints.iter().zip(&by_structure))
                .map(|(p, (c, structures))| {
                    let value = t.parameter(&p.name).and_then(|a| a.type_constraint.clone());
                    let structure = || value.as_ref().and_then(|v| structures.iter().find(|s| v.is_subtype_of(&***s)));
                    match (&value, c) {
                        (Some(v), Some(c)) => Some(specialize(v, c)),
                        (Some(v), None) => Some(structure().map_or_else(|| v.clone(), |s| specialize(v, s))),
                        (None, _) => None,
                    }
                })
                .collect()
        })
        .collect();
    suggestion.traces_after = after.len();
    suggestion
}

/// The profile file of function `name`: every recorded signature with its count.
/// A Java value is written with its whole text from `literals` (`"value": null` and the short
/// text as `"display"` when no profile can restore it).
pub fn to_json(name: &str, calls: &[(FunctionType, u64)], literals: &LiteralTable) -> String {
    let total: u64 = calls.iter().map(|(_, n)| n).sum();
    let mut out = String::new();
    let _ = write!(out, "{{\n  \"format\": \"polyfn-signature-profile\",\n  \"version\": 1,\n  \"function\": {},\n  \"calls\": {total},\n  \"signatures\": [", quote(name));
    for (i, (t, n)) in calls.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(out, "    {{\"count\": {n}, \"parameters\": {{");
        let present: Vec<&Parameter> = t.parameters.iter().filter(|p| p.type_constraint.is_some()).collect();
        for (j, p) in present.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}: ", quote(&p.name));
            value(&mut out, p.type_constraint.as_ref().expect("present"), literals);
        }
        out.push_str("}}");
    }
    out.push_str("\n  ]\n}\n");
    out
}

fn value(out: &mut String, t: &TypeRef, literals: &LiteralTable) {
    if let Some(s) = t.downcast_ref::<TensorSpec>() {
        let _ = write!(out, "{{\"dtype\": \"{}\", \"shape\": {}}}", s.dtype, shape(&s.shape));
    } else if let Some(l) = t.downcast_ref::<ListType>() {
        out.push_str("{\"list\": [");
        for (i, e) in l.elements.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            value(out, e, literals);
        }
        out.push_str("]}");
    } else if let Some(m) = t.downcast_ref::<MapType>() {
        out.push_str("{\"map\": {");
        for (i, (k, v)) in m.entries.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}: ", quote(k));
            value(out, v, literals);
        }
        out.push_str("}}");
    } else if let Some(l) = t.downcast_ref::<Literal>() {
        let _ = match literals.profile_value(l.id as i64) {
            Some(v) => write!(out, "{{\"java\": {}, \"value\": {}}}", quote(&l.class_name), quote(v)),
            None => write!(out, "{{\"java\": {}, \"value\": null, \"display\": {}}}", quote(&l.class_name), quote(&l.repr)),
        };
    } else if let Some(v) = t.downcast_ref::<VariableSpec>() {
        let _ = write!(out, "{{\"variable\": {{\"dtype\": \"{}\", \"shape\": {}}}}}", v.dtype, shape(&v.shape));
    } else {
        let _ = write!(out, "{{\"unknown\": {}}}", quote(&t.to_string()));
    }
}

fn shape(s: &Shape) -> String {
    match s {
        Shape::Unknown => "null".into(),
        Shape::Known(dims) => {
            let dims: Vec<String> = dims.iter().map(|d| d.unwrap_or(-1).to_string()).collect();
            format!("[{}]", dims.join(", "))
        }
    }
}

/// A JSON string literal.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, DTypeSet, ParamKind, TensorConstraint};

    fn call(n: i64, k: i64) -> FunctionType {
        FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[n, 3])))),
            Parameter::new("k", ParamKind::Java).with_constraint(TypeRef::new(Literal::new(k as u64, k.to_string(), "java.lang.Integer"))),
        ])
    }

    fn declared() -> FunctionType {
        FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(TypeRef::new(TensorConstraint::new(DTypeSet::of(&[DType::FLOAT]), None))),
            Parameter::new("k", ParamKind::Java).with_constraint(TypeRef::new(crate::LiteralConstraint::new("java.lang.Integer"))),
        ])
    }

    #[test]
    fn fifty_batch_sizes_suggest_one_trace_per_java_value() {
        let calls: Vec<(FunctionType, u64)> = (1..=50).map(|n| (call(n, 1), 20)).chain([(call(4, 2), 5)]).collect();
        let s = suggest(&declared(), &calls);
        assert_eq!((s.calls, s.traces_before, s.traces_after), (1005, 51, 2));
        assert_eq!(s.java, vec!["Operand<TFloat32> x = in.input(\"x\", TFloat32.class, Shape.of(-1, 3));"]);
        assert_eq!(s.kotlin, vec!["val x = inputs.input<TFloat32>(\"x\", Shape.of(-1, 3))"]);
        assert_eq!(s.notes, vec!["k: Java values 1, 2 are traced one per value; pass k as a tensor to share one trace"]);
    }

    #[test]
    fn a_java_value_in_many_signatures_is_named_once() {
        // Sorted by count as recorded_calls sorts them: the values alternate.
        let calls: Vec<(FunctionType, u64)> = (1..=6).map(|n| (call(n, 1 + n % 2), 10 - n as u64)).collect();
        let s = suggest(&declared(), &calls);
        assert_eq!(s.notes, vec!["k: Java values 2, 1 are traced one per value; pass k as a tensor to share one trace"]);
        assert_eq!((s.traces_before, s.traces_after), (6, 2));
    }

    #[test]
    fn json_lists_every_signature_with_its_count() {
        let mut literals = LiteralTable::new();
        literals.insert(1, "1", "java.lang.Integer", Some("1".to_owned()));
        let json = to_json("enc\"oder", &[(call(2, 1), 7)], &literals);
        assert!(json.contains("\"function\": \"enc\\\"oder\""), "{json}");
        assert!(json.contains("\"calls\": 7"), "{json}");
        assert!(
            json.contains("{\"count\": 7, \"parameters\": {\"x\": {\"dtype\": \"FLOAT\", \"shape\": [2, 3]}, \"k\": {\"java\": \"java.lang.Integer\", \"value\": \"1\"}}}"),
            "{json}"
        );
    }
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod value_tests;
