//! The warnings a polymorphic function logs when it traces too often: the frequent-retrace
//! warning (5 traces within the last 10 calls, once per burst, with advice fitting the
//! parameters that keep changing) and the many-Java-values warning (at 8 distinct values, then
//! at each doubling). Each test uses its own function name to pick its records.

use std::sync::Mutex;

use polyfn_core::*;

static RECORDS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        if r.level() <= log::Level::Warn {
            RECORDS.lock().unwrap().push(format!("{}", r.args()));
        }
    }
    fn flush(&self) {}
}

static LOGGER: Capture = Capture;

/// Installs the capturing logger (once per test binary); every test calls it first.
fn install() {
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(log::LevelFilter::Warn);
}

fn warnings(function: &str) -> Vec<String> {
    let needle = format!("function '{function}'");
    RECORDS.lock().unwrap().iter().filter(|r| r.starts_with(&needle)).cloned().collect()
}

const F: DType = DType::FLOAT;

fn typed(d: DType, dims: &[i64]) -> Vec<i64> {
    let mut f = vec![TAG_TENSOR, d.0 as i64, dims.len() as i64];
    f.extend_from_slice(dims);
    f
}

fn tensor_constraint() -> TypeRef {
    TypeRef::new(TensorConstraint::new(DTypeSet::any(), None))
}

/// A call through the protocol of a function with a tensor `x` and, if `n` is given, a Java
/// value `n` (an Integer literal id).
fn call(f: &Polymorphic<String>, dims: &[i64], n: Option<i64>) {
    call_typed(f, F, dims, n)
}

fn call_typed(f: &Polymorphic<String>, dtype: DType, dims: &[i64], n: Option<i64>) {
    trace_typed(f, dtype, dims, n, true)
}

/// A trace of `x` of shape `dims` ahead of any call, as `getConcreteFunction` makes one.
fn trace_ahead(f: &Polymorphic<String>, dims: &[i64]) {
    trace_typed(f, F, dims, None, false)
}

fn trace_typed(f: &Polymorphic<String>, dtype: DType, dims: &[i64], n: Option<i64>, for_call: bool) {
    let mut facts = typed(dtype, dims);
    if let Some(id) = n {
        facts.extend([TAG_LITERAL, id]);
        f.register_literal(id, &id.to_string(), "java.lang.Integer", Some(&id.to_string()));
    }
    if for_call && f.lookup::<String>(&facts).unwrap().is_some() {
        return;
    }
    let mut names = vec!["x".to_string()];
    names.extend(n.map(|_| "n".to_string()));
    let known = f.declared().is_some();
    let mut s = f.begin_trace::<String>(names, known.then_some(&facts[..]), for_call).unwrap();
    let x = f.decode_value(&typed(dtype, dims)).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, tensor_constraint(), Some(x)).unwrap();
    if let Some(id) = n {
        let v = f.decode_value(&[TAG_LITERAL, id]).unwrap();
        s.declare::<String>("n", ParamKind::Java, false, TypeRef::new(LiteralConstraint::new("java.lang.Integer")), Some(v))
            .unwrap();
    }
    f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
}

/// Four traces, then `hits` cached calls, then a fifth trace: a warning iff the first trace is
/// still among the last 10 calls.
fn burst_with_hits_between(name: &str, hits: usize) -> usize {
    install();
    let f = Polymorphic::new(name);
    for d in 1..=4 {
        call(&f, &[d], None);
    }
    for _ in 0..hits {
        call(&f, &[4], None);
    }
    call(&f, &[5], None);
    assert_eq!(f.trace_count(), 5);
    warnings(name).len()
}

#[test]
fn five_traces_within_ten_calls_warn_and_not_when_spread_wider() {
    install();
    assert_eq!(burst_with_hits_between("within10", 5), 1, "traces at calls 1-4 and 10");
    assert_eq!(burst_with_hits_between("within11", 6), 0, "traces at calls 1-4 and 11");
    assert_eq!(burst_with_hits_between("adjacent", 0), 1);
    assert!(warnings("adjacent")[0].contains("5 of the last 5 calls traced"), "{:?}", warnings("adjacent"));
    // four traces in a row are not yet a burst
    let f = Polymorphic::<String>::new("four");
    for d in 1..=4 {
        call(&f, &[d], None);
    }
    assert!(warnings("four").is_empty());
}

#[test]
fn a_burst_warns_once_and_a_new_burst_after_calm_warns_again() {
    install();
    let f = Polymorphic::<String>::new("bursts");
    for d in 1..=9 {
        call(&f, &[d], None);
    }
    assert_eq!(warnings("bursts").len(), 1, "one warning for the whole burst");
    for _ in 0..10 {
        call(&f, &[1], None);
    }
    // the next burst starts with a quiet window: 4 traces do not warn, the 5th does
    for d in 20..24 {
        call(&f, &[d], None);
    }
    assert_eq!(warnings("bursts").len(), 1);
    call(&f, &[24], None);
    assert_eq!(warnings("bursts").len(), 2);
    let text = &warnings("bursts")[1];
    assert!(text.contains("5 of the last 10 calls traced"), "{text}");
    assert!(text.contains("Parameters that keep changing: x."), "{text}");
    assert!(text.contains("withReduceRetracing(true)"), "{text}");
}

