use super::*;
use crate::TraceType;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn spec(d: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
}

fn constraint(c: &Coalesced) -> TypeRef {
    match c {
        Coalesced::Constraint(t) => t.clone(),
        other => panic!("expected a constraint, got {other:?}"),
    }
}

#[test]
fn batch_sizes_coalesce_to_an_unknown_first_dim() {
    let c = coalesce("x", &[spec(DType::FLOAT, &[2, 3]), spec(DType::FLOAT, &[5, 3]), spec(DType::FLOAT, &[1, 3])]);
    assert_eq!(constraint(&c).to_string(), "TensorSpec(FLOAT, [-1, 3])");
}

#[test]
fn dtypes_coalesce_to_the_smallest_family() {
    let c = coalesce("x", &[spec(DType::FLOAT, &[2]), spec(DType::DOUBLE, &[2])]);
    assert_eq!(constraint(&c).to_string(), "TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [2])");
    let c = coalesce("x", &[spec(DType::INT32, &[2]), spec(DType::FLOAT, &[2])]);
    assert_eq!(java_type(&constraint(&c).downcast_ref::<TensorConstraint>().unwrap().dtypes), "TNumber");
    let c = coalesce("x", &[spec(DType::INT32, &[]), spec(DType::BOOL, &[])]);
    assert_eq!(constraint(&c).to_string(), "TensorSpec(any, [])");
    let c = coalesce("x", &[spec(DType::INT32, &[1]), spec(DType::INT64, &[1, 1])]);
    assert_eq!(constraint(&c).to_string(), "TensorSpec({INT32, UINT8, INT16, INT8, INT64, UINT16, UINT32, UINT64}, <unknown>)");
}

#[test]
fn lists_of_one_length_coalesce_element_by_element_and_other_lengths_trace_apart() {
    let list = |dims: &[&[i64]]| TypeRef::new(ListType::new(dims.iter().map(|d| spec(DType::FLOAT, d)).collect()));
    let c = constraint(&coalesce("xs", &[list(&[&[2], &[2]]), list(&[&[4], &[4]])]));
    assert_eq!(c.to_string(), ListConstraint::new(Some(constraint(&coalesce("e", &[spec(DType::FLOAT, &[-1])]))), Some(2)).to_string());
    assert!(list(&[&[7], &[1]]).is_subtype_of(&*c) && !list(&[&[7]]).is_subtype_of(&*c));
    let Coalesced::PerExample(why) = coalesce("xs", &[list(&[&[2]]), list(&[&[2], &[2]])]) else { panic!() };
    assert_eq!(why, "xs: lists of lengths 1, 2 are traced one per length (pass one stacked tensor to share a trace)");
}

#[test]
fn maps_with_one_key_set_coalesce_and_others_trace_apart() {
    let map = |keys: &[&str], n: i64| {
        TypeRef::new(MapType::new(keys.iter().map(|k| (k.to_string(), spec(DType::FLOAT, &[n]))).collect::<BTreeMap<_, _>>()))
    };
    let c = constraint(&coalesce("m", &[map(&["a", "b"], 1), map(&["b", "a"], 3)]));
    assert!(map(&["a", "b"], 9).is_subtype_of(&*c));
    assert!(matches!(coalesce("m", &[map(&["a"], 1), map(&["b"], 1)]), Coalesced::PerExample(w) if w.contains("key sets")));
}

#[test]
fn java_values_are_never_generalized_and_the_report_recommends_a_tensor() {
    let lit = |id, v: &str| TypeRef::new(Literal::new(id, v, "java.lang.Integer"));
    assert_eq!(coalesce("n", &[lit(1, "3"), lit(1, "3")]), Coalesced::Unchanged);
    let Coalesced::PerExample(why) = coalesce("n", &[lit(1, "3"), lit(2, "4")]) else { panic!() };
    assert_eq!(why, "n: Java values 3, 4 are traced one per value; pass n as a tensor to share one trace");
}

