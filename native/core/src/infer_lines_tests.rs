//! The declarations suggested for inferred constraints, and the corners of coalescing and
//! specializing that the main tests do not reach (written against the mutants that survived).

use super::*;
use crate::VariableSpec;
use std::collections::BTreeMap;

fn spec(d: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
}

fn tensor(dtypes: DTypeSet, shape: Option<&[i64]>) -> TypeRef {
    TypeRef::new(TensorConstraint::new(dtypes, shape.map(Shape::of)))
}

fn list(parts: &[TypeRef]) -> TypeRef {
    TypeRef::new(ListType::new(parts.to_vec()))
}

fn map(entries: &[(&str, TypeRef)]) -> TypeRef {
    TypeRef::new(MapType::new(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>()))
}

fn record(class: &str, fields: &[(&str, TypeRef)]) -> TypeRef {
    TypeRef::new(RecordType::new(class.to_owned(), fields.iter().map(|(n, t)| (n.to_string(), t.clone())).collect()))
}

fn variable(alias: u64) -> TypeRef {
    TypeRef::new(VariableSpec::new(DType::FLOAT, Shape::of(&[2]), alias))
}

#[test]
fn every_dtype_and_family_has_its_java_class() {
    let one = |d| java_type(&DTypeSet::of(&[d]));
    let classes: Vec<&str> = [
        DType::FLOAT,
        DType::DOUBLE,
        DType::HALF,
        DType::BFLOAT16,
        DType::INT32,
        DType::INT64,
        DType::UINT8,
        DType::UINT16,
        DType::BOOL,
        DType::STRING,
        DType::COMPLEX64,
    ]
    .into_iter()
    .map(one)
    .collect();
    assert_eq!(
        classes,
        ["TFloat32", "TFloat64", "TFloat16", "TBfloat16", "TInt32", "TInt64", "TUint8", "TUint16", "TBool", "TString", "TType"]
    );
    assert_eq!(java_type(&DTypeSet::floating()), "TFloating");
    assert_eq!(java_type(&DTypeSet::of(&[DType::FLOAT, DType::HALF])), "TFloating");
    assert_eq!(java_type(&DTypeSet::integral()), "TIntegral");
    assert_eq!(java_type(&DTypeSet::of(&[DType::INT32, DType::FLOAT])), "TNumber");
    assert_eq!(java_type(&DTypeSet::of(&[DType::BOOL, DType::FLOAT])), "TType");
    assert_eq!(java_type(&DTypeSet::any()), "TType");
}

#[test]
fn declarations_for_every_inferred_kind() {
    let floats = DTypeSet::of(&[DType::FLOAT]);
    // No shape: no shape argument.
    let (java, kotlin) = declaration_lines("x", &tensor(floats.clone(), None)).unwrap();
    assert_eq!(java, "Operand<TFloat32> x = in.input(\"x\", TFloat32.class);");
    assert_eq!(kotlin, "val x = inputs.input<TFloat32>(\"x\")");
    let (java, _) = declaration_lines("x", &tensor(floats.clone(), Some(&[]))).unwrap();
    assert_eq!(java, "Operand<TFloat32> x = in.input(\"x\", TFloat32.class, Shape.of());");
    // Lists and maps declared by one element type; TType when none is known.
    let l = TypeRef::new(ListConstraint::new(None, None));
    assert_eq!(
        declaration_lines("xs", &l).unwrap(),
        ("List<Operand<TType>> xs = in.list(\"xs\", TType.class);".into(), "val xs = inputs.list<TType>(\"xs\")".into())
    );
    let m = TypeRef::new(MapConstraint::new(Some(tensor(DTypeSet::of(&[DType::INT32]), None))));
    assert_eq!(
        declaration_lines("m", &m).unwrap(),
        ("Map<String, Operand<TInt32>> m = in.map(\"m\", TInt32.class);".into(), "val m = inputs.map<TInt32>(\"m\")".into())
    );
    let m = TypeRef::new(MapConstraint::new(None));
    assert_eq!(declaration_lines("m", &m).unwrap().0, "Map<String, Operand<TType>> m = in.map(\"m\", TType.class);");
    // Leafwise maps: the shapes by key in a comment; the dtypes' family as the element type.
    let m = map(&[("a", tensor(floats.clone(), Some(&[-1, 3]))), ("b", tensor(DTypeSet::of(&[DType::DOUBLE]), None))]);
    assert_eq!(
        declaration_lines("m", &m).unwrap(),
        (
            "Map<String, Operand<TFloating>> m = in.map(\"m\", TFloating.class); // shapes by key: 'a': [-1, 3], 'b': *".into(),
            "val m = inputs.map<TFloating>(\"m\") // shapes by key: 'a': [-1, 3], 'b': *".into()
        )
    );
    // A leafwise list of something other than tensors, a Java value: no declaration to suggest.
    assert_eq!(declaration_lines("xs", &list(&[TypeRef::new(Literal::new(1, "1", "java.lang.Integer"))])), None);
    assert_eq!(declaration_lines("m", &map(&[("a", list(&[]))])), None);
    assert_eq!(declaration_lines("k", &TypeRef::new(Literal::new(1, "1", "java.lang.Integer"))), None);
}

