//! RSS over many register / call / drop cycles of a traced function, without the JVM: separates
//! what TensorFlow keeps from what Java does (`bench/leak.sh` runs the Java leak check).
//!
//! `POLYFN_TF_LIB=.../libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example leak_cycles -- [cycles] [call|nocall]`

mod support;

use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::{CallOptions, EagerContext, EagerFunction, GraphSignature, Runtime};
use std::ffi::CString;
use std::path::PathBuf;
use support::add2_graph;

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn cycle(rt: &'static Runtime, ctx: EagerContext, input: &OwnedTensor, i: usize, call: bool) {
    let (g, x, y) = add2_graph(rt, &[]);
    let names = [CString::new("y").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    // SAFETY: a live graph, not mutated while converted.
    let f = unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &format!("leak_{i}"), &sig, CallOptions::default()) }.unwrap();
    if call {
        let mut out = Vec::new();
        // SAFETY: a live float scalar for the function's one input.
        unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
        for o in out {
            // SAFETY: outputs are ours to delete.
            unsafe { (rt.api().TF_DeleteTensor)(o) };
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cycles: usize = args.get(1).map_or(5000, |a| a.parse().unwrap());
    let call = args.get(2).is_none_or(|m| m != "nocall");
    let lib = std::env::var_os("POLYFN_TF_LIB").map(PathBuf::from).expect("POLYFN_TF_LIB");
    let rt = Runtime::load(&lib).unwrap_or_else(|e| panic!("loading {}: {e}", lib.display()));
    let ctx = EagerContext::new_owned(rt).unwrap();
    let input = OwnedTensor::from_f32(rt, &[], &[1.0]);
    let warmup = cycles / 10;
    for i in 0..warmup {
        cycle(rt, ctx, &input, i, call);
    }
    let before = rss_kb();
    for i in 0..cycles {
        cycle(rt, ctx, &input, warmup + i, call);
    }
    let after = rss_kb();
    println!(
        "{{\"cycles\": {cycles}, \"call\": {call}, \"rss_before_kb\": {before}, \"rss_after_kb\": {after}, \"bytes_per_cycle\": {}}}",
        (after as i64 - before as i64) * 1024 / cycles as i64
    );
}
