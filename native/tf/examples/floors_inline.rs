//! The caller-thread floors of Polyfn's benchmark suite (bench/run.sh, its "fast paths" block):
//! the least work the TensorFlow C API needs to run a function on the calling thread, with no
//! hand-off to TensorFlow's inter-op thread pool.
//!
//! For each workload it measures
//! * `floor_inline_session`: `TF_SessionRun` of the graph in a session whose `ConfigProto` sets
//!   `inter_op_parallelism_threads = -1` (run every op on the caller's thread);
//! * `floor_eager_inline`: the eager context in "run eager op as function" mode, and a new
//!   `StatefulPartitionedCall` op (`Tin`, `Tout`, `f` only) per call, one `TFE_NewTensorHandle`
//!   per input, `TFE_Execute`, `TFE_TensorHandleResolve` (what Polyfn's fast path does, minus its
//!   op reuse and its `config_proto`);
//! * `polyfn_tf_fast`: `polyfn_tf::EagerFunction::call` with the default options (the session
//!   path once warm, after the eager caller-thread path for its first calls);
//! * `promotion_ms`: the one call that moves the function to its session (it builds the session
//!   and runs it the first time), and `eager_call_us`, the median of the calls before it.
//!
//! Usage: `POLYFN_TF_LIB=/path/libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example floors_inline -- [--quick]`
//! Prints one JSON object on stdout.

mod support;

use support::{check, inline_session, sym};
use polyfn_tf::c_api::{TFE_Context, TFE_Op, TFE_TensorHandle, TF_Output, TF_Status, TF_Tensor};
use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{EagerContext, EagerFunction, GraphSignature, Runtime};
use std::ffi::{c_char, c_int, c_uchar, CString};
use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

/// Median and min per-call microseconds of `f`, over `rounds` batches of about `batch_ms`.
fn measure(rounds: usize, batch_ms: f64, mut f: impl FnMut()) -> (f64, f64) {
    let start = Instant::now();
    let mut calls = 0usize;
    while start.elapsed().as_secs_f64() * 1e3 < batch_ms * 3.0 || calls < 3 {
        f();
        calls += 1;
    }
    let batch = ((batch_ms / (start.elapsed().as_secs_f64() * 1e3 / calls as f64)).ceil() as usize).max(1);
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let s = Instant::now();
            for _ in 0..batch {
                f();
            }
            s.elapsed().as_secs_f64() * 1e6 / batch as f64
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (samples[samples.len() / 2], samples[0])
}

type SetRunAsFunction = unsafe extern "C" fn(*mut TFE_Context, c_uchar, *mut TF_Status);
type SetAttrTypeList = unsafe extern "C" fn(*mut TFE_Op, *const c_char, *const c_int, c_int);
type SetAttrFunctionName = unsafe extern "C" fn(*mut TFE_Op, *const c_char, *const c_char, usize);

struct Workload {
    name: &'static str,
    inputs: Vec<Vec<i64>>,
    build: fn(&mut Graph, &'static Runtime, &[TF_Output]) -> TF_Output,
}

fn weights(rt: &'static Runtime, g: &mut Graph, dims: &[i64]) -> TF_Output {
    let n: i64 = dims.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i % 17) - 8) as f32 * 0.01).collect();
    g.constant(&OwnedTensor::from_f32(rt, dims, &v)).unwrap()
}

fn sum(g: &mut Graph, xs: &[TF_Output]) -> TF_Output {
    xs[1..].iter().fold(xs[0], |acc, &x| g.binary("AddV2", acc, x).unwrap())
}

