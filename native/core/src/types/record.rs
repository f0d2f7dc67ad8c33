//! Records: a Java record (or Kotlin `@JvmRecord` data class) argument as a [`RecordType`], and
//! [`NestConstraint`], what a declared nested parameter accepts.
//!
//! A record is a product of named components in declaration order, identified by its class: two
//! records are comparable only when they are of the same class, and then component by component
//! (covariant), like a tuple with names. Its components may be tensors, Java values, lists, maps or
//! other records.

use std::fmt;

use crate::serial::form::{SerialError, SerialForm};
use crate::serial::registry::{encode_type, Fields};
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::trace_type::{TraceType, TypeRef};
use super::list::ListType;
use super::literal::Literal;
use super::map::MapType;
use super::tensor::TensorSpec;
use serde_json::json;

/// A record of a given class, its components' names and types in declaration order.
///
/// ```
/// use polyfn_core::{DType, RecordType, Shape, TensorSpec, TypeRef};
/// let t = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])));
/// let r = RecordType::new("com.acme.Batch", vec![("features".into(), t)]);
/// assert_eq!(r.to_string(), "Batch(features: TensorSpec(FLOAT, [2]))");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct RecordType {
    /// The record's binary class name (`com.acme.Model$Batch`).
    pub class_name: String,
    pub fields: Vec<(String, TypeRef)>,
}

impl RecordType {
    pub fn new(class_name: impl Into<String>, fields: Vec<(String, TypeRef)>) -> Self {
        RecordType { class_name: class_name.into(), fields }
    }

    /// The class name without its package or enclosing classes, for messages.
    pub fn simple_name(&self) -> &str {
        self.class_name.rsplit(['.', '$']).next().unwrap_or(&self.class_name)
    }

    fn same_structure(&self, o: &RecordType) -> bool {
        self.class_name == o.class_name
            && self.fields.len() == o.fields.len()
            && self.fields.iter().zip(&o.fields).all(|((a, _), (b, _))| a == b)
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.simple_name())?;
        for (i, (name, t)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name}: {t}")?;
        }
        f.write_str(")")
    }
}

impl TraceType for RecordType {
    fn kind(&self) -> &'static str {
        "record"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if let Some(o) = other.as_any().downcast_ref::<RecordType>() {
            self.same_structure(o) && self.fields.iter().zip(&o.fields).all(|((_, a), (_, b))| a.is_subtype_of(&**b))
        } else if other.as_any().is::<NestConstraint>() {
            self.fields.iter().all(|(_, t)| NestConstraint::admits(t, other))
        } else {
            false
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let Some(records) = others.iter().map(|o| o.as_any().downcast_ref::<RecordType>()).collect::<Option<Vec<_>>>()
        else {
            return super::join_by_constraint::<NestConstraint>(self, others);
        };
        if !records.iter().all(|r| self.same_structure(r)) {
            return None;
        }
        let fields = self
            .fields
            .iter()
            .enumerate()
            .map(|(i, (name, t))| {
                let rest: Vec<&dyn TraceType> = records.iter().map(|r| r.fields[i].1.as_dyn()).collect();
                t.most_specific_common_supertype(&rest).map(|j| (name.clone(), j))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(TypeRef::new(RecordType::new(self.class_name.clone(), fields)))
    }

    fn placeholders(&self, path: &str, ctx: &mut PlaceholderContext, out: &mut Vec<PlaceholderSpec>) {
        for (name, t) in &self.fields {
            t.placeholders(&format!("{path}.{name}"), ctx, out);
        }
    }

    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        if let Some(o) = traced.as_any().downcast_ref::<RecordType>() {
            if !self.same_structure(o) {
                return Some(format!("{self} does not match {traced}: another record class or components"));
            }
            let (name, why) =
                self.fields.iter().zip(&o.fields).find_map(|((n, a), (_, b))| a.explain_mismatch(&**b).map(|w| (n, w)))?;
            return Some(format!("component '{name}': {why}"));
        }
        Some(format!("{self} does not match {traced}"))
    }

    fn mismatch_path(&self, traced: &dyn TraceType) -> String {
        match traced.as_any().downcast_ref::<RecordType>() {
            Some(o) if self.same_structure(o) => self
                .fields
                .iter()
                .zip(&o.fields)
                .find(|((_, a), (_, b))| !a.is_subtype_of(&**b))
                .map(|((n, a), (_, b))| format!(".{n}{}", a.mismatch_path(&**b)))
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    fn specialize_for_trace(&self, constraint: &dyn TraceType) -> TypeRef {
        let fields = self.fields.iter().map(|(n, t)| (n.clone(), t.specialize_for_trace(constraint))).collect();
        TypeRef::new(RecordType::new(self.class_name.clone(), fields))
    }

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        let names: Vec<&str> = self.fields.iter().map(|(n, _)| n.as_str()).collect();
        let types = self.fields.iter().map(|(_, t)| encode_type(&**t)).collect::<Result<Vec<_>, _>>()?;
        Ok(SerialForm::new("record")
            .field("class", json!(self.class_name))
            .field("names", json!(names))
            .field("types", serde_json::Value::Array(types)))
    }

    crate::trace_type_common!();
}

impl RecordType {
    /// Decoder of the `record` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        let class_name: String = f.take("class")?;
        let names: Vec<String> = f.take("names")?;
        let types = f.take_types("types")?;
        if names.len() != types.len() {
            return Err(f.invalid("types", format!("expected {} types, one per name, got {}", names.len(), types.len())));
        }
        if let Some(dup) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)) {
            return Err(f.invalid("names", format!("duplicate component name '{}'", dup.1)));
        }
        Ok(TypeRef::new(RecordType::new(class_name, names.into_iter().zip(types).collect())))
    }
}

