//! Tests of the polymorphic function under threads: cached calls take no lock, hits racing
//! traces, evictions and clears are right, and no log record is emitted under the lock.

use super::tests::{call, capture, constraint, spec, tensor_facts, trace, Fn};
use super::*;
use crate::{DType, ParamKind, Shape};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A log handler that calls back into the function (as an application's handler calling
/// `statistics()` does) must not deadlock: nothing is logged while the function's lock is held.
#[test]
fn a_logger_that_calls_back_into_the_function_does_not_deadlock() {
    capture::install();
    let f = Arc::new(Fn::with_options("reentrant", Options { max_concrete_functions: Some(2), ..Options::default() }));
    capture::call_back_into(f.clone());
    let (done, finished) = std::sync::mpsc::channel();
    let worker = f.clone();
    std::thread::spawn(move || {
        // Traces (debug records), evictions (debug) and a frequent-retrace burst (a warning).
        for n in 1..=8 {
            call(&worker, &[n]);
        }
        let _ = done.send(worker.stats());
    });
    let stats = finished
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("deadlock: a log record was emitted while the function's lock was held");
    assert_eq!((stats.traces, stats.evictions), (8, 6));
    assert_eq!(capture::matching("function 'reentrant': ").len(), 1, "the burst warning was logged");
}

/// A call of a memoized signature takes no lock: it is served while another thread holds the
/// function's lock (as a trace or a slow lookup does).
#[test]
fn a_cached_call_is_served_while_the_lock_is_held() {
    let f = Arc::new(Fn::new("lockfree"));
    trace(&f, spec(DType::FLOAT, &[-1]), constraint(&[DType::FLOAT], Some(Shape::of(&[-1])))).unwrap();
    let facts = tensor_facts(DType::FLOAT, &[3]);
    assert!(f.lookup::<String>(&facts).unwrap().is_some(), "memoized by this first lookup");
    let held = f.state.lock();
    let (done, finished) = std::sync::mpsc::channel();
    let caller = f.clone();
    std::thread::spawn(move || {
        let c = caller.lookup::<String>(&facts).unwrap().unwrap();
        let _ = done.send((c.inner.clone(), caller.concrete_by_id(c.id).is_some()));
    });
    let got = finished.recv_timeout(std::time::Duration::from_secs(10));
    drop(held);
    let (inner, by_id) = got.expect("a cached call waited for the function's lock");
    assert_eq!(inner, "(x: TensorSpec(FLOAT, [-1]))");
    assert!(by_id);
    let st = f.stats();
    assert_eq!((st.exact_hits, st.inexact_hits), (0, 2));
}

/// Traces one signature `x = FLOAT dims` for a racing caller and returns the concrete function's
/// type: the one just traced, even when a concurrent clear or eviction has dropped it.
fn race_trace(f: &Fn, dims: &[i64], facts: &[i64]) -> String {
    let known = f.declared().is_some();
    let mut s = f.begin_trace::<String>(vec!["x".into()], known.then_some(facts), true).unwrap();
    s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, dims)))
        .unwrap();
    f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap().inner.clone()
}

