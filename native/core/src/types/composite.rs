//! Composite tensors: a value made of several tensors (a sparse tensor's indices, values and
//! dense shape; a ragged tensor's values and row splits), typed as one [`CompositeType`].
//!
//! The type is declarative, so its subtype and join rules follow from the lattice of shapes and
//! no user code runs in dispatch: a composite kind (its `name`, and an optional Java value
//! `metadata` compared by `equals`) fixes what is compared exactly; the values' `dtype` and a
//! static `shape` (a sparse tensor's dense shape) generalize dim by dim as a tensor's shape does;
//! each component is a [`TensorSpec`] (its dims as specific as the kind wants them in the
//! signature: a ragged tensor's value count and row count, but not a sparse tensor's number of
//! non-zeros) and becomes one graph input.

use std::fmt;

use crate::serial::values;
use crate::serial::form::{SerialError, SerialForm};
use crate::serial::registry::{encode_type, Fields};
use crate::dtype::DType;
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::shape::Shape;
use crate::trace_type::{TraceType, TypeRef};
use serde_json::json;

/// A composite value's type: kind, values dtype, static shape, metadata, component specs.
///
/// ```
/// use polyfn_core::{CompositeType, DType, Shape, TensorSpec, TypeRef};
/// let spec = |d, dims: &[i64]| TypeRef::new(TensorSpec::new(d, Shape::of(dims)));
/// let s = CompositeType::new("SparseTensor", DType::FLOAT, Shape::of(&[3, 4]), None,
///     vec![("indices".into(), spec(DType::INT64, &[-1, 2])), ("values".into(), spec(DType::FLOAT, &[-1])),
///          ("dense_shape".into(), spec(DType::INT64, &[2]))]);
/// assert_eq!(s.to_string(), "SparseTensor(FLOAT, [3, 4]; indices: [-1, 2], values: [-1], dense_shape: [2])");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct CompositeType {
    pub name: String,
    pub dtype: DType,
    pub shape: Shape,
    /// A Java value of the kind's choosing (a [`crate::Literal`]), compared exactly.
    pub metadata: Option<TypeRef>,
    /// The component tensors' specs, named, in the order they are fed.
    pub components: Vec<(String, TypeRef)>,
}

impl CompositeType {
    pub fn new(
        name: impl Into<String>,
        dtype: DType,
        shape: Shape,
        metadata: Option<TypeRef>,
        components: Vec<(String, TypeRef)>,
    ) -> Self {
        CompositeType { name: name.into(), dtype, shape, metadata, components }
    }

    fn same_kind(&self, o: &CompositeType) -> bool {
        self.name == o.name
            && self.dtype == o.dtype
            && self.metadata == o.metadata
            && self.components.len() == o.components.len()
            && self.components.iter().zip(&o.components).all(|((a, _), (b, _))| a == b)
    }
}

impl fmt::Display for CompositeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}, {}", self.name, self.dtype, self.shape)?;
        if let Some(m) = &self.metadata {
            write!(f, ", {m}")?;
        }
        for (i, (name, t)) in self.components.iter().enumerate() {
            let dims = t.downcast_ref::<super::tensor::TensorSpec>().map_or_else(|| t.to_string(), |s| s.shape.to_string());
            write!(f, "{}{name}: {dims}", if i == 0 { "; " } else { ", " })?;
        }
        f.write_str(")")
    }
}

impl TraceType for CompositeType {
    fn kind(&self) -> &'static str {
        "composite"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if other.as_any().is::<super::record::NestConstraint>() {
            return true;
        }
        let Some(o) = other.as_any().downcast_ref::<CompositeType>() else {
            return false;
        };
        self.same_kind(o)
            && self.shape.is_subtype_of(&o.shape)
            && self.components.iter().zip(&o.components).all(|((_, a), (_, b))| a.is_subtype_of(&**b))
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let Some(all) = others.iter().map(|o| o.as_any().downcast_ref::<CompositeType>()).collect::<Option<Vec<_>>>()
        else {
            return super::join_by_constraint::<super::record::NestConstraint>(self, others);
        };
        if !all.iter().all(|o| self.same_kind(o)) {
            return None;
        }
        let shapes: Vec<&Shape> = all.iter().map(|o| &o.shape).collect();
        let shape = self.shape.most_specific_common_supertype(&shapes);
        let components = self
            .components
            .iter()
            .enumerate()
            .map(|(i, (n, t))| {
                let rest: Vec<&dyn TraceType> = all.iter().map(|o| o.components[i].1.as_dyn()).collect();
                t.most_specific_common_supertype(&rest).map(|j| (n.clone(), j))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(TypeRef::new(CompositeType { shape, components, ..self.clone() }))
    }

    fn placeholders(&self, path: &str, ctx: &mut PlaceholderContext, out: &mut Vec<PlaceholderSpec>) {
        ctx.record_composite_shape(self.shape.clone());
        for (name, t) in &self.components {
            t.placeholders(&format!("{path}.{name}"), ctx, out);
        }
    }

    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        if let Some(o) = traced.as_any().downcast_ref::<CompositeType>() {
            if self.same_kind(o) && !self.shape.is_subtype_of(&o.shape) {
                return Some(format!("{self} does not match {traced}: shape {} is not within {}", self.shape, o.shape));
            }
        }
        Some(format!("{self} does not match {traced}"))
    }

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        let names: Vec<&str> = self.components.iter().map(|(n, _)| n.as_str()).collect();
        let types = self.components.iter().map(|(_, t)| encode_type(&**t)).collect::<Result<Vec<_>, _>>()?;
        let metadata = self.metadata.as_ref().map(|m| encode_type(&**m)).transpose()?;
        Ok(SerialForm::new("composite")
            .field("name", json!(self.name))
            .field("dtype", values::dtype_json(self.dtype))
            .field("shape", values::shape_json(&self.shape))
            .field("metadata", json!(metadata))
            .field("component_names", json!(names))
            .field("components", serde_json::Value::Array(types)))
    }

    crate::trace_type_common!();
}

