//! Purges racing kernel builds: threads register, call once (a new kernel under the shared
//! wrapper) and drop functions, so the wrapper is purged every `threshold()` drops while other
//! threads are building kernels under it. Counts the calls that failed, by message: none may
//! (calls hold `kernel_cache::calls_guard`; before, a call meeting a purge failed, and in a JVM
//! test one crashed the process). Short by default; longer with `RACE_THREADS=8 RACE_CYCLES=2000
//! cargo test -p polyfn-tf --test kernel_cache_race -- --nocapture`.

mod support;

use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::EagerContext;
use support::scalar::{add_constant_inline as add_constant, call_scalar};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[test]
fn purges_racing_kernel_builds() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let threads: usize = std::env::var("RACE_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let per: usize = std::env::var("RACE_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(150);
    let failures = Mutex::new(BTreeMap::<String, usize>::new());
    std::thread::scope(|s| {
        for t in 0..threads {
            let failures = &failures;
            s.spawn(move || {
                let x = OwnedTensor::from_f32(rt, &[], &[1.0]);
                for i in 0..per {
                    let f = add_constant(rt, ctx, (t * per + i) as f32, "race");
                    match call_scalar(rt, &f, &x) {
                        Ok(v) => assert_eq!(v, 1.0 + (t * per + i) as f32),
                        Err(e) => {
                            let key = format!("{:?}: {}", e.code, e.message.chars().take(90).collect::<String>());
                            *failures.lock().unwrap().entry(key).or_insert(0) += 1;
                        }
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!("{} threads x {} cycles; failed calls: {:#?}", threads, per, failures);
    // SAFETY: every function registered in it was dropped.
    unsafe { ctx.delete(rt) };
    assert!(failures.is_empty(), "calls failed while the wrapper was purged: {failures:#?}");
}