#[test]
fn traces_ahead_of_calls_do_not_warn_and_do_not_count_toward_a_burst() {
    install();
    // Ten signatures traced ahead (getConcreteFunction), then none of them called: Python warns
    // only about calls that trace. This warned "5 of the last 0 calls traced".
    let f = Polymorphic::<String>::new("ahead");
    for d in 1..=10 {
        trace_ahead(&f, &[d]);
    }
    assert_eq!(f.trace_count(), 10);
    assert!(warnings("ahead").is_empty(), "{:?}", warnings("ahead"));
    // Calls of the traced signatures are hits; four calls that trace are not yet a burst...
    for d in 1..=10 {
        call(&f, &[d], None);
    }
    for d in 11..=14 {
        call(&f, &[d], None);
    }
    assert!(warnings("ahead").is_empty(), "{:?}", warnings("ahead"));
    // ...and a fifth within ten calls is, counted over calls only.
    call(&f, &[15], None);
    assert_eq!(warnings("ahead").len(), 1);
    assert!(warnings("ahead")[0].contains("5 of the last 10 calls traced"), "{:?}", warnings("ahead"));
}

#[test]
fn the_advice_fits_what_keeps_changing() {
    install();
    // a Java value that keeps changing: pass it as a tensor
    let f = Polymorphic::<String>::new("javas");
    for n in 1..=5 {
        call(&f, &[2], Some(n));
    }
    let w = warnings("javas");
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("Parameters that keep changing: n."), "{}", w[0]);
    assert!(w[0].contains("as tensors, not Java values"), "{}", w[0]);
    // parameters are listed in the order they last changed, oldest first
    let f = Polymorphic::<String>::new("order");
    for (d, n) in [(1, 1), (2, 1), (3, 1), (4, 1), (4, 2)] {
        call(&f, &[d], Some(n));
    }
    let w = warnings("order");
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("Parameters that keep changing: x, n."), "{}", w[0]);
    assert!(w[0].contains("as tensors, not Java values"), "{}", w[0]);
    // traces begun without a typed description of the call name no parameter
    let f = Polymorphic::<String>::new("untyped");
    for d in 1..=5 {
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
        let x = f.decode_value(&typed(F, &[d])).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, tensor_constraint(), Some(x)).unwrap();
        f.finish_trace(&s, vec![], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    }
    let w = warnings("untyped");
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("Parameters that keep changing: none identified."), "{}", w[0]);
    // with reduce-retracing on, only the shape-constraint advice is left
    let f = Polymorphic::<String>::with_options("reducing", Options { reduce_retracing: true, ..Options::default() });
    for d in [DType::FLOAT, DType::DOUBLE, DType::INT32, DType::INT64, DType::HALF] {
        call_typed(&f, d, &[2], None);
    }
    assert_eq!(f.trace_count(), 5, "dtypes never generalize");
    let w = warnings("reducing");
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("declare a shape constraint"), "{}", w[0]);
    assert!(!w[0].contains("withReduceRetracing"), "{}", w[0]);
    // tensor changes without reduce-retracing: both pieces of advice
    let f = Polymorphic::<String>::new("tensors");
    for d in 1..=5 {
        call(&f, &[d], Some(1));
    }
    let w = warnings("tensors");
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("keep changing: x.") && w[0].contains("withReduceRetracing(true)"), "{}", w[0]);
    assert!(!w[0].contains("not Java values"), "{}", w[0]);
}

#[test]
fn many_distinct_java_values_warn_at_8_then_at_each_doubling() {
    install();
    let f = Polymorphic::<String>::new("literals");
    let literal_warnings = || {
        warnings("literals").into_iter().filter(|w| w.contains("distinct values of Java parameter 'n'")).collect::<Vec<_>>()
    };
    // x takes as many shapes as n takes values, but only Java parameters get this warning
    for n in 1..=7 {
        call(&f, &[n], Some(n));
        // spread the traces so the frequent-retrace warning stays out of the way
        for _ in 0..10 {
            call(&f, &[n], Some(n));
        }
    }
    assert!(literal_warnings().is_empty());
    call(&f, &[8], Some(8));
    let w = literal_warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("has traced 8 distinct values"), "{}", w[0]);
    // the same values again: no new trace, no new warning
    for n in 1..=8 {
        call(&f, &[n], Some(n));
    }
    assert_eq!(literal_warnings().len(), 1);
    for n in 9..=15 {
        call(&f, &[n], Some(n));
        for _ in 0..10 {
            call(&f, &[n], Some(n));
        }
    }
    assert_eq!(literal_warnings().len(), 1);
    call(&f, &[16], Some(16));
    assert_eq!(literal_warnings().len(), 2);
    assert!(literal_warnings()[1].contains("has traced 16 distinct values"));
    // a tensor parameter never gets this warning
    assert_eq!(f.trace_count(), 16);
    assert!(warnings("literals").iter().all(|w| !w.contains("parameter 'x'")), "{:?}", warnings("literals"));
}
