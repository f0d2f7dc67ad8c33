//! Java values passed as-is: [`Literal`] (one interned value) and [`LiteralConstraint`].

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::placeholder::{PlaceholderContext, PlaceholderSpec};
use crate::trace_type::{TraceType, TypeRef};
use crate::serial::form::{SerialError, SerialForm};
use crate::serial::registry::Fields;
use serde_json::json;

/// A non-tensor Java value, identified by `id`: the Java side interns values equal under
/// `equals`/`hashCode` to the same id, so equality and hashing use `id` only. Each distinct
/// value is its own trace (tf.function treats Python scalars the same way).
///
/// ```
/// use polyfn_core::{Literal, TraceType};
/// let three = Literal::new(3, "3", "java.lang.Integer");
/// assert_eq!(three.to_string(), "Literal(3)");
/// assert!(three.is_subtype_of(&Literal::new(3, "3", "java.lang.Integer")));
/// assert!(!three.is_subtype_of(&Literal::new(1, "1", "java.lang.Integer")));
/// ```
#[derive(Clone, Debug)]
pub struct Literal {
    pub id: u64,
    /// `toString()` of the value, for messages.
    pub repr: String,
    pub class_name: String,
}

impl Literal {
    pub fn new(id: u64, repr: impl Into<String>, class_name: impl Into<String>) -> Self {
        Literal {
            id,
            repr: repr.into(),
            class_name: class_name.into(),
        }
    }
}

impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Literal {}

impl Hash for Literal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

/// Accepts any [`Literal`] of the given Java class.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct LiteralConstraint {
    pub class_name: String,
}

impl LiteralConstraint {
    pub fn new(class_name: impl Into<String>) -> Self {
        LiteralConstraint {
            class_name: class_name.into(),
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Literal({})", self.repr)
    }
}

impl fmt::Display for LiteralConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Literal<{}>", self.class_name)
    }
}

impl TraceType for Literal {
    fn kind(&self) -> &'static str {
        "literal"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        if let Some(c) = other.as_any().downcast_ref::<LiteralConstraint>() {
            return c.class_name == self.class_name;
        }
        self.dyn_eq(other)
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        // Distinct values never generalize (each is its own trace), unless a class
        // constraint is already in play.
        if others.iter().any(|o| o.as_any().is::<LiteralConstraint>()) {
            return LiteralConstraint::new(self.class_name.clone())
                .most_specific_common_supertype(others);
        }
        others
            .iter()
            .all(|o| self.dyn_eq(*o))
            .then(|| TypeRef::new(self.clone()))
    }

    fn placeholders(
        &self,
        _path: &str,
        _ctx: &mut PlaceholderContext,
        _out: &mut Vec<PlaceholderSpec>,
    ) {
    }


    fn explain_mismatch(&self, traced: &dyn TraceType) -> Option<String> {
        if self.is_subtype_of(traced) {
            None
        } else if traced.as_any().is::<Literal>() {
            Some(format!("new value {}", self.repr))
        } else if let Some(c) = traced.as_any().downcast_ref::<LiteralConstraint>() {
            Some(format!(
                "{self} of class {} is not a {}",
                self.class_name, c.class_name
            ))
        } else {
            Some(format!("{self} does not match {traced}"))
        }
    }

    fn explain_mismatch_among(
        &self,
        closest: &dyn TraceType,
        all: &[&dyn TraceType],
    ) -> Option<String> {
        let why = self.explain_mismatch(closest)?;
        if !closest.as_any().is::<Literal>() {
            return Some(why);
        }
        // List every distinct traced value, in trace order, so the user sees the churn.
        let mut seen: Vec<&Literal> = Vec::new();
        for l in all
            .iter()
            .filter_map(|t| t.as_any().downcast_ref::<Literal>())
        {
            if !seen.contains(&l) {
                seen.push(l);
            }
        }
        let values: Vec<&str> = seen.iter().map(|l| l.repr.as_str()).collect();
        Some(format!("{why} (traced: {})", values.join(", ")))
    }

    fn short_repr(&self) -> String {
        self.repr.clone()
    }

    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Ok(SerialForm::new("literal")
            .field("id", json!(self.id))
            .field("repr", json!(self.repr))
            .field("class", json!(self.class_name)))
    }

    crate::trace_type_common!();
}

