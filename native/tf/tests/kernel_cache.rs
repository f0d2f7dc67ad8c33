//! Dropped functions give back the caller-thread kernel TensorFlow cached for them under its
//! wrapper function: once enough are stale, the wrapper is removed from the context (and re-added
//! by the next call that needs it), and calls keep working across purges.

mod support;

use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::{kernel_cache, EagerContext, EagerFunction};
use support::scalar::{add_constant_inline as add_constant, call_scalar};
use polyfn_tf::CallOptions;

const WRAPPER: &str = "__wrapped__StatefulPartitionedCall_Tin_1_Tout_1_device_/job:localhost/replica:0/task:0/device:CPU:0";

#[test]
fn dropped_functions_kernels_are_purged_and_calls_go_on() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return; // no caller-thread path, no wrapper
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let x = OwnedTensor::from_f32(rt, &[], &[1.0]);
    let kept = add_constant(rt, ctx, 100.0, "kc");
    assert_eq!(call_scalar(rt, &kept, &x).unwrap(), 101.0);
    assert!(EagerFunction::is_registered(rt, ctx, WRAPPER), "the caller-thread call registered its wrapper");
    let mut purged = false;
    for i in 0..kernel_cache::threshold() + 1 {
        let f = add_constant(rt, ctx, i as f32, "kc");
        assert_eq!(call_scalar(rt, &f, &x).unwrap(), 1.0 + i as f32);
        drop(f);
        purged |= !EagerFunction::is_registered(rt, ctx, WRAPPER);
    }
    assert!(purged, "the wrapper was removed once enough kernels were stale");
    // The live function's kernel went with the purge: its next call rebuilds it.
    assert_eq!(call_scalar(rt, &kept, &x).unwrap(), 101.0);
    assert!(EagerFunction::is_registered(rt, ctx, WRAPPER));
    drop(kept);
    // SAFETY: every function registered in it was dropped.
    unsafe { ctx.delete(rt) };
}

/// By default the caller-thread paths never turn on the context's "run eager op as function"
/// mode (under which TensorFlow can return an earlier eager constant's value): a function's
/// calls, before and after its session path, register no wrapper.
#[test]
fn default_calls_leave_the_mode_off() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let x = OwnedTensor::from_f32(rt, &[], &[1.0]);
    let f = support::scalar::add_constant(rt, ctx, 5.0, "off");
    assert!(f.fast_path() || !polyfn_tf::fast_path_supported(rt));
    assert!(!f.eager_inline() && !CallOptions::default().eager_op_as_function);
    for _ in 0..polyfn_tf::PROMOTE_AFTER + 2 {
        assert_eq!(call_scalar(rt, &f, &x).unwrap(), 6.0);
    }
    assert!(!EagerFunction::is_registered(rt, ctx, WRAPPER), "a default call ran under the mode");
    if polyfn_tf::fast_path_supported(rt) {
        assert!(f.on_session_path(), "the session path needs no mode");
        // The opt-in path does turn it on.
        let inline = add_constant(rt, ctx, 1.0, "on");
        assert!(inline.eager_inline());
        assert_eq!(call_scalar(rt, &inline, &x).unwrap(), 2.0);
        assert!(EagerFunction::is_registered(rt, ctx, WRAPPER));
    }
    drop(f);
    // SAFETY: every function registered in it was dropped.
    unsafe { ctx.delete(rt) };
}