#[test]
fn parameter_names_become_java_identifiers() {
    let var = |name: &str| declaration_lines(name, &tensor(DTypeSet::of(&[DType::FLOAT]), None)).unwrap().1;
    assert_eq!(var("batch_x2"), "val batch_x2 = inputs.input<TFloat32>(\"batch_x2\")");
    assert_eq!(var("2x"), "val _2x = inputs.input<TFloat32>(\"2x\")");
    assert_eq!(var(""), "val _ = inputs.input<TFloat32>(\"\")");
    assert_eq!(var("a.b c"), "val a_b_c = inputs.input<TFloat32>(\"a.b c\")");
    assert_eq!(var("é"), "val é = inputs.input<TFloat32>(\"é\")");
}

#[test]
fn coalescing_corners() {
    assert_eq!(coalesce("x", &[]), Coalesced::Unchanged);
    assert_eq!(coalesce("m", &[map(&[]), map(&[])]), Coalesced::Unchanged, "empty maps: nothing to generalize");
    // Variables: never generalized; equal ones need nothing, a tensor beside one is another kind.
    assert_eq!(coalesce("v", &[variable(1), variable(2)]), Coalesced::Unchanged);
    let Coalesced::PerExample(why) = coalesce("v", &[variable(1), spec(DType::FLOAT, &[2])]) else { panic!() };
    assert_eq!(why, "v: examples of different kinds are traced one per kind");
    // Inside a list, position by position: equal values join, differing ones of a kind do not.
    let Coalesced::Constraint(c) = coalesce("xs", &[list(&[variable(1)]), list(&[variable(1)])]) else { panic!() };
    assert_eq!(c, list(&[variable(1)]));
    let Coalesced::PerExample(why) = coalesce("xs", &[list(&[variable(1)]), list(&[variable(2)])]) else { panic!() };
    assert_eq!(why, "xs[0]: differing variable values are traced one per example");
    let Coalesced::PerExample(why) = coalesce("xs", &[list(&[variable(1)]), list(&[spec(DType::FLOAT, &[1])])]) else { panic!() };
    assert_eq!(why, "xs[0]: examples of different kinds are traced one per kind");
    // Records: the same class with other components is another structure.
    let f = spec(DType::FLOAT, &[1]);
    let Coalesced::PerExample(why) = coalesce("r", &[record("a.B", &[("x", f.clone())]), record("a.B", &[("y", f.clone())])]) else {
        panic!()
    };
    assert_eq!(why, "r: records of classes B are traced one per class");
    let Coalesced::Constraint(c) =
        coalesce("r", &[record("a.B", &[("x", spec(DType::FLOAT, &[1]))]), record("a.B", &[("x", spec(DType::FLOAT, &[2]))])])
    else {
        panic!()
    };
    assert_eq!(c, record("a.B", &[("x", tensor(DTypeSet::of(&[DType::FLOAT]), Some(&[-1])))]));
}

#[test]
fn specializing_follows_lists_maps_and_records_part_by_part() {
    let floats = DTypeSet::of(&[DType::FLOAT]);
    let c = list(&[tensor(floats.clone(), Some(&[-1, 3])), tensor(floats.clone(), Some(&[7]))]);
    let traced = list(&[spec(DType::FLOAT, &[-1, 3]), spec(DType::FLOAT, &[7])]);
    assert_eq!(specialize(&list(&[spec(DType::FLOAT, &[9, 3]), spec(DType::FLOAT, &[7])]), &c), traced);
    let m = map(&[("a", tensor(floats.clone(), Some(&[-1])))]);
    assert_eq!(specialize(&map(&[("a", spec(DType::FLOAT, &[5]))]), &m), map(&[("a", spec(DType::FLOAT, &[-1]))]));
    let r = record("a.B", &[("x", tensor(floats.clone(), Some(&[-1])))]);
    assert_eq!(specialize(&record("a.B", &[("x", spec(DType::FLOAT, &[5]))]), &r), record("a.B", &[("x", spec(DType::FLOAT, &[-1]))]));
    // Another length, key set, class or component: the value as a whole, as any call.
    let one = list(&[spec(DType::FLOAT, &[9, 3])]);
    assert_eq!(specialize(&one, &c), one.specialize_for_trace(&*c));
    let other_key = map(&[("b", spec(DType::FLOAT, &[5]))]);
    assert_eq!(specialize(&other_key, &m), other_key.specialize_for_trace(&*m));
    for other in [record("a.C", &[("x", spec(DType::FLOAT, &[5]))]), record("a.B", &[("y", spec(DType::FLOAT, &[5]))])] {
        assert_eq!(specialize(&other, &r), other.specialize_for_trace(&*r));
    }
}
