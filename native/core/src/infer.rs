//! Signatures inferred from examples: the types of several example arguments of one parameter
//! coalesced into one constraint (the most specific one that admits them all, within the
//! lattice), merged with what the body declares, and remembered with where it came from.
//!
//! Tensors coalesce to the join of their shapes (`[2, 3]`, `[5, 3]` → `[-1, 3]`) and to the
//! smallest dtype family holding their dtypes (FLOAT + DOUBLE → floating). Lists and maps
//! coalesce leaf by leaf when every example has the same structure (length, key set, kinds):
//! position 0 with position 0, key `a` with key `a`, so `[x: [2, 3], y: [7]]` and
//! `[x: [5, 3], y: [7]]` give `[[-1, 3], [7]]`, not one element type for both. Records (and
//! records, lists and maps nested in a nest parameter) coalesce component by component, by name,
//! when every example is of the same class. Java values and
//! differing structures are not generalized: each keeps its own trace, and the note says so.

use std::fmt;

use crate::dtype::{DType, DTypeSet};
use crate::shape::Shape;
use crate::trace_type::TypeRef;
use crate::types::{ListConstraint, ListType, Literal, MapConstraint, MapType, RecordType, TensorConstraint, TensorSpec};

#[path = "infer_merge.rs"]
mod merge;
pub use merge::{merge_declared, narrow, shape_meet};

/// Where a parameter's constraint came from; shown next to it in errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// Written in the body (`in.input("x", TFloat32.class, Shape.of(-1))`).
    Declared,
    /// Coalesced from this many example argument sets.
    Examples(usize),
    /// Coalesced from a recorded profile of this many calls.
    Profile(u64),
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Provenance::Declared => f.write_str("declared"),
            Provenance::Examples(1) => f.write_str("inferred from 1 example"),
            Provenance::Examples(n) => write!(f, "inferred from {n} examples"),
            Provenance::Profile(n) => write!(f, "inferred from a profile of {n} calls"),
        }
    }
}

/// What coalescing the examples of one parameter gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Coalesced {
    /// One constraint admits every example: trace it once.
    Constraint(TypeRef),
    /// Nothing to generalize (equal Java values, variables): the declaration stands.
    Unchanged,
    /// The examples differ in a way no constraint shares (list lengths, map keys, kinds, Java
    /// values): one trace per distinct example; the text says why and what would help.
    PerExample(String),
}

/// The smallest of Polyfn's dtype families (one dtype, floating, integral, number, any) that
/// holds every dtype in `dtypes`, as Java's `TFloat32`, `TFloating`, `TIntegral`, `TNumber`,
/// `TType` do.
pub fn smallest_family(dtypes: &DTypeSet) -> DTypeSet {
    if dtypes.single().is_some() {
        return dtypes.clone();
    }
    let number = DTypeSet::floating().union(&DTypeSet::integral());
    [DTypeSet::floating(), DTypeSet::integral(), number]
        .into_iter()
        .find(|family| dtypes.is_subset_of(family))
        .unwrap_or_else(DTypeSet::any)
}

/// Coalesces the example types of parameter `name` (each a call's type of it, in order).
pub fn coalesce(name: &str, examples: &[TypeRef]) -> Coalesced {
    let Some(first) = examples.first() else { return Coalesced::Unchanged };
    let refs: Vec<&TypeRef> = examples.iter().collect();
    let empty = |t: &TypeRef| {
        t.downcast_ref::<ListType>().is_some_and(|l| l.elements.is_empty())
            || t.downcast_ref::<MapType>().is_some_and(|m| m.entries.is_empty())
    };
    let structured = all::<TensorSpec>(examples).is_some()
        || all::<ListType>(examples).is_some()
        || all::<MapType>(examples).is_some()
        || all::<RecordType>(examples).is_some();
    if structured {
        return match leafwise(name, &refs) {
            Ok(_) if empty(first) => Coalesced::Unchanged,
            Ok(t) => Coalesced::Constraint(t),
            Err(why) => Coalesced::PerExample(why),
        };
    }
    if all::<Literal>(examples).is_some() {
        return match leafwise(name, &refs) {
            Ok(_) => Coalesced::Unchanged,
            Err(why) => Coalesced::PerExample(why),
        };
    }
    if examples.iter().all(|e| e.kind() == first.kind()) {
        return Coalesced::Unchanged;
    }
    Coalesced::PerExample(format!("{name}: examples of different kinds are traced one per kind"))
}

