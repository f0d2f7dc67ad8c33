//! A polymorphic function's life through the protocol: reduce-retracing under constraints, the
//! cache bound, statistics and history, close during a trace, racing first traces, ids and
//! retrace reasons.

mod common;

use common::*;
use polyfn_core::*;

/// reduce-retracing traces the join of the call with the cached signatures only where that
/// join still fits the parameter's constraint; otherwise it traces the call as declared.
#[test]
fn reduce_retracing_never_traces_a_type_outside_the_constraint() {
    let f = new_fn(Options { reduce_retracing: true, ..Options::default() });
    let xs = |dims: &[i64], constraint: TypeRef| {
        vec![arg("xs", ParamKind::List, constraint, list_of(&[tensor(F, dims)]))]
    };
    let open = TypeRef::new(ListConstraint::new(None, None));
    trace(&f, &xs(&[2], open)).unwrap();
    // A later trace declares elements of exactly [3]: the join List[[-1]] does not fit.
    let exact3 = TypeRef::new(ListConstraint::new(Some(spec(F, &[3])), None));
    trace(&f, &xs(&[3], exact3)).unwrap();
    let last = f.concrete_functions().last().unwrap().inner.clone();
    assert_eq!(last, "(xs: List[TensorSpec(FLOAT, [3])])");
    // Elements of any FLOAT shape: the join fits and is traced.
    let floats = TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), None));
    trace(&f, &xs(&[4], floats)).unwrap();
    let last = f.concrete_functions().last().unwrap().inner.clone();
    assert_eq!(last, "(xs: List[TensorSpec(FLOAT, [-1])])");
}

#[test]
fn reduce_retracing_generalizes_each_parameter_independently() {
    let f = new_fn(Options { reduce_retracing: true, ..Options::default() });
    let two = |x: &[i64], n: i64| {
        vec![
            arg("x", ParamKind::Tensor, tc(&[F], None), tensor(F, x)),
            arg("n", ParamKind::Java, TypeRef::new(LiteralConstraint::new("java.lang.Integer")), literal(n)),
        ]
    };
    assert_eq!(call(&f, &two(&[2, 5], 1)), "(x: TensorSpec(FLOAT, [2, 5]), n: Literal(1))");
    assert_eq!(call(&f, &two(&[3, 5], 1)), "(x: TensorSpec(FLOAT, [-1, 5]), n: Literal(1))");
    // a new Java value never generalizes, so neither does the tensor next to it
    assert_eq!(call(&f, &two(&[4, 5], 2)), "(x: TensorSpec(FLOAT, [4, 5]), n: Literal(2))");
    assert_eq!(call(&f, &two(&[7, 5], 1)), "(x: TensorSpec(FLOAT, [-1, 5]), n: Literal(1))");
    assert_eq!(call(&f, &two(&[7, 5], 2)), "(x: TensorSpec(FLOAT, [-1, 5]), n: Literal(2))");
    assert_eq!(f.trace_count(), 4);
    let st = f.stats();
    assert_eq!((st.exact_hits, st.inexact_hits, st.misses), (0, 1, 4), "{st:?}");
    // without reduce-retracing each call is traced as it is
    let g = new_fn(Options::default());
    assert_eq!(call(&g, &two(&[2, 5], 1)), "(x: TensorSpec(FLOAT, [2, 5]), n: Literal(1))");
    assert_eq!(call(&g, &two(&[3, 5], 1)), "(x: TensorSpec(FLOAT, [3, 5]), n: Literal(1))");
}

#[test]
fn a_cache_bound_of_zero_still_keeps_the_latest_function() {
    let f = new_fn(Options { max_concrete_functions: Some(0), ..Options::default() });
    let one = |d: &[i64]| vec![arg("x", ParamKind::Tensor, tc(&[F], None), tensor(F, d))];
    call(&f, &one(&[1]));
    assert_eq!(f.concrete_functions().len(), 1);
    call(&f, &one(&[2]));
    assert_eq!(f.concrete_functions().len(), 1);
    assert_eq!(f.concrete_functions()[0].inner, "(x: TensorSpec(FLOAT, [2]))");
    assert_eq!(f.stats().evictions, 1);
    // unbounded keeps all
    let g = new_fn(Options::default());
    for d in 1..=5 {
        call(&g, &one(&[d]));
    }
    assert_eq!(g.concrete_functions().len(), 5);
    assert_eq!(g.stats().evictions, 0);
}

