use super::*;
use crate::{DType, DTypeSet, Literal, TraceType};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn spec(d: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
}

fn tensor(dtypes: &[DType], shape: Option<&[i64]>) -> TypeRef {
    TypeRef::new(TensorConstraint::new(DTypeSet::of(dtypes), shape.map(Shape::of)))
}

fn floating(shape: Option<&[i64]>) -> TypeRef {
    TypeRef::new(TensorConstraint::new(DTypeSet::floating(), shape.map(Shape::of)))
}

fn list(parts: &[TypeRef]) -> TypeRef {
    TypeRef::new(ListType::new(parts.to_vec()))
}

fn map(entries: &[(&str, TypeRef)]) -> TypeRef {
    TypeRef::new(MapType::new(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>()))
}

fn merged(declared: &TypeRef, inferred: &TypeRef) -> Result<String, String> {
    merge_declared("x", declared, inferred, &Provenance::Examples(2)).map(|t| t.to_string()).map_err(|e| e.to_string())
}

#[test]
fn the_declaration_wins_where_it_is_narrower_and_the_examples_give_the_rest() {
    // README: Shape.of(4, 3) declared with examples [-1, 3] stays [4, 3].
    let d = tensor(&[DType::FLOAT], Some(&[4, 3]));
    assert_eq!(merged(&d, &tensor(&[DType::FLOAT], Some(&[-1, 3]))), Ok("TensorSpec(FLOAT, [4, 3])".into()));
    // TFloat32 declared, FLOAT and DOUBLE examples (floating): FLOAT, with the examples' shape.
    assert_eq!(merged(&tensor(&[DType::FLOAT], None), &floating(Some(&[-1, 3]))), Ok("TensorSpec(FLOAT, [-1, 3])".into()));
    // Dim by dim: each side's known dims.
    let d = tensor(&[DType::FLOAT], Some(&[4, -1]));
    assert_eq!(merged(&d, &tensor(&[DType::FLOAT], Some(&[-1, 3]))), Ok("TensorSpec(FLOAT, [4, 3])".into()));
    // An unknown rank on either side takes the other's shape.
    assert_eq!(
        merged(&tensor(&[DType::FLOAT], Some(&[2, -1])), &TypeRef::new(TensorConstraint::new(DTypeSet::floating(), Some(Shape::Unknown)))),
        Ok("TensorSpec(FLOAT, [2, -1])".into())
    );
    assert_eq!(merged(&floating(None), &tensor(&[DType::DOUBLE], Some(&[5]))), Ok("TensorSpec(DOUBLE, [5])".into()));
}

#[test]
fn a_true_conflict_names_the_declaration_and_the_examples() {
    let e = merged(&tensor(&[DType::FLOAT], None), &tensor(&[DType::INT32], Some(&[-1, 3]))).unwrap_err();
    assert_eq!(e, "parameter 'x': the declared TensorSpec(FLOAT, *) conflicts with TensorSpec(INT32, [-1, 3]) (inferred from 2 examples)");
    let e = merged(&tensor(&[DType::FLOAT], Some(&[-1, -1])), &tensor(&[DType::FLOAT], Some(&[2, 3, 4]))).unwrap_err();
    assert!(e.ends_with("the declared TensorSpec(FLOAT, [-1, -1]) conflicts with TensorSpec(FLOAT, [2, 3, 4]) (inferred from 2 examples)"), "{e}");
    let e = merged(&tensor(&[DType::FLOAT], Some(&[4, 3])), &tensor(&[DType::FLOAT], Some(&[5, 3]))).unwrap_err();
    assert!(e.contains("[4, 3]) conflicts with TensorSpec(FLOAT, [5, 3])"), "{e}");
}

