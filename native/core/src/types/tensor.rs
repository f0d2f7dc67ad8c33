//! Tensors: the concrete [`TensorSpec`] and the declared [`TensorConstraint`].

use std::fmt;

use crate::dtype::{DType, DTypeSet};
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::shape::Shape;
use crate::trace_type::{TraceType, TypeRef};
use crate::serial::values;
use crate::serial::form::{SerialError, SerialForm};
use crate::serial::registry::Fields;

/// A tensor of one dtype and a (possibly partial) shape, like TF's `TensorSpec`.
///
/// ```
/// use polyfn_core::{DType, Shape, TensorSpec, TraceType};
/// let a = TensorSpec::new(DType::FLOAT, Shape::of(&[2, 3]));
/// assert_eq!(a.to_string(), "TensorSpec(FLOAT, [2, 3])");
/// assert!(a.is_subtype_of(&TensorSpec::new(DType::FLOAT, Shape::of(&[-1, 3]))));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TensorSpec {
    pub dtype: DType,
    pub shape: Shape,
}

impl TensorSpec {
    pub fn new(dtype: DType, shape: Shape) -> Self {
        TensorSpec { dtype, shape }
    }
}

/// What a declared tensor parameter accepts: a dtype family and an optional shape, e.g.
/// `inputs.input("x", TFloating.class, Shape.of(-1))`. `shape: None` means no shape was
/// declared: any shape is accepted and the call's exact shape is traced.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TensorConstraint {
    pub dtypes: DTypeSet,
    pub shape: Option<Shape>,
}

impl TensorConstraint {
    pub fn new(dtypes: DTypeSet, shape: Option<Shape>) -> Self {
        TensorConstraint { dtypes, shape }
    }

    /// For subtyping, "no shape declared" is the top shape.
    fn shape_or_top(&self) -> &Shape {
        self.shape.as_ref().unwrap_or(&Shape::Unknown)
    }
}

impl fmt::Display for TensorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorSpec({}, {})", self.dtype, self.shape)
    }
}

impl fmt::Display for TensorConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TensorSpec(")?;
        match self.dtypes.single() {
            Some(d) => write!(f, "{d}")?,
            None => write!(f, "{}", self.dtypes)?,
        }
        match &self.shape {
            Some(s) => write!(f, ", {s})"),
            None => f.write_str(", *)"),
        }
    }
}

/// Either tensor form seen through the protocol, as (dtypes, shape) for joins.
fn tensor_bounds(t: &dyn TraceType) -> Option<(DTypeSet, Shape)> {
    if let Some(s) = t.as_any().downcast_ref::<TensorSpec>() {
        Some((DTypeSet::of(&[s.dtype]), s.shape.clone()))
    } else {
        t.as_any()
            .downcast_ref::<TensorConstraint>()
            .map(|c| (c.dtypes.clone(), c.shape_or_top().clone()))
    }
}

/// Join of mixed specs/constraints: union of dtypes, join of shapes.
fn constraint_join(first: &dyn TraceType, others: &[&dyn TraceType]) -> Option<TypeRef> {
    let (mut dtypes, mut shape) = tensor_bounds(first)?;
    for o in others {
        let (d, s) = tensor_bounds(*o)?;
        dtypes = dtypes.union(&d);
        shape = shape.most_specific_common_supertype(&[&s]);
    }
    let shape = (shape != Shape::Unknown).then_some(shape);
    Some(TypeRef::new(TensorConstraint::new(dtypes, shape)))
}

