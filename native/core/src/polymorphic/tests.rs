//! Tests of the polymorphic function state through its public protocol.

use super::*;
use crate::{BindError, DType, DTypeSet, ParamKind, Shape, TensorConstraint, TensorSpec, TypeRef, TAG_TENSOR};

pub(super) type Fn = Polymorphic<String>;

pub(super) fn tensor_facts(dtype: DType, dims: &[i64]) -> Vec<i64> {
    let mut f = vec![TAG_TENSOR, dtype.0 as i64, dims.len() as i64];
    f.extend_from_slice(dims);
    f
}

pub(super) fn spec(dtype: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(dtype, Shape::of(dims)))
}

pub(super) fn constraint(dtypes: &[DType], shape: Option<Shape>) -> TypeRef {
    TypeRef::new(TensorConstraint::new(DTypeSet::of(dtypes), shape))
}

/// Traces `f` for a call `x = value` under `c`, building a concrete function named after its type.
pub(super) fn trace(f: &Fn, value: TypeRef, c: TypeRef) -> Result<u32, PolyError<String>> {
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true)?;
    s.declare::<String>("x", ParamKind::Tensor, false, c, Some(value))?;
    f.finish_trace(&s, vec!["y".into()], |ty, _| Ok(ty.to_string())).map(|c| c.id)
}

#[test]
fn a_bad_shape_in_an_argument_is_an_error_naming_it() {
    let f = Fn::new("f");
    let mut facts = vec![crate::TAG_LIST, 2, TAG_TENSOR, 1, 0, TAG_TENSOR, 1, 300];
    facts.extend([1; 300]);
    let e = f.decode_argument::<String>("xs", &facts).unwrap_err();
    assert_eq!(e.to_string(), "xs[1]: shape of rank 300 exceeds TensorFlow's limit of 254 dimensions");
    let e = f.decode_argument::<String>("w", &[TAG_TENSOR, 1, 2, -7, 1]).unwrap_err();
    assert!(e.to_string().starts_with("w: shape [-7, 1] has dimension -7"), "{e}");
}

#[test]
fn nothing_is_found_before_the_first_trace() {
    let f = Fn::new("f");
    assert!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[2])).unwrap().is_none());
    assert!(f.declared().is_none());
    assert_eq!(f.trace_count(), 0);
}

/// `lookup_with` runs its closure once on the function `lookup` finds, on the slow path (first
/// lookup, memoized then) and on the lock-free path alike, and counts each as a hit.
#[test]
fn lookup_with_runs_on_the_function_found_and_counts_the_hit() {
    let f = Fn::new("with");
    let id = trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    let facts = tensor_facts(DType::FLOAT, &[2]);
    let hits = f.stats().exact_hits;
    for n in 1..=3 {
        let mut runs = 0;
        let got = f.lookup_with::<String, _>(&facts, |c| {
            runs += 1;
            c.id
        });
        assert_eq!((got.unwrap(), runs), (Some(id), 1));
        assert_eq!(f.stats().exact_hits, hits + n);
    }
    let mut ran = false;
    assert_eq!(f.lookup_with::<String, _>(&tensor_facts(DType::FLOAT, &[3]), |_| ran = true).unwrap(), None);
    assert!(!ran);
}

#[test]
fn a_trace_is_found_by_the_same_facts_and_not_by_others() {
    let f = Fn::new("f");
    let id = trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    let hit = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[2])).unwrap().unwrap();
    assert_eq!(hit.id, id);
    assert_eq!(hit.inner, "(x: TensorSpec(FLOAT, [2]))");
    assert!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[3])).unwrap().is_none());
    assert_eq!(f.trace_count(), 1);
    // Introspection finds it without counting a call.
    let hits = f.stats().exact_hits;
    assert_eq!(f.find::<String>(&tensor_facts(DType::FLOAT, &[2])).unwrap().unwrap().id, id);
    assert_eq!(f.stats().exact_hits, hits);
    // A later trace without a typed call says so.
    let s = f.begin_trace::<String>(vec!["x".into()], None, false).unwrap();
    assert_eq!(s.reason(), "a call without a typed description (first call with a single argument)");
}

