//! The constraints a trace declares for its parameters and captures, built from what Java
//! passes, validated here so that a bad declaration fails naming the parameter before anything
//! reaches TensorFlow.

use crate::wire::{MAX_RANK, RANK_UNKNOWN, SHAPE_UNDECLARED};
use crate::binding::BindError;
use crate::dtype::DTypeSet;
use crate::parameter::ParamKind;
use crate::shape::Shape;
use crate::trace_type::TypeRef;
use crate::types::{ListConstraint, LiteralConstraint, MapConstraint, NestConstraint, TensorConstraint, VariableConstraint};

/// The declared shape of parameter `name` from Java's `(rank, dims)`: `None` when the
/// declaration says nothing about the shape ([`SHAPE_UNDECLARED`]), unknown rank for
/// [`RANK_UNKNOWN`], else the dims (each a size, or `-1` for unknown).
///
/// ```
/// use polyfn_core::{declare::declared_shape, Shape};
/// assert_eq!(declared_shape("x", -2, &[]).unwrap(), None);
/// assert_eq!(declared_shape("x", 2, &[-1, 3]).unwrap(), Some(Shape::of(&[-1, 3])));
/// assert!(declared_shape("x", 1, &[-5]).unwrap_err().to_string().starts_with("x: "));
/// ```
pub fn declared_shape(name: &str, rank: i64, dims: &[i64]) -> Result<Option<Shape>, BindError> {
    let invalid = |reason: String| BindError::InvalidShape { path: name.to_owned(), reason };
    match rank {
        SHAPE_UNDECLARED => Ok(None),
        RANK_UNKNOWN => Ok(Some(Shape::Unknown)),
        r if r > MAX_RANK as i64 => Err(invalid(crate::shape::rank_error(r as usize))),
        r if r >= 0 && r as u64 == dims.len() as u64 => Shape::from_wire_dims(dims).map(Some).map_err(invalid),
        r => Err(invalid(format!("declared rank {r} does not match {} dims", dims.len()))),
    }
}

/// The declared constraint of parameter `name`: element dtypes and shape for tensors, lists and
/// maps of tensors, the value class for Java values, the dtypes for variables.
pub fn declared_constraint(
    name: &str,
    kind: ParamKind,
    dtypes: DTypeSet,
    shape: Option<Shape>,
    java_class: String,
) -> Result<TypeRef, BindError> {
    if let Some(shape) = &shape {
        shape.validate().map_err(|reason| BindError::InvalidShape { path: name.to_owned(), reason })?;
    }
    let tensor = || TypeRef::new(TensorConstraint { dtypes: dtypes.clone(), shape: shape.clone() });
    Ok(match kind {
        ParamKind::Tensor => tensor(),
        ParamKind::List => TypeRef::new(ListConstraint::new(Some(tensor()), None)),
        ParamKind::Map => TypeRef::new(MapConstraint::new(Some(tensor()))),
        ParamKind::Java => TypeRef::new(LiteralConstraint::new(java_class)),
        ParamKind::Variable => TypeRef::new(VariableConstraint::new(dtypes)),
        ParamKind::Nest => TypeRef::new(NestConstraint),
    })
}

/// The constraint of a capture: any value of its kind, since the captured value's type is part
/// of each call's signature (a different value retraces rather than fails).
pub fn capture_constraint(variable: bool) -> TypeRef {
    if variable {
        TypeRef::new(VariableConstraint::new(DTypeSet::any()))
    } else {
        TypeRef::new(TensorConstraint { dtypes: DTypeSet::any(), shape: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, TensorSpec, TraceType, VariableSpec};

    fn floats() -> DTypeSet {
        DTypeSet::of(&[DType::FLOAT])
    }

    #[test]
    fn a_negative_dim_other_than_minus_one_is_rejected_naming_the_parameter() {
        let e = declared_shape("x", 1, &[-5]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x: shape [-5] has dimension -5 at index 0; a dimension is a size >= 0, or -1 for unknown"
        );
        assert!(matches!(e, BindError::InvalidShape { ref path, .. } if path == "x"));
        assert!(declared_shape("y", 2, &[3, -2]).unwrap_err().to_string().contains("-2 at index 1"));
        assert!(declared_shape("x", -3, &[]).is_err());
        assert!(declared_shape("x", 2, &[1]).is_err());
        assert_eq!(declared_shape("x", -1, &[]).unwrap(), Some(Shape::Unknown));
        assert_eq!(declared_shape("x", 0, &[]).unwrap(), Some(Shape::scalar()));
    }

    #[test]
    fn a_declared_vector_of_unknown_length_admits_every_vector_and_nothing_else() {
        let shape = declared_shape("x", 1, &[-1]).unwrap();
        let c = declared_constraint("x", ParamKind::Tensor, floats(), shape, String::new()).unwrap();
        let t = |d: &[i64]| TensorSpec::new(DType::FLOAT, Shape::of(d));
        assert!(t(&[3]).is_subtype_of(&*c) && t(&[0]).is_subtype_of(&*c));
        assert!(!t(&[3, 1]).is_subtype_of(&*c));
        assert!(!TensorSpec::new(DType::INT32, Shape::of(&[3])).is_subtype_of(&*c));
    }

    #[test]
    fn shapes_beyond_tensorflow_limits_are_rejected_naming_the_parameter() {
        assert!(declared_shape("x", 254, &[1; 254]).unwrap().is_some(), "254 dims is TensorFlow's limit");
        let e = declared_shape("x", 300, &[1; 300]).unwrap_err();
        assert_eq!(e.to_string(), "x: shape of rank 300 exceeds TensorFlow's limit of 254 dimensions");
        let huge = declared_shape("x", 3, &[i64::MAX, i64::MAX, 4]).unwrap();
        let e = declared_constraint("x", ParamKind::List, floats(), huge, String::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x: shape [9223372036854775807, 9223372036854775807, 4] has more elements than fit in a 64-bit count"
        );
        let e = declared_constraint("y", ParamKind::Tensor, floats(), Some(Shape::of(&[1; 255])), String::new());
        assert!(e.unwrap_err().to_string().starts_with("y: shape of rank 255"));
    }

    #[test]
    fn constraints_by_kind() {
        let c = |kind| declared_constraint("p", kind, floats(), None, "java.lang.Integer".into()).unwrap().to_string();
        assert!(c(ParamKind::Tensor).contains("FLOAT"), "{}", c(ParamKind::Tensor));
        assert!(c(ParamKind::List).starts_with("List"), "{}", c(ParamKind::List));
        assert!(c(ParamKind::Map).starts_with("Map"), "{}", c(ParamKind::Map));
        assert!(c(ParamKind::Java).contains("java.lang.Integer"), "{}", c(ParamKind::Java));
        assert!(c(ParamKind::Variable).starts_with("Variable"), "{}", c(ParamKind::Variable));
    }

    #[test]
    fn captures_accept_any_value_of_their_kind() {
        let v = VariableSpec::new(DType::INT64, Shape::of(&[4]), 0);
        assert!(v.is_subtype_of(&*capture_constraint(true)));
        let t = TensorSpec::new(DType::DOUBLE, Shape::Unknown);
        assert!(t.is_subtype_of(&*capture_constraint(false)));
        assert!(!t.is_subtype_of(&*capture_constraint(true)));
        assert!(!v.is_subtype_of(&*capture_constraint(false)));
    }
}