/// What a nested parameter (`in.nest("batch")`) accepts: any nest of lists, maps and records, to
/// any depth, whose leaves are tensors or Java values. The structure and each leaf's type are
/// then the signature, as for Python's `tf.function` and its nests.
///
/// ```
/// use polyfn_core::{DType, ListType, MapType, NestConstraint, Shape, TensorSpec, TraceType, TypeRef};
/// let t = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])));
/// let m = TypeRef::new(MapType::new([("k".to_string(), t.clone())].into()));
/// assert!(ListType::new(vec![m, t]).is_subtype_of(&NestConstraint));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct NestConstraint;

impl NestConstraint {
    /// Whether `t` may stand in a nest: a tensor or Java value leaf, or a nest itself.
    /// A tensor constraint is a leaf too: a structure coalesced from examples (a record whose
    /// `features` are `[-1, 3]`) holds only tensors there, so it is still narrower than a nest.
    pub(crate) fn admits(t: &TypeRef, nest: &dyn TraceType) -> bool {
        let any = t.as_any();
        any.is::<TensorSpec>() || any.is::<super::tensor::TensorConstraint>() || any.is::<Literal>() || t.is_subtype_of(nest)
    }

    /// Whether every value below `bound` (an element or value constraint) may stand in a nest.
    pub(crate) fn admits_bound(bound: &TypeRef, nest: &dyn TraceType) -> bool {
        let any = bound.as_any();
        any.is::<super::tensor::TensorConstraint>() || any.is::<super::literal::LiteralConstraint>() || Self::admits(bound, nest)
    }

    /// Whether `t` is a structure (list, map or record) rather than a leaf.
    pub fn is_structure(t: &dyn TraceType) -> bool {
        let any = t.as_any();
        any.is::<ListType>() || any.is::<MapType>() || any.is::<RecordType>() || any.is::<super::composite::CompositeType>()
    }
}

impl fmt::Display for NestConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Nest[*]")
    }
}

impl TraceType for NestConstraint {
    fn kind(&self) -> &'static str {
        "nest"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        other.as_any().is::<NestConstraint>()
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        others
            .iter()
            .all(|o| o.is_subtype_of(self))
            .then(|| TypeRef::new(NestConstraint))
    }

    fn placeholders(&self, _path: &str, _ctx: &mut PlaceholderContext, _out: &mut Vec<PlaceholderSpec>) {}

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Ok(SerialForm::new("nest_constraint"))
    }

    crate::trace_type_common!();
}

impl NestConstraint {
    /// Decoder of the `nest_constraint` kind.
    pub fn from_json(_f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        Ok(TypeRef::new(NestConstraint))
    }
}