#[test]
fn a_shape_constraint_traces_generically_and_serves_every_fitting_call() {
    let f = Fn::new("f");
    trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], Some(Shape::of(&[-1])))).unwrap();
    for n in [1, 5, 100] {
        let c = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[n])).unwrap().unwrap();
        assert_eq!(c.inner, "(x: TensorSpec(FLOAT, [-1]))");
    }
    let err = f.lookup::<String>(&tensor_facts(DType::INT32, &[2])).unwrap_err();
    assert!(matches!(err, PolyError::Bind(BindError::TypeMismatch { ref param, .. }) if param == "x"), "{err}");
}

#[test]
fn declaring_a_missing_or_mistyped_argument_fails_naming_it() {
    let f = Fn::new("f");
    let mut s = f.begin_trace::<String>(vec![], None, true).unwrap();
    let e = s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), None).unwrap_err();
    assert!(e.to_string().contains("'x'"), "{e}");
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    let e = s
        .declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::INT32, &[])))
        .unwrap_err();
    assert!(e.to_string().contains("'x'") && e.to_string().contains("INT32"), "{e}");
}

#[test]
fn unexpected_arguments_fail_the_first_trace_and_binding_later() {
    let f = Fn::new("f");
    let mut s = f.begin_trace::<String>(vec!["x".into(), "z".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[]))).unwrap();
    let e = f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap_err();
    assert!(e.to_string().contains("'z'"), "{e}");
    assert_eq!(f.trace_count(), 0);
    trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
    let e = f.begin_trace::<String>(vec!["x".into(), "z".into()], None, true).err().unwrap();
    assert!(e.to_string().contains("'z'"), "{e}");
    let e = f.begin_trace::<String>(vec![], None, true).err().unwrap();
    assert!(e.to_string().contains("'x'"), "{e}");
}

#[test]
fn a_changed_parameter_list_is_rejected_with_both_lists() {
    let f = Fn::new("f");
    trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
    // A second trace whose body declares another name.
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    let e = s
        .declare::<String>("w", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), None)
        .unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("(w: ") && text.contains("(x: "), "{text}");
    // A second trace whose body declares fewer parameters.
    let s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    let e = f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap_err();
    assert!(matches!(e, PolyError::ParameterListChanged { .. }), "{e}");
    // Same names and kinds under another constraint is the same list.
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::INT32, DType::FLOAT], None), Some(spec(DType::FLOAT, &[2])))
        .unwrap();
    f.finish_trace(&s, vec![], |_, _| Ok::<_, String>(String::new())).unwrap();
    assert_eq!(f.trace_count(), 2);
}

#[test]
fn the_traced_function_is_returned_even_when_a_clear_drops_it_meanwhile() {
    let f = Fn::new("cleared");
    let facts = tensor_facts(DType::FLOAT, &[2]);
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[2])))
        .unwrap();
    let c = f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    f.clear_cache();
    assert!(f.find::<String>(&facts).unwrap().is_none() && f.concrete_by_id(c.id).is_none());
    assert_eq!((c.inner.as_str(), c.output_names.as_slice()), ("(x: TensorSpec(FLOAT, [2]))", &["y".to_owned()][..]));
    // The tracing call is not counted as a hit as well as a miss.
    let st = f.stats();
    assert_eq!((st.misses, st.exact_hits, st.inexact_hits), (1, 0, 0));
}

