//! Lists: the concrete [`ListType`] and the declared [`ListConstraint`].

use std::fmt;

use super::children::{self, Key, Pairs};
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::trace_type::{TraceType, TypeRef};
use super::record::NestConstraint;
use crate::serial::form::{SerialError, SerialForm};
use crate::serial::registry::{encode_type, Fields};
use serde_json::json;

/// A list of known length whose elements each have their own type (covariant).
///
/// ```
/// use polyfn_core::{DType, ListType, Shape, TensorSpec, TypeRef};
/// let l = ListType::new(vec![TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])))]);
/// assert_eq!(l.to_string(), "List[TensorSpec(FLOAT, [2])]");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ListType {
    pub elements: Vec<TypeRef>,
}

impl ListType {
    pub fn new(elements: Vec<TypeRef>) -> Self {
        ListType { elements }
    }
}

/// What a declared list parameter accepts, e.g. `inputs.list("xs", TFloat32.class)`:
/// every element a subtype of `element` (None = anything) and, if given, exactly `length`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ListConstraint {
    pub element: Option<TypeRef>,
    pub length: Option<usize>,
}

impl ListConstraint {
    pub fn new(element: Option<TypeRef>, length: Option<usize>) -> Self {
        ListConstraint { element, length }
    }

}

impl fmt::Display for ListType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("List[")?;
        for (i, e) in self.elements.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{e}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for ListConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("List[")?;
        match &self.element {
            Some(e) => write!(f, "{e}")?,
            None => f.write_str("*")?,
        }
        match self.length {
            Some(n) => write!(f, "; {n}]"),
            None => f.write_str(", ...]"),
        }
    }
}

impl ListType {
    fn children(&self) -> impl Iterator<Item = (Key<'_>, &TypeRef)> {
        self.elements.iter().enumerate().map(|(i, e)| (Key::Index(i), e))
    }

    /// Each element beside what it must fit in `traced` (a list of the same length, or a list
    /// constraint's element bound), or `None` when the lengths differ or nothing bounds them.
    fn pairs<'a>(&'a self, traced: &'a dyn TraceType) -> Option<Pairs<'a>> {
        if let Some(o) = traced.as_any().downcast_ref::<ListType>() {
            if o.elements.len() != self.elements.len() {
                return None;
            }
            return Some(self.children().zip(&o.elements).map(|((k, a), b)| (k, a, b.as_dyn())).collect());
        }
        let c = traced.as_any().downcast_ref::<ListConstraint>()?;
        if c.length.is_some_and(|n| n != self.elements.len()) {
            return None;
        }
        let bound = c.element.as_ref()?;
        Some(self.children().map(|(k, a)| (k, a, bound.as_dyn())).collect())
    }
}

impl TraceType for ListType {
    fn kind(&self) -> &'static str {
        "list"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if other.as_any().is::<NestConstraint>() {
            return self.elements.iter().all(|e| NestConstraint::admits(e, other));
        }
        match (other.as_any().downcast_ref::<ListConstraint>(), self.pairs(other)) {
            (_, Some(pairs)) => children::all_fit(&pairs),
            // A constraint of the right length that bounds no element admits every list.
            (Some(c), None) => c.element.is_none() && c.length.is_none_or(|n| n == self.elements.len()),
            (None, None) => false,
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let Some(lists) = others.iter().map(|o| o.as_any().downcast_ref::<ListType>()).collect::<Option<Vec<_>>>()
        else {
            return super::join_by_constraint::<ListConstraint>(self, others)
                .or_else(|| super::join_by_constraint::<NestConstraint>(self, others));
        };
        if lists.iter().any(|l| l.elements.len() != self.elements.len()) {
            return None;
        }
        let own: Vec<&TypeRef> = self.elements.iter().collect();
        let rest: Vec<Vec<&TypeRef>> = lists.iter().map(|l| l.elements.iter().collect()).collect();
        Some(TypeRef::new(ListType::new(children::join_each(&own, &rest)?)))
    }