/// Hits race with traces, evictions and clears: every call gets the concrete function of its
/// own signature, and the statistics add up.
#[test]
fn hits_racing_with_traces_evictions_and_clears_are_always_right() {
    // Room for the callers' six signatures and a few of the tracer's: the tracer's new signatures
    // keep evicting, the callers' recently used ones mostly stay (so hits happen even on a slow,
    // loaded machine).
    let f = Arc::new(Fn::with_options("racy", Options { max_concrete_functions: Some(8), ..Options::default() }));
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for t in 0..3i64 {
        let f = f.clone();
        threads.push(std::thread::spawn(move || {
            let mut served = 0u64;
            let started = std::time::Instant::now();
            let mut i = 0i64;
            // At least 400 calls, and on until some were hits (bounded, for a starved thread).
            while i < 400 || (served == 0 && started.elapsed() < std::time::Duration::from_secs(20)) {
                i += 1;
                let n = 1 + (i * 7 + t) % 6;
                let facts = tensor_facts(DType::FLOAT, &[n]);
                let want = format!("(x: TensorSpec(FLOAT, [{n}]))");
                match f.lookup::<String>(&facts).unwrap() {
                    Some(c) => {
                        assert_eq!(c.inner, want, "a hit served another signature's function");
                        assert_eq!(c.function_type.to_string(), want);
                        assert_eq!(c.output_names, ["y"], "published before its output names");
                        served += 1;
                    }
                    None => {
                        assert_eq!(race_trace(&f, &[n], &facts), want);
                    }
                }
            }
            served
        }));
    }
    let (clearer, tracer) = (f.clone(), f.clone());
    let stop_clear = stop.clone();
    let clear = std::thread::spawn(move || {
        while !stop_clear.load(Ordering::Relaxed) {
            clearer.clear_cache();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
    let stop_trace = stop.clone();
    let trace_new = std::thread::spawn(move || {
        let mut n = 100;
        let started = std::time::Instant::now();
        // Until the callers are done, and on until the bound has evicted (bounded in time).
        while !stop_trace.load(Ordering::Relaxed)
            || (tracer.stats().evictions == 0 && started.elapsed() < std::time::Duration::from_secs(20))
        {
            let facts = tensor_facts(DType::FLOAT, &[n]);
            if tracer.lookup::<String>(&facts).unwrap().is_none() {
                race_trace(&tracer, &[n], &facts);
            }
            n += 1;
        }
    });
    let served: u64 = threads.into_iter().map(|t| t.join().expect("a caller failed")).sum();
    stop.store(true, Ordering::Relaxed);
    clear.join().unwrap();
    trace_new.join().unwrap();
    let st = f.stats();
    assert!(served > 0 && st.evictions > 0, "the race exercised hits ({served}) and evictions ({})", st.evictions);
    assert!(st.exact_hits >= served, "{st:?}");
    assert!(f.concrete_functions().len() <= 8);
}

/// A concrete function that records whether its function's lock was held when it was released
/// (releasing a real one calls into TensorFlow, which must not happen under that lock).
struct LockProbe {
    owner: Arc<std::sync::OnceLock<std::sync::Weak<Polymorphic<LockProbe>>>>,
    released_under_lock: Arc<AtomicBool>,
    released: Arc<std::sync::atomic::AtomicUsize>,
}

impl Drop for LockProbe {
    fn drop(&mut self) {
        self.released.fetch_add(1, Ordering::SeqCst);
        if let Some(f) = self.owner.get().and_then(|w| w.upgrade()) {
            if f.state.is_locked() {
                self.released_under_lock.store(true, Ordering::SeqCst);
            }
        }
    }
}

#[test]
fn a_concrete_function_replaced_by_a_second_trace_of_its_type_is_released_after_the_lock() {
    let owner = Arc::new(std::sync::OnceLock::new());
    let released_under_lock = Arc::new(AtomicBool::new(false));
    let released = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let f = Arc::new(Polymorphic::<LockProbe>::new("f"));
    owner.set(Arc::downgrade(&f)).ok().unwrap();
    for _ in 0..2 {
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, spec(DType::FLOAT, &[2]), Some(spec(DType::FLOAT, &[2])))
            .unwrap();
        let probe = LockProbe { owner: owner.clone(), released_under_lock: released_under_lock.clone(), released: released.clone() };
        f.finish_trace(&s, vec!["y".into()], |_, _| Ok::<_, String>(probe)).unwrap();
    }
    assert_eq!(released.load(Ordering::SeqCst), 1, "the second trace replaced the first");
    assert!(!released_under_lock.load(Ordering::SeqCst), "the replaced function was released under the lock");
}

/// Threads calling one signature with one call shape count in separate stripes of its profile
/// counter; the profile still has every call.
#[test]
fn concurrent_cached_calls_are_each_counted_in_the_profile() {
    let f = Arc::new(Fn::new("counted"));
    call(&f, &[4]); // traces (a first trace has no facts to count)
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let f = f.clone();
            std::thread::spawn(move || {
                for _ in 0..10_000 {
                    f.lookup::<String>(&tensor_facts(DType::FLOAT, &[4])).unwrap().unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let counts: Vec<u64> = f.recorded_calls().iter().map(|(_, n)| *n).collect();
    assert_eq!(counts, vec![60_000]);
    assert_eq!(f.stats().exact_hits, 60_000);
}
