//! Exact subtype and join rules of the constraint types (what a declared parameter accepts) and
//! of multi-parameter function types: each assertion pins one rule, so breaking any single
//! comparison or boolean in the lattice fails a named test.

use polyfn_core::*;

fn spec(d: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
}

fn spec_unknown(d: DType) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::Unknown))
}

fn tc(dtypes: &[DType], shape: Option<&[i64]>) -> TypeRef {
    TypeRef::new(TensorConstraint::new(DTypeSet::of(dtypes), shape.map(Shape::of)))
}

fn lit(id: u64, class: &str) -> TypeRef {
    TypeRef::new(Literal::new(id, id.to_string(), class))
}

fn list(xs: Vec<TypeRef>) -> TypeRef {
    TypeRef::new(ListType::new(xs))
}

fn map(xs: &[(&str, TypeRef)]) -> TypeRef {
    TypeRef::new(MapType::new(xs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()))
}

fn var(d: DType, alias: u64) -> TypeRef {
    TypeRef::new(VariableSpec::new(d, Shape::of(&[2]), alias))
}

fn le(a: &TypeRef, b: &TypeRef) -> bool {
    a.is_subtype_of(&**b)
}

fn join(a: &TypeRef, b: &TypeRef) -> Option<TypeRef> {
    a.most_specific_common_supertype(&[b.as_dyn()])
}

const F: DType = DType::FLOAT;
const I: DType = DType::INT32;

#[test]
fn tensor_constraint_subtyping_needs_both_dtype_and_shape() {
    // dtype fails, shape fits
    assert!(!le(&tc(&[I], Some(&[-1])), &tc(&[F], Some(&[-1]))));
    // dtype fits, shape fails
    assert!(!le(&tc(&[F], Some(&[2, 3])), &tc(&[F], Some(&[-1]))));
    assert!(!le(&tc(&[F], None), &tc(&[F], Some(&[-1]))), "no shape is the top shape");
    // both fit
    assert!(le(&tc(&[F], Some(&[2])), &tc(&[F, I], Some(&[-1]))));
    assert!(le(&tc(&[F], Some(&[2])), &tc(&[F], None)));
    assert!(!le(&tc(&[F, I], Some(&[2])), &tc(&[F], None)));

    // a constraint below a spec: single dtype, a shape, and that shape below the spec's
    assert!(le(&tc(&[F], Some(&[2])), &spec(F, &[-1])));
    assert!(!le(&tc(&[F], Some(&[2])), &spec(I, &[-1])));
    assert!(!le(&tc(&[F, I], Some(&[2])), &spec(F, &[-1])));
    assert!(!le(&tc(&[F], None), &spec(F, &[-1])));
    assert!(!le(&tc(&[F], Some(&[2, 2])), &spec(F, &[-1])));
    assert!(le(&tc(&[F], Some(&[2, 2])), &spec_unknown(F)));
    assert!(!le(&spec_unknown(F), &spec(F, &[-1])));
    // nor below anything else
    assert!(!le(&tc(&[F], Some(&[2])), &lit(1, "java.lang.Integer")));

    // a spec below a constraint: dtype in the set and shape below the constraint's
    assert!(le(&spec(F, &[5]), &tc(&[F], Some(&[-1]))));
    assert!(!le(&spec(I, &[5]), &tc(&[F], Some(&[-1]))));
    assert!(!le(&spec(F, &[5, 1]), &tc(&[F], Some(&[-1]))));
    assert!(le(&spec(F, &[5, 1]), &tc(&[F], None)));
    assert!(!le(&spec(I, &[5, 1]), &tc(&[F], None)));
    assert!(!le(&spec(F, &[5]), &lit(1, "x")));
    assert!(!le(&spec(F, &[5]), &spec(I, &[5])));
    assert!(!le(&spec(F, &[5]), &spec(F, &[6])));
}

