//! The floor of a new signature's first call without the JVM: what TensorFlow needs to turn a
//! graph into a function, register it, instantiate it (Grappler included) and run it once, as
//! Polyfn's native side does for `add2` after the body has been traced (`FirstCallBench`
//! measures the whole first call from Java).
//!
//! For each of 21 + 3 fresh functions (the first 3 are warm-up) it times graph building
//! (placeholder, constant, `AddV2`), `EagerFunction::from_graph_with` (`TF_GraphToFunction`, the
//! call-path inspection, registration) and the first call, with Grappler as Python's
//! `tf.function` configures it and with Grappler off; it prints the medians in milliseconds.
//!
//! Usage: `POLYFN_TF_LIB=/path/libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example first_call`
//! Prints one JSON object on stdout.

mod support;

use support::{add2_graph, median};
use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::{CallOptions, EagerContext, EagerFunction, GraphSignature, Runtime};
use std::ffi::CString;
use std::path::PathBuf;
use std::time::Instant;

/// Median milliseconds of a new `add2` function's build, registration and first call.
fn first_calls(rt: &'static Runtime, ctx: EagerContext, options: CallOptions, tag: &str) -> f64 {
    let input = OwnedTensor::from_f32(rt, &[], &[1.0]);
    let mut out = Vec::new();
    let mut ms: Vec<f64> = (0..24)
        .map(|i| {
            let t = Instant::now();
            let (g, x, y) = add2_graph(rt, &[]);
            let names = [CString::new("y").unwrap()];
            let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
            // SAFETY: a live graph, not mutated while converted.
            let f = unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &format!("first_{tag}_{i}"), &sig, options) }.unwrap();
            // SAFETY: a live float scalar for the function's one input.
            unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
            let elapsed = t.elapsed().as_secs_f64() * 1e3;
            for o in out.drain(..) {
                // SAFETY: outputs are ours to delete.
                unsafe { (rt.api().TF_DeleteTensor)(o) };
            }
            elapsed
        })
        .skip(3)
        .collect();
    median(&mut ms)
}

fn main() {
    let lib = std::env::var_os("POLYFN_TF_LIB").map(PathBuf::from).expect("POLYFN_TF_LIB");
    let rt = Runtime::load(&lib).unwrap_or_else(|e| panic!("loading {}: {e}", lib.display()));
    let ctx = EagerContext::new_owned(rt).unwrap();
    let grappler = first_calls(rt, ctx, CallOptions::default(), "grappler");
    let plain = first_calls(rt, ctx, CallOptions { grappler: false, ..CallOptions::default() }, "plain");
    eprintln!("first call of a new add2 (Rust): {grappler:.3} ms with Grappler, {plain:.3} ms without");
    println!("{{\"workload\": \"add2\", \"first_call_ms\": {grappler:.4}, \"first_call_nograppler_ms\": {plain:.4}}}");
    // SAFETY: every function registered in it was dropped above.
    unsafe { ctx.delete(rt) };
}
