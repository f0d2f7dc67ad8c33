//! The polymorphic-function protocol (lookup → begin_trace → declare → finish_trace) for
//! functions with several parameters of every kind, driven by facts buffers as the Java side
//! writes them: dispatch on every parameter, errors naming the parameter, the fixed parameter
//! list (names, kinds, optional flags, captures), reduce-retracing under constraints, the cache
//! bound and statistics.

use polyfn_core::*;

type Fn = Polymorphic<String>;
type R<T> = Result<T, PolyError<String>>;

const F: DType = DType::FLOAT;
const I: DType = DType::INT32;
const KEY_A: i64 = 100;
const KEY_B: i64 = 101;

fn tensor(d: DType, dims: &[i64]) -> Vec<i64> {
    let mut f = vec![TAG_TENSOR, d.0 as i64, dims.len() as i64];
    f.extend_from_slice(dims);
    f
}

fn list_of(elems: &[Vec<i64>]) -> Vec<i64> {
    let mut f = vec![TAG_LIST, elems.len() as i64];
    for e in elems {
        f.extend_from_slice(e);
    }
    f
}

fn map_of(entries: &[(i64, Vec<i64>)]) -> Vec<i64> {
    let mut f = vec![TAG_MAP, entries.len() as i64];
    for (k, v) in entries {
        f.push(*k);
        f.extend_from_slice(v);
    }
    f
}

fn literal(id: i64) -> Vec<i64> {
    vec![TAG_LITERAL, id]
}

fn tc(dtypes: &[DType], shape: Option<&[i64]>) -> TypeRef {
    TypeRef::new(TensorConstraint::new(DTypeSet::of(dtypes), shape.map(Shape::of)))
}

fn spec(d: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
}

/// One parameter as the body declares it, with the facts of the call's argument.
struct Arg {
    name: &'static str,
    kind: ParamKind,
    optional: bool,
    constraint: TypeRef,
    facts: Vec<i64>,
}

fn arg(name: &'static str, kind: ParamKind, constraint: TypeRef, facts: Vec<i64>) -> Arg {
    Arg { name, kind, optional: false, constraint, facts }
}

fn new_fn(options: Options) -> Fn {
    let f = Fn::with_options("multi", options);
    f.register_string(KEY_A, "a");
    f.register_string(KEY_B, "b");
    for id in 1..=20 {
        f.register_literal(id, &id.to_string(), "java.lang.Integer");
    }
    f.register_literal(99, "s", "java.lang.String");
    f
}

fn call_facts(args: &[Arg]) -> Vec<i64> {
    args.iter().flat_map(|a| a.facts.iter().copied()).collect()
}

/// Traces a call of `args` (the body declares them in order), building a concrete function
/// that is its traced type written out.
fn trace(f: &Fn, args: &[Arg]) -> R<u32> {
    let facts = call_facts(args);
    let names = args.iter().map(|a| a.name.to_string()).collect();
    let known = f.declared().is_some();
    let mut s = f.begin_trace::<String>(names, known.then_some(&facts[..]), true)?;
    for a in args {
        let value = f.decode_value(&a.facts)?;
        s.declare::<String>(a.name, a.kind, a.optional, a.constraint.clone(), Some(value))?;
    }
    f.finish_trace(&s, vec!["out".into()], |ty, _| Ok(ty.to_string())).map(|c| c.id)
}

/// A call through the whole protocol; returns the traced type of the function that served it.
fn call(f: &Fn, args: &[Arg]) -> String {
    let facts = call_facts(args);
    if let Some(c) = f.lookup::<String>(&facts).unwrap() {
        return c.inner.clone();
    }
    trace(f, args).unwrap();
    f.find::<String>(&facts).unwrap().expect("a call finds the function it traced").inner.clone()
}

/// x: FLOAT tensor, xs: list of FLOAT tensors, m: map of anything, n: an Integer.
fn four(x: &[i64], xs: &[&[i64]], m: &[(i64, &[i64])], n: i64) -> Vec<Arg> {
    vec![
        arg("x", ParamKind::Tensor, tc(&[F], None), tensor(F, x)),
        arg(
            "xs",
            ParamKind::List,
            TypeRef::new(ListConstraint::new(Some(tc(&[F], None)), None)),
            list_of(&xs.iter().map(|d| tensor(F, d)).collect::<Vec<_>>()),
        ),
        arg(
            "m",
            ParamKind::Map,
            TypeRef::new(MapConstraint::new(None)),
            map_of(&m.iter().map(|(k, d)| (*k, tensor(F, d))).collect::<Vec<_>>()),
        ),
        arg("n", ParamKind::Java, TypeRef::new(LiteralConstraint::new("java.lang.Integer")), literal(n)),
    ]
}

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

fn var(alias: i64) -> Vec<i64> {
    vec![TAG_VARIABLE, F.0 as i64, 1, 2, alias]
}

fn var_constraint() -> TypeRef {
    TypeRef::new(VariableConstraint::new(DTypeSet::of(&[F])))
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
    let e = f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap_err();
    assert!(matches!(e, PolyError::Closed(_)), "{e}");
    assert!(f.concrete_functions().is_empty());
    assert!(matches!(f.find::<String>(&tensor(F, &[2])), Err(PolyError::Closed(_))));
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