#[test]
fn tensor_joins_keep_every_shape_both_sides_know() {
    // constraint ∨ spec of the same shape keeps the shape
    let j = join(&tc(&[F], Some(&[2, 3])), &spec(F, &[2, 3])).unwrap();
    assert_eq!(j, tc(&[F], Some(&[2, 3])));
    let j = join(&spec(F, &[2, 3]), &tc(&[I], Some(&[2, 4]))).unwrap();
    assert_eq!(j, tc(&[F, I], Some(&[2, -1])));
    // rank differs: no shape survives
    let j = join(&tc(&[F], Some(&[2])), &tc(&[F], Some(&[2, 2]))).unwrap();
    assert_eq!(j, tc(&[F], None));
    // one side without a shape: the join has none
    let j = join(&tc(&[F], None), &spec(F, &[2])).unwrap();
    assert_eq!(j, tc(&[F], None));
    // specs: dims known to both and equal survive
    assert_eq!(join(&spec(F, &[2, 3]), &spec(F, &[2, 4])), Some(spec(F, &[2, -1])));
    assert_eq!(join(&spec(F, &[2, 3]), &spec(F, &[2, 3])), Some(spec(F, &[2, 3])));
    assert_eq!(join(&spec(F, &[2]), &spec(I, &[2])), None, "dtypes never generalize between specs");
    // scalars keep rank 0
    assert_eq!(join(&spec(F, &[]), &tc(&[F], Some(&[]))), Some(tc(&[F], Some(&[]))));
    // a non-tensor on either side: no join
    assert_eq!(join(&tc(&[F], None), &lit(1, "I")), None);
    assert_eq!(join(&spec(F, &[2]), &lit(1, "I")), None);
    assert_eq!(join(&spec(F, &[2]), &list(vec![])), None);
}

#[test]
fn dtype_sets_are_never_confused() {
    let ints = tc(&[I], Some(&[-1]));
    let floats = tc(&[F], Some(&[-1]));
    assert!(!le(&ints, &floats) && !le(&floats, &ints));
    let both = join(&ints, &floats).unwrap();
    assert!(le(&ints, &both) && le(&floats, &both));
    assert!(!le(&both, &ints) && !le(&both, &floats));
    let any = TypeRef::new(TensorConstraint::new(DTypeSet::any(), None));
    assert!(le(&both, &any) && !le(&any, &both));
    assert_eq!(join(&any, &floats), Some(any.clone()));
}

#[test]
fn list_constraints_check_every_element_and_the_length() {
    let floats = ListConstraint::new(Some(tc(&[F], None)), None);
    let floats = TypeRef::new(floats);
    assert!(le(&list(vec![spec(F, &[2]), spec(F, &[3, 3])]), &floats));
    assert!(!le(&list(vec![spec(I, &[2])]), &floats), "an INT32 element is not a FLOAT");
    assert!(!le(&list(vec![spec(F, &[2]), spec(I, &[2])]), &floats), "the last element counts too");
    assert!(le(&list(vec![]), &floats));
    let two = TypeRef::new(ListConstraint::new(None, Some(2)));
    assert!(le(&list(vec![spec(I, &[]), lit(1, "I")]), &two));
    assert!(!le(&list(vec![spec(I, &[])]), &two));
    let two_floats = TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), Some(2)));
    assert!(!le(&list(vec![spec(F, &[]), spec(I, &[])]), &two_floats));
    assert!(!le(&list(vec![spec(F, &[])]), &two_floats));
    assert!(le(&list(vec![spec(F, &[]), spec(F, &[1])]), &two_floats));
    // a list type is below a list type element-wise, never below a non-list
    assert!(!le(&list(vec![spec(F, &[])]), &spec(F, &[])));
    assert!(!le(&list(vec![spec(I, &[2])]), &list(vec![spec(F, &[2])])));

    // constraint vs constraint: lengths must agree unless the supertype has none
    let c = |e: Option<TypeRef>, n: Option<usize>| TypeRef::new(ListConstraint::new(e, n));
    assert!(le(&c(None, Some(2)), &c(None, Some(2))));
    assert!(le(&c(None, Some(2)), &c(None, None)));
    assert!(!le(&c(None, Some(2)), &c(None, Some(3))));
    assert!(!le(&c(None, None), &c(None, Some(2))));
    // elements: None is the top
    assert!(le(&c(Some(tc(&[F], None)), None), &c(None, None)));
    assert!(!le(&c(None, None), &c(Some(tc(&[F], None)), None)));
    assert!(le(&c(Some(tc(&[F], None)), None), &c(Some(tc(&[F, I], None)), None)));
    assert!(!le(&c(Some(tc(&[I], None)), None), &c(Some(tc(&[F], None)), None)));
    assert!(!le(&c(Some(tc(&[F], None)), Some(2)), &c(Some(tc(&[I], None)), Some(2))));
    // a constraint is never below a concrete list
    assert!(!le(&c(None, Some(0)), &list(vec![])));
}