fn workloads() -> Vec<Workload> {
    vec![
        Workload {
            name: "add2",
            inputs: vec![vec![]],
            build: |g, rt, xs| {
                let two = g.constant(&OwnedTensor::from_f32(rt, &[], &[2.0])).unwrap();
                g.binary("AddV2", xs[0], two).unwrap()
            },
        },
        Workload {
            name: "mlp",
            inputs: vec![vec![1, 64]],
            build: |g, rt, xs| {
                let (w1, b1, w2, b2) = (weights(rt, g, &[64, 64]), weights(rt, g, &[64]), weights(rt, g, &[64, 10]), weights(rt, g, &[10]));
                let h = g.binary("MatMul", xs[0], w1).unwrap();
                let h = g.binary("AddV2", h, b1).unwrap();
                let h = g.unary("Relu", h).unwrap();
                let y = g.binary("MatMul", h, w2).unwrap();
                g.binary("AddV2", y, b2).unwrap()
            },
        },
        Workload {
            name: "matmul512",
            inputs: vec![vec![512, 512], vec![512, 512]],
            build: |g, _, xs| g.binary("MatMul", xs[0], xs[1]).unwrap(),
        },
        Workload { name: "args16", inputs: vec![vec![]; 16], build: |g, _, xs| sum(g, xs) },
        Workload { name: "list100", inputs: vec![vec![]; 100], build: |g, _, xs| sum(g, xs) },
    ]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, batch_ms) = if quick { (7, 40.0) } else { (21, 100.0) };
    let lib = std::env::var_os("POLYFN_TF_LIB").map(PathBuf::from).expect("POLYFN_TF_LIB");
    let rt = Runtime::load(&lib).unwrap_or_else(|e| panic!("loading {}: {e}", lib.display()));
    let api = rt.api();
    let set_run_as_function: SetRunAsFunction = sym(c"TFE_ContextSetRunEagerOpAsFunction");
    let (set_types, set_fname): (SetAttrTypeList, SetAttrFunctionName) =
        (sym(c"TFE_OpSetAttrTypeList"), sym(c"TFE_OpSetAttrFunctionName"));
    let ctx = EagerContext::new_owned(rt).unwrap();
    // SAFETY: plain C API calls on live objects throughout; every object made is deleted.
    let status = unsafe { (api.TF_NewStatus)() };
    unsafe { set_run_as_function(ctx.0, 1, status) };
    check(rt, status, "run eager op as function");
    let mut results = Vec::new();
    for w in workloads() {
        let mut g = Graph::new(rt);
        let xs: Vec<TF_Output> = w.inputs.iter().map(|d| g.placeholder(DT_FLOAT, Some(d)).unwrap()).collect();
        let y = (w.build)(&mut g, rt, &xs);
        let names = [CString::new("y").unwrap()];
        let sig = GraphSignature { inputs: &xs, outputs: &[y], output_names: &names, control_outputs: &[] };
        let fname = format!("inline_{}", w.name);
        let f = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), &fname, &sig) }.unwrap();
        let inputs: Vec<OwnedTensor> =
            w.inputs.iter().map(|d| OwnedTensor::from_f32(rt, d, &vec![1.0; d.iter().product::<i64>() as usize])).collect();
        let raw: Vec<*mut TF_Tensor> = inputs.iter().map(|t| t.raw()).collect();

        let session = unsafe { inline_session(rt, g.raw(), status) };
        let session_us = measure(rounds, batch_ms, || unsafe {
            let mut out = [ptr::null_mut(); 1];
            (api.TF_SessionRun)(session, ptr::null(), xs.as_ptr(), raw.as_ptr(), xs.len() as c_int, &y, out.as_mut_ptr(), 1, ptr::null(), 0, ptr::null_mut(), status);
            check(rt, status, "TF_SessionRun");
            (api.TF_DeleteTensor)(out[0]);
        });

        let (tin, tout) = (vec![DT_FLOAT; xs.len()], [DT_FLOAT]);
        let cname = CString::new(fname.clone()).unwrap();
        let mut handles: Vec<*mut TFE_TensorHandle> = Vec::with_capacity(raw.len());
        let eager_us = measure(rounds, batch_ms, || unsafe {
            let op = (api.TFE_NewOp)(ctx.0, c"StatefulPartitionedCall".as_ptr(), status);
            set_types(op, c"Tin".as_ptr(), tin.as_ptr(), tin.len() as c_int);
            set_types(op, c"Tout".as_ptr(), tout.as_ptr(), 1);
            set_fname(op, c"f".as_ptr(), cname.as_ptr(), cname.as_bytes().len());
            handles.clear();
            for &t in &raw {
                let h = (api.TFE_NewTensorHandle)(t, status);
                (api.TFE_OpAddInput)(op, h, status);
                handles.push(h);
            }
            let mut ret = [ptr::null_mut(); 1];
            let mut n: c_int = 1;
            (api.TFE_Execute)(op, ret.as_mut_ptr(), &mut n, status);
            check(rt, status, "TFE_Execute");
            let out = (api.TFE_TensorHandleResolve)(ret[0], status);
            (api.TFE_DeleteTensorHandle)(ret[0]);
            (api.TF_DeleteTensor)(out);
            for &h in &handles {
                (api.TFE_DeleteTensorHandle)(h);
            }
            (api.TFE_DeleteOp)(op);
        });

        let mut outs = Vec::with_capacity(1);
        // The calls up to the promotion, each timed: the last one builds the session.
        let mut before: Vec<f64> = (0..polyfn_tf::PROMOTE_AFTER)
            .map(|_| {
                let t = Instant::now();
                unsafe { f.call(&raw, &mut outs) }.unwrap();
                let us = t.elapsed().as_secs_f64() * 1e6;
                for o in outs.drain(..) {
                    unsafe { (api.TF_DeleteTensor)(o) };
                }
                us
            })
            .collect();
        let promotion_ms = before.pop().unwrap_or(0.0) / 1e3;
        before.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let eager_call_us = before.get(before.len() / 2).copied().unwrap_or(0.0);
        let polyfn_us = measure(rounds, batch_ms, || unsafe {
            f.call(&raw, &mut outs).unwrap();
            for o in outs.drain(..) {
                (api.TF_DeleteTensor)(o);
            }
        });
        unsafe {
            (api.TF_CloseSession)(session, status);
            (api.TF_DeleteSession)(session, status);
        }
        eprintln!(
            "inline {:<10} session {:>9.2} us  eager {:>9.2} us  polyfn-tf (fast path: {}) {:>9.2} us",
            w.name, session_us.0, eager_us.0, f.fast_path(), polyfn_us.0
        );
        let e = |(median, min): (f64, f64)| format!("{{\"us\": {median:.4}, \"min_us\": {min:.4}, \"rounds\": {rounds}}}");
        eprintln!("inline {:<10} promotion (64th call) {promotion_ms:.2} ms; eager calls before it {eager_call_us:.2} us", w.name);
        results.push(format!(
            "    \"{}\": {{\"floor_inline_session\": {}, \"floor_eager_inline\": {}, \"polyfn_tf_fast\": {}, \"promotion_ms\": {promotion_ms:.3}, \"eager_call_us\": {eager_call_us:.3}}}",
            w.name,
            e(session_us),
            e(eager_us),
            e(polyfn_us)
        ));
        drop(f);
    }
    unsafe {
        (api.TF_DeleteStatus)(status);
        ctx.delete(rt);
    }
    println!("{{\n  \"tf_version\": \"{}\",\n  \"workloads\": {{\n{}\n  }}\n}}", rt.version(), results.join(",\n"));
}