#[test]
fn lookups_count_hits_and_finds_do_not() {
    let f = new_fn(Options::default());
    let one = |d: &[i64]| vec![arg("x", ParamKind::Tensor, tc(&[F], Some(&[-1])), tensor(F, d))];
    // a trace ahead of calls is not a miss
    let facts = call_facts(&one(&[2]));
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, false).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], Some(&[-1])), Some(f.decode_value(&facts).unwrap())).unwrap();
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    assert_eq!(f.stats().misses, 0);
    assert_eq!(f.stats().traces, 1);
    // the constraint traced [-1]: [2] is an inexact hit, [-1] an exact one
    assert!(f.lookup::<String>(&facts).unwrap().is_some());
    assert!(f.lookup::<String>(&facts).unwrap().is_some()); // memoized, still counted
    assert!(f.lookup::<String>(&tensor(F, &[-1])).unwrap().is_some());
    assert!(f.find::<String>(&tensor(F, &[7])).unwrap().is_some());
    let st = f.stats();
    assert_eq!((st.exact_hits, st.inexact_hits, st.misses), (1, 2, 0), "{st:?}");
}

#[test]
fn a_trace_finishing_after_close_caches_nothing() {
    let f = new_fn(Options::default());
    let x = f.decode_value(&tensor(F, &[2])).unwrap();
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x)).unwrap();
    f.close();
    let mut built = false;
    let e = f
        .finish_trace(&s, vec![], |ty, _| {
            built = true;
            Ok::<_, String>(ty.to_string())
        })
        .unwrap_err();
    assert!(matches!(e, PolyError::Closed(_)), "{e}");
    assert!(!built, "a closed function builds (registers with TensorFlow) nothing more");
    assert!(f.concrete_functions().is_empty());
    assert!(matches!(f.find::<String>(&tensor(F, &[2])), Err(PolyError::Closed(_))));
}

/// A close while a trace declares its arguments empties the tables of Java values and map keys
/// the call's facts refer to: the trace is told the function is closed, not that its facts are
/// malformed (CI saw `unknown literal id 2` from a worker racing a close).
#[test]
fn an_argument_declared_after_close_is_refused_as_closed() {
    let f = new_fn(Options::default());
    f.register_literal(1, "3", "java.lang.Integer", Some("3"));
    assert!(f.decode_argument::<String>("k", &literal(1)).is_ok());
    let _s = f.begin_trace::<String>(vec!["k".into()], None, true).unwrap();
    f.close();
    let e = f.decode_argument::<String>("k", &literal(1)).unwrap_err();
    assert!(matches!(e, PolyError::Closed(_)), "{e}");
    assert_eq!(e.to_string(), "function 'multi' is closed");
}

/// Trace records kept per function.
const HISTORY: usize = 64;

#[test]
fn history_is_bounded() {
    let f = new_fn(Options::default());
    for d in 0..(HISTORY as i64 + 6) {
        call(&f, &[arg("x", ParamKind::Tensor, tc(&[F], None), tensor(F, &[d]))]);
    }
    let h = f.history();
    assert_eq!(h.len(), HISTORY);
    assert_eq!(h[0].function_type, "(x: TensorSpec(FLOAT, [6]))", "the oldest records go first");
    assert_eq!(f.trace_count() as usize, HISTORY + 6);
}