impl TraceType for TensorSpec {
    fn kind(&self) -> &'static str {
        "tensor"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if let Some(o) = other.as_any().downcast_ref::<TensorSpec>() {
            self.dtype == o.dtype && self.shape.is_subtype_of(&o.shape)
        } else if let Some(c) = other.as_any().downcast_ref::<TensorConstraint>() {
            c.dtypes.contains(self.dtype) && self.shape.is_subtype_of(c.shape_or_top())
        } else {
            false
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let specs: Option<Vec<&TensorSpec>> = others
            .iter()
            .map(|o| o.as_any().downcast_ref::<TensorSpec>())
            .collect();
        match specs {
            // tf.function never generalizes dtype: differing dtypes have no common supertype.
            Some(specs) => {
                if specs.iter().any(|s| s.dtype != self.dtype) {
                    return None;
                }
                let shapes: Vec<&Shape> = specs.iter().map(|s| &s.shape).collect();
                let shape = self.shape.most_specific_common_supertype(&shapes);
                Some(TypeRef::new(TensorSpec::new(self.dtype, shape)))
            }
            None => constraint_join(self, others),
        }
    }

    fn placeholders(
        &self,
        path: &str,
        _ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        out.push(PlaceholderSpec {
            path: path.to_string(),
            dtype: self.dtype,
            shape: self.shape.clone(),
            alias: None,
        });
    }


    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        let (dtype_ok, dtype_expected, shape) =
            if let Some(o) = traced.as_any().downcast_ref::<TensorSpec>() {
                (self.dtype == o.dtype, o.dtype.to_string(), &o.shape)
            } else if let Some(c) = traced.as_any().downcast_ref::<TensorConstraint>() {
                (
                    c.dtypes.contains(self.dtype),
                    format!("one of {}", c.dtypes),
                    c.shape_or_top(),
                )
            } else {
                return Some(format!("{self} does not match {traced}"));
            };
        let why = if !dtype_ok {
            format!(": dtype {} vs {dtype_expected}", self.dtype)
        } else {
            match self.shape.first_difference(shape) {
                Some(d) if d.starts_with("at ") => format!(" {d}"),
                Some(d) => format!(": {d}"),
                None => String::new(),
            }
        };
        Some(format!("{self} does not match {traced}{why}"))
    }

    fn specialize_for_trace(&self, constraint: &dyn TraceType) -> TypeRef {
        match constraint.as_any().downcast_ref::<TensorConstraint>() {
            Some(TensorConstraint { shape: Some(s), .. }) => {
                TypeRef::new(TensorSpec::new(self.dtype, s.clone()))
            }
            _ => TypeRef::new(self.clone()),
        }
    }

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Ok(SerialForm::new("tensor_spec")
            .field("dtype", values::dtype_json(self.dtype))
            .field("shape", values::shape_json(&self.shape)))
    }

    crate::trace_type_common!();
}

impl TraceType for TensorConstraint {
    fn kind(&self) -> &'static str {
        "tensor"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if let Some(c) = other.as_any().downcast_ref::<TensorConstraint>() {
            self.dtypes.is_subset_of(&c.dtypes)
                && self.shape_or_top().is_subtype_of(c.shape_or_top())
        } else if let Some(s) = other.as_any().downcast_ref::<TensorSpec>() {
            // A single-dtype constraint denotes the same set as a TensorSpec of its shape (no
            // declared shape: any shape, as a spec of unknown rank).
            self.dtypes.single() == Some(s.dtype) && self.shape_or_top().is_subtype_of(&s.shape)
        } else {
            false
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        constraint_join(self, others)
    }

    fn placeholders(
        &self,
        path: &str,
        _ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        // Only meaningful for a single dtype; a family cannot be a graph input on its own.
        if let Some(dtype) = self.dtypes.single() {
            out.push(PlaceholderSpec {
                path: path.to_string(),
                dtype,
                shape: self.shape_or_top().clone(),
                alias: None,
            });
        }
    }


    fn to_json(&self) -> Result<SerialForm, SerialError> {
        let shape = self.shape.as_ref().map_or(serde_json::Value::Null, values::shape_json);
        Ok(SerialForm::new("tensor_constraint")
            .field("dtypes", values::dtypes_json(&self.dtypes))
            .field("shape", shape))
    }

    crate::trace_type_common!();
}

impl TensorSpec {
    /// Decoder of the `tensor_spec` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        Ok(TypeRef::new(TensorSpec::new(f.take_dtype("dtype")?, f.take_shape("shape")?)))
    }
}