impl TraceType for LiteralConstraint {
    fn kind(&self) -> &'static str {
        "literal"
    }

    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        self.dyn_eq(other)
    }

    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        let same_class = others.iter().all(|o| {
            let class = o
                .as_any()
                .downcast_ref::<LiteralConstraint>()
                .map(|c| &c.class_name)
                .or_else(|| o.as_any().downcast_ref::<Literal>().map(|l| &l.class_name));
            class == Some(&self.class_name)
        });
        same_class.then(|| TypeRef::new(self.clone()))
    }

    fn placeholders(
        &self,
        _path: &str,
        _ctx: &mut PlaceholderContext,
        _out: &mut Vec<PlaceholderSpec>,
    ) {
    }


    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Ok(SerialForm::new("literal_constraint").field("class", json!(self.class_name)))
    }

    crate::trace_type_common!();
}

impl Literal {
    /// Decoder of the `literal` kind. The id is the interning id of the JVM that wrote it:
    /// meaningful only against that JVM's literal table (see [`crate::serial`]).
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        let (id, repr) = (f.take::<u64>("id")?, f.take::<String>("repr")?);
        Ok(TypeRef::new(Literal::new(id, repr, f.take::<String>("class")?)))
    }
}

impl LiteralConstraint {
    /// Decoder of the `literal_constraint` kind.
    pub fn from_json(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
        Ok(TypeRef::new(LiteralConstraint::new(f.take::<String>("class")?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: u64) -> Literal {
        Literal::new(v, v.to_string(), "java.lang.Integer")
    }

    #[test]
    fn identity_by_id() {
        // repr differences do not matter: Java interned them to the same id
        assert_eq!(Literal::new(1, "a", "X"), Literal::new(1, "b", "X"));
        assert_eq!(
            TypeRef::new(int(1)),
            TypeRef::new(Literal::new(1, "other", "Y"))
        );
        assert_ne!(TypeRef::new(int(1)), TypeRef::new(int(2)));
        assert_eq!(int(3).to_string(), "Literal(3)");
    }

    #[test]
    fn lattice() {
        assert!(int(1).is_subtype_of(&int(1)));
        assert!(!int(1).is_subtype_of(&int(2)));
        assert_eq!(
            int(1).most_specific_common_supertype(&[&int(1)]),
            Some(TypeRef::new(int(1)))
        );
        assert_eq!(int(1).most_specific_common_supertype(&[&int(2)]), None);
        let c = LiteralConstraint::new("java.lang.Integer");
        assert!(int(1).is_subtype_of(&c));
        assert!(!Literal::new(9, "s", "java.lang.String").is_subtype_of(&c));
        assert!(c.most_specific_common_supertype(&[&int(4)]).is_some());
        assert_eq!(c.to_string(), "Literal<java.lang.Integer>");
    }

    #[test]
    fn explain() {
        assert_eq!(int(3).explain_mismatch(&int(1)).unwrap(), "new value 3");
        assert_eq!(
            int(3)
                .explain_mismatch_among(&int(1), &[&int(1), &int(2), &int(1)])
                .unwrap(),
            "new value 3 (traced: 1, 2)"
        );
        let s = Literal::new(9, "s", "java.lang.String");
        assert_eq!(
            s.explain_mismatch(&LiteralConstraint::new("java.lang.Integer"))
                .unwrap(),
            "Literal(s) of class java.lang.String is not a java.lang.Integer"
        );
    }

    #[test]
    fn literals_hash_by_id_show_their_repr_and_a_constraint_is_within_itself() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |l: &Literal| {
            let mut h = DefaultHasher::new();
            l.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&int(1)), hash(&Literal::new(1, "other", "Y")));
        assert_ne!(hash(&int(1)), hash(&int(2)));
        assert_eq!(int(3).short_repr(), "3");
        let c = LiteralConstraint::new("java.lang.Integer");
        assert!(c.is_subtype_of(&LiteralConstraint::new("java.lang.Integer")));
        assert!(!c.is_subtype_of(&LiteralConstraint::new("java.lang.Long")));
        assert_eq!((int(1).kind(), c.kind()), ("literal", "literal"));
    }
}