/// Two first traces racing: whichever finishes first fixes the list, and the other one, begun
/// before any list was known, is refused when it finishes with a different list.
#[test]
fn racing_first_traces_with_different_lists_cannot_both_win() {
    let f = new_fn(Options::default());
    let x = || f.decode_value(&tensor(F, &[2])).unwrap();
    let mut a = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    let mut b = f.begin_trace::<String>(vec!["y".into()], None, true).unwrap();
    let mut c = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    a.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap();
    b.declare::<String>("y", ParamKind::Tensor, false, tc(&[F], None), Some(x())).unwrap();
    c.declare::<String>("x", ParamKind::List, false, TypeRef::new(ListConstraint::new(None, None)), Some(f.decode_value(&list_of(&[])).unwrap())).unwrap();
    f.finish_trace(&a, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    let e = f.finish_trace(&b, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    let e = f.finish_trace(&c, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    assert_eq!(f.trace_count(), 1);
    assert_eq!(f.declared().unwrap().parameters[0].kind, ParamKind::Tensor);
}

#[test]
fn decoding_one_value_refuses_trailing_facts() {
    let f = new_fn(Options::default());
    assert!(f.decode_value(&literal(1)).is_ok());
    let mut more = literal(1);
    more.push(TAG_LITERAL);
    assert!(matches!(f.decode_value(&more), Err(BindError::BadFacts(m)) if m.contains("1 trailing")));
    assert!(matches!(f.decode_value(&literal(55)), Err(BindError::BadFacts(m)) if m.contains("unknown literal id 55")));
    assert!(matches!(f.decode_value(&map_of(&[(7, literal(1))])), Err(BindError::BadFacts(m)) if m.contains("unknown string id 7")));
}

#[test]
fn trace_time_adds_up_over_the_history() {
    let f = new_fn(Options::default());
    for d in 1..=3 {
        call(&f, &[arg("x", ParamKind::Tensor, tc(&[F], None), tensor(F, &[d]))]);
    }
    let h = f.history();
    let st = f.stats();
    assert_eq!(h.len(), 3);
    assert!(h.iter().all(|r| r.nanos > 0), "{h:?}");
    assert_eq!(st.total_trace_nanos, h.iter().map(|r| r.nanos).sum::<u64>());
    assert_eq!(st.last_trace_nanos, h[2].nanos);
    assert_eq!((st.traces, st.misses, st.evictions), (3, 3, 0));
}

/// A retrace is explained against the closest cached signature, counting mismatching
/// captures (and missing ones) as well as parameters; ties go to the earliest.
#[test]
fn retrace_reasons_weigh_captures_too() {
    let sig = |x: &[i64], caps: &[(&str, &[i64])]| {
        FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor).with_constraint(spec(F, x))])
            .with_captures(caps.iter().map(|(n, d)| (n.to_string(), spec(F, d))).collect())
    };
    let why = |call: &FunctionType, cached: &[&FunctionType]| explain_retrace(call, cached).to_string();
    let call = sig(&[2], &[("c", &[5])]);
    // one mismatch each: the earliest wins
    let a = sig(&[3], &[("c", &[5])]);
    let b = sig(&[2], &[("c", &[6])]);
    assert!(why(&call, &[&a, &b]).starts_with("x: "), "{}", why(&call, &[&a, &b]));
    assert!(why(&call, &[&b, &a]).starts_with("capture c: "), "{}", why(&call, &[&b, &a]));
    // two mismatches lose to one
    let worse = sig(&[3], &[("c", &[7])]);
    assert!(why(&call, &[&worse, &b]).starts_with("capture c: "), "{}", why(&call, &[&worse, &b]));
    // a capture of another name is a mismatch
    let renamed = sig(&[2], &[("d", &[5])]);
    assert_eq!(why(&call, &[&renamed]), "captures differ: c vs d");
    assert!(why(&call, &[&renamed, &a]).starts_with("captures differ"), "{}", why(&call, &[&renamed, &a]));
    // a missing capture counts as a mismatch, and is said when nothing else differs
    let none = sig(&[2], &[]);
    assert_eq!(why(&call, &[&none]), "1 captures vs 0 traced");
    assert!(why(&call, &[&a, &none]).starts_with("x: "), "{}", why(&call, &[&a, &none]));
    assert_eq!(why(&call, &[&none, &a]), "1 captures vs 0 traced");
    assert_eq!(why(&call, &[&call]), "matches a traced signature");
    assert_eq!(why(&call, &[]), "first call");
}

#[test]
fn each_concrete_function_gets_its_own_id_and_the_function_keeps_its_name_and_options() {
    let options = Options { reduce_retracing: false, max_concrete_functions: Some(7) };
    let f = new_fn(options.clone());
    assert_eq!(f.name(), "multi");
    assert_eq!(f.options(), &options);
    let one = |d: &[i64]| vec![arg("x", ParamKind::Tensor, tc(&[F], None), tensor(F, d))];
    let ids: Vec<u32> = [&[1][..], &[2, 2], &[3, 3, 3]].iter().map(|d| trace(&f, &one(d)).unwrap()).collect();
    assert!(ids[0] < ids[1] && ids[1] < ids[2], "{ids:?}");
    let cached: Vec<u32> = f.concrete_functions().iter().map(|c| c.id).collect();
    assert_eq!(cached, ids);
    // the build closure sees the id the function is cached under
    let mut seen = 0;
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(f.decode_value(&tensor(DType::INT32, &[])).unwrap()))
        .unwrap_err();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(f.decode_value(&tensor(F, &[9, 9, 9, 9])).unwrap()))
        .unwrap();
    let id = f
        .finish_trace(&s, vec![], |ty, id| {
            seen = id;
            Ok::<_, String>(ty.to_string())
        })
        .unwrap()
        .id;
    assert_eq!(id, seen);
    assert!(id > ids[2]);
    assert_eq!(f.concrete_functions().last().unwrap().id, id);
}

#[test]
fn only_the_first_trace_is_the_first_call() {
    let f = new_fn(Options::default());
    let x = |d: &[i64]| f.decode_value(&tensor(F, d)).unwrap();
    let s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    assert_eq!(s.reason().to_string(), "first call");
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tc(&[F], None), Some(x(&[1]))).unwrap();
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    // a later trace without a typed description of the call is not the first call
    let s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    assert_ne!(s.reason().to_string(), "first call");
    // after clearing the cache there is nothing to compare with
    f.clear_cache();
    let s = f.begin_trace::<String>(vec!["x".into()], Some(&tensor(F, &[2])), true).unwrap();
    assert_eq!(s.reason().to_string(), "first call");
}