#[test]
fn list_constraint_joins() {
    let c = |e: Option<TypeRef>, n: Option<usize>| TypeRef::new(ListConstraint::new(e, n));
    // same length kept, different length dropped
    assert_eq!(join(&c(None, Some(2)), &c(None, Some(2))), Some(c(None, Some(2))));
    assert_eq!(join(&c(None, Some(2)), &c(None, Some(3))), Some(c(None, None)));
    // a concrete list of the constraint's length keeps it
    let l2 = list(vec![spec(F, &[2]), spec(F, &[3])]);
    let j = join(&c(Some(tc(&[F], None)), Some(2)), &l2).unwrap();
    assert_eq!(j, c(Some(tc(&[F], None)), Some(2)));
    let j = join(&c(Some(tc(&[F], None)), Some(3)), &l2).unwrap();
    assert_eq!(j, c(Some(tc(&[F], None)), None));
    // element types are joined
    let j = join(&c(Some(tc(&[F], Some(&[2]))), None), &c(Some(tc(&[I], Some(&[3]))), None)).unwrap();
    assert_eq!(j, c(Some(tc(&[F, I], Some(&[-1]))), None));
    // an unbounded element anywhere makes the element unbounded
    assert_eq!(join(&c(Some(tc(&[F], None)), None), &c(None, None)), Some(c(None, None)));
    assert_eq!(join(&c(None, None), &c(Some(tc(&[F], None)), None)), Some(c(None, None)));
    // not a list: no join
    assert_eq!(join(&c(None, None), &spec(F, &[])), None);
    // list types join element-wise, only at equal lengths
    assert_eq!(join(&l2, &list(vec![spec(F, &[4]), spec(F, &[3])])), Some(list(vec![spec(F, &[-1]), spec(F, &[3])])));
    assert_eq!(join(&l2, &list(vec![spec(F, &[2])])), None);
}

#[test]
fn map_constraints() {
    let c = |v: Option<TypeRef>| TypeRef::new(MapConstraint::new(v));
    let m = map(&[("a", spec(F, &[2])), ("b", spec(F, &[]))]);
    assert!(le(&m, &c(Some(tc(&[F], None)))));
    assert!(!le(&map(&[("a", spec(F, &[2])), ("b", spec(I, &[]))]), &c(Some(tc(&[F], None)))));
    assert!(le(&m, &c(None)));
    assert!(!le(&m, &spec(F, &[])));
    assert!(le(&c(Some(tc(&[F], None))), &c(Some(tc(&[F, I], None)))));
    assert!(!le(&c(Some(tc(&[F, I], None))), &c(Some(tc(&[F], None)))));
    assert!(le(&c(Some(tc(&[F], None))), &c(None)));
    assert!(!le(&c(None), &c(Some(tc(&[F], None)))));
    assert!(!le(&c(None), &m));
    // map types: same keys, values covariant
    assert!(le(&m, &map(&[("a", spec(F, &[-1])), ("b", spec(F, &[]))])));
    assert!(!le(&m, &map(&[("a", spec(F, &[3])), ("b", spec(F, &[]))])));
    assert!(!le(&m, &map(&[("a", spec(F, &[2])), ("c", spec(F, &[]))])));
    assert!(!le(&m, &map(&[("a", spec(F, &[2]))])));
    // joins
    let j = join(&c(Some(tc(&[F], Some(&[2])))), &m).unwrap();
    assert_eq!(j, c(Some(tc(&[F], None))));
    let j = join(&c(Some(tc(&[F], Some(&[2])))), &c(Some(tc(&[I], Some(&[3]))))).unwrap();
    assert_eq!(j, c(Some(tc(&[F, I], Some(&[-1])))));
    assert_eq!(join(&c(Some(tc(&[F], None))), &c(None)), Some(c(None)));
    assert_eq!(join(&c(None), &spec(F, &[])), None);
    assert_eq!(join(&m, &map(&[("a", spec(F, &[3])), ("b", spec(F, &[]))])), Some(map(&[("a", spec(F, &[-1])), ("b", spec(F, &[]))])));
    assert_eq!(join(&m, &map(&[("a", spec(F, &[3]))])), None);
    assert_eq!(join(&m, &map(&[("a", spec(F, &[2])), ("b", spec(I, &[]))])), None);
}