#[cfg(test)]
#[path = "nest_tests.rs"]
mod nest_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, Shape};

    fn t(dims: &[i64]) -> TypeRef {
        TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims)))
    }

    fn batch(f: &[i64], l: &[i64]) -> RecordType {
        RecordType::new("a.B$Batch", vec![("features".into(), t(f)), ("labels".into(), t(l))])
    }

    #[test]
    fn records_compare_by_class_and_component() {
        let a = batch(&[2, 3], &[2]);
        assert!(a.is_subtype_of(&batch(&[-1, 3], &[-1])));
        assert!(!batch(&[-1, 3], &[2]).is_subtype_of(&a));
        let other = RecordType::new("a.Other", a.fields.clone());
        assert!(!a.is_subtype_of(&other));
        assert!(a.most_specific_common_supertype(&[&other]).is_none());
        let j = a.most_specific_common_supertype(&[&batch(&[5, 3], &[2])]).unwrap();
        assert_eq!(j.to_string(), "Batch(features: TensorSpec(FLOAT, [-1, 3]), labels: TensorSpec(FLOAT, [2]))");
        assert_eq!(a.mismatch_path(&batch(&[2, 3], &[4])), ".labels");
        assert_eq!(
            a.explain_mismatch(&batch(&[2, 3], &[4])).unwrap(),
            "component 'labels': TensorSpec(FLOAT, [2]) does not match TensorSpec(FLOAT, [4]) at dim 0"
        );
        let mut out = Vec::new();
        a.placeholders("b", &mut PlaceholderContext::new(), &mut out);
        assert_eq!(out.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["b.features", "b.labels"]);
    }

    #[test]
    fn a_nest_admits_structures_of_tensors_and_java_values_only() {
        let lit = TypeRef::new(Literal::new(1, "3", "java.lang.Integer"));
        let inner = TypeRef::new(MapType::new([("k".to_string(), t(&[1])), ("n".to_string(), lit)].into()));
        let nest = ListType::new(vec![inner, TypeRef::new(batch(&[1], &[1]))]);
        assert!(nest.is_subtype_of(&NestConstraint));
        assert!(batch(&[1], &[1]).is_subtype_of(&NestConstraint));
        let var = TypeRef::new(crate::VariableSpec::new(DType::FLOAT, Shape::scalar(), 0));
        assert!(!ListType::new(vec![var]).is_subtype_of(&NestConstraint));
        assert!(!TensorSpec::new(DType::FLOAT, Shape::scalar()).is_subtype_of(&NestConstraint));
        let j = NestConstraint.most_specific_common_supertype(&[&nest]).unwrap();
        assert_eq!(j.to_string(), "Nest[*]");
        // A list or map constraint of tensors is narrower than a nest (inference may narrow one).
        let floats = TypeRef::new(crate::TensorConstraint::new(crate::DTypeSet::floating(), None));
        assert!(crate::ListConstraint::new(Some(floats.clone()), Some(2)).is_subtype_of(&NestConstraint));
        assert!(crate::MapConstraint::new(Some(floats)).is_subtype_of(&NestConstraint));
        assert!(!crate::ListConstraint::new(None, None).is_subtype_of(&NestConstraint));
        assert!(!NestConstraint.is_subtype_of(&crate::ListConstraint::new(None, None)));
        let l = crate::ListConstraint::new(Some(TypeRef::new(crate::TensorConstraint::new(crate::DTypeSet::floating(), None))), None);
        assert_eq!(l.most_specific_common_supertype(&[&NestConstraint]), NestConstraint.most_specific_common_supertype(&[&l]));
    }

    #[test]
    fn a_record_of_another_structure_differs_as_a_whole() {
        let t = |d: &[i64]| TypeRef::new(crate::TensorSpec::new(crate::DType::FLOAT, crate::Shape::of(d)));
        let r = |class: &str, d: &[i64]| RecordType::new(class, vec![("f".into(), t(d))]);
        assert_eq!(r("a.B", &[3]).mismatch_path(&r("a.B", &[2])), ".f");
        assert_eq!(r("a.B", &[3]).mismatch_path(&r("c.D", &[2])), "");
        let renamed = RecordType::new("a.B", vec![("g".into(), t(&[2]))]);
        assert_eq!(r("a.B", &[3]).mismatch_path(&renamed), "");
        assert_eq!(
            r("a.B", &[3]).explain_mismatch(&renamed).unwrap(),
            "B(f: TensorSpec(FLOAT, [3])) does not match B(g: TensorSpec(FLOAT, [2])): another record class or components"
        );
    }

    #[test]
    fn a_nest_is_within_a_nest_only() {
        assert!(NestConstraint.is_subtype_of(&NestConstraint));
        assert!(!NestConstraint.is_subtype_of(&*t(&[2])));
    }
}