#[test]
fn lists_and_maps_meet_their_declared_element_at_every_part() {
    let declared = TypeRef::new(ListConstraint::new(Some(tensor(&[DType::FLOAT], None)), None));
    let inferred = list(&[floating(Some(&[-1, 3])), tensor(&[DType::FLOAT], Some(&[7]))]);
    assert_eq!(merged(&declared, &inferred), Ok("List[TensorSpec(FLOAT, [-1, 3]), TensorSpec(FLOAT, [7])]".into()));
    let two = TypeRef::new(ListConstraint::new(None, Some(2)));
    assert_eq!(merged(&two, &inferred), Ok(inferred.to_string()), "no element declared: the examples' parts");
    let three = TypeRef::new(ListConstraint::new(None, Some(3)));
    assert!(merged(&three, &inferred).is_err(), "a declared length other than the examples'");
    let ints = TypeRef::new(ListConstraint::new(Some(tensor(&[DType::INT32], None)), None));
    assert!(merged(&ints, &inferred).is_err());
    let declared = TypeRef::new(MapConstraint::new(Some(tensor(&[DType::FLOAT], Some(&[-1, -1])))));
    let inferred = map(&[("a", floating(Some(&[2, -1]))), ("b", floating(Some(&[-1, 3])))]);
    assert_eq!(merged(&declared, &inferred), Ok(map(&[("a", tensor(&[DType::FLOAT], Some(&[2, -1]))), ("b", tensor(&[DType::FLOAT], Some(&[-1, 3])))]).to_string()));
    assert_eq!(merged(&TypeRef::new(MapConstraint::new(None)), &inferred), Ok(inferred.to_string()));
    let scalars = TypeRef::new(MapConstraint::new(Some(tensor(&[DType::FLOAT], Some(&[])))));
    assert!(merged(&scalars, &inferred).is_err());
}

#[test]
fn list_and_map_constraints_meet_element_by_element_and_length_by_length() {
    let c = |e: Option<TypeRef>, n: Option<usize>| TypeRef::new(ListConstraint::new(e, n));
    let f = Some(tensor(&[DType::FLOAT], None));
    let fl = Some(floating(Some(&[2])));
    assert_eq!(merged(&c(f.clone(), None), &c(fl.clone(), Some(3))).unwrap(), c(Some(tensor(&[DType::FLOAT], Some(&[2]))), Some(3)).to_string());
    assert_eq!(merged(&c(None, Some(3)), &c(fl.clone(), None)).unwrap(), c(fl.clone(), Some(3)).to_string());
    assert_eq!(merged(&c(f.clone(), Some(3)), &c(None, Some(3))).unwrap(), c(f.clone(), Some(3)).to_string());
    assert!(merged(&c(None, Some(2)), &c(None, Some(3))).is_err());
    assert!(merged(&c(Some(tensor(&[DType::INT32], None)), None), &c(fl.clone(), None)).is_err());
    let m = |v: Option<TypeRef>| TypeRef::new(MapConstraint::new(v));
    assert_eq!(merged(&m(f.clone()), &m(fl.clone())).unwrap(), m(Some(tensor(&[DType::FLOAT], Some(&[2])))).to_string());
    assert_eq!(merged(&m(None), &m(fl.clone())).unwrap(), m(fl.clone()).to_string());
    assert_eq!(merged(&m(f.clone()), &m(None)).unwrap(), m(f.clone()).to_string());
    assert!(merged(&m(Some(tensor(&[DType::INT32], None))), &m(fl)).is_err());
}

#[test]
fn java_values_are_never_inferred_and_other_kinds_take_the_narrower() {
    let lit = TypeRef::new(Literal::new(1, "1", "java.lang.Integer"));
    let declared = TypeRef::new(crate::LiteralConstraint::new("java.lang.Integer"));
    assert_eq!(merge_declared("k", &declared, &lit, &Provenance::Declared).unwrap(), declared, "the declaration stands");
    // Inside a list: a Java value meets its declared class (the narrower of the two).
    let xs = TypeRef::new(ListConstraint::new(Some(declared.clone()), None));
    assert_eq!(merged(&xs, &list(&[lit.clone()])).unwrap(), list(&[lit.clone()]).to_string());
    let strings = TypeRef::new(ListConstraint::new(Some(TypeRef::new(crate::LiteralConstraint::new("java.lang.String"))), None));
    assert!(merged(&strings, &list(&[lit.clone()])).is_err());
    // The declared side narrower than the inferred one wins, too.
    let xs = TypeRef::new(ListConstraint::new(Some(lit.clone()), None));
    assert_eq!(merged(&xs, &list(&[declared])).unwrap(), list(&[lit]).to_string());
}

