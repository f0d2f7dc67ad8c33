//! Does calling one eager function get slower when many functions are registered in the same
//! eager context? Polyfn's own dispatch is a hash lookup (flat in the number of signatures); this
//! measures TensorFlow's side of a cache hit without the JVM.
//!
//! Usage: `POLYFN_TF_LIB=/path/libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example hit_scaling -- [N]`

mod support;

use support::add2_graph;
use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::{EagerContext, EagerFunction, GraphSignature, Runtime};
use std::ffi::CString;
use std::time::Instant;

fn add_two(rt: &'static Runtime, ctx: EagerContext, name: &str, dims: &[i64]) -> EagerFunction {
    let (g, x, y) = add2_graph(rt, dims);
    let names = [CString::new("y").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), name, &sig) }.unwrap()
}

/// Median µs per call of `f` over 21 batches of `n` calls.
fn median_us(f: &EagerFunction, input: &OwnedTensor, rt: &'static Runtime, n: usize) -> f64 {
    let mut out = Vec::new();
    let mut batches: Vec<f64> = (0..21)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                out.clear();
                unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
                for &o in &out {
                    unsafe { (rt.api().TF_DeleteTensor)(o) };
                }
            }
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

fn main() {
    let many: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let lib = std::env::var_os("POLYFN_TF_LIB").expect("POLYFN_TF_LIB: the libtensorflow_cc.so.2 to load");
    let rt = Runtime::load(std::path::Path::new(&lib)).unwrap();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let hot = add_two(rt, ctx, "hit_hot", &[1]);
    let input = OwnedTensor::from_f32(rt, &[1], &[1.0]);
    median_us(&hot, &input, rt, 2000); // warm up
    let one = median_us(&hot, &input, rt, 5000);
    let t = Instant::now();
    let others: Vec<EagerFunction> =
        (2..=many as i64).map(|n| add_two(rt, ctx, &format!("hit_other_{n}"), &[n])).collect();
    let register_s = t.elapsed().as_secs_f64();
    let with_many = median_us(&hot, &input, rt, 5000);
    println!(
        "{{\"functions\": {many}, \"register_s\": {register_s:.1}, \"hit_1_us\": {one:.2}, \"hit_many_us\": {with_many:.2}, \"ratio\": {:.2}}}",
        with_many / one
    );
    drop(others);
    drop(hot);
    unsafe { ctx.delete(rt) };
}
