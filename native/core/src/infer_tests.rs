use super::*;
use crate::{BindError, TraceType};
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

fn list(parts: &[TypeRef]) -> TypeRef {
    TypeRef::new(ListType::new(parts.to_vec()))
}

fn map(entries: &[(&str, TypeRef)]) -> TypeRef {
    TypeRef::new(MapType::new(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>()))
}

#[test]
fn lists_of_one_length_coalesce_position_by_position_and_other_lengths_trace_apart() {
    let f = |d: &[i64]| spec(DType::FLOAT, d);
    // Position 0 joins with position 0 only: a batch that varies and a fixed bias stay apart.
    let c = constraint(&coalesce("xs", &[list(&[f(&[2, 3]), f(&[7])]), list(&[f(&[5, 3]), f(&[7])])]));
    assert_eq!(c.to_string(), "List[TensorSpec(FLOAT, [-1, 3]), TensorSpec(FLOAT, [7])]");
    assert!(list(&[f(&[9, 3]), f(&[7])]).is_subtype_of(&*c));
    assert!(!list(&[f(&[9, 3]), f(&[8])]).is_subtype_of(&*c), "the fixed position stays fixed");
    assert!(!list(&[f(&[7])]).is_subtype_of(&*c));
    let Coalesced::PerExample(why) = coalesce("xs", &[list(&[f(&[2])]), list(&[f(&[2]), f(&[2])])]) else { panic!() };
    assert_eq!(why, "xs: lists of lengths 1, 2 are traced one per length (pass one stacked tensor to share a trace)");
    assert_eq!(coalesce("xs", &[list(&[]), list(&[])]), Coalesced::Unchanged);
}

#[test]
fn maps_with_one_key_set_coalesce_key_by_key_and_others_trace_apart() {
    let f = |d: &[i64]| spec(DType::FLOAT, d);
    let c = constraint(&coalesce("m", &[map(&[("a", f(&[1])), ("b", f(&[4, 2]))]), map(&[("a", f(&[3])), ("b", f(&[4, 2]))])]));
    assert_eq!(c.to_string(), map(&[("a", f(&[-1])), ("b", f(&[4, 2]))]).to_string());
    assert!(map(&[("a", f(&[9])), ("b", f(&[4, 2]))]).is_subtype_of(&*c));
    assert!(!map(&[("a", f(&[9])), ("b", f(&[5, 2]))]).is_subtype_of(&*c));
    let why = coalesce("m", &[map(&[("a", f(&[1]))]), map(&[("b", f(&[1]))])]);
    assert!(matches!(why, Coalesced::PerExample(w) if w == "m: maps with different key sets are traced one per key set"));
}

#[test]
fn nested_parts_coalesce_leaf_by_leaf_and_a_differing_part_is_named_by_its_path() {
    let f = |d: &[i64]| spec(DType::FLOAT, d);
    let lit = |id, v: &str| TypeRef::new(Literal::new(id, v, "java.lang.Integer"));
    let one = |n: i64, k: TypeRef| list(&[map(&[("k", f(&[n, 2]))]), k]);
    let c = constraint(&coalesce("xs", &[one(1, lit(1, "3")), one(4, lit(1, "3"))]));
    assert_eq!(c.to_string(), list(&[map(&[("k", f(&[-1, 2]))]), lit(1, "3")]).to_string());
    let Coalesced::PerExample(why) = coalesce("xs", &[one(1, lit(1, "3")), one(1, lit(2, "4"))]) else { panic!() };
    assert_eq!(why, "xs[1]: Java values 3, 4 are traced one per value; pass xs[1] as a tensor to share one trace");
    let Coalesced::PerExample(why) = coalesce("xs", &[list(&[map(&[("k", f(&[1]))])]), list(&[map(&[("j", f(&[1]))])])]) else {
        panic!()
    };
    assert_eq!(why, "xs[0]: maps with different key sets are traced one per key set");
}