#[test]
fn an_example_narrows_to_the_declaration_or_is_left_out() {
    let d = tensor(&[DType::FLOAT], Some(&[4, 3]));
    assert_eq!(narrow(&spec(DType::FLOAT, &[-1, 3]), &d), Some(spec(DType::FLOAT, &[4, 3])));
    assert_eq!(narrow(&spec(DType::FLOAT, &[4, 3]), &d), Some(spec(DType::FLOAT, &[4, 3])));
    assert_eq!(narrow(&spec(DType::FLOAT, &[5, 3]), &d), None, "a known dim differs");
    assert_eq!(narrow(&spec(DType::FLOAT, &[4]), &d), None, "the rank differs");
    assert_eq!(narrow(&spec(DType::DOUBLE, &[4, 3]), &d), None, "the dtype is not declared");
    assert_eq!(narrow(&spec(DType::DOUBLE, &[-1]), &floating(None)), Some(spec(DType::DOUBLE, &[-1])));
    let unknown = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::Unknown));
    assert_eq!(narrow(&unknown, &d), Some(spec(DType::FLOAT, &[4, 3])));
    assert_eq!(narrow(&unknown, &tensor(&[DType::FLOAT], None)), Some(unknown.clone()));
    // Under an inferred (merged) spec: same dtype, meet of the shapes.
    assert_eq!(narrow(&spec(DType::FLOAT, &[-1, 3]), &spec(DType::FLOAT, &[4, -1])), Some(spec(DType::FLOAT, &[4, 3])));
    assert_eq!(narrow(&spec(DType::DOUBLE, &[-1, 3]), &spec(DType::FLOAT, &[4, -1])), None);
    assert_eq!(narrow(&spec(DType::FLOAT, &[-1]), &list(&[])), None, "a tensor under a list");
}

#[test]
fn lists_maps_and_records_narrow_part_by_part() {
    let f = |d: &[i64]| spec(DType::FLOAT, d);
    let elems = TypeRef::new(ListConstraint::new(Some(tensor(&[DType::FLOAT], Some(&[-1, 3]))), None));
    assert_eq!(narrow(&list(&[f(&[-1, -1]), f(&[2, -1])]), &elems), Some(list(&[f(&[-1, 3]), f(&[2, 3])])));
    assert_eq!(narrow(&list(&[f(&[-1, 4])]), &elems), None);
    assert_eq!(narrow(&list(&[spec(DType::INT32, &[1, 3])]), &elems), None);
    let sized = TypeRef::new(ListConstraint::new(None, Some(2)));
    assert_eq!(narrow(&list(&[f(&[1])]), &sized), None);
    let any_two = TypeRef::new(ListConstraint::new(None, Some(1)));
    assert_eq!(narrow(&list(&[f(&[-1])]), &any_two), Some(list(&[f(&[-1])])));
    let positions = list(&[tensor(&[DType::FLOAT], Some(&[-1, 3])), tensor(&[DType::FLOAT], Some(&[7]))]);
    assert_eq!(narrow(&list(&[f(&[2, -1]), f(&[-1])]), &positions), Some(list(&[f(&[2, 3]), f(&[7])])));
    assert_eq!(narrow(&list(&[f(&[2, -1])]), &positions), None, "another length");
    assert_eq!(narrow(&list(&[f(&[2, -1]), f(&[8])]), &positions), None);
    assert_eq!(narrow(&list(&[f(&[2])]), &TypeRef::new(MapConstraint::new(None))), None);

    let values = TypeRef::new(MapConstraint::new(Some(tensor(&[DType::FLOAT], Some(&[2])))));
    assert_eq!(narrow(&map(&[("a", f(&[-1]))]), &values), Some(map(&[("a", f(&[2]))])));
    assert_eq!(narrow(&map(&[("a", f(&[3]))]), &values), None);
    assert_eq!(narrow(&map(&[("a", f(&[-1]))]), &TypeRef::new(MapConstraint::new(None))), Some(map(&[("a", f(&[-1]))])));
    let keys = map(&[("a", tensor(&[DType::FLOAT], Some(&[2]))), ("b", tensor(&[DType::FLOAT], None))]);
    assert_eq!(narrow(&map(&[("a", f(&[-1])), ("b", f(&[5]))]), &keys), Some(map(&[("a", f(&[2])), ("b", f(&[5]))])));
    assert_eq!(narrow(&map(&[("a", f(&[-1]))]), &keys), None, "another key set");
    assert_eq!(narrow(&map(&[("a", f(&[-1])), ("c", f(&[5]))]), &keys), None, "another key set of the same size");
    assert_eq!(narrow(&map(&[("a", f(&[3])), ("b", f(&[5]))]), &keys), None);
    assert_eq!(narrow(&map(&[("a", f(&[3]))]), &list(&[])), None);

    let rec = |class: &str, n: &str, t: TypeRef| TypeRef::new(RecordType::new(class.to_owned(), vec![(n.to_owned(), t)]));
    let c = rec("a.B", "x", tensor(&[DType::FLOAT], Some(&[4, 3])));
    assert_eq!(narrow(&rec("a.B", "x", f(&[-1, 3])), &c), Some(rec("a.B", "x", f(&[4, 3]))));
    assert_eq!(narrow(&rec("a.C", "x", f(&[-1, 3])), &c), None, "another class");
    assert_eq!(narrow(&rec("a.B", "y", f(&[-1, 3])), &c), None, "another component");
    assert_eq!(narrow(&rec("a.B", "x", f(&[5, 3])), &c), None);
    assert_eq!(narrow(&rec("a.B", "x", f(&[5, 3])), &list(&[])), None);
}