#[test]
fn declared_constraints_win_where_narrower_and_conflicts_name_both() {
    let tc = |d: DTypeSet, s: Option<&[i64]>| TypeRef::new(TensorConstraint::new(d, s.map(Shape::of)));
    let floats = DTypeSet::of(&[DType::FLOAT]);
    let inferred = tc(floats.clone(), Some(&[-1, 3]));
    let src = Provenance::Examples(3);
    // Nothing declared about the shape: the inferred shape.
    let m = merge_declared("x", &tc(DTypeSet::floating(), None), &inferred, &src).unwrap();
    assert_eq!(m.to_string(), "TensorSpec(FLOAT, [-1, 3])");
    // A narrower declared shape wins.
    let m = merge_declared("x", &tc(floats.clone(), Some(&[4, 3])), &inferred, &src).unwrap();
    assert_eq!(m.to_string(), "TensorSpec(FLOAT, [4, 3])");
    // Not comparable: an error naming the parameter and both types, and where each came from.
    let e = merge_declared("x", &tc(floats.clone(), Some(&[-1, 4])), &inferred, &src).unwrap_err();
    assert_eq!(
        e.to_string(),
        "parameter 'x': the declared TensorSpec(FLOAT, [-1, 4]) conflicts with TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples)"
    );
    let e = merge_declared("x", &tc(DTypeSet::of(&[DType::INT32]), None), &inferred, &src).unwrap_err();
    assert!(matches!(e, BindError::Conflict { ref param, .. } if param == "x"), "{e}");
}

#[test]
fn provenance_texts() {
    assert_eq!(Provenance::Declared.to_string(), "declared");
    assert_eq!(Provenance::Examples(1).to_string(), "inferred from 1 example");
    assert_eq!(Provenance::Examples(3).to_string(), "inferred from 3 examples");
    assert_eq!(Provenance::Profile(1000).to_string(), "inferred from a profile of 1000 calls");
}

#[test]
fn declaration_lines_for_families_lists_and_odd_names() {
    let c = TypeRef::new(TensorConstraint::new(DTypeSet::floating(), Some(Shape::Unknown)));
    let (java, kotlin) = declaration_lines("my-x", &c).unwrap();
    assert_eq!(java, "Operand<TFloating> my_x = in.input(\"my-x\", TFloating.class, Shape.unknown());");
    assert_eq!(kotlin, "val my_x = inputs.input<TFloating>(\"my-x\", Shape.unknown())");
    let l = TypeRef::new(ListConstraint::new(Some(TypeRef::new(TensorConstraint::new(DTypeSet::of(&[DType::INT64]), None))), Some(2)));
    assert_eq!(declaration_lines("xs", &l).unwrap().0, "List<Operand<TInt64>> xs = in.list(\"xs\", TInt64.class);");
}

// Property: the coalesced constraint admits every example, and it is below every other
// constraint of the lattice (a dtype family of Polyfn's, any shape) that admits them all.

const DTYPES: [DType; 6] = [DType::FLOAT, DType::DOUBLE, DType::HALF, DType::INT32, DType::INT64, DType::BOOL];

fn arb_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        1 => Just(Shape::Unknown),
        6 => proptest::collection::vec(prop_oneof![4 => 0i64..4, 1 => Just(-1i64)], 0..3).prop_map(|d| Shape::of(&d)),
    ]
}

fn arb_example() -> impl Strategy<Value = TensorSpec> {
    ((0..DTYPES.len()), arb_shape()).prop_map(|(d, s)| TensorSpec::new(DTYPES[d], s))
}

fn arb_candidate() -> impl Strategy<Value = TensorConstraint> {
    let family = prop_oneof![
        (0..DTYPES.len()).prop_map(|d| DTypeSet::of(&[DTYPES[d]])),
        Just(DTypeSet::floating()),
        Just(DTypeSet::integral()),
        Just(DTypeSet::floating().union(&DTypeSet::integral())),
        Just(DTypeSet::any()),
    ];
    (family, arb_shape()).prop_map(|(d, s)| TensorConstraint::new(d, Some(s)))
}

proptest! {
    #[test]
    fn coalesced_is_the_most_specific_common_supertype(
        examples in proptest::collection::vec(arb_example(), 1..6),
        candidates in proptest::collection::vec(arb_candidate(), 1..20),
    ) {
        let types: Vec<TypeRef> = examples.iter().cloned().map(TypeRef::new).collect();
        let c = constraint(&coalesce("x", &types));
        for e in &examples {
            prop_assert!(e.is_subtype_of(&*c), "{e} not under {c}");
        }
        for t in candidates.iter().chain(std::iter::once(&TensorConstraint::new(DTypeSet::any(), None))) {
            if examples.iter().all(|e| e.is_subtype_of(t)) {
                prop_assert!(c.is_subtype_of(t), "{c} is not below {t}, which admits every example");
            }
        }
    }
}
