//! Tests of what makes a trace's signature: the parameter list (names, kinds, optional flags),
//! functions of several parameters, reduce-retracing under constraints, and the bounded memo.

use super::tests::{constraint, spec, tensor_facts, trace, Fn};
use super::*;
use crate::{DType, DTypeSet, LiteralConstraint, ParamKind, Shape, TAG_LITERAL, TAG_TENSOR};

/// A first trace of `x` as a tensor, then a second trace declaring `x` with `kind` / `optional`.
fn second_declaration(kind: ParamKind, optional: bool) -> Result<Vec<crate::PlaceholderSpec>, PolyError<String>> {
    let f = Fn::new("f");
    trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", kind, optional, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[])))
}

#[test]
fn a_retrace_that_changes_only_a_kind_or_the_optional_flag_changes_the_parameter_list() {
    assert!(second_declaration(ParamKind::Tensor, false).is_ok());
    let e = second_declaration(ParamKind::List, false).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    let e = second_declaration(ParamKind::Tensor, true).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
}

/// `(x: FLOAT tensor, n: Integer)`: facts and a trace of a two-parameter function.
fn two(f: &Fn, dims: &[i64], n: i64) -> (Vec<i64>, String) {
    let facts = [tensor_facts(DType::FLOAT, dims), vec![TAG_LITERAL, n]].concat();
    f.register_literal(n, &n.to_string(), "java.lang.Integer", Some(&n.to_string()));
    if let Some(c) = f.lookup::<String>(&facts).unwrap() {
        return (facts, c.inner.clone());
    }
    let known = f.declared().is_some();
    let mut s = f.begin_trace::<String>(vec!["n".into(), "x".into()], known.then_some(&facts[..]), true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, dims)))
        .unwrap();
    let java = TypeRef::new(LiteralConstraint::new("java.lang.Integer"));
    let value = f.decode_value(&[TAG_LITERAL, n]).unwrap();
    s.declare::<String>("n", ParamKind::Java, false, java, Some(value)).unwrap();
    let c = f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    (facts, c.inner.clone())
}

#[test]
fn a_function_of_two_parameters_dispatches_on_both_and_explains_the_one_that_changed() {
    let f = Fn::new("two");
    let (_, first) = two(&f, &[2], 1);
    assert_eq!(first, "(x: TensorSpec(FLOAT, [2]), n: Literal(1))");
    assert_eq!(two(&f, &[2], 1).1, first, "the same call hits");
    assert_eq!(two(&f, &[2], 2).1, "(x: TensorSpec(FLOAT, [2]), n: Literal(2))");
    assert_eq!(two(&f, &[3], 2).1, "(x: TensorSpec(FLOAT, [3]), n: Literal(2))");
    let h = f.history();
    assert_eq!(h.len(), 3);
    assert_eq!((h[1].parameter.as_str(), h[1].reason.as_str()), ("n", "n: new value 2 (traced: 1)"));
    assert_eq!(h[2].parameter, "x");
    // A tensor where the Java value belongs is a type error naming the second parameter.
    f.register_literal(9, "9", "java.lang.Integer", Some("9"));
    let wrong = [tensor_facts(DType::FLOAT, &[2]), tensor_facts(DType::FLOAT, &[])].concat();
    let e = f.lookup::<String>(&wrong).unwrap_err();
    assert!(matches!(e, PolyError::Bind(BindError::TypeMismatch { ref param, .. }) if param == "n"), "{e}");
    let st = f.stats();
    assert_eq!((st.exact_hits, st.misses, st.traces), (1, 3, 3));
    assert!(st.total_trace_nanos > st.last_trace_nanos && st.last_trace_nanos > 0, "{st:?}");
    // Every trace has its own id, found in O(1).
    let ids: Vec<u32> = f.concrete_functions().iter().map(|c| c.id).collect();
    assert_eq!(ids, [1, 2, 3]);
    assert_eq!(f.concrete_by_id(2).unwrap().inner, "(x: TensorSpec(FLOAT, [2]), n: Literal(2))");
    assert!(f.concrete_by_id(4).is_none());
}

#[test]
fn many_distinct_values_of_a_java_parameter_warn_at_8_then_at_each_doubling() {
    super::tests::capture::install();
    let f = Fn::new("literals");
    let warnings = || super::tests::capture::matching("distinct values of Java parameter 'n'").len();
    let mut seen = Vec::new();
    for n in 1..=16 {
        two(&f, &[2], n);
        seen.push(warnings());
    }
    assert_eq!(seen, [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2]);
    assert!(super::tests::capture::matching("function 'literals' has traced 16 distinct values").len() == 1);
}

