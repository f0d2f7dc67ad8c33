//! The protocol's default methods, seen through a kind defined outside the built-in ones.

use super::*;
use crate::placeholder::{PlaceholderContext, PlaceholderSpec};

/// `Level(a)` is a subtype of `Level(b)` when `a <= b`; it overrides no default method.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Level(u32);

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}", self.0)
    }
}

impl TraceType for Level {
    fn kind(&self) -> &'static str {
        "level"
    }
    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        other.as_any().downcast_ref::<Level>().is_some_and(|o| self.0 <= o.0)
    }
    fn most_specific_common_supertype(&self, _: &[&dyn TraceType]) -> Option<TypeRef> {
        None
    }
    fn placeholders(&self, _: &str, _: &mut PlaceholderContext, _: &mut Vec<PlaceholderSpec>) {}
    crate::trace_type_common!();
}

#[test]
fn a_mismatch_is_explained_by_default_as_the_two_types() {
    let (l1, l2, l3) = (Level(1), Level(2), Level(3));
    assert_eq!(l3.explain_mismatch(&l2), Some("L3 does not match L2".to_string()));
    assert_eq!(l1.explain_mismatch(&l2), None);
    assert_eq!(l3.explain_mismatch_among(&l2, &[&l1, &l2]), Some("L3 does not match L2".to_string()));
    assert_eq!(l1.explain_mismatch_among(&l2, &[&l2]), None);
    assert_eq!(l3.mismatch_path(&l2), "");
}

#[test]
fn the_other_defaults_copy_show_and_refuse_to_serialize() {
    let l = Level(3);
    assert_eq!(l.specialize_for_trace(&Level(9)), TypeRef::new(Level(3)));
    assert_eq!(l.short_repr(), "L3");
    assert_eq!(
        l.to_json().unwrap_err().to_string(),
        "cannot serialize L3: type kind 'level' has no serial form (implement TraceType::to_json)"
    );
}

#[test]
fn a_type_ref_shows_compares_and_hashes_as_its_type() {
    use std::collections::hash_map::DefaultHasher;
    let hash = |t: &TypeRef| {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    };
    let a = TypeRef::new(Level(3));
    let b = TypeRef::new(Level(3));
    assert_eq!((format!("{a}"), format!("{a:?}")), ("L3".to_string(), "Level(3)".to_string()));
    assert!(a == b && a == a.clone() && a != TypeRef::new(Level(4)));
    assert_eq!(hash(&a), hash(&b));
    assert_ne!(hash(&a), hash(&TypeRef::new(Level(4))));
    assert_eq!(a.downcast_ref::<Level>(), Some(&Level(3)));
    assert_eq!(as_dyns(&[a.clone(), TypeRef::new(Level(4))]).iter().map(|t| t.to_string()).collect::<Vec<_>>(), ["L3", "L4"]);
}

/// A type and the constraints over it share a kind name (inference compares kinds, and messages
/// name them: "differing map values are traced one per example").
#[test]
fn built_in_types_and_their_constraints_share_a_kind_name() {
    use crate::dtype::{DType, DTypeSet};
    use crate::shape::Shape;
    use crate::types::*;
    let t = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])));
    let kinds: Vec<(&str, &str)> = vec![
        (TensorSpec::new(DType::FLOAT, Shape::scalar()).kind(), TensorConstraint::new(DTypeSet::any(), None).kind()),
        (ListType::new(vec![]).kind(), ListConstraint::new(None, None).kind()),
        (MapType::new(Default::default()).kind(), MapConstraint::new(None).kind()),
        (Literal::new(1, "1", "java.lang.Integer").kind(), LiteralConstraint::new("java.lang.Integer").kind()),
        (VariableSpec::new(DType::FLOAT, Shape::scalar(), 0).kind(), VariableConstraint::new(DTypeSet::any()).kind()),
        (RecordType::new("a.B", vec![("f".into(), t.clone())]).kind(), NestConstraint.kind()),
        (CompositeType::new("Sparse", DType::FLOAT, Shape::Unknown, None, vec![]).kind(), "composite"),
    ];
    assert_eq!(
        kinds,
        [("tensor", "tensor"), ("list", "list"), ("map", "map"), ("literal", "literal"), ("variable", "variable"), ("record", "nest"), ("composite", "composite")]
    );
}