/// The examples of one value at `path` (a parameter or a part of one) coalesced leaf by leaf:
/// tensors to their join, lists position by position, maps key by key, equal values to
/// themselves. `Err` says where the structure differs and that those examples trace apart.
fn leafwise(path: &str, examples: &[&TypeRef]) -> Result<TypeRef, String> {
    let first = examples[0];
    if let Some(specs) = all_of::<TensorSpec>(examples) {
        return Ok(TypeRef::new(tensor_join(specs.into_iter())));
    }
    if let Some(lists) = all_of::<ListType>(examples) {
        let lengths: std::collections::BTreeSet<usize> = lists.iter().map(|l| l.elements.len()).collect();
        if lengths.len() > 1 {
            let lengths: Vec<String> = lengths.iter().map(usize::to_string).collect();
            return Err(format!(
                "{path}: lists of lengths {} are traced one per length (pass one stacked tensor to share a trace)",
                lengths.join(", ")
            ));
        }
        let elements = (0..lists[0].elements.len())
            .map(|i| leafwise(&format!("{path}[{i}]"), &lists.iter().map(|l| &l.elements[i]).collect::<Vec<_>>()))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(TypeRef::new(ListType::new(elements)));
    }
    if let Some(maps) = all_of::<MapType>(examples) {
        if maps.iter().any(|m| !m.entries.keys().eq(maps[0].entries.keys())) {
            return Err(format!("{path}: maps with different key sets are traced one per key set"));
        }
        let entries = maps[0]
            .entries
            .keys()
            .map(|k| {
                let values: Vec<&TypeRef> = maps.iter().map(|m| &m.entries[k]).collect();
                Ok((k.clone(), leafwise(&format!("{path}['{k}']"), &values)?))
            })
            .collect::<Result<_, String>>()?;
        return Ok(TypeRef::new(MapType::new(entries)));
    }
    if let Some(records) = all_of::<RecordType>(examples) {
        let first = records[0];
        let same = |r: &RecordType| r.class_name == first.class_name && r.fields.iter().map(|f| &f.0).eq(first.fields.iter().map(|f| &f.0));
        if !records.iter().all(|r| same(r)) {
            let classes = distinct(records.iter().map(|r| r.simple_name()));
            return Err(format!("{path}: records of classes {} are traced one per class", classes.join(", ")));
        }
        let fields = first
            .fields
            .iter()
            .enumerate()
            .map(|(i, (n, _))| {
                let values: Vec<&TypeRef> = records.iter().map(|r| &r.fields[i].1).collect();
                Ok((n.clone(), leafwise(&format!("{path}.{n}"), &values)?))
            })
            .collect::<Result<_, String>>()?;
        return Ok(TypeRef::new(RecordType::new(first.class_name.clone(), fields)));
    }
    if let Some(literals) = all_of::<Literal>(examples) {
        if literals.iter().all(|l| l.id == literals[0].id) {
            return Ok(first.clone());
        }
        let values = distinct(literals.iter().map(|l| l.repr.as_str()));
        return Err(format!(
            "{path}: Java values {} are traced one per value; pass {path} as a tensor to share one trace",
            values.join(", ")
        ));
    }
    if examples.iter().all(|e| *e == first) {
        return Ok(first.clone());
    }
    if examples.iter().all(|e| e.kind() == first.kind()) {
        return Err(format!("{path}: differing {} values are traced one per example", first.kind()));
    }
    Err(format!("{path}: examples of different kinds are traced one per kind"))
}

/// Each text once, in the order first seen: a profile has a value in many signatures.
fn distinct<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for t in texts {
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    seen
}

/// When the examples of a parameter do not coalesce into one constraint, the groups they do
/// coalesce in: one leafwise type per structure (list length, key set, Java value), each the
/// coalescing of its examples, in the order of their first example. A trace of an argument of
/// one structure specializes it by that structure's type, so there is one trace per structure.
pub fn structures(name: &str, examples: &[TypeRef]) -> Vec<TypeRef> {
    let mut groups: Vec<(Vec<&TypeRef>, TypeRef)> = Vec::new();
    for e in examples {
        let joined = groups.iter().enumerate().find_map(|(at, (members, _))| {
            let mut with = members.clone();
            with.push(e);
            leafwise(name, &with).ok().map(|t| (at, with, t))
        });
        match joined {
            Some((at, with, t)) => groups[at] = (with, t),
            None => {
                if let Ok(t) = leafwise(name, &[e]) {
                    groups.push((vec![e], t));
                }
            }
        }
    }
    groups.into_iter().map(|(_, t)| t).collect()
}