/// A new trace must win over the more general function an earlier call was memoized to.
#[test]
fn a_new_trace_takes_over_the_calls_memoized_to_a_more_general_function() {
    let f = Fn::new("takeover");
    trace(&f, spec(DType::FLOAT, &[-1]), constraint(&[DType::FLOAT], None)).unwrap();
    let seven = tensor_facts(DType::FLOAT, &[7]);
    assert_eq!(f.lookup::<String>(&seven).unwrap().unwrap().inner, "(x: TensorSpec(FLOAT, [-1]))");
    trace(&f, spec(DType::FLOAT, &[7]), constraint(&[DType::FLOAT], None)).unwrap();
    assert_eq!(f.lookup::<String>(&seven).unwrap().unwrap().inner, "(x: TensorSpec(FLOAT, [7]))");
}

/// An evicted function is no longer served from the memo, and the memo's other entries stay
/// correct across the eviction (a later trace still takes over the inexact ones).
#[test]
fn eviction_unpublishes_the_victim_and_keeps_the_memo_right() {
    let f = Fn::with_options("evict", Options { max_concrete_functions: Some(3), ..Options::default() });
    let facts = |n: i64| tensor_facts(DType::FLOAT, &[n]);
    let served = |n: i64| f.lookup::<String>(&facts(n)).unwrap().map(|c| c.inner.clone());
    let unconstrained = || constraint(&[DType::FLOAT], None);
    trace(&f, spec(DType::FLOAT, &[-1]), unconstrained()).unwrap(); // A
    trace(&f, spec(DType::FLOAT, &[1]), unconstrained()).unwrap(); // B
    trace(&f, spec(DType::FLOAT, &[2]), unconstrained()).unwrap(); // C
    assert_eq!(served(1).unwrap(), "(x: TensorSpec(FLOAT, [1]))"); // B, memoized exactly
    assert_eq!(served(5).unwrap(), "(x: TensorSpec(FLOAT, [-1]))"); // A, memoized inexactly
    assert_eq!(served(2).unwrap(), "(x: TensorSpec(FLOAT, [2]))"); // C
    trace(&f, spec(DType::FLOAT, &[3]), unconstrained()).unwrap(); // D evicts B, the least recently used
    assert!(f.concrete_functions().iter().all(|c| c.inner != "(x: TensorSpec(FLOAT, [1]))"));
    // The memo (read here without memoizing anything) dropped B's entry and kept C's.
    assert!(f.published.find(&facts(1), false).is_none(), "the evicted B is not served any more");
    assert_eq!(f.published.find(&facts(2), false).unwrap().inner, "(x: TensorSpec(FLOAT, [2]))");
    // Memo hits only here: a new memo entry would hide a miscount of the inexact ones.
    assert_eq!(served(5).unwrap(), "(x: TensorSpec(FLOAT, [-1]))");
    assert_eq!(served(2).unwrap(), "(x: TensorSpec(FLOAT, [2]))");
    trace(&f, spec(DType::FLOAT, &[5]), unconstrained()).unwrap(); // E evicts D
    assert_eq!(served(5).unwrap(), "(x: TensorSpec(FLOAT, [5]))", "E takes over the call memoized to A");
    assert_eq!(served(1).unwrap(), "(x: TensorSpec(FLOAT, [-1]))", "the evicted B is not served any more");
    assert_eq!(f.stats().evictions, 2);
}

/// Calls that miss count in the retrace window: traces far apart in calls do not warn.
#[test]
fn traces_spread_over_many_calls_do_not_warn() {
    super::tests::capture::install();
    let f = Fn::new("spread");
    for n in 1..=4 {
        super::tests::call(&f, &[n]);
    }
    for _ in 0..7 {
        super::tests::call(&f, &[1]);
    }
    super::tests::call(&f, &[9]);
    assert!(super::tests::capture::matching("function 'spread': ").is_empty());
}

/// Reduce-retracing traces the generalized type only when it admits the call's value and fits
/// the constraint this trace declares.
#[test]
fn reduce_retracing_keeps_the_value_when_the_generalized_type_does_not_fit() {
    let f = Fn::with_options("reduce", Options { reduce_retracing: true, ..Options::default() });
    trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    let facts = tensor_facts(DType::FLOAT, &[3]);
    let traced_with = |c: TypeRef, value: TypeRef| {
        let mut s = f.begin_trace::<String>(vec!["x".into()], Some(&facts), true).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, c, Some(value)).unwrap();
        s.traced[0].type_constraint.as_ref().unwrap().to_string()
    };
    // The call [3] against the traced [2] generalizes to [-1]...
    assert_eq!(traced_with(constraint(&[DType::FLOAT], None), spec(DType::FLOAT, &[3])), "TensorSpec(FLOAT, [-1])");
    // ...which a constraint declaring [3] does not admit: trace [3].
    let exactly_3 = constraint(&[DType::FLOAT], Some(Shape::of(&[3])));
    assert_eq!(traced_with(exactly_3, spec(DType::FLOAT, &[3])), "TensorSpec(FLOAT, [3])");
    // A declared value the generalized type does not admit is traced as it is.
    assert_eq!(traced_with(constraint(&[DType::FLOAT], None), spec(DType::FLOAT, &[2, 2])), "TensorSpec(FLOAT, [2, 2])");
    let any = TypeRef::new(crate::TensorConstraint::new(DTypeSet::any(), None));
    assert_eq!(traced_with(any, spec(DType::INT32, &[3])), "TensorSpec(INT32, [3])");
}