impl TensorConstraint {
    /// Decoder of the `tensor_constraint` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        let dtypes = f.take_dtypes("dtypes")?;
        Ok(TypeRef::new(TensorConstraint::new(dtypes, f.take_opt_shape("shape")?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(d: DType, dims: &[i64]) -> TensorSpec {
        TensorSpec::new(d, Shape::of(dims))
    }

    #[test]
    fn display() {
        assert_eq!(
            spec(DType::FLOAT, &[2, 3]).to_string(),
            "TensorSpec(FLOAT, [2, 3])"
        );
        assert_eq!(
            TensorSpec::new(DType::INT32, Shape::Unknown).to_string(),
            "TensorSpec(INT32, <unknown>)"
        );
        let c = TensorConstraint::new(
            DTypeSet::of(&[DType::FLOAT, DType::DOUBLE]),
            Some(Shape::of(&[-1])),
        );
        assert_eq!(c.to_string(), "TensorSpec({FLOAT, DOUBLE}, [-1])");
        let c = TensorConstraint::new(DTypeSet::of(&[DType::FLOAT]), Some(Shape::of(&[-1])));
        assert_eq!(c.to_string(), "TensorSpec(FLOAT, [-1])");
        assert_eq!(
            TensorConstraint::new(DTypeSet::any(), None).to_string(),
            "TensorSpec(any, *)"
        );
    }

    #[test]
    fn spec_subtyping_and_join() {
        let a = spec(DType::FLOAT, &[2]);
        assert!(a.is_subtype_of(&a));
        assert!(a.is_subtype_of(&spec(DType::FLOAT, &[-1])));
        assert!(!a.is_subtype_of(&spec(DType::DOUBLE, &[2])));
        let j = a
            .most_specific_common_supertype(&[&spec(DType::FLOAT, &[3])])
            .unwrap();
        assert_eq!(j, TypeRef::new(spec(DType::FLOAT, &[-1])));
        assert!(a
            .most_specific_common_supertype(&[&spec(DType::INT32, &[2])])
            .is_none());
        assert!(a
            .most_specific_common_supertype(&[&crate::Literal::new(1, "1", "I")])
            .is_none());
    }

    #[test]
    fn constraint_relations() {
        let floats = TensorConstraint::new(DTypeSet::floating(), Some(Shape::of(&[-1])));
        let anything = TensorConstraint::new(DTypeSet::any(), None);
        assert!(spec(DType::FLOAT, &[5]).is_subtype_of(&floats));
        assert!(spec(DType::HALF, &[1]).is_subtype_of(&floats));
        assert!(!spec(DType::INT32, &[5]).is_subtype_of(&floats));
        assert!(!spec(DType::FLOAT, &[5, 1]).is_subtype_of(&floats));
        assert!(spec(DType::INT32, &[5, 1]).is_subtype_of(&anything));
        assert!(floats.is_subtype_of(&anything));
        assert!(!anything.is_subtype_of(&floats));
        let single = TensorConstraint::new(DTypeSet::of(&[DType::FLOAT]), Some(Shape::of(&[2])));
        assert!(single.is_subtype_of(&spec(DType::FLOAT, &[-1])));
        assert!(!floats.is_subtype_of(&spec(DType::FLOAT, &[-1])));
        // mixed join goes through the constraint form
        let j = spec(DType::INT32, &[3])
            .most_specific_common_supertype(&[&floats])
            .unwrap();
        assert!(j.is_subtype_of(&anything) && floats.is_subtype_of(&*j));
    }

    #[test]
    fn explain() {
        let e = |a: TensorSpec, b: &dyn TraceType| a.explain_mismatch(b);
        assert_eq!(
            e(spec(DType::FLOAT, &[3]), &spec(DType::FLOAT, &[2])).unwrap(),
            "TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0"
        );
        assert_eq!(
            e(spec(DType::INT32, &[2]), &spec(DType::FLOAT, &[2])).unwrap(),
            "TensorSpec(INT32, [2]) does not match TensorSpec(FLOAT, [2]): dtype INT32 vs FLOAT"
        );
        assert_eq!(
            e(spec(DType::FLOAT, &[2, 2]), &spec(DType::FLOAT, &[2])).unwrap(),
            "TensorSpec(FLOAT, [2, 2]) does not match TensorSpec(FLOAT, [2]): rank 2 vs 1"
        );
        let floats = TensorConstraint::new(DTypeSet::of(&[DType::FLOAT, DType::DOUBLE]), None);
        assert!(e(spec(DType::INT32, &[2]), &floats)
            .unwrap()
            .contains("dtype INT32 vs one of {FLOAT, DOUBLE}"));
        assert_eq!(
            e(spec(DType::FLOAT, &[2]), &spec(DType::FLOAT, &[-1])),
            None
        );
    }

    #[test]
    fn specialize_and_placeholders() {
        let c = TensorConstraint::new(DTypeSet::floating(), Some(Shape::of(&[-1])));
        let s = spec(DType::FLOAT, &[5]).specialize_for_trace(&c);
        assert_eq!(s, TypeRef::new(spec(DType::FLOAT, &[-1])));
        let c = TensorConstraint::new(DTypeSet::floating(), None);
        assert_eq!(
            spec(DType::FLOAT, &[5]).specialize_for_trace(&c),
            TypeRef::new(spec(DType::FLOAT, &[5]))
        );
        let mut out = Vec::new();
        spec(DType::FLOAT, &[5]).placeholders("x", &mut PlaceholderContext::new(), &mut out);
        assert_eq!(
            out,
            vec![PlaceholderSpec {
                path: "x".into(),
                dtype: DType::FLOAT,
                shape: Shape::of(&[5]),
                alias: None
            }]
        );
    }

    #[test]
    fn a_join_with_a_constraint_declares_a_shape_unless_the_rank_differs() {
        let ints = TensorConstraint::new(DTypeSet::of(&[DType::INT32]), Some(Shape::of(&[-1])));
        let shape = |j: TypeRef| j.downcast_ref::<TensorConstraint>().unwrap().shape.clone();
        let same_rank = spec(DType::FLOAT, &[2]).most_specific_common_supertype(&[&ints]).unwrap();
        assert_eq!(shape(same_rank), Some(Shape::of(&[-1])));
        let other_rank = spec(DType::FLOAT, &[2, 2]).most_specific_common_supertype(&[&ints]).unwrap();
        assert_eq!(shape(other_rank), None, "no shape declared: any shape");
    }

    #[test]
    fn a_constraint_within_another_needs_both_its_dtypes_and_its_shape_within() {
        let c = |d: &[DType], dims: &[i64]| TensorConstraint::new(DTypeSet::of(d), Some(Shape::of(dims)));
        assert!(c(&[DType::FLOAT], &[2]).is_subtype_of(&c(&[DType::FLOAT, DType::DOUBLE], &[-1])));
        assert!(!c(&[DType::INT32], &[2]).is_subtype_of(&c(&[DType::FLOAT], &[-1])), "dtype outside");
        assert!(!c(&[DType::FLOAT], &[3]).is_subtype_of(&c(&[DType::FLOAT], &[2])), "shape outside");
        let joined = c(&[DType::FLOAT], &[2]).most_specific_common_supertype(&[&spec(DType::INT32, &[3])]).unwrap();
        assert_eq!(joined, TypeRef::new(c(&[DType::FLOAT, DType::INT32], &[-1])));
        let mut out = Vec::new();
        c(&[DType::FLOAT], &[-1]).placeholders("x", &mut PlaceholderContext::new(), &mut out);
        c(&[DType::FLOAT, DType::DOUBLE], &[-1]).placeholders("y", &mut PlaceholderContext::new(), &mut out);
        assert_eq!(out.iter().map(|p| (p.path.as_str(), p.dtype)).collect::<Vec<_>>(), [("x", DType::FLOAT)], "a family is no graph input");
    }
}