/// The downcasts of every example, if all are `T`.
fn all<T: crate::trace_type::TraceType>(examples: &[TypeRef]) -> Option<Vec<&T>> {
    examples.iter().map(|e| e.downcast_ref::<T>()).collect()
}

fn all_of<'a, T: crate::trace_type::TraceType>(examples: &[&'a TypeRef]) -> Option<Vec<&'a T>> {
    examples.iter().map(|e| e.downcast_ref::<T>()).collect()
}

/// The join of tensor specs: the shapes' join and the dtypes' smallest family.
fn tensor_join<'a>(mut specs: impl Iterator<Item = &'a TensorSpec>) -> TensorConstraint {
    let first = specs.next().expect("at least one tensor");
    let (mut dtypes, mut shape) = (vec![first.dtype], first.shape.clone());
    for s in specs {
        dtypes.push(s.dtype);
        shape = shape.most_specific_common_supertype(&[&s.shape]);
    }
    TensorConstraint::new(smallest_family(&DTypeSet::of(&dtypes)), Some(shape))
}

/// The type to trace for a call `value` under `constraint`: like
/// [`TraceType::specialize_for_trace`](crate::TraceType::specialize_for_trace), and position by
/// position (key by key) under a leafwise inferred list (map), whose parts are constraints.
pub fn specialize(value: &TypeRef, constraint: &TypeRef) -> TypeRef {
    if let (Some(v), Some(c)) = (value.downcast_ref::<ListType>(), constraint.downcast_ref::<ListType>()) {
        if v.elements.len() == c.elements.len() {
            return TypeRef::new(ListType::new(v.elements.iter().zip(&c.elements).map(|(v, c)| specialize(v, c)).collect()));
        }
    }
    if let (Some(v), Some(c)) = (value.downcast_ref::<MapType>(), constraint.downcast_ref::<MapType>()) {
        if v.entries.keys().eq(c.entries.keys()) {
            let entries = v.entries.iter().zip(c.entries.values()).map(|((k, v), c)| (k.clone(), specialize(v, c))).collect();
            return TypeRef::new(MapType::new(entries));
        }
    }
    if let (Some(v), Some(c)) = (value.downcast_ref::<RecordType>(), constraint.downcast_ref::<RecordType>()) {
        if v.class_name == c.class_name && v.fields.iter().map(|f| &f.0).eq(c.fields.iter().map(|f| &f.0)) {
            let fields = v.fields.iter().zip(&c.fields).map(|((n, v), (_, c))| (n.clone(), specialize(v, c))).collect();
            return TypeRef::new(RecordType::new(v.class_name.clone(), fields));
        }
    }
    value.specialize_for_trace(&**constraint)
}

/// Java's tensor class for a dtype or family, as a body would declare it.
pub fn java_type(dtypes: &DTypeSet) -> &'static str {
    if let Some(d) = dtypes.single() {
        return match d {
            DType::FLOAT => "TFloat32",
            DType::DOUBLE => "TFloat64",
            DType::HALF => "TFloat16",
            DType::BFLOAT16 => "TBfloat16",
            DType::INT32 => "TInt32",
            DType::INT64 => "TInt64",
            DType::UINT8 => "TUint8",
            DType::UINT16 => "TUint16",
            DType::BOOL => "TBool",
            DType::STRING => "TString",
            _ => "TType",
        };
    }
    if dtypes.is_subset_of(&DTypeSet::floating()) {
        "TFloating"
    } else if dtypes.is_subset_of(&DTypeSet::integral()) {
        "TIntegral"
    } else if dtypes.is_subset_of(&DTypeSet::floating().union(&DTypeSet::integral())) {
        "TNumber"
    } else {
        "TType"
    }
}

fn java_shape(shape: &Shape) -> String {
    match shape {
        Shape::Unknown => "Shape.unknown()".into(),
        Shape::Known(dims) => {
            let dims: Vec<String> = dims.iter().map(|d| d.map_or("-1".into(), |d| d.to_string())).collect();
            format!("Shape.of({})", dims.join(", "))
        }
    }
}