/// The published memo grows to its capacity plus one entry per cached function, never past it,
/// and keeps serving exact calls after it drops its inexact entries.
#[test]
fn the_published_memo_is_bounded() {
    let f = Fn::new("memo");
    trace(&f, spec(DType::FLOAT, &[-1]), constraint(&[DType::FLOAT], None)).unwrap();
    trace(&f, spec(DType::FLOAT, &[7, 7]), constraint(&[DType::FLOAT], None)).unwrap();
    let exact = tensor_facts(DType::FLOAT, &[7, 7]);
    assert!(f.lookup::<String>(&exact).unwrap().is_some());
    let mut most = 0;
    for i in 0..(2 * cache::MEMO_CAPACITY as i64) {
        assert!(f.lookup::<String>(&[TAG_TENSOR, DType::FLOAT.0 as i64, 1, i]).unwrap().is_some());
        most = most.max(f.published.memo_len());
    }
    assert_eq!(most, cache::MEMO_CAPACITY + 2);
    let hits = f.stats().exact_hits;
    assert!(f.lookup::<String>(&exact).unwrap().is_some());
    assert_eq!(f.stats().exact_hits, hits + 1, "the exact entry survived (and hit the memo)");
}

/// Two traces of one signature (callers that raced to trace it): the second replaces the first,
/// which is no longer served by the memo nor by id.
#[test]
fn a_signature_traced_twice_is_served_by_its_latest_trace() {
    let f = Fn::with_options("twice", Options { reduce_retracing: true, max_concrete_functions: Some(8) });
    assert_eq!((f.name(), f.options().max_concrete_functions), ("twice", Some(8)));
    let first = trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    let facts = tensor_facts(DType::FLOAT, &[2]);
    assert_eq!(f.lookup::<String>(&facts).unwrap().unwrap().id, first);
    let second = trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    assert_ne!(first, second);
    assert_eq!(f.lookup::<String>(&facts).unwrap().unwrap().id, second);
    assert!(f.concrete_by_id(first).is_none() && f.concrete_by_id(second).is_some());
    assert_eq!(f.concrete_functions().len(), 1);
}

#[test]
fn map_keys_are_registered_strings() {
    let f = Fn::new("keys");
    f.register_string(10, "k");
    let t = f.decode_value(&[crate::TAG_MAP, 1, 10, TAG_TENSOR, DType::FLOAT.0 as i64, 0]).unwrap();
    assert_eq!(t.to_string(), "Map{'k': TensorSpec(FLOAT, [])}");
    assert!(f.decode_value(&[crate::TAG_MAP, 1, 11, TAG_TENSOR, 1, 0]).is_err());
}

/// Unpublishing one function drops the memo entries that led to it, exact and inexact, and keeps
/// every other (evictions happen right after a trace has emptied the inexact memo, so this is
/// checked on the published cache itself).
#[test]
fn unpublishing_a_function_keeps_the_memo_entries_of_the_others() {
    let f = Fn::new("unpublish");
    let facts = |n: i64| tensor_facts(DType::FLOAT, &[n]);
    let general = trace(&f, spec(DType::FLOAT, &[-1]), constraint(&[DType::FLOAT], None)).unwrap();
    let one = trace(&f, spec(DType::FLOAT, &[1]), constraint(&[DType::FLOAT], None)).unwrap();
    let two = trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    for n in [1, 2, 5, 6] {
        f.lookup::<String>(&facts(n)).unwrap().unwrap();
    }
    let memo = |n: i64| f.published.find(&facts(n), false).map(|c| c.id);
    assert_eq!([1, 2, 5, 6].map(memo), [Some(one), Some(two), Some(general), Some(general)]);
    f.published.removed(&mut f.state.lock().token, one);
    assert_eq!([1, 2, 5, 6].map(memo), [None, Some(two), Some(general), Some(general)]);
    f.published.removed(&mut f.state.lock().token, general);
    assert_eq!([1, 2, 5, 6].map(memo), [None, Some(two), None, None]);
    assert!(f.concrete_by_id(general).is_none() && f.concrete_by_id(two).is_some());
}

