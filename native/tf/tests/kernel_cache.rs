//! Dropped functions give back the caller-thread kernel TensorFlow cached for them under its
//! wrapper function: once enough are stale, the wrapper is removed from the context (and re-added
//! by the next call that needs it), and calls keep working across purges.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{kernel_cache, naming, EagerContext, EagerFunction, GraphSignature, Runtime};

const WRAPPER: &str = "__wrapped__StatefulPartitionedCall_Tin_1_Tout_1_device_/job:localhost/replica:0/task:0/device:CPU:0";

fn add(rt: &'static Runtime, ctx: EagerContext, k: f32) -> EagerFunction {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[])).unwrap();
    let c = g.constant(&OwnedTensor::from_f32(rt, &[], &[k])).unwrap();
    let y = g.binary("AddV2", x, c).unwrap();
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    // SAFETY: a live graph, not mutated while converted.
    unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), &naming::function_name("kc"), &sig) }.unwrap()
}

fn call(rt: &'static Runtime, f: &EagerFunction, x: &OwnedTensor) -> f32 {
    let mut out = Vec::new();
    // SAFETY: a live float scalar for the function's one input.
    unsafe { f.call(&[x.raw()], &mut out) }.unwrap();
    // SAFETY: the output is ours.
    unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32()[0]
}

#[test]
fn dropped_functions_kernels_are_purged_and_calls_go_on() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return; // no caller-thread path, no wrapper
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let x = OwnedTensor::from_f32(rt, &[], &[1.0]);
    let kept = add(rt, ctx, 100.0);
    assert_eq!(call(rt, &kept, &x), 101.0);
    assert!(EagerFunction::is_registered(rt, ctx, WRAPPER), "the caller-thread call registered its wrapper");
    let mut purged = false;
    for i in 0..kernel_cache::threshold() + 1 {
        let f = add(rt, ctx, i as f32);
        assert_eq!(call(rt, &f, &x), 1.0 + i as f32);
        drop(f);
        purged |= !EagerFunction::is_registered(rt, ctx, WRAPPER);
    }
    assert!(purged, "the wrapper was removed once enough kernels were stale");
    // The live function's kernel went with the purge: its next call rebuilds it.
    assert_eq!(call(rt, &kept, &x), 101.0);
    assert!(EagerFunction::is_registered(rt, ctx, WRAPPER));
    drop(kept);
    // SAFETY: every function registered in it was dropped.
    unsafe { ctx.delete(rt) };
}