#[test]
fn literal_constraint_side_rules() {
    let ints = TypeRef::new(LiteralConstraint::new("java.lang.Integer"));
    let strs = TypeRef::new(LiteralConstraint::new("java.lang.String"));
    assert!(le(&ints, &ints));
    assert!(!le(&ints, &strs));
    assert!(!le(&ints, &lit(1, "java.lang.Integer")), "a class is not one of its values");
    assert!(!le(&ints, &spec(F, &[])));
    assert!(le(&lit(1, "java.lang.Integer"), &ints));
    assert!(!le(&lit(1, "java.lang.String"), &ints));
    assert!(!le(&lit(1, "java.lang.Integer"), &lit(2, "java.lang.Integer")));
    assert!(!le(&lit(1, "java.lang.Integer"), &spec(F, &[])));
    // joins
    assert_eq!(join(&ints, &lit(4, "java.lang.Integer")), Some(ints.clone()));
    assert_eq!(join(&ints, &ints), Some(ints.clone()));
    assert_eq!(join(&ints, &lit(4, "java.lang.String")), None);
    assert_eq!(join(&ints, &strs), None);
    assert_eq!(join(&ints, &spec(F, &[])), None);
    assert_eq!(join(&lit(4, "java.lang.Integer"), &ints), Some(ints.clone()));
    assert_eq!(join(&lit(4, "java.lang.String"), &ints), None);
    assert_eq!(join(&lit(4, "java.lang.Integer"), &lit(4, "java.lang.Integer")), Some(lit(4, "java.lang.Integer")));
    assert_eq!(join(&lit(4, "java.lang.Integer"), &lit(5, "java.lang.Integer")), None);
    assert_eq!(join(&lit(4, "java.lang.Integer"), &spec(F, &[])), None);
}

#[test]
fn variable_constraint_side_rules() {
    let c = |ds: &[DType]| TypeRef::new(VariableConstraint::new(DTypeSet::of(ds)));
    assert!(le(&c(&[F]), &c(&[F, I])));
    assert!(le(&c(&[F]), &c(&[F])));
    assert!(!le(&c(&[F, I]), &c(&[F])));
    assert!(!le(&c(&[I]), &c(&[F])));
    assert!(!le(&c(&[F]), &var(F, 0)), "a dtype family is not one variable");
    assert!(!le(&c(&[F]), &tc(&[F], None)));
    assert!(le(&var(F, 0), &c(&[F])));
    assert!(!le(&var(I, 0), &c(&[F])));
    assert!(le(&var(F, 0), &var(F, 0)));
    assert!(!le(&var(F, 0), &var(F, 1)));
    assert!(!le(&var(F, 0), &spec(F, &[2])));
    // joins
    assert_eq!(join(&c(&[F]), &var(I, 3)), Some(c(&[F, I])));
    assert_eq!(join(&c(&[F]), &c(&[I])), Some(c(&[F, I])));
    assert_eq!(join(&c(&[F]), &spec(F, &[])), None);
    assert_eq!(join(&var(F, 0), &var(F, 0)), Some(var(F, 0)));
    assert_eq!(join(&var(F, 0), &var(F, 1)), None, "which variable of the call it is never generalizes");
    assert_eq!(join(&var(F, 0), &var(I, 0)), None);
    // a variable is one graph input (its handle)
    let mut out = Vec::new();
    var(F, 0).placeholders("v", &mut PlaceholderContext::new(), &mut out);
    assert_eq!(out.len(), 1);
}

fn param(name: &str, kind: ParamKind, t: TypeRef) -> Parameter {
    Parameter::new(name, kind).with_constraint(t)
}

fn f3(x: TypeRef, xs: TypeRef, n: TypeRef) -> FunctionType {
    FunctionType::new(vec![
        param("x", ParamKind::Tensor, x),
        param("xs", ParamKind::List, xs),
        param("n", ParamKind::Java, n),
    ])
}

