//! Signatures inferred from examples: the types of several example arguments of one parameter
//! coalesced into one constraint (the most specific one that admits them all, within the
//! lattice), merged with what the body declares, and remembered with where it came from.
//!
//! Tensors coalesce to the join of their shapes (`[2, 3]`, `[5, 3]` → `[-1, 3]`) and to the
//! smallest dtype family holding their dtypes (FLOAT + DOUBLE → floating). Lists and maps
//! coalesce element by element when every example has the same length or key set. Java values
//! and differing structures are not generalized: each keeps its own trace.

use std::fmt;

use crate::{
    BindError, DType, DTypeSet, ListConstraint, ListType, Literal, MapConstraint, MapType, Shape, TensorConstraint,
    TensorSpec, TypeRef,
};

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
    if let Some(specs) = all::<TensorSpec>(examples) {
        return Coalesced::Constraint(TypeRef::new(tensor_join(specs.iter().copied())));
    }
    if let Some(lists) = all::<ListType>(examples) {
        let lengths: std::collections::BTreeSet<usize> = lists.iter().map(|l| l.elements.len()).collect();
        if lengths.len() > 1 {
            let lengths: Vec<String> = lengths.iter().map(usize::to_string).collect();
            return Coalesced::PerExample(format!(
                "{name}: lists of lengths {} are traced one per length (pass one stacked tensor to share a trace)",
                lengths.join(", ")
            ));
        }
        let elements = lists.iter().flat_map(|l| l.elements.iter());
        return match leaves(name, elements) {
            Ok(Some(element)) => Coalesced::Constraint(TypeRef::new(ListConstraint::new(Some(element), Some(lengths.into_iter().next().unwrap_or(0))))),
            Ok(None) => Coalesced::Unchanged,
            Err(why) => Coalesced::PerExample(why),
        };
    }
    if let Some(maps) = all::<MapType>(examples) {
        if maps.iter().any(|m| !m.entries.keys().eq(maps[0].entries.keys())) {
            return Coalesced::PerExample(format!("{name}: maps with different key sets are traced one per key set"));
        }
        return match leaves(name, maps.iter().flat_map(|m| m.entries.values())) {
            Ok(Some(value)) => Coalesced::Constraint(TypeRef::new(MapConstraint::new(Some(value)))),
            Ok(None) => Coalesced::Unchanged,
            Err(why) => Coalesced::PerExample(why),
        };
    }
    if let Some(literals) = all::<Literal>(examples) {
        let mut values: Vec<&str> = literals.iter().map(|l| l.repr.as_str()).collect();
        values.dedup();
        if literals.iter().all(|l| l.id == literals[0].id) {
            return Coalesced::Unchanged;
        }
        return Coalesced::PerExample(format!(
            "{name}: Java values {} are traced one per value; pass {name} as a tensor to share one trace",
            values.join(", ")
        ));
    }
    if examples.iter().all(|e| e.kind() == first.kind()) {
        return Coalesced::Unchanged;
    }
    Coalesced::PerExample(format!("{name}: examples of different kinds are traced one per kind"))
}

/// The downcasts of every example, if all are `T`.
fn all<T: crate::TraceType>(examples: &[TypeRef]) -> Option<Vec<&T>> {
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

/// The element constraint of list elements or map values (tensors): `None` when there are none.
fn leaves<'a>(name: &str, values: impl Iterator<Item = &'a TypeRef>) -> Result<Option<TypeRef>, String> {
    let values: Vec<&TypeRef> = values.collect();
    if values.is_empty() {
        return Ok(None);
    }
    let specs: Option<Vec<&TensorSpec>> = values.iter().map(|v| v.downcast_ref::<TensorSpec>()).collect();
    match specs {
        Some(specs) => Ok(Some(TypeRef::new(tensor_join(specs.into_iter())))),
        None => Err(format!("{name}: elements that are not tensors are traced one per example")),
    }
}

/// The constraint of parameter `name` when the body declares `declared` and `inferred` was
/// inferred (from `source`): the narrower of the two, part by part (dtypes: those in both;
/// shape: the more specific). Two that are not comparable conflict: an error naming the
/// parameter and both types.
pub fn merge_declared(name: &str, declared: &TypeRef, inferred: &TypeRef, source: &Provenance) -> Result<TypeRef, BindError> {
    let conflict = || BindError::Conflict {
        param: name.to_owned(),
        declared: declared.to_string(),
        inferred: format!("{inferred} ({source})"),
    };
    if let (Some(d), Some(i)) = (declared.downcast_ref::<TensorConstraint>(), inferred.downcast_ref::<TensorConstraint>()) {
        return merge_tensor(d, i).map(TypeRef::new).ok_or_else(conflict);
    }
    if let (Some(d), Some(i)) = (declared.downcast_ref::<ListConstraint>(), inferred.downcast_ref::<ListConstraint>()) {
        let element = merge_element(&d.element, &i.element).ok_or_else(conflict)?;
        let length = match (d.length, i.length) {
            (Some(a), Some(b)) if a != b => return Err(conflict()),
            (a, b) => a.or(b),
        };
        return Ok(TypeRef::new(ListConstraint::new(element, length)));
    }
    if let (Some(d), Some(i)) = (declared.downcast_ref::<MapConstraint>(), inferred.downcast_ref::<MapConstraint>()) {
        let value = merge_element(&d.value, &i.value).ok_or_else(conflict)?;
        return Ok(TypeRef::new(MapConstraint::new(value)));
    }
    // Other kinds (Java values, variables) are never inferred: the declaration stands.
    Ok(declared.clone())
}

fn merge_element(declared: &Option<TypeRef>, inferred: &Option<TypeRef>) -> Option<Option<TypeRef>> {
    match (declared, inferred) {
        (Some(d), Some(i)) => {
            let (d, i) = (d.downcast_ref::<TensorConstraint>()?, i.downcast_ref::<TensorConstraint>()?);
            Some(Some(TypeRef::new(merge_tensor(d, i)?)))
        }
        (d, i) => Some(d.clone().or_else(|| i.clone())),
    }
}

fn merge_tensor(declared: &TensorConstraint, inferred: &TensorConstraint) -> Option<TensorConstraint> {
    let dtypes = declared.dtypes.intersection(&inferred.dtypes);
    if dtypes.is_empty() {
        return None;
    }
    let shape = match (&declared.shape, &inferred.shape) {
        (Some(d), Some(i)) if d.is_subtype_of(i) => Some(d.clone()),
        (Some(d), Some(i)) if i.is_subtype_of(d) => Some(i.clone()),
        (Some(_), Some(_)) => return None,
        (d, i) => d.clone().or_else(|| i.clone()),
    };
    Some(TensorConstraint::new(dtypes, shape))
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