    fn placeholders(
        &self,
        path: &str,
        ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        children::placeholders(self.children(), path, ctx, out);
    }

    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        let n = self.elements.len();
        let other_length = match (traced.as_any().downcast_ref::<ListType>(), traced.as_any().downcast_ref::<ListConstraint>()) {
            (Some(o), _) => Some(o.elements.len()),
            (_, Some(c)) => c.length,
            _ => None,
        };
        if let Some(len) = other_length.filter(|&len| len != n) {
            return Some(format!("list of length {n} does not match list of length {len}"));
        }
        match self.pairs(traced) {
            Some(pairs) => children::explain_first(&pairs),
            None => Some(format!("{self} does not match {traced}")),
        }
    }

    fn mismatch_path(&self, traced: &dyn TraceType) -> String {
        self.pairs(traced).map(|p| children::first_mismatch_path(&p)).unwrap_or_default()
    }

    fn specialize_for_trace(&self, constraint: &dyn TraceType) -> TypeRef {
        let element = constraint
            .as_any()
            .downcast_ref::<ListConstraint>()
            .and_then(|c| c.element.as_ref());
        match element {
            Some(el) => TypeRef::new(ListType::new(
                self.elements
                    .iter()
                    .map(|e| e.specialize_for_trace(&**el))
                    .collect(),
            )),
            None => TypeRef::new(self.clone()),
        }
    }

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        let elements = self.elements.iter().map(|e| encode_type(&**e)).collect::<Result<_, _>>()?;
        Ok(SerialForm::new("list").field("elements", serde_json::Value::Array(elements)))
    }

    crate::trace_type_common!();
}

impl TraceType for ListConstraint {
    fn kind(&self) -> &'static str {
        "list"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if other.as_any().is::<NestConstraint>() {
            // Every list it admits is a nest (an inferred constraint narrows a declared nest).
            return self.element.as_ref().is_some_and(|e| NestConstraint::admits_bound(e, other));
        }
        let Some(o) = other.as_any().downcast_ref::<ListConstraint>() else {
            return false;
        };
        let length_ok = o.length.is_none() || o.length == self.length;
        let element_ok = match (&self.element, &o.element) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a.is_subtype_of(&**b),
        };
        length_ok && element_ok
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        if others.iter().any(|o| o.as_any().is::<NestConstraint>()) {
            // The nest decides, whatever the order the types came in.
            return super::join_by_constraint::<NestConstraint>(self, others);
        }
        // Collect every element type and length in play; the join constrains what they share.
        let mut length = self.length;
        let mut elements: Vec<TypeRef> = Vec::new();
        let mut unbounded = self.element.is_none();
        elements.extend(self.element.iter().cloned());
        for o in others {
            if let Some(c) = o.as_any().downcast_ref::<ListConstraint>() {
                if c.length != length {
                    length = None;
                }
                unbounded |= c.element.is_none();
                elements.extend(c.element.iter().cloned());
            } else if let Some(l) = o.as_any().downcast_ref::<ListType>() {
                if Some(l.elements.len()) != length {
                    length = None;
                }
                elements.extend(l.elements.iter().cloned());
            } else {
                return None;
            }
        }
        let element = children::join_bounds(&elements, unbounded);
        Some(TypeRef::new(ListConstraint::new(element, length)))
    }

    fn placeholders(
        &self,
        _path: &str,
        _ctx: &mut PlaceholderContext,
        _out: &mut Vec<PlaceholderSpec>,
    ) {
    }


    fn to_json(&self) -> Result<SerialForm, SerialError> {
        let element = self.element.as_ref().map(|e| encode_type(&**e)).transpose()?;
        Ok(SerialForm::new("list_constraint")
            .field("element", json!(element))
            .field("length", json!(self.length)))
    }

    crate::trace_type_common!();
}

impl ListType {
    /// Decoder of the `list` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        Ok(TypeRef::new(ListType::new(f.take_types("elements")?)))
    }
}

