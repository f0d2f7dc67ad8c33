//! Lists: the concrete [`ListType`] and the declared [`ListConstraint`].

use std::fmt;

use crate::trace_type::as_dyns;
use crate::{NestConstraint, PlaceholderContext, PlaceholderSpec, TraceType, TypeRef};
use crate::serial::{encode_type, Fields, SerialError, SerialForm};
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

    fn admits_element(&self, t: &dyn TraceType) -> bool {
        // `None` is the top element type.
        self.element
            .as_ref()
            .is_none_or(|e| t.is_subtype_of(&**e))
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

impl TraceType for ListType {
    fn kind(&self) -> &'static str {
        "list"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if let Some(o) = other.as_any().downcast_ref::<ListType>() {
            self.elements.len() == o.elements.len()
                && self
                    .elements
                    .iter()
                    .zip(&o.elements)
                    .all(|(a, b)| a.is_subtype_of(&**b))
        } else if let Some(c) = other.as_any().downcast_ref::<ListConstraint>() {
            c.length.is_none_or(|n| n == self.elements.len())
                && self.elements.iter().all(|e| c.admits_element(&**e))
        } else if other.as_any().is::<NestConstraint>() {
            self.elements.iter().all(|e| NestConstraint::admits(e, other))
        } else {
            false
        }
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let Some(lists) = others.iter().map(|o| o.as_any().downcast_ref::<ListType>()).collect::<Option<Vec<_>>>()
        else {
            return super::join_by_constraint::<ListConstraint>(self, others)
                .or_else(|| super::join_by_constraint::<NestConstraint>(self, others));
        };
        if lists
            .iter()
            .any(|l| l.elements.len() != self.elements.len())
        {
            return None;
        }
        let elements = (0..self.elements.len())
            .map(|i| {
                let rest: Vec<&dyn TraceType> =
                    lists.iter().map(|l| l.elements[i].as_dyn()).collect();
                self.elements[i].most_specific_common_supertype(&rest)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(TypeRef::new(ListType::new(elements)))
    }

    fn placeholders(
        &self,
        path: &str,
        ctx: &mut PlaceholderContext,
        out: &mut Vec<PlaceholderSpec>,
    ) {
        for (i, e) in self.elements.iter().enumerate() {
            e.placeholders(&format!("{path}[{i}]"), ctx, out);
        }
    }


    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            return None;
        }
        let n = self.elements.len();
        if let Some(o) = traced.as_any().downcast_ref::<ListType>() {
            if o.elements.len() != n {
                return Some(format!(
                    "list of length {n} does not match list of length {}",
                    o.elements.len()
                ));
            }
            let (i, why) = self
                .elements
                .iter()
                .zip(&o.elements)
                .enumerate()
                .find_map(|(i, (a, b))| a.explain_mismatch(&**b).map(|w| (i, w)))?;
            return Some(format!("element {i}: {why}"));
        }
        if let Some(c) = traced.as_any().downcast_ref::<ListConstraint>() {
            if let Some(len) = c.length.filter(|&len| len != n) {
                return Some(format!(
                    "list of length {n} does not match list of length {len}"
                ));
            }
            if let Some(el) = &c.element {
                let (i, why) = self
                    .elements
                    .iter()
                    .enumerate()
                    .find_map(|(i, a)| a.explain_mismatch(&**el).map(|w| (i, w)))?;
                return Some(format!("element {i}: {why}"));
            }
        }
        Some(format!("{self} does not match {traced}"))
    }

    fn mismatch_path(&self, traced: &dyn TraceType) -> String {
        let pairs: Vec<(&TypeRef, &dyn TraceType)> = if let Some(o) = traced.as_any().downcast_ref::<ListType>() {
            if o.elements.len() != self.elements.len() {
                return String::new();
            }
            self.elements.iter().zip(o.elements.iter().map(|e| e.as_dyn())).collect()
        } else if let Some(c) = traced.as_any().downcast_ref::<ListConstraint>() {
            match (&c.element, c.length) {
                (_, Some(len)) if len != self.elements.len() => return String::new(),
                (Some(el), _) => self.elements.iter().map(|e| (e, el.as_dyn())).collect(),
                (None, _) => return String::new(),
            }
        } else {
            return String::new();
        };
        pairs
            .into_iter()
            .enumerate()
            .find(|(_, (a, b))| !a.is_subtype_of(*b))
            .map(|(i, (a, b))| format!("[{i}]{}", a.mismatch_path(b)))
            .unwrap_or_default()
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
        let element = if unbounded || elements.is_empty() {
            None
        } else {
            let dyns = as_dyns(&elements[1..]);
            elements[0].most_specific_common_supertype(&dyns)
        };
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
}
