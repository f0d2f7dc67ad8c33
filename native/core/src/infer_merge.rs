//! Combining what the body declares with what examples (or a profile) inferred: the meet of the
//! two, part by part. The declaration wins where it is narrower (its dtypes, its known dims), the
//! examples give the rest; only parts with nothing in common conflict. [`narrow`] does the same
//! for one example's type, so that an example wider than the declaration (a `TensorSpec` with an
//! unknown dim) is traced as the declaration allows, and one outside it is left out.

use super::Provenance;
use crate::binding::BindError;
use crate::shape::Shape;
use crate::trace_type::TypeRef;
use crate::types::{ListConstraint, ListType, MapConstraint, MapType, RecordType, TensorConstraint, TensorSpec};

/// The constraint of parameter `name` when the body declares `declared` and `inferred` was
/// inferred (from `source`): their meet, part by part (dtypes: those in both; shapes: dim by
/// dim, a known dim winning over an unknown one). Two with no common type conflict: an error
/// naming the parameter and both types.
pub fn merge_declared(name: &str, declared: &TypeRef, inferred: &TypeRef, source: &Provenance) -> Result<TypeRef, BindError> {
    let inferable = inferred.downcast_ref::<TensorConstraint>().is_some()
        || inferred.downcast_ref::<ListConstraint>().is_some()
        || inferred.downcast_ref::<MapConstraint>().is_some()
        || inferred.downcast_ref::<ListType>().is_some()
        || inferred.downcast_ref::<MapType>().is_some()
        || inferred.downcast_ref::<RecordType>().is_some();
    if !inferable {
        // Other kinds (Java values, variables) are never inferred: the declaration stands.
        return Ok(declared.clone());
    }
    merge_part(declared, inferred).ok_or_else(|| BindError::Conflict {
        param: name.to_owned(),
        declared: declared.to_string(),
        inferred: format!("{inferred} ({source})"),
    })
}

/// The meet of a declared and an inferred type, part by part; `None` if they have nothing in
/// common. A leafwise inferred list (map, record) meets the body's one element (value)
/// constraint at every position (key).
fn merge_part(declared: &TypeRef, inferred: &TypeRef) -> Option<TypeRef> {
    let each = |d: &Option<TypeRef>, i: &TypeRef| match d {
        Some(d) => merge_part(d, i),
        None => Some(i.clone()),
    };
    if let (Some(d), Some(i)) = (declared.downcast_ref::<TensorConstraint>(), inferred.downcast_ref::<TensorConstraint>()) {
        return merge_tensor(d, i).map(TypeRef::new);
    }
    if let (Some(d), Some(i)) = (declared.downcast_ref::<ListConstraint>(), inferred.downcast_ref::<ListType>()) {
        if d.length.is_some_and(|n| n != i.elements.len()) {
            return None;
        }
        let elements = i.elements.iter().map(|e| each(&d.element, e)).collect::<Option<Vec<_>>>()?;
        return Some(TypeRef::new(ListType::new(elements)));
    }
    if let (Some(d), Some(i)) = (declared.downcast_ref::<MapConstraint>(), inferred.downcast_ref::<MapType>()) {
        let entries = i.entries.iter().map(|(k, v)| Some((k.clone(), each(&d.value, v)?))).collect::<Option<_>>()?;
        return Some(TypeRef::new(MapType::new(entries)));
    }
    if let (Some(d), Some(i)) = (declared.downcast_ref::<ListConstraint>(), inferred.downcast_ref::<ListConstraint>()) {
        let element = match (&d.element, &i.element) {
            (Some(de), Some(ie)) => Some(merge_part(de, ie)?),
            (de, ie) => de.clone().or_else(|| ie.clone()),
        };
        let length = match (d.length, i.length) {
            (Some(a), Some(b)) if a != b => return None,
            (a, b) => a.or(b),
        };
        return Some(TypeRef::new(ListConstraint::new(element, length)));
    }
    if let (Some(d), Some(i)) = (declared.downcast_ref::<MapConstraint>(), inferred.downcast_ref::<MapConstraint>()) {
        let value = match (&d.value, &i.value) {
            (Some(dv), Some(iv)) => Some(merge_part(dv, iv)?),
            (dv, iv) => dv.clone().or_else(|| iv.clone()),
        };
        return Some(TypeRef::new(MapConstraint::new(value)));
    }
    // Anything else (a Java value inside a list, say): the narrower of the two, if one is.
    if inferred.is_subtype_of(&**declared) {
        Some(inferred.clone())
    } else if declared.is_subtype_of(&**inferred) {
        Some(declared.clone())
    } else {
        None
    }
}

fn merge_tensor(declared: &TensorConstraint, inferred: &TensorConstraint) -> Option<TensorConstraint> {
    let dtypes = declared.dtypes.intersection(&inferred.dtypes);
    if dtypes.is_empty() {
        return None;
    }
    let shape = match (&declared.shape, &inferred.shape) {
        (Some(d), Some(i)) => Some(shape_meet(d, i)?),
        (d, i) => d.clone().or_else(|| i.clone()),
    };
    Some(TensorConstraint::new(dtypes, shape))
}

