//! Coalescing of records and of nests (records, lists and maps inside one another).
use super::*;
use crate::NestConstraint;
use proptest::prelude::*;

fn f(dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims)))
}

fn batch(features: TypeRef, labels: TypeRef) -> TypeRef {
    TypeRef::new(RecordType::new("a.M$Batch", vec![("features".into(), features), ("labels".into(), labels)]))
}

fn list(parts: Vec<TypeRef>) -> TypeRef {
    TypeRef::new(ListType::new(parts))
}

fn map(entries: Vec<(&str, TypeRef)>) -> TypeRef {
    TypeRef::new(MapType::new(entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

fn constraint(c: Coalesced) -> TypeRef {
    match c {
        Coalesced::Constraint(t) => t,
        other => panic!("expected a constraint, got {other:?}"),
    }
}

#[test]
fn records_of_different_batch_sizes_coalesce_component_by_component() {
    let c = constraint(coalesce("batch", &[batch(f(&[2, 3]), f(&[2])), batch(f(&[5, 3]), f(&[5]))]));
    assert_eq!(c.to_string(), "Batch(features: TensorSpec(FLOAT, [-1, 3]), labels: TensorSpec(FLOAT, [-1]))");
    // The declared nest is wider: the coalesced record wins, and a call specializes under it.
    let m = merge_declared("batch", &TypeRef::new(NestConstraint), &c, &Provenance::Examples(2)).unwrap();
    assert_eq!(m, c);
    let traced = specialize(&batch(f(&[9, 3]), f(&[9])), &m);
    assert_eq!(traced.to_string(), c.to_string());
    assert!(batch(f(&[9, 3]), f(&[9])).is_subtype_of(&*traced));
    assert!(!batch(f(&[9, 4]), f(&[9])).is_subtype_of(&*traced));
}

#[test]
fn a_differing_part_of_a_record_or_nest_is_named_by_its_path() {
    let lit = |id, v: &str| TypeRef::new(Literal::new(id, v, "java.lang.Integer"));
    let b = |n| TypeRef::new(RecordType::new("a.M$Batch", vec![("features".into(), f(&[2])), ("labels".into(), list(vec![f(&[1]); n]))]));
    let Coalesced::PerExample(why) = coalesce("batch", &[b(1), b(2)]) else { panic!() };
    assert_eq!(why, "batch.labels: lists of lengths 1, 2 are traced one per length (pass one stacked tensor to share a trace)");
    let xs = |v| list(vec![f(&[1]), map(vec![("k", v)])]);
    let Coalesced::PerExample(why) = coalesce("xs", &[xs(lit(1, "3")), xs(lit(2, "4"))]) else { panic!() };
    assert_eq!(why, "xs[1]['k']: Java values 3, 4 are traced one per value; pass xs[1]['k'] as a tensor to share one trace");
    let other = TypeRef::new(RecordType::new("a.M$Other", vec![("features".into(), f(&[2]))]));
    let Coalesced::PerExample(why) = coalesce("b", &[b(1), other.clone()]) else { panic!() };
    assert_eq!(why, "b: records of classes Batch, Other are traced one per class");
    // One trace per structure, each coalesced within itself.
    let groups: Vec<String> = structures("b", &[b(1), other, b(1)]).iter().map(|t| t.to_string()).collect();
    assert_eq!(groups.len(), 2, "{groups:?}");
}

#[test]
fn a_nest_parameter_coalesces_lists_and_maps_inside_records() {
    let ex = |n: i64| list(vec![batch(f(&[n, 3]), f(&[n])), map(vec![("k", f(&[n]))])]);
    let c = constraint(coalesce("xs", &[ex(2), ex(7)]));
    let m = merge_declared("xs", &TypeRef::new(NestConstraint), &c, &Provenance::Examples(2)).unwrap();
    assert_eq!(
        m.to_string(),
        "List[Batch(features: TensorSpec(FLOAT, [-1, 3]), labels: TensorSpec(FLOAT, [-1])), Map{'k': TensorSpec(FLOAT, [-1])}]"
    );
    assert!(ex(40).is_subtype_of(&*specialize(&ex(40), &m)));
}

/// A nest of one fixed structure (a list of a record and a map), its leaves drawn freely.
fn arb_nest() -> impl Strategy<Value = [(usize, Vec<i64>); 3]> {
    let leaf = || ((0usize..2), proptest::collection::vec(prop_oneof![3 => 0i64..4, 1 => Just(-1i64)], 1..3));
    [leaf(), leaf(), leaf()]
}

fn nest_of(leaves: &[(usize, Vec<i64>); 3]) -> TypeRef {
    let t = |(d, dims): &(usize, Vec<i64>)| TypeRef::new(TensorSpec::new([DType::FLOAT, DType::DOUBLE][*d], Shape::of(dims)));
    list(vec![batch(t(&leaves[0]), t(&leaves[1])), map(vec![("k", t(&leaves[2]))])])
}

proptest! {
    /// The coalesced nest admits every example, and is below every nest of the same structure
    /// (leaves: tensor families and shapes) that admits them all: the most specific one.
    #[test]
    fn a_coalesced_nest_is_the_most_specific_common_supertype(
        examples in proptest::collection::vec(arb_nest(), 1..5),
        candidates in proptest::collection::vec(arb_nest(), 1..10),
        families in proptest::collection::vec(0usize..3, 3),
    ) {
        let types: Vec<TypeRef> = examples.iter().map(nest_of).collect();
        let c = constraint(coalesce("xs", &types));
        prop_assert!(c.is_subtype_of(&NestConstraint));
        for e in &types {
            prop_assert!(e.is_subtype_of(&*c), "{e} not under {c}");
        }
        // Candidates: the candidate nests' shapes with leaf dtypes widened to a family.
        let family = |i: usize| [DTypeSet::of(&[DType::FLOAT]), DTypeSet::floating(), DTypeSet::any()][families[i]].clone();
        for cand in &candidates {
            let tc = |i: usize| TypeRef::new(TensorConstraint::new(family(i), Some(Shape::of(&cand[i].1))));
            let bound = list(vec![batch(tc(0), tc(1)), map(vec![("k", tc(2))])]);
            if types.iter().all(|e| e.is_subtype_of(&*bound)) {
                prop_assert!(c.is_subtype_of(&*bound), "{c} is not below {bound}, which admits every example");
            }
        }
    }
}