/// Closing a function lets go of its concrete functions at once: nothing published keeps them.
#[test]
fn a_closed_function_publishes_nothing_and_keeps_no_concrete_function_alive() {
    let f = Fn::new("closed");
    let id = trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    let facts = tensor_facts(DType::FLOAT, &[2]);
    f.lookup::<String>(&facts).unwrap().unwrap();
    let weak = Arc::downgrade(&f.concrete_by_id(id).unwrap());
    assert_eq!(f.published.profile().len(), 1);
    assert!(!f.is_closed() && f.declared().is_some());
    f.close();
    assert!(f.is_closed() && f.declared().is_none(), "closed: its state is gone");
    assert!(f.concrete_by_id(id).is_none());
    assert!(f.published.find(&facts, false).is_none());
    assert!(f.published.profile().is_empty(), "the call profile goes too");
    assert!(weak.upgrade().is_none(), "the concrete function was released");
}

/// The last miss is remembered only for its own facts: another call right after it is still
/// looked up (and hits), and a trace begun for it is of its own type.
#[test]
fn a_miss_is_remembered_only_for_the_facts_that_missed() {
    let f = Fn::new("miss");
    trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    let facts = |n: i64| tensor_facts(DType::FLOAT, &[n]);
    assert!(f.find::<String>(&facts(3)).unwrap().is_none());
    assert_eq!(f.find::<String>(&facts(2)).unwrap().unwrap().inner, "(x: TensorSpec(FLOAT, [2]))");
    assert!(f.find::<String>(&facts(3)).unwrap().is_none());
    let s = f.begin_trace::<String>(vec!["x".into()], Some(&facts(4)), true).unwrap();
    assert_eq!(s.reason, "x: TensorSpec(FLOAT, [4]) does not match TensorSpec(FLOAT, [2]) at dim 0");
}

/// A function that cannot trace explains a call no saved signature accepts.
#[test]
fn a_miss_is_explained_against_the_saved_signatures() {
    let f = Fn::new("saved");
    trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    assert_eq!(f.explain_miss(&tensor_facts(DType::FLOAT, &[2])), None, "a saved signature accepts it");
    assert_eq!(
        f.explain_miss(&tensor_facts(DType::FLOAT, &[3])).unwrap(),
        "the call (x: TensorSpec(FLOAT, [3])) matches no saved signature of 'saved':\n  (x: TensorSpec(FLOAT, [2]))\n\
         closest mismatch: x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0"
    );
    assert_eq!(f.explain_miss(&[9]), None, "facts that do not decode");
}

/// The call profile lists calls that were counted, and holds at most PROFILE_CAPACITY shapes.
#[test]
fn the_profile_lists_counted_calls_only_and_is_bounded() {
    let f = Fn::new("profile");
    trace(&f, spec(DType::FLOAT, &[-1]), constraint(&[DType::FLOAT], None)).unwrap();
    let facts = |n: i64| tensor_facts(DType::FLOAT, &[n]);
    assert!(f.find::<String>(&facts(1)).unwrap().is_some());
    assert!(f.recorded_calls().is_empty(), "an introspecting find is not a call");
    f.lookup::<String>(&facts(1)).unwrap();
    assert_eq!(f.recorded_calls().len(), 1);
    for n in 2..=(cache::PROFILE_CAPACITY as i64 + 10) {
        f.lookup::<String>(&facts(n)).unwrap();
    }
    assert_eq!(f.published.profile().len(), cache::PROFILE_CAPACITY);
}

/// The first call traces before a parameter list types it (its trace begins without facts), so
/// nothing records it then; `record_first_call` adds it to the profile once the trace is done,
/// once, and refuses a closed function.
#[test]
fn the_first_call_is_recorded_once_its_trace_typed_it() {
    let f = Fn::new("first");
    trace(&f, spec(DType::FLOAT, &[-1]), constraint(&[DType::FLOAT], None)).unwrap();
    assert!(f.recorded_calls().is_empty(), "a first trace begun without facts records nothing");
    let facts = tensor_facts(DType::FLOAT, &[2]);
    f.record_first_call::<String>(&facts).unwrap();
    let calls: Vec<(String, u64)> = f.recorded_calls().iter().map(|(t, n)| (t.to_string(), *n)).collect();
    assert_eq!(calls, vec![("(x: TensorSpec(FLOAT, [2]))".to_string(), 1)]);
    f.lookup::<String>(&facts).unwrap();
    assert_eq!(f.recorded_calls()[0].1, 2, "the next call of that type counts on");
    f.close();
    assert!(matches!(f.record_first_call::<String>(&facts), Err(PolyError::Closed(_))));
}