/// The most general shape below both `a` and `b`, dim by dim (a known dim wins over an unknown
/// one); `None` if their ranks or a known dim differ.
///
/// ```
/// use polyfn_core::{infer::shape_meet, Shape};
/// assert_eq!(shape_meet(&Shape::of(&[4, -1]), &Shape::of(&[-1, 3])), Some(Shape::of(&[4, 3])));
/// assert_eq!(shape_meet(&Shape::Unknown, &Shape::of(&[2])), Some(Shape::of(&[2])));
/// assert_eq!(shape_meet(&Shape::of(&[4, 3]), &Shape::of(&[5, 3])), None);
/// assert_eq!(shape_meet(&Shape::of(&[-1, -1]), &Shape::of(&[2, 3, 4])), None);
/// ```
pub fn shape_meet(a: &Shape, b: &Shape) -> Option<Shape> {
    match (a, b) {
        (Shape::Unknown, s) | (s, Shape::Unknown) => Some(s.clone()),
        (Shape::Known(x), Shape::Known(y)) if x.len() != y.len() => None,
        (Shape::Known(x), Shape::Known(y)) => x
            .iter()
            .zip(y)
            .map(|(p, q)| match (p, q) {
                (Some(p), Some(q)) if p != q => None,
                (p, q) => Some(p.or(*q)),
            })
            .collect::<Option<Vec<_>>>()
            .map(Shape::Known),
    }
}

/// An example's type `value` narrowed to `constraint`: itself when the constraint admits it,
/// else its meet with the constraint (a `TensorSpec` of shape `[-1, 3]` under a declared
/// `[4, 3]` is `[4, 3]`), part by part; `None` when the example is outside the constraint (its
/// dtype is not admitted, a known dim or rank differs, a list length or record class differs).
pub fn narrow(value: &TypeRef, constraint: &TypeRef) -> Option<TypeRef> {
    if value.is_subtype_of(&**constraint) {
        return Some(value.clone());
    }
    let each = |c: &Option<TypeRef>, v: &TypeRef| match c {
        Some(c) => narrow(v, c),
        None => Some(v.clone()),
    };
    if let Some(v) = value.downcast_ref::<TensorSpec>() {
        let (admitted, shape) = if let Some(c) = constraint.downcast_ref::<TensorConstraint>() {
            (c.dtypes.contains(v.dtype), c.shape.as_ref())
        } else if let Some(c) = constraint.downcast_ref::<TensorSpec>() {
            (c.dtype == v.dtype, Some(&c.shape))
        } else {
            (false, None)
        };
        if !admitted {
            return None;
        }
        let shape = match shape {
            Some(s) => shape_meet(&v.shape, s)?,
            None => v.shape.clone(),
        };
        return Some(TypeRef::new(TensorSpec::new(v.dtype, shape)));
    }
    if let Some(v) = value.downcast_ref::<ListType>() {
        let elements: Option<Vec<TypeRef>> = if let Some(c) = constraint.downcast_ref::<ListType>() {
            if c.elements.len() != v.elements.len() {
                return None;
            }
            v.elements.iter().zip(&c.elements).map(|(v, c)| narrow(v, c)).collect()
        } else if let Some(c) = constraint.downcast_ref::<ListConstraint>() {
            if c.length.is_some_and(|n| n != v.elements.len()) {
                return None;
            }
            v.elements.iter().map(|v| each(&c.element, v)).collect()
        } else {
            None
        };
        return elements.map(|e| TypeRef::new(ListType::new(e)));
    }
    if let Some(v) = value.downcast_ref::<MapType>() {
        let entries = if let Some(c) = constraint.downcast_ref::<MapType>() {
            if !v.entries.keys().eq(c.entries.keys()) {
                return None;
            }
            v.entries.iter().zip(c.entries.values()).map(|((k, v), c)| Some((k.clone(), narrow(v, c)?))).collect()
        } else if let Some(c) = constraint.downcast_ref::<MapConstraint>() {
            v.entries.iter().map(|(k, v)| Some((k.clone(), each(&c.value, v)?))).collect()
        } else {
            None
        };
        return entries.map(|e| TypeRef::new(MapType::new(e)));
    }
    if let (Some(v), Some(c)) = (value.downcast_ref::<RecordType>(), constraint.downcast_ref::<RecordType>()) {
        if v.class_name != c.class_name || !v.fields.iter().map(|f| &f.0).eq(c.fields.iter().map(|f| &f.0)) {
            return None;
        }
        let fields = v.fields.iter().zip(&c.fields).map(|((n, v), (_, c))| Some((n.clone(), narrow(v, c)?))).collect::<Option<_>>()?;
        return Some(TypeRef::new(RecordType::new(v.class_name.clone(), fields)));
    }
    None
}

#[cfg(test)]
#[path = "infer_merge_tests.rs"]
mod tests;