#[test]
fn a_failed_build_caches_nothing_and_close_drops_everything() {
    let f = Fn::new("f");
    let mut s = f.begin_trace::<&str>(vec!["x".into()], None, true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[]))).unwrap();
    let e = f.finish_trace(&s, vec![], |_, _| Err::<String, _>("no")).unwrap_err();
    assert!(matches!(e, PolyError::Build("no")));
    assert_eq!(f.trace_count(), 0);
    assert!(f.concrete_functions().is_empty());
    trace(&f, spec(DType::FLOAT, &[]), constraint(&[DType::FLOAT], None)).unwrap();
    assert_eq!(f.concrete_functions().len(), 1);
    f.close();
    assert!(f.concrete_functions().is_empty());
    assert!(matches!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[])), Err(PolyError::Closed(_))));
    assert!(matches!(f.begin_trace::<String>(vec![], None, true), Err(PolyError::Closed(_))));
}

/// Collects log records so tests can assert on warnings (one logger per test binary), and, like
/// an application's log handler may, calls back into the functions registered with
/// [`capture::call_back_into`] when a record names them.
pub(super) mod capture {
    use super::Fn;
    use parking_lot::Mutex;
    use std::sync::Arc;
    static RECORDS: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static REENTRANT: Mutex<Vec<Arc<Fn>>> = Mutex::new(Vec::new());
    struct Capture;
    impl log::Log for Capture {
        fn enabled(&self, _: &log::Metadata) -> bool {
            true
        }
        fn log(&self, r: &log::Record) {
            let text = format!("{} {}", r.level(), r.args());
            let targets: Vec<Arc<Fn>> =
                REENTRANT.lock().iter().filter(|f| text.contains(&format!("'{}'", f.name()))).cloned().collect();
            for f in targets {
                let _ = (f.stats(), f.history(), f.declared(), f.concrete_functions(), f.trace_count());
            }
            RECORDS.lock().push(text);
        }
        fn flush(&self) {}
    }
    static LOGGER: Capture = Capture;
    pub(in crate::polymorphic) fn install() {
        let _ = log::set_logger(&LOGGER);
        log::set_max_level(log::LevelFilter::Trace);
    }
    /// From now on, records naming `f` call back into it from inside the logger.
    pub(in crate::polymorphic) fn call_back_into(f: Arc<Fn>) {
        REENTRANT.lock().push(f);
    }
    /// Records mentioning `needle`.
    pub(in crate::polymorphic) fn matching(needle: &str) -> Vec<String> {
        RECORDS.lock().iter().filter(|r| r.contains(needle)).cloned().collect()
    }
}

/// A call `x = FLOAT dims` through the whole protocol: lookup, else trace then lookup.
/// Returns the type of the concrete function that served it.
pub(super) fn call(f: &Fn, dims: &[i64]) -> String {
    let facts = tensor_facts(DType::FLOAT, dims);
    if let Some(c) = f.lookup::<String>(&facts).unwrap() {
        return c.inner.clone();
    }
    let known = f.declared().is_some();
    let mut s = f.begin_trace::<String>(vec!["x".into()], known.then_some(&facts[..]), true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, dims)))
        .unwrap();
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap().inner.clone()
}

fn traced(f: &Fn) -> Vec<String> {
    f.concrete_functions().iter().map(|c| c.inner.clone()).collect()
}

#[test]
fn reduce_retracing_traces_2_then_unknown_dim_then_unknown_rank() {
    let f = Fn::with_options("reduce", Options { reduce_retracing: true, ..Options::default() });
    assert_eq!(call(&f, &[2]), "(x: TensorSpec(FLOAT, [2]))");
    assert_eq!(call(&f, &[3]), "(x: TensorSpec(FLOAT, [-1]))");
    assert_eq!(call(&f, &[4]), "(x: TensorSpec(FLOAT, [-1]))");
    assert_eq!(call(&f, &[2, 2]), "(x: TensorSpec(FLOAT, <unknown>))");
    assert_eq!(f.trace_count(), 3);
    assert_eq!(
        traced(&f),
        ["(x: TensorSpec(FLOAT, [2]))", "(x: TensorSpec(FLOAT, [-1]))", "(x: TensorSpec(FLOAT, <unknown>))"]
    );
    // [2] still hits its exact trace; the rest generalize.
    assert_eq!(call(&f, &[2]), "(x: TensorSpec(FLOAT, [2]))");
    assert_eq!(call(&f, &[9, 9, 9]), "(x: TensorSpec(FLOAT, <unknown>))");
    let st = f.stats();
    assert_eq!((st.traces, st.misses), (3, 3));
    assert_eq!(st.exact_hits, 1, "{st:?}"); // [2] again
    assert_eq!(st.inexact_hits, 2, "{st:?}"); // [4] and [9, 9, 9]
}

