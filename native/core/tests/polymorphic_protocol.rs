//! The polymorphic-function protocol (lookup → begin_trace → declare → finish_trace) for
//! functions with several parameters of every kind, driven by facts buffers as the Java side
//! writes them: dispatch on every parameter, errors naming the parameter, the fixed parameter
//! list (names, kinds, optional flags, captures), reduce-retracing under constraints, the cache
//! bound and statistics.

mod common;

use common::*;
use polyfn_core::*;

#[test]
fn every_parameter_takes_part_in_dispatch() {
    let f = new_fn(Options::default());
    let base = four(&[2], &[&[1]], &[(KEY_A, &[3])], 1);
    let t = call(&f, &base);
    assert_eq!(
        t,
        "(x: TensorSpec(FLOAT, [2]), xs: List[TensorSpec(FLOAT, [1])], m: Map{'a': TensorSpec(FLOAT, [3])}, n: Literal(1))"
    );
    assert_eq!(f.trace_count(), 1);
    assert_eq!(call(&f, &base), t, "the same call hits");
    assert_eq!(f.trace_count(), 1);
    // a change in any one parameter is another signature
    let variants = [
        four(&[3], &[&[1]], &[(KEY_A, &[3])], 1),
        four(&[2], &[&[2]], &[(KEY_A, &[3])], 1),
        four(&[2], &[&[1], &[1]], &[(KEY_A, &[3])], 1),
        four(&[2], &[&[1]], &[(KEY_A, &[4])], 1),
        four(&[2], &[&[1]], &[(KEY_B, &[3])], 1),
        four(&[2], &[&[1]], &[(KEY_A, &[3])], 2),
    ];
    for (i, v) in variants.iter().enumerate() {
        assert!(f.find::<String>(&call_facts(v)).unwrap().is_none(), "variant {i} must not hit");
        call(&f, v);
        assert_eq!(f.trace_count(), 2 + i as u32);
    }
    // all of them are cached now, each found by its own facts
    for v in variants.iter().chain([&base]) {
        let c = f.find::<String>(&call_facts(v)).unwrap().unwrap();
        assert_eq!(c.function_type.to_string(), c.inner);
    }
    let st = f.stats();
    assert_eq!((st.misses, st.traces, st.exact_hits, st.inexact_hits), (7, 7, 1, 0), "{st:?}");
}

#[test]
fn a_bad_argument_is_reported_by_its_parameter_name() {
    let f = new_fn(Options::default());
    call(&f, &four(&[2], &[&[1]], &[(KEY_A, &[3])], 1));
    let mut bad_list = four(&[2], &[&[1]], &[(KEY_A, &[3])], 1);
    bad_list[1].facts = list_of(&[tensor(F, &[1]), tensor(I, &[1])]);
    match f.lookup::<String>(&call_facts(&bad_list)) {
        Err(PolyError::Bind(BindError::TypeMismatch { param, got, .. })) => {
            assert_eq!(param, "xs");
            assert!(got.contains("element 1"), "{got}");
        }
        other => panic!("{:?}", other.map(|c| c.map(|c| c.id))),
    }
    let mut bad_literal = four(&[2], &[&[1]], &[(KEY_A, &[3])], 1);
    bad_literal[3].facts = literal(99);
    match f.lookup::<String>(&call_facts(&bad_literal)) {
        Err(PolyError::Bind(BindError::TypeMismatch { param, .. })) => assert_eq!(param, "n"),
        other => panic!("{:?}", other.map(|c| c.map(|c| c.id))),
    }
    // a value of another kind in a parameter's slot
    let mut wrong_kind = four(&[2], &[&[1]], &[(KEY_A, &[3])], 1);
    wrong_kind[2].facts = list_of(&[]);
    match f.lookup::<String>(&call_facts(&wrong_kind)) {
        Err(PolyError::Bind(BindError::TypeMismatch { param, .. })) => assert_eq!(param, "m"),
        other => panic!("{:?}", other.map(|c| c.map(|c| c.id))),
    }
    // a value missing at the end, and one too many
    let facts = call_facts(&four(&[2], &[&[1]], &[(KEY_A, &[3])], 1));
    assert!(matches!(f.lookup::<String>(&facts[..facts.len() - 2]), Err(PolyError::Bind(BindError::BadFacts(_)))));
    let mut longer = facts.clone();
    longer.extend(literal(1));
    assert!(matches!(f.lookup::<String>(&longer), Err(PolyError::Bind(BindError::BadFacts(_)))));
    // the declaring side names the parameter as well
    let mut s = f.begin_trace::<String>(vec!["x".into(), "xs".into(), "m".into(), "n".into()], None, false).unwrap();
    for a in &four(&[2], &[&[1]], &[(KEY_A, &[3])], 1)[..3] {
        s.declare::<String>(a.name, a.kind, a.optional, a.constraint.clone(), Some(f.decode_value(&a.facts).unwrap()))
            .unwrap();
    }
    let e = s
        .declare::<String>("n", ParamKind::Java, false, TypeRef::new(LiteralConstraint::new("java.lang.Integer")), Some(f.decode_value(&literal(99)).unwrap()))
        .unwrap_err();
    assert!(matches!(&e, PolyError::Bind(BindError::TypeMismatch { param, .. }) if param == "n"), "{e}");
}