#[test]
fn function_types_with_several_parameters() {
    let a = f3(spec(F, &[2]), list(vec![spec(F, &[1])]), lit(1, "I"));
    let b = f3(spec(F, &[3]), list(vec![spec(F, &[1])]), lit(1, "I"));
    let j = a.most_specific_common_supertype(&[&b]).unwrap();
    assert_eq!(j, f3(spec(F, &[-1]), list(vec![spec(F, &[1])]), lit(1, "I")));
    // the last parameter decides too
    let c = f3(spec(F, &[2]), list(vec![spec(F, &[1])]), lit(2, "I"));
    assert!(a.most_specific_common_supertype(&[&c]).is_none());
    assert!(!a.is_subtype_of(&c) && !c.is_subtype_of(&a));
    // the middle one too
    let d = f3(spec(F, &[2]), list(vec![spec(F, &[5])]), lit(1, "I"));
    assert!(!a.is_subtype_of(&d));
    let jd = a.most_specific_common_supertype(&[&d]).unwrap();
    assert_eq!(jd, f3(spec(F, &[2]), list(vec![spec(F, &[-1])]), lit(1, "I")));
    // three at once
    let j3 = a.most_specific_common_supertype(&[&b, &d]).unwrap();
    assert_eq!(j3, f3(spec(F, &[-1]), list(vec![spec(F, &[-1])]), lit(1, "I")));
    // an unconstrained parameter anywhere leaves the join unconstrained there
    let mut open = a.clone();
    open.parameters[1].type_constraint = None;
    let jo = a.most_specific_common_supertype(&[&open]).unwrap();
    assert_eq!(jo.parameters[1].type_constraint, None);
    assert_eq!(jo.parameters[0].type_constraint, Some(spec(F, &[2])));
    let jo = open.most_specific_common_supertype(&[&a]).unwrap();
    assert_eq!(jo.parameters[1].type_constraint, None);
    assert!(a.is_subtype_of(&open) && !open.is_subtype_of(&a));
    let mut ctx = PlaceholderContext::new();
    let mut out = Vec::new();
    for p in &a.parameters {
        p.type_constraint.as_ref().unwrap().placeholders(&p.name, &mut ctx, &mut out);
    }
    assert_eq!(out.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["x", "xs[0]"]);
}

#[test]
fn joins_of_different_parameter_lists_are_none_not_a_panic() {
    let x = |t: TypeRef| param("x", ParamKind::Tensor, t);
    let one = FunctionType::new(vec![x(spec(F, &[2]))]);
    let two = FunctionType::new(vec![x(spec(F, &[2])), param("y", ParamKind::Tensor, spec(F, &[2]))]);
    let none = FunctionType::new(vec![]);
    for (a, b) in [(&one, &two), (&two, &one), (&none, &one), (&one, &none), (&none, &two)] {
        assert!(a.most_specific_common_supertype(&[b]).is_none(), "{a} ∨ {b}");
        assert!(!a.is_subtype_of(b) && !a.same_signature(b), "{a} vs {b}");
    }
    assert!(two.most_specific_common_supertype(&[&two, &one]).is_none());
    assert!(one.most_specific_common_supertype(&[&one, &two]).is_none());
    // same length, one slot differs: by name, kind or optional flag
    let renamed = FunctionType::new(vec![param("z", ParamKind::Tensor, spec(F, &[2]))]);
    let rekinded = FunctionType::new(vec![param("x", ParamKind::List, spec(F, &[2]))]);
    let optional = FunctionType::new(vec![param("x", ParamKind::Tensor, spec(F, &[2])).optional()]);
    for other in [&renamed, &rekinded, &optional] {
        assert!(!one.same_signature(other) && !other.same_signature(&one), "{other}");
        assert!(!one.is_subtype_of(other) && !other.is_subtype_of(&one), "{other}");
        assert!(one.most_specific_common_supertype(&[other]).is_none(), "{other}");
    }
    assert!(one.same_signature(&FunctionType::new(vec![x(spec(I, &[7]))])));
    // captures: names and count must agree
    let cap = |names: &[&str]| {
        one.clone().with_captures(names.iter().map(|n| (n.to_string(), var(F, 0))).collect())
    };
    for (a, b) in [(cap(&["v"]), cap(&[])), (cap(&[]), cap(&["v"])), (cap(&["v"]), cap(&["w"])), (cap(&["v", "w"]), cap(&["v"]))] {
        assert!(a.most_specific_common_supertype(&[&b]).is_none(), "{a} ∨ {b}");
        assert!(!a.is_subtype_of(&b), "{a} vs {b}");
    }
    assert_eq!(cap(&["v"]).most_specific_common_supertype(&[&cap(&["v"])]), Some(cap(&["v"])));
    // captures whose types have no join
    let c0 = one.clone().with_captures(vec![("v".into(), var(F, 0))]);
    let c1 = one.clone().with_captures(vec![("v".into(), var(F, 1))]);
    assert!(c0.most_specific_common_supertype(&[&c1]).is_none());
    assert!(!c0.is_subtype_of(&c1));
}

