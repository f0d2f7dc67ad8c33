//! Measures the per-call cost of resetting the cached `TFE_Op` to a function name
//! (`TFE_OpReset`, a registry miss per call) against clearing and reusing it (see
//! `polyfn_tf::op_cache`) and the opt-in caller-thread path (`EagerFunction::set_fast_path`),
//! through `EagerFunction::call`, interleaved in one process. Reports
//! wall time and CPU time of the calling thread and of the process (CPU time is what a loaded
//! machine distorts least).
//!
//! Usage: `POLYFN_TF_LIB=/path/libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example op_reuse -- [calls per batch]`

mod support;

use support::{add2_graph, median};
use polyfn_tf::op_cache::{op_reuse_active, set_op_reuse};
use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::{naming, EagerContext, EagerFunction, GraphSignature, Runtime};
use std::time::Instant;

fn cpu_us(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-parameter.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5000);
    let lib = std::env::var_os("POLYFN_TF_LIB").expect("POLYFN_TF_LIB: the libtensorflow_cc.so.2 to load");
    let rt = Runtime::load(std::path::Path::new(&lib)).unwrap();
    let api = rt.api();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let (g, x, y) = add2_graph(rt, &[]);
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    let f = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), &naming::function_name("add2"), &sig) }.unwrap();
    let input = OwnedTensor::from_f32(rt, &[], &[1.0]);
    let mut out = Vec::new();
    // [reset, reuse, fast path] x [wall, caller cpu, process cpu]
    let mut samples: [[Vec<f64>; 3]; 3] = Default::default();
    for round in 0..31 {
        for (mode, reuse) in [false, true, true].into_iter().enumerate() {
            set_op_reuse(reuse);
            f.set_fast_path(mode == 2).unwrap();
            let (t, c0, p0) =
                (Instant::now(), cpu_us(libc::CLOCK_THREAD_CPUTIME_ID), cpu_us(libc::CLOCK_PROCESS_CPUTIME_ID));
            for _ in 0..n {
                out.clear();
                unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
                unsafe { (api.TF_DeleteTensor)(out[0]) };
            }
            if round > 0 {
                let s = &mut samples[mode];
                s[0].push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
                s[1].push((cpu_us(libc::CLOCK_THREAD_CPUTIME_ID) - c0) / n as f64);
                s[2].push((cpu_us(libc::CLOCK_PROCESS_CPUTIME_ID) - p0) / n as f64);
            }
        }
    }
    set_op_reuse(true);
    eprintln!("op reuse supported by this runtime: {}", op_reuse_active(rt));
    for (mode, name) in ["TFE_OpReset per call", "clear and reuse", "caller-thread path"].iter().enumerate() {
        let s = &mut samples[mode];
        println!(
            "{name:<22} wall {:8.3} us  caller cpu {:7.3} us  process cpu {:7.3} us",
            median(&mut s[0]),
            median(&mut s[1]),
            median(&mut s[2])
        );
    }
    drop(f);
    unsafe { ctx.delete(rt) };
}