/// Once the first trace fixed the list, a later trace may not change a parameter's kind or its
/// optional flag, not even alone: the declaration itself is refused.
#[test]
fn a_retrace_changing_only_a_kind_or_the_optional_flag_is_refused_at_the_declaration() {
    let f = new_fn(Options::default());
    let x = || f.decode_value(&tensor(F, &[2])).unwrap();
    let n = || f.decode_value(&literal(1)).unwrap();
    let ints = || TypeRef::new(LiteralConstraint::new("java.lang.Integer"));
    let first = |s: &mut TraceSession| {
        s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap();
    };
    let mut s = f.begin_trace::<String>(vec!["x".into(), "n".into()], None, true).unwrap();
    first(&mut s);
    s.declare::<String>("n", ParamKind::Java, true, ints(), Some(n())).unwrap();
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();

    let begin = || f.begin_trace::<String>(vec!["x".into(), "n".into()], None, true).unwrap();
    // kind only (same name, same optional flag)
    let mut s = begin();
    let e = s.declare::<String>("x", ParamKind::Variable, false, tc(&[F], None), Some(x())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    // optional flag only
    let mut s = begin();
    let e = s.declare::<String>("x", ParamKind::Tensor, true, tc(&[F], None), Some(x())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    let mut s = begin();
    first(&mut s);
    let e = s.declare::<String>("n", ParamKind::Java, false, ints(), Some(n())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    // the second parameter's kind only
    let mut s = begin();
    first(&mut s);
    let e = s.declare::<String>("n", ParamKind::Tensor, true, tc(&[F], None), Some(x())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    // name only
    let mut s = begin();
    let e = s.declare::<String>("y", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    // one parameter too many
    let mut s = begin();
    first(&mut s);
    s.declare::<String>("n", ParamKind::Java, true, ints(), Some(n())).unwrap();
    let e = s.declare::<String>("z", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    // the same declarations are fine
    let mut s = begin();
    first(&mut s);
    s.declare::<String>("n", ParamKind::Java, true, ints(), Some(n())).unwrap();
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    assert_eq!(f.trace_count(), 2);
    assert_eq!(f.stats().misses, 8);
}

#[test]
fn the_first_trace_refuses_a_parameter_declared_twice() {
    let f = new_fn(Options::default());
    let x = f.decode_value(&tensor(F, &[2])).unwrap();
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x.clone())).unwrap();
    let e = s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x)).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
}

#[test]
fn captures_are_fixed_by_the_first_trace_too() {
    let f = new_fn(Options::default());
    let x = || f.decode_value(&tensor(F, &[2])).unwrap();
    let v = |a| f.decode_value(&var(a)).unwrap();
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap();
    assert_eq!(s.declare_capture::<String>("w", var_constraint(), v(0)).unwrap().len(), 1);
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    // a capture of the wrong dtype is refused, naming it
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap();
    let int_var = f.decode_value(&[TAG_VARIABLE, I.0 as i64, 0, 0]).unwrap();
    let e = s.declare_capture::<String>("w", var_constraint(), int_var).unwrap_err();
    assert!(matches!(&e, PolyError::Bind(BindError::TypeMismatch { param, .. }) if param == "capture w"), "{e}");
    // a trace that forgets the capture is refused when it finishes
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap();
    let e = f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    // one capture too many
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap();
    s.declare_capture::<String>("w", var_constraint(), v(0)).unwrap();
    let e = s.declare_capture::<String>("w2", var_constraint(), v(1)).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    assert_eq!(f.trace_count(), 1);
    // the call with its capture value is found; another variable in the capture is a miss
    let facts = [tensor(F, &[2]), var(0)].concat();
    assert!(f.lookup::<String>(&facts).unwrap().is_some());
    let other = [tensor(F, &[2]), var(1)].concat();
    assert!(f.lookup::<String>(&other).unwrap().is_none());
    // capture facts missing: an error, not a miss
    assert!(matches!(f.lookup::<String>(&tensor(F, &[3])), Err(PolyError::Bind(BindError::BadFacts(_)))));
}