#[test]
fn a_leafwise_list_meets_the_declared_element_at_every_position_and_specializes_each() {
    let f = |d: &[i64]| spec(DType::FLOAT, d);
    let inferred = constraint(&coalesce("xs", &[list(&[f(&[2, 3]), f(&[7])]), list(&[f(&[5, 3]), f(&[7])])]));
    let any_float = TypeRef::new(TensorConstraint::new(DTypeSet::floating(), None));
    let declared = TypeRef::new(ListConstraint::new(Some(any_float), None));
    let src = Provenance::Examples(2);
    let m = merge_declared("xs", &declared, &inferred, &src).unwrap();
    assert_eq!(m.to_string(), "List[TensorSpec(FLOAT, [-1, 3]), TensorSpec(FLOAT, [7])]");
    let traced = specialize(&list(&[f(&[9, 3]), f(&[7])]), &m);
    assert_eq!(traced.to_string(), "List[TensorSpec(FLOAT, [-1, 3]), TensorSpec(FLOAT, [7])]");
    // A declared length or element dtype that does not fit is a conflict naming both.
    let three = TypeRef::new(ListConstraint::new(None, Some(3)));
    assert!(matches!(merge_declared("xs", &three, &inferred, &src), Err(BindError::Conflict { .. })));
    let ints = TypeRef::new(ListConstraint::new(Some(TypeRef::new(TensorConstraint::new(DTypeSet::of(&[DType::INT32]), None))), None));
    let e = merge_declared("xs", &ints, &inferred, &src).unwrap_err();
    assert!(e.to_string().ends_with("(inferred from 2 examples)"), "{e}");
    let (java, kotlin) = declaration_lines("xs", &m).unwrap();
    assert_eq!(java, "List<Operand<TFloat32>> xs = in.list(\"xs\", TFloat32.class); // shapes by position: [-1, 3], [7]");
    assert_eq!(kotlin, "val xs = inputs.list<TFloat32>(\"xs\") // shapes by position: [-1, 3], [7]");
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

fn arb_list_examples() -> impl Strategy<Value = Vec<Vec<TensorSpec>>> {
    (1usize..4).prop_flat_map(|len| proptest::collection::vec(proptest::collection::vec(arb_example(), len), 1..5))
}

proptest! {
    /// Lists of one length: the coalesced list admits every example, and at each position it is
    /// what coalescing that position's examples alone gives (so no position widens another).
    #[test]
    fn a_coalesced_list_is_the_per_position_coalescing(examples in arb_list_examples()) {
        let lists: Vec<TypeRef> = examples.iter().map(|l| list(&l.iter().cloned().map(TypeRef::new).collect::<Vec<_>>())).collect();
        let c = constraint(&coalesce("xs", &lists));
        for l in &lists {
            prop_assert!(l.is_subtype_of(&*c), "{l} not under {c}");
        }
        let parts = &c.downcast_ref::<ListType>().unwrap().elements;
        for (i, part) in parts.iter().enumerate() {
            let column: Vec<TypeRef> = examples.iter().map(|l| TypeRef::new(l[i].clone())).collect();
            prop_assert_eq!(part, &constraint(&coalesce("x", &column)));
        }
    }
}

#[test]
fn examples_of_differing_structure_coalesce_within_each_structure() {
    let f = |d: &[i64]| spec(DType::FLOAT, d);
    let examples = [list(&[f(&[2])]), list(&[f(&[2]), f(&[4])]), list(&[f(&[3])]), list(&[f(&[2]), f(&[5])])];
    assert!(matches!(coalesce("xs", &examples), Coalesced::PerExample(_)));
    let groups: Vec<String> = structures("xs", &examples).iter().map(|t| t.to_string()).collect();
    assert_eq!(groups, ["List[TensorSpec(FLOAT, [-1])]", "List[TensorSpec(FLOAT, [2]), TensorSpec(FLOAT, [-1])]"]);
    // Java values are each their own structure.
    let lit = |id, v: &str| TypeRef::new(Literal::new(id, v, "java.lang.Integer"));
    assert_eq!(structures("n", &[lit(1, "3"), lit(2, "4"), lit(1, "3")]), vec![lit(1, "3"), lit(2, "4")]);
}

#[test]
fn java_values_and_record_classes_are_named_once_each_in_the_order_first_seen() {
    let lit = |id, v: &str| TypeRef::new(Literal::new(id, v, "java.lang.String"));
    let examples = [lit(1, "\"a\""), lit(2, "\"b, c\""), lit(1, "\"a\""), lit(2, "\"b, c\""), lit(3, "\"d\"")];
    let Coalesced::PerExample(why) = coalesce("k", &examples) else { panic!() };
    assert_eq!(why, "k: Java values \"a\", \"b, c\", \"d\" are traced one per value; pass k as a tensor to share one trace");
    let rec = |class: &str| TypeRef::new(RecordType::new(class.to_owned(), vec![("x".to_owned(), spec(DType::FLOAT, &[1]))]));
    let Coalesced::PerExample(why) = coalesce("r", &[rec("a.A"), rec("a.B"), rec("a.A")]) else { panic!() };
    assert_eq!(why, "r: records of classes A, B are traced one per class");
}