#[test]
fn without_reduce_retracing_every_shape_traces() {
    let f = Fn::new("plain");
    for d in [[2], [3], [4]] {
        call(&f, &d);
    }
    assert_eq!(f.trace_count(), 3);
}

#[test]
fn the_cache_bound_evicts_the_least_recently_used() {
    let f = Fn::with_options("bounded", Options { max_concrete_functions: Some(2), ..Options::default() });
    call(&f, &[1]);
    call(&f, &[2]);
    call(&f, &[1]); // [2] is now the least recently used
    call(&f, &[3]);
    assert_eq!(traced(&f), ["(x: TensorSpec(FLOAT, [1]))", "(x: TensorSpec(FLOAT, [3]))"]);
    assert_eq!(f.stats().evictions, 1);
    call(&f, &[2]); // evicted: traces again, evicting [1]
    assert_eq!(f.trace_count(), 4);
    assert_eq!(traced(&f), ["(x: TensorSpec(FLOAT, [3]))", "(x: TensorSpec(FLOAT, [2]))"]);
}

/// Repeated calls of one function do not restamp it (threads calling it write nothing shared),
/// which must not change which function is least recently used.
#[test]
fn repeated_calls_keep_the_least_recently_used_order() {
    let f = Fn::with_options("repeated", Options { max_concrete_functions: Some(2), ..Options::default() });
    call(&f, &[1]);
    call(&f, &[2]);
    for _ in 0..3 {
        call(&f, &[2]);
    }
    call(&f, &[1]);
    call(&f, &[1]); // [2] is the least recently used, though called more often
    call(&f, &[3]);
    assert_eq!(traced(&f), ["(x: TensorSpec(FLOAT, [1]))", "(x: TensorSpec(FLOAT, [3]))"]);
    for _ in 0..3 {
        call(&f, &[3]);
    }
    call(&f, &[2]); // evicts [1], last used before [3]'s calls
    assert_eq!(traced(&f), ["(x: TensorSpec(FLOAT, [3]))", "(x: TensorSpec(FLOAT, [2]))"]);
    assert_eq!(f.trace_count(), 4);
}

/// A trace never evicts the function it just made: between publishing it and choosing a victim,
/// other threads' cached calls may restamp every older function, which left the new one the
/// least recently used (`getConcreteFunction` then failed: "the trace does not accept its
/// arguments"). With a bound of 1, one racing cached call was enough.
#[test]
fn a_trace_keeps_its_new_function_while_cached_calls_race_the_eviction() {
    let f = std::sync::Arc::new(Fn::with_options("racing", Options { max_concrete_functions: Some(1), ..Options::default() }));
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let hammer = {
        let (f, stop) = (f.clone(), stop.clone());
        std::thread::spawn(move || {
            // Calls of [1] only: while [1] is cached they are lock-free hits that restamp it.
            let facts = tensor_facts(DType::FLOAT, &[1]);
            while !stop.load(Ordering::Relaxed) {
                let _ = f.lookup::<String>(&facts);
            }
        })
    };
    let mut lost = 0;
    for round in 0..20_000 {
        let d = 1 + round % 2;
        let facts = tensor_facts(DType::FLOAT, &[d]);
        let known = f.declared().is_some();
        let mut s = f.begin_trace::<String>(vec!["x".into()], known.then_some(&facts[..]), false).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[d])))
            .unwrap();
        let c = f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
        if f.concrete_by_id(c.id).is_none() {
            lost += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    hammer.join().unwrap();
    assert_eq!(lost, 0, "traces whose new function was evicted at once");
}