impl CompositeType {
    /// Decoder of the `composite` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        let name: String = f.take("name")?;
        let dtype = f.take_dtype("dtype")?;
        let shape = f.take_shape("shape")?;
        let metadata = f.take_opt_type("metadata")?;
        let names: Vec<String> = f.take("component_names")?;
        let types = f.take_types("components")?;
        if names.len() != types.len() {
            return Err(f.invalid("components", format!("expected {} types, one per name, got {}", names.len(), types.len())));
        }
        Ok(TypeRef::new(CompositeType::new(name, dtype, shape, metadata, names.into_iter().zip(types).collect())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TensorSpec;

    fn ragged(nvals: i64, nrows: i64) -> CompositeType {
        let spec = |d, dims: &[i64]| TypeRef::new(TensorSpec::new(d, Shape::of(dims)));
        CompositeType::new(
            "Ragged",
            DType::FLOAT,
            Shape::of(&[nrows, -1]),
            None,
            vec![("values".into(), spec(DType::FLOAT, &[nvals])), ("row_splits".into(), spec(DType::INT64, &[nrows + 1]))],
        )
    }

    #[test]
    fn components_and_shape_generalize_independently() {
        let j = ragged(5, 2).most_specific_common_supertype(&[&ragged(7, 2)]).unwrap();
        assert_eq!(j.to_string(), "Ragged(FLOAT, [2, -1]; values: [-1], row_splits: [3])");
        let j = ragged(5, 2).most_specific_common_supertype(&[&ragged(5, 3)]).unwrap();
        assert_eq!(j.to_string(), "Ragged(FLOAT, [-1, -1]; values: [5], row_splits: [-1])");
        assert!(ragged(5, 3).is_subtype_of(&*j) && !ragged(6, 3).is_subtype_of(&*j));
        let other = CompositeType { name: "Other".into(), ..ragged(5, 2) };
        assert!(ragged(5, 2).most_specific_common_supertype(&[&other]).is_none());
        let mut out = Vec::new();
        ragged(5, 2).placeholders("r", &mut PlaceholderContext::new(), &mut out);
        assert_eq!(out.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["r.values", "r.row_splits"]);
    }

    /// Java builds the view of a traced composite from its traced static shape, so placeholders
    /// record it, generalized dims included.
    #[test]
    fn placeholders_record_the_traced_static_shape() {
        let j = ragged(5, 2).most_specific_common_supertype(&[&ragged(5, 3)]).unwrap();
        let list = crate::ListType::new(vec![TypeRef::new(ragged(5, 2)), j]);
        let mut ctx = PlaceholderContext::new();
        list.placeholders("xs", &mut ctx, &mut Vec::new());
        assert_eq!(ctx.take_composite_shapes(), [Shape::of(&[2, -1]), Shape::of(&[-1, -1])]);
        assert!(ctx.take_composite_shapes().is_empty(), "taken once");
    }

    /// The kind names composites in messages, such as why two examples are traced apart.
    #[test]
    fn differing_composites_inside_a_list_are_traced_one_per_example() {
        assert_eq!(ragged(2, 1).kind(), "composite");
        let list = |c: CompositeType| TypeRef::new(crate::ListType::new(vec![TypeRef::new(c)]));
        let crate::infer::Coalesced::PerExample(why) = crate::infer::coalesce("xs", &[list(ragged(2, 1)), list(ragged(3, 1))]) else {
            panic!("not traced per example")
        };
        assert_eq!(why, "xs[0]: differing composite values are traced one per example");
    }

    #[test]
    fn a_mismatch_names_the_shape_when_only_the_shape_does_not_fit() {
        assert_eq!(ragged(5, 2).explain_mismatch(&ragged(5, 2)), None);
        let general = ragged(5, 2).most_specific_common_supertype(&[&ragged(7, 2)]).unwrap();
        assert_eq!(ragged(6, 2).explain_mismatch(&*general), None);
        assert_eq!(
            ragged(5, 3).explain_mismatch(&*general).unwrap(),
            "Ragged(FLOAT, [3, -1]; values: [5], row_splits: [4]) does not match \
             Ragged(FLOAT, [2, -1]; values: [-1], row_splits: [3]): shape [3, -1] is not within [2, -1]"
        );
        // Same shape, other components: no shape to blame.
        assert_eq!(
            ragged(5, 2).explain_mismatch(&ragged(6, 2)).unwrap(),
            "Ragged(FLOAT, [2, -1]; values: [5], row_splits: [3]) does not match Ragged(FLOAT, [2, -1]; values: [6], row_splits: [3])"
        );
        // Another kind of composite: not compared part by part.
        let other = CompositeType { name: "Other".into(), shape: Shape::of(&[9]), ..ragged(5, 2) };
        assert!(!ragged(5, 2).explain_mismatch(&other).unwrap().contains("shape"));
    }
}