impl ListConstraint {
    /// Decoder of the `list_constraint` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        let element = f.take_opt_type("element")?;
        Ok(TypeRef::new(ListConstraint::new(element, f.take_opt::<usize>("length")?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, DTypeSet, Shape, TensorConstraint, TensorSpec};

    fn t(dims: &[i64]) -> TypeRef {
        TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims)))
    }

    fn list(dims: &[&[i64]]) -> ListType {
        ListType::new(dims.iter().map(|d| t(d)).collect())
    }

    #[test]
    fn display() {
        assert_eq!(
            list(&[&[2], &[3]]).to_string(),
            "List[TensorSpec(FLOAT, [2]), TensorSpec(FLOAT, [3])]"
        );
        assert_eq!(ListType::new(vec![]).to_string(), "List[]");
        assert_eq!(
            ListConstraint::new(Some(t(&[-1])), None).to_string(),
            "List[TensorSpec(FLOAT, [-1]), ...]"
        );
        assert_eq!(ListConstraint::new(None, Some(2)).to_string(), "List[*; 2]");
    }

    #[test]
    fn a_constraint_with_a_length_and_a_bound_checks_both() {
        let a = list(&[&[2], &[3]]);
        let two = ListConstraint::new(Some(t(&[-1])), Some(2));
        let three = ListConstraint::new(Some(t(&[-1])), Some(3));
        assert!(a.is_subtype_of(&two));
        assert!(!a.is_subtype_of(&three));
        assert!(!a.is_subtype_of(&ListConstraint::new(Some(t(&[-1, -1])), Some(2))));
        assert_eq!(a.explain_mismatch(&two), None);
        assert_eq!(a.explain_mismatch(&three).unwrap(), "list of length 2 does not match list of length 3");
        assert_eq!(
            a.explain_mismatch(&ListConstraint::new(Some(t(&[2])), Some(2))).unwrap(),
            "element 1: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0"
        );
        assert_eq!(a.mismatch_path(&ListConstraint::new(Some(t(&[2])), None)), "[1]");
    }

    #[test]
    fn a_constraint_join_bounds_its_elements_by_the_join_of_every_bound() {
        let joined = ListConstraint::new(Some(t(&[2])), None)
            .most_specific_common_supertype(&[&ListConstraint::new(Some(t(&[3])), None)])
            .unwrap();
        assert_eq!(joined, TypeRef::new(ListConstraint::new(Some(t(&[-1])), None)));
        // One side bounds nothing: neither does the join.
        let open = ListConstraint::new(None, Some(2))
            .most_specific_common_supertype(&[&ListConstraint::new(Some(t(&[3])), Some(2))])
            .unwrap();
        assert_eq!(open, TypeRef::new(ListConstraint::new(None, Some(2))));
    }

    #[test]
    fn subtyping_and_join() {
        let a = list(&[&[2], &[3]]);
        assert!(a.is_subtype_of(&a));
        assert!(a.is_subtype_of(&list(&[&[-1], &[3]])));
        assert!(!a.is_subtype_of(&list(&[&[2]])));
        assert!(!list(&[&[-1], &[3]]).is_subtype_of(&a));
        let j = a
            .most_specific_common_supertype(&[&list(&[&[4], &[3]])])
            .unwrap();
        assert_eq!(j, TypeRef::new(list(&[&[-1], &[3]])));
        assert!(a
            .most_specific_common_supertype(&[&list(&[&[2]])])
            .is_none());
        let ints = ListType::new(vec![
            TypeRef::new(TensorSpec::new(DType::INT32, Shape::of(&[2]))),
            t(&[3]),
        ]);
        assert!(a.most_specific_common_supertype(&[&ints]).is_none());
    }

    #[test]
    fn constraint() {
        let floats = TypeRef::new(TensorConstraint::new(DTypeSet::of(&[DType::FLOAT]), None));
        let any_len = ListConstraint::new(Some(floats.clone()), None);
        assert!(list(&[&[2], &[3, 3]]).is_subtype_of(&any_len));
        assert!(ListType::new(vec![]).is_subtype_of(&any_len));
        assert!(!list(&[&[2]]).is_subtype_of(&ListConstraint::new(None, Some(2))));
        assert!(list(&[&[2], &[1]]).is_subtype_of(&ListConstraint::new(None, Some(2))));
        assert!(any_len.is_subtype_of(&ListConstraint::new(None, None)));
        assert!(!ListConstraint::new(None, None).is_subtype_of(&any_len));
        let j = any_len
            .most_specific_common_supertype(&[&list(&[&[2]])])
            .unwrap();
        assert!(list(&[&[2]]).is_subtype_of(&*j) && any_len.is_subtype_of(&*j));
    }

    #[test]
    fn explain_and_specialize() {
        let a = list(&[&[2], &[3], &[4]]);
        assert_eq!(
            a.explain_mismatch(&list(&[&[2], &[3]])).unwrap(),
            "list of length 3 does not match list of length 2"
        );
        assert_eq!(
            a.explain_mismatch(&list(&[&[2], &[5], &[4]])).unwrap(),
            "element 1: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [5]) at dim 0"
        );
        assert_eq!(a.explain_mismatch(&a), None);
        let c = ListConstraint::new(
            Some(TypeRef::new(TensorConstraint::new(
                DTypeSet::floating(),
                Some(Shape::of(&[-1])),
            ))),
            None,
        );
        assert_eq!(
            a.specialize_for_trace(&c),
            TypeRef::new(list(&[&[-1], &[-1], &[-1]]))
        );
        let mut out = Vec::new();
        a.placeholders("xs", &mut PlaceholderContext::new(), &mut out);
        assert_eq!(
            out.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(),
            ["xs[0]", "xs[1]", "xs[2]"]
        );
    }

    #[test]
    fn a_list_constraint_is_within_another_of_its_length_or_of_none() {
        let c = |len: Option<usize>| ListConstraint::new(Some(t(&[-1])), len);
        assert!(c(Some(2)).is_subtype_of(&c(Some(2))) && c(Some(2)).is_subtype_of(&c(None)));
        assert!(!c(Some(3)).is_subtype_of(&c(Some(2))) && !c(None).is_subtype_of(&c(Some(2))));
        let joined = |l: ListType| c(Some(2)).most_specific_common_supertype(&[&l]).unwrap();
        let length = |j: TypeRef| j.downcast_ref::<ListConstraint>().unwrap().length;
        assert_eq!(length(joined(list(&[&[1], &[2]]))), Some(2), "a list of that length keeps it");
        assert_eq!(length(joined(list(&[&[1]]))), None);
        assert_eq!((list(&[]).kind(), c(None).kind()), ("list", "list"));
    }

    #[test]
    fn a_list_constraint_is_within_a_nest_when_its_elements_may_stand_in_one() {
        let nest = crate::NestConstraint;
        let of = |e: TypeRef| ListConstraint::new(Some(e), None);
        assert!(of(TypeRef::new(TensorConstraint::new(DTypeSet::any(), None))).is_subtype_of(&nest));
        let variables = TypeRef::new(crate::VariableConstraint::new(DTypeSet::any()));
        assert!(!of(variables).is_subtype_of(&nest), "a variable is not a nest leaf");
        assert!(!ListConstraint::new(None, None).is_subtype_of(&nest), "unbounded elements");
        let java = TypeRef::new(crate::LiteralConstraint::new("java.lang.Integer"));
        assert!(of(java).is_subtype_of(&nest), "Java values are nest leaves");
    }

    #[test]
    fn lists_maps_records_and_composites_are_structures_and_leaves_are_not() {
        use crate::NestConstraint;
        let composite = crate::CompositeType::new("S", DType::FLOAT, Shape::Unknown, None, vec![]);
        let record = crate::RecordType::new("a.B", vec![]);
        let map = crate::MapType::new(Default::default());
        assert!([&list(&[]) as &dyn TraceType, &map, &record, &composite].iter().all(|t| NestConstraint::is_structure(*t)));
        assert!(!NestConstraint::is_structure(&*t(&[2])));
        assert!(!NestConstraint::is_structure(&crate::Literal::new(1, "1", "java.lang.Integer")));
    }
}