#[test]
fn clear_cache_drops_functions_and_keeps_the_parameter_list() {
    let f = Fn::new("clear");
    call(&f, &[1]);
    f.clear_cache();
    assert!(f.concrete_functions().is_empty());
    assert!(f.declared().is_some());
    call(&f, &[1]);
    assert_eq!(f.trace_count(), 2);
}

#[test]
fn every_trace_records_why() {
    let f = Fn::new("why");
    call(&f, &[2]);
    call(&f, &[3]);
    call(&f, &[3, 1]);
    let h = f.history();
    assert_eq!(h[0].reason, "first call");
    assert_eq!(h[1].reason, "x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0");
    assert_eq!((h[1].parameter.as_str(), h[1].path.as_str(), h[1].capture), ("x", "x", false));
    assert_eq!((h[0].parameter.as_str(), h[0].path.as_str()), ("", ""));
    assert!(h[2].reason.starts_with("x: ") && h[2].reason.contains("rank 2 vs 1"), "{}", h[2].reason);
    assert_eq!(h[2].function_type, "(x: TensorSpec(FLOAT, [3, 1]))");
}

#[test]
fn frequent_retracing_warns_once_per_burst() {
    capture::install();
    let f = Fn::new("bursty");
    let warnings = || capture::matching("function 'bursty': ").len();
    for n in 1..=4 {
        call(&f, &[n]);
    }
    assert_eq!(warnings(), 0);
    call(&f, &[5]); // 5 of the last 5 calls traced
    assert_eq!(warnings(), 1);
    let text = &capture::matching("function 'bursty': ")[0];
    assert!(text.starts_with("WARN") && text.contains("Parameters that keep changing: x"), "{text}");
    assert!(text.contains("withReduceRetracing(true)"), "{text}");
    for n in 6..=8 {
        call(&f, &[n]); // the same burst: no new warning
    }
    assert_eq!(warnings(), 1);
    for _ in 0..20 {
        call(&f, &[1]); // calm
    }
    for n in 20..=24 {
        call(&f, &[n]); // a new burst
    }
    assert_eq!(warnings(), 2);
}

#[test]
fn traces_ahead_of_calls_never_warn() {
    capture::install();
    let f = Fn::new("ahead");
    for n in 1..=10 {
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, false).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[n])))
            .unwrap();
        f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    }
    assert_eq!(f.trace_count(), 10);
    assert!(capture::matching("function 'ahead': ").is_empty(), "{:?}", capture::matching("function 'ahead': "));
}

fn variable_facts(alias: i64) -> Vec<i64> {
    vec![crate::TAG_VARIABLE, DType::FLOAT.0 as i64, 0, alias]
}

fn var_constraint() -> TypeRef {
    TypeRef::new(crate::VariableConstraint::new(DTypeSet::any()))
}