fn arb_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        1 => Just(Shape::Unknown),
        6 => prop::collection::vec(prop_oneof![Just(-1i64), 1i64..4], 0..3).prop_map(|d| Shape::of(&d)),
    ]
}

fn arb_dtypes() -> impl Strategy<Value = DTypeSet> {
    prop::sample::subsequence(vec![DType::FLOAT, DType::DOUBLE, DType::INT32, DType::HALF], 1..=4).prop_map(|d| DTypeSet::of(&d))
}

fn arb_constraint() -> impl Strategy<Value = TensorConstraint> {
    (arb_dtypes(), prop::option::of(arb_shape())).prop_map(|(d, s)| TensorConstraint::new(d, s))
}

fn arb_spec() -> impl Strategy<Value = TensorSpec> {
    (prop::sample::select(vec![DType::FLOAT, DType::DOUBLE, DType::INT32]), arb_shape()).prop_map(|(d, s)| TensorSpec::new(d, s))
}

proptest! {
    /// The merge is the meet: below both sides, and every spec both admit is admitted by it.
    #[test]
    fn the_merge_is_the_meet(d in arb_constraint(), i in arb_constraint(), s in arb_spec()) {
        let (dt, it) = (TypeRef::new(d.clone()), TypeRef::new(i.clone()));
        let both = s.is_subtype_of(&d) && s.is_subtype_of(&i);
        match merge_declared("x", &dt, &it, &Provenance::Examples(1)) {
            Ok(m) => {
                prop_assert!(m.is_subtype_of(&*dt) && m.is_subtype_of(&*it), "{m} below {dt} and {it}");
                prop_assert_eq!(both, s.is_subtype_of(&*m), "{} under {}", s, m);
                let swapped = merge_declared("x", &it, &dt, &Provenance::Examples(1)).unwrap();
                prop_assert_eq!(swapped, m, "the meet does not depend on the side");
            }
            Err(_) => prop_assert!(!both, "{} is admitted by both {} and {}, yet they conflict", s, dt, it),
        }
    }

    /// A narrowed example is below the example and the constraint, is the example itself when
    /// the constraint admits it, and is missing only when nothing is below both.
    #[test]
    fn a_narrowed_example_is_the_meet(c in arb_constraint(), v in arb_spec(), s in arb_spec()) {
        let (ct, vt) = (TypeRef::new(c.clone()), TypeRef::new(v.clone()));
        match narrow(&vt, &ct) {
            Some(n) => {
                prop_assert!(n.is_subtype_of(&*ct) && n.is_subtype_of(&*vt), "{n} below {ct} and {vt}");
                if v.is_subtype_of(&c) {
                    prop_assert_eq!(n, vt);
                }
            }
            None => prop_assert!(!(s.is_subtype_of(&c) && s.is_subtype_of(&v)), "{s} below {ct} and {vt}"),
        }
    }

    /// The shape meet is symmetric and below both shapes; `None` only when no shape is.
    #[test]
    fn the_shape_meet_is_below_both(a in arb_shape(), b in arb_shape(), s in arb_shape()) {
        let m = shape_meet(&a, &b);
        prop_assert_eq!(&m, &shape_meet(&b, &a));
        match m {
            Some(m) => prop_assert!(m.is_subtype_of(&a) && m.is_subtype_of(&b)),
            None => prop_assert!(!(s.is_subtype_of(&a) && s.is_subtype_of(&b))),
        }
    }
}