#[test]
fn check_constraints_names_the_offending_parameter() {
    let declared = FunctionType::new(vec![
        param("x", ParamKind::Tensor, tc(&[F], Some(&[-1]))),
        param("xs", ParamKind::List, TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), None))),
    ]);
    let call = |x: TypeRef, xs: TypeRef| {
        FunctionType::new(vec![param("x", ParamKind::Tensor, x), param("xs", ParamKind::List, xs)])
    };
    assert_eq!(check_constraints(&call(spec(F, &[3]), list(vec![spec(F, &[])])), &declared), Ok(()));
    match check_constraints(&call(spec(F, &[3]), list(vec![spec(I, &[])])), &declared) {
        Err(BindError::TypeMismatch { param, got, .. }) => {
            assert_eq!(param, "xs");
            assert!(got.contains("element 0"), "{got}");
        }
        other => panic!("{other:?}"),
    }
    match check_constraints(&call(spec(F, &[3, 3]), list(vec![])), &declared) {
        Err(BindError::TypeMismatch { param, .. }) => assert_eq!(param, "x"),
        other => panic!("{other:?}"),
    }
    // captures are checked too
    let with_cap = declared.clone().with_captures(vec![(
        "v".into(),
        TypeRef::new(VariableConstraint::new(DTypeSet::of(&[F]))),
    )]);
    let c = call(spec(F, &[3]), list(vec![])).with_captures(vec![("v".into(), var(I, 0))]);
    match check_constraints(&c, &with_cap) {
        Err(BindError::TypeMismatch { param, .. }) => assert_eq!(param, "capture v"),
        other => panic!("{other:?}"),
    }
    let c = call(spec(F, &[3]), list(vec![])).with_captures(vec![("v".into(), var(F, 0))]);
    assert_eq!(check_constraints(&c, &with_cap), Ok(()));
}

#[test]
fn explanations_say_what_differs() {
    let why = |a: &TypeRef, b: &TypeRef| a.explain_mismatch(&**b);
    // list constraints: the length first, then the first element that does not fit
    let two_floats = TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), Some(2)));
    assert_eq!(
        why(&list(vec![spec(F, &[])]), &two_floats).as_deref(),
        Some("list of length 1 does not match list of length 2")
    );
    let w = why(&list(vec![spec(F, &[]), spec(I, &[3])]), &two_floats).unwrap();
    assert!(w.starts_with("element 1: TensorSpec(INT32, [3]) does not match"), "{w}");
    assert_eq!(why(&list(vec![spec(F, &[]), spec(F, &[3])]), &two_floats), None);
    let any_floats = TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), None));
    let w = why(&list(vec![spec(I, &[])]), &any_floats).unwrap();
    assert!(w.starts_with("element 0: "), "{w}");
    // variables: dtype, then shape, then which variable of the call it is
    let v = |d: DType, dims: &[i64], alias: u64| TypeRef::new(VariableSpec::new(d, Shape::of(dims), alias));
    let w = why(&v(I, &[2], 0), &v(F, &[2], 0)).unwrap();
    assert!(w.ends_with(": dtype INT32 vs FLOAT"), "{w}");
    let w = why(&v(F, &[3], 0), &v(F, &[2], 0)).unwrap();
    assert!(w.ends_with(": shape [3] vs [2]"), "{w}");
    let w = why(&v(F, &[2], 1), &v(F, &[2], 0)).unwrap();
    assert!(w.ends_with(": another variable aliasing"), "{w}");
    assert_eq!(why(&v(F, &[2], 0), &v(F, &[2], 0)), None);
    // a Java value lists itself by its value
    assert_eq!(lit(3, "java.lang.Integer").short_repr(), "3");
    assert_eq!(spec(F, &[2]).short_repr(), "TensorSpec(FLOAT, [2])");
}

/// What declared types contribute as graph inputs on their own: a single-dtype tensor
/// constraint is one placeholder of its shape (a family is none: no dtype to give it);
/// constraints on lists, maps and Java values contribute nothing until a call says how many.
#[test]
fn declared_types_as_graph_inputs() {
    let ph = |t: &TypeRef| {
        let mut out = Vec::new();
        t.placeholders("x", &mut PlaceholderContext::new(), &mut out);
        out
    };
    let single = ph(&tc(&[F], Some(&[-1, 3])));
    assert_eq!(single.len(), 1);
    assert_eq!((single[0].path.as_str(), single[0].dtype, &single[0].shape), ("x", F, &Shape::of(&[-1, 3])));
    assert_eq!(ph(&tc(&[F], None))[0].shape, Shape::Unknown);
    assert!(ph(&tc(&[F, I], Some(&[2]))).is_empty());
    for t in [
        TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), Some(2))),
        TypeRef::new(MapConstraint::new(Some(tc(&[F], None)))),
        TypeRef::new(LiteralConstraint::new("java.lang.Integer")),
    ] {
        assert!(ph(&t).is_empty(), "{t}");
    }
}