#[test]
fn a_capture_is_part_of_the_signature_and_an_aliased_capture_shares_a_placeholder() {
    let f = Fn::new("captures");
    let mut s = f.begin_trace::<String>(vec!["v".into()], None, true).unwrap();
    let v0 = f.decode_value(&variable_facts(0)).unwrap();
    let specs = s.declare::<String>("v", ParamKind::Variable, false, var_constraint(), Some(v0.clone())).unwrap();
    assert_eq!(specs.len(), 1);
    // The body also captures the variable passed as v: no second placeholder.
    let specs = s.declare_capture::<String>("w", var_constraint(), v0).unwrap();
    assert!(specs.is_empty());
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    let same: Vec<i64> = [variable_facts(0), variable_facts(0)].concat();
    let other: Vec<i64> = [variable_facts(0), variable_facts(1)].concat();
    assert_eq!(
        f.lookup::<String>(&same).unwrap().unwrap().inner,
        "(v: VariableSpec(FLOAT, [], alias 0); captures: w: VariableSpec(FLOAT, [], alias 0))"
    );
    assert!(f.lookup::<String>(&other).unwrap().is_none(), "another aliasing pattern is another signature");
    // A later trace must capture the same names in the same order.
    let mut s = f.begin_trace::<String>(vec!["v".into()], Some(&other), true).unwrap();
    assert!(s.reason().starts_with("capture w: "), "{}", s.reason());
    assert_eq!((s.retrace_reason().parameter.as_str(), s.retrace_reason().capture), ("w", true));
    let v = f.decode_value(&variable_facts(0)).unwrap();
    s.declare::<String>("v", ParamKind::Variable, false, var_constraint(), Some(v)).unwrap();
    let e = s.declare_capture::<String>("z", var_constraint(), f.decode_value(&variable_facts(1)).unwrap());
    assert!(matches!(e, Err(PolyError::ParameterListChanged { .. })));
    // The same capture with another variable retraces; the history blames capture w.
    let mut s = f.begin_trace::<String>(vec!["v".into()], Some(&other), true).unwrap();
    s.declare::<String>("v", ParamKind::Variable, false, var_constraint(), Some(f.decode_value(&variable_facts(0)).unwrap()))
        .unwrap();
    s.declare_capture::<String>("w", var_constraint(), f.decode_value(&variable_facts(1)).unwrap()).unwrap();
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    let last = f.history().pop().unwrap();
    assert_eq!((last.parameter.as_str(), last.capture, last.path.as_str()), ("w", true, "w"));
    assert!(last.reason.starts_with("capture w: "), "{}", last.reason);
}

/// A call writes its parameters before its captures; a body may meet a capture first. The trace
/// is keyed in the call's numbering, so the next call with the same variables hits it.
#[test]
fn a_capture_met_before_a_variable_parameter_is_numbered_as_a_call_numbers_it() {
    let f = Fn::new("capture_first");
    let mut s = f.begin_trace::<String>(vec!["v".into()], None, true).unwrap();
    s.declare_capture::<String>("w", var_constraint(), f.decode_value(&variable_facts(0)).unwrap()).unwrap();
    let v = f.decode_value(&variable_facts(1)).unwrap();
    s.declare::<String>("v", ParamKind::Variable, false, var_constraint(), Some(v)).unwrap();
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    let call: Vec<i64> = [variable_facts(0), variable_facts(1)].concat();
    assert_eq!(
        f.lookup::<String>(&call).unwrap().unwrap().inner,
        "(v: VariableSpec(FLOAT, [], alias 0); captures: w: VariableSpec(FLOAT, [], alias 1))"
    );
}

#[test]
fn a_remembered_miss_is_forgotten_when_a_trace_can_serve_it() {
    let f = Fn::new("f");
    trace(&f, spec(DType::FLOAT, &[2]), constraint(&[DType::FLOAT], None)).unwrap();
    let three = tensor_facts(DType::FLOAT, &[3]);
    // The caller's retry under its trace lock and the trace it begins reuse the miss...
    assert!(f.lookup::<String>(&three).unwrap().is_none());
    assert!(f.lookup::<String>(&three).unwrap().is_none());
    let s = f.begin_trace::<String>(vec!["x".into()], Some(&three), false).unwrap();
    assert_eq!(s.reason(), "x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0");
    // ...until the cached signatures change: a trace that serves [3] makes it a hit.
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, false).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[3])))
        .unwrap();
    let id = f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap().id;
    assert_eq!(f.lookup::<String>(&three).unwrap().unwrap().id, id);
}