/// The declaration that would give parameter `name` the constraint `c`, as ready-to-paste Java
/// and Kotlin lines; `None` for a kind without such a declaration.
///
/// ```
/// use polyfn_core::{infer::declaration_lines, DType, DTypeSet, Shape, TensorConstraint, TypeRef};
/// let c = TypeRef::new(TensorConstraint::new(DTypeSet::of(&[DType::FLOAT]), Some(Shape::of(&[-1, 3]))));
/// let (java, kotlin) = declaration_lines("x", &c).unwrap();
/// assert_eq!(java, "Operand<TFloat32> x = in.input(\"x\", TFloat32.class, Shape.of(-1, 3));");
/// assert_eq!(kotlin, "val x = inputs.input<TFloat32>(\"x\", Shape.of(-1, 3))");
/// ```
pub fn declaration_lines(name: &str, c: &TypeRef) -> Option<(String, String)> {
    let var = identifier(name);
    if let Some(t) = c.downcast_ref::<TensorConstraint>() {
        let ty = java_type(&t.dtypes);
        let shape = t.shape.as_ref().map(java_shape);
        let (js, ks) = shape.map_or((String::new(), String::new()), |s| (format!(", {s}"), format!(", {s}")));
        return Some((
            format!("Operand<{ty}> {var} = in.input(\"{name}\", {ty}.class{js});"),
            format!("val {var} = inputs.input<{ty}>(\"{name}\"{ks})"),
        ));
    }
    let element = |e: &Option<TypeRef>| e.as_ref().and_then(|e| e.downcast_ref::<TensorConstraint>()).map(|t| java_type(&t.dtypes));
    if let Some(l) = c.downcast_ref::<ListConstraint>() {
        let ty = element(&l.element).unwrap_or("TType");
        return Some((
            format!("List<Operand<{ty}>> {var} = in.list(\"{name}\", {ty}.class);"),
            format!("val {var} = inputs.list<{ty}>(\"{name}\")"),
        ));
    }
    // A leafwise inferred list or map: Java declares one element type; the shapes per position
    // (key), which no declaration can state, follow as a comment.
    let tensors = |parts: &mut dyn Iterator<Item = (String, &TypeRef)>| -> Option<(&'static str, String)> {
        let mut dtypes = DTypeSet::of(&[]);
        let mut shapes = Vec::new();
        for (at, p) in parts {
            let t = p.downcast_ref::<TensorConstraint>()?;
            dtypes = dtypes.union(&t.dtypes);
            shapes.push(format!("{at}{}", t.shape.as_ref().map_or("*".to_owned(), Shape::to_string)));
        }
        Some((java_type(&smallest_family(&dtypes)), shapes.join(", ")))
    };
    if let Some(l) = c.downcast_ref::<ListType>() {
        let (ty, shapes) = tensors(&mut l.elements.iter().map(|e| (String::new(), e)))?;
        return Some((
            format!("List<Operand<{ty}>> {var} = in.list(\"{name}\", {ty}.class); // shapes by position: {shapes}"),
            format!("val {var} = inputs.list<{ty}>(\"{name}\") // shapes by position: {shapes}"),
        ));
    }
    if let Some(m) = c.downcast_ref::<MapType>() {
        let (ty, shapes) = tensors(&mut m.entries.iter().map(|(k, v)| (format!("'{k}': "), v)))?;
        return Some((
            format!("Map<String, Operand<{ty}>> {var} = in.map(\"{name}\", {ty}.class); // shapes by key: {shapes}"),
            format!("val {var} = inputs.map<{ty}>(\"{name}\") // shapes by key: {shapes}"),
        ));
    }
    if let Some(m) = c.downcast_ref::<MapConstraint>() {
        let ty = element(&m.value).unwrap_or("TType");
        return Some((
            format!("Map<String, Operand<{ty}>> {var} = in.map(\"{name}\", {ty}.class);"),
            format!("val {var} = inputs.map<{ty}>(\"{name}\")"),
        ));
    }
    None
}

/// A Java identifier for a parameter name (names are any text).
fn identifier(name: &str) -> String {
    let mut id: String = name.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert(0, '_');
    }
    id
}

#[cfg(test)]
#[path = "infer_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "infer_nest_tests.rs"]
mod nest_tests;

#[cfg(test)]
#[path = "infer_lines_tests.rs"]
mod lines_tests;
