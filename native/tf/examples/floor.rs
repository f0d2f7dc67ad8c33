//! The floor of Polyfn's benchmark suite (bench/, BENCHMARKS.md): the same graphs the JVM and
//! Python contenders run, driven directly through the TensorFlow C API from Rust, no JNI.
//!
//! For every workload it measures
//! * `floor_tfe`: `TFE_NewOp` + `TFE_NewTensorHandle` per input + `TFE_Execute` of the registered
//!   function + `TFE_TensorHandleResolve` of each output (tensors in, tensors out: the least work
//!   any tensor-in/tensor-out caller of the eager runtime can do), with one reused `TF_Status`;
//! * `floor_tfe_polyfn_tf`: the same through `polyfn_tf::EagerFunction::call` (the Rust layer
//!   Polyfn's JNI entry point uses), to separate its own cost from the JVM side's;
//! * `floor_session`: `TF_SessionRun` of the graph (feeds and fetches).
//!
//! Timing: after a warm-up, `rounds` batches of calls sized to about `batch_ms` each; the
//! per-call time of each batch is recorded and the median (and min) reported, in microseconds.
//!
//! Usage: `POLYFN_TF_LIB=/path/libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example floor -- [--quick]`
//! Prints one JSON object on stdout.

use polyfn_tf::c_api::{Api, TFE_TensorHandle, TF_Output, TF_Tensor};
use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{EagerContext, EagerFunction, GraphSignature, Runtime};
use std::ffi::{c_int, CStr, CString};
use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

struct Timing {
    rounds: usize,
    batch_ms: f64,
    warmup_ms: f64,
}

/// Median and min per-call microseconds of `f` (one call per invocation).
fn measure(t: &Timing, mut f: impl FnMut()) -> (f64, f64, usize) {
    // Warm-up, and calibrate a batch size.
    let start = Instant::now();
    let mut calls = 0usize;
    while start.elapsed().as_secs_f64() * 1e3 < t.warmup_ms || calls < 3 {
        f();
        calls += 1;
    }
    let per_call_ms = start.elapsed().as_secs_f64() * 1e3 / calls as f64;
    let batch = ((t.batch_ms / per_call_ms).ceil() as usize).max(1);
    let mut samples = Vec::with_capacity(t.rounds);
    for _ in 0..t.rounds {
        let s = Instant::now();
        for _ in 0..batch {
            f();
        }
        samples.push(s.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = if samples.len() % 2 == 1 {
        samples[samples.len() / 2]
    } else {
        (samples[samples.len() / 2 - 1] + samples[samples.len() / 2]) / 2.0
    };
    (median, samples[0], batch)
}

/// Builds the workloads' graphs with the `graph` module.
struct Builder {
    g: Graph,
    rt: &'static Runtime,
}

impl Builder {
    fn new(rt: &'static Runtime) -> Self {
        Builder { g: Graph::new(rt), rt }
    }

    fn unary(&mut self, op_type: &str, x: TF_Output) -> TF_Output {
        self.g.unary(op_type, x).unwrap()
    }

    fn input(&mut self, dims: &[i64]) -> TF_Output {
        self.g.placeholder(DT_FLOAT, Some(dims)).unwrap()
    }

    fn constant(&mut self, dims: &[i64]) -> TF_Output {
        let n: i64 = dims.iter().product();
        let values: Vec<f32> = (0..n).map(weight).collect();
        self.g.constant(&OwnedTensor::from_f32(self.rt, dims, &values)).unwrap()
    }

    fn add(&mut self, a: TF_Output, b: TF_Output) -> TF_Output {
        self.g.binary("AddV2", a, b).unwrap()
    }
}

/// Deterministic weights, the same formula every contender uses.
fn weight(i: i64) -> f32 {
    ((i % 17) - 8) as f32 * 0.01
}

unsafe fn check(api: &Api, status: *mut polyfn_tf::c_api::TF_Status, what: &str) {
    if (api.TF_GetCode)(status) != polyfn_tf::Code::Ok.raw() {
        let msg = CStr::from_ptr((api.TF_Message)(status)).to_string_lossy();
        panic!("{what}: {msg}");
    }
}

struct Workload {
    name: &'static str,
    input_dims: Vec<Vec<i64>>,
    build: fn(&mut Builder, &[TF_Output]) -> TF_Output,
}

fn sum(b: &mut Builder, xs: &[TF_Output]) -> TF_Output {
    let mut acc = xs[0];
    for &x in &xs[1..] {
        acc = b.add(acc, x);
    }
    acc
}

fn workloads() -> Vec<Workload> {
    vec![
        Workload {
            name: "add2",
            input_dims: vec![vec![]],
            build: |b, xs| {
                let two = b.g.constant(&OwnedTensor::from_f32(b.rt, &[], &[2.0])).unwrap();
                b.add(xs[0], two)
            },
        },
        Workload {
            name: "mlp",
            input_dims: vec![vec![1, 64]],
            build: |b, xs| {
                let w1 = b.constant(&[64, 64]);
                let b1 = b.constant(&[64]);
                let w2 = b.constant(&[64, 10]);
                let b2 = b.constant(&[10]);
                let h = b.g.binary("MatMul", xs[0], w1).unwrap();
                let h = b.add(h, b1);
                let h = b.unary("Relu", h);
                let y = b.g.binary("MatMul", h, w2).unwrap();
                b.add(y, b2)
            },
        },
        Workload {
            name: "matmul512",
            input_dims: vec![vec![512, 512], vec![512, 512]],
            build: |b, xs| b.g.binary("MatMul", xs[0], xs[1]).unwrap(),
        },
        Workload { name: "args16", input_dims: vec![vec![]; 16], build: |b, xs| sum(b, xs) },
        Workload { name: "list100", input_dims: vec![vec![]; 100], build: |b, xs| sum(b, xs) },
        Workload { name: "map10", input_dims: vec![vec![]; 10], build: |b, xs| sum(b, xs) },
        Workload { name: "shape_4B", input_dims: vec![vec![1]], build: |b, xs| b.unary("Shape", xs[0]) },
        Workload { name: "shape_64MiB", input_dims: vec![vec![1 << 24]], build: |b, xs| b.unary("Shape", xs[0]) },
    ]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let t = if quick {
        Timing { rounds: 7, batch_ms: 40.0, warmup_ms: 150.0 }
    } else {
        Timing { rounds: 21, batch_ms: 100.0, warmup_ms: 500.0 }
    };
    let lib = std::env::var_os("POLYFN_TF_LIB")
        .map(PathBuf::from)
        .expect("POLYFN_TF_LIB: the libtensorflow_cc.so.2 to load (bench/run.sh sets it)");
    let rt = Runtime::load(&lib).unwrap_or_else(|e| panic!("loading {}: {e}", lib.display()));
    let api = rt.api();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let only: Option<String> = std::env::args().skip_while(|a| a != "--only").nth(1);

    let mut results = Vec::new();
    for w in workloads() {
        if only.as_deref().is_some_and(|o| o != w.name) {
            continue;
        }
        let mut b = Builder::new(rt);
        let xs: Vec<TF_Output> = w.input_dims.iter().map(|d| b.input(d)).collect();
        let y = (w.build)(&mut b, &xs);
        let names = [CString::new("y").unwrap()];
        let sig = GraphSignature { inputs: &xs, outputs: &[y], output_names: &names, control_outputs: &[] };
        let fname = format!("floor_{}", w.name);
        let f = unsafe { EagerFunction::from_graph(rt, ctx, b.g.raw(), &fname, &sig) }.unwrap();
        let cfname = CString::new(fname).unwrap();
        let inputs: Vec<OwnedTensor> = w
            .input_dims
            .iter()
            .map(|d| {
                let n: i64 = d.iter().product();
                OwnedTensor::from_f32(rt, d, &vec![1.0f32; n as usize])
            })
            .collect();
        let raw_inputs: Vec<*mut TF_Tensor> = inputs.iter().map(|t| t.raw()).collect();

        // floor_tfe: a lean eager call.
        let status = unsafe { (api.TF_NewStatus)() };
        let mut handles: Vec<*mut TFE_TensorHandle> = Vec::with_capacity(raw_inputs.len());
        let tfe = measure(&t, || unsafe {
            let op = (api.TFE_NewOp)(ctx.0, cfname.as_ptr(), status);
            handles.clear();
            for &x in &raw_inputs {
                let h = (api.TFE_NewTensorHandle)(x, status);
                (api.TFE_OpAddInput)(op, h, status);
                handles.push(h);
            }
            let mut ret: [*mut TFE_TensorHandle; 1] = [ptr::null_mut()];
            let mut n: c_int = 1;
            (api.TFE_Execute)(op, ret.as_mut_ptr(), &mut n, status);
            check(api, status, "TFE_Execute");
            let out = (api.TFE_TensorHandleResolve)(ret[0], status);
            (api.TFE_DeleteTensorHandle)(ret[0]);
            (api.TF_DeleteTensor)(out);
            for &h in &handles {
                (api.TFE_DeleteTensorHandle)(h);
            }
            (api.TFE_DeleteOp)(op);
        });

        // floor_tfe_polyfn_tf: polyfn-tf's own call.
        let mut outs = Vec::with_capacity(1);
        let tfe_pf = measure(&t, || unsafe {
            f.call(&raw_inputs, &mut outs).unwrap();
            for o in outs.drain(..) {
                (api.TF_DeleteTensor)(o);
            }
        });

        // floor_session: TF_SessionRun of the same graph.
        let session = unsafe {
            let opts = (api.TF_NewSessionOptions)();
            let s = (api.TF_NewSession)(b.g.raw(), opts, status);
            (api.TF_DeleteSessionOptions)(opts);
            check(api, status, "TF_NewSession");
            s
        };
        let sess = measure(&t, || unsafe {
            let mut out: [*mut TF_Tensor; 1] = [ptr::null_mut()];
            (api.TF_SessionRun)(
                session,
                ptr::null(),
                xs.as_ptr(),
                raw_inputs.as_ptr(),
                xs.len() as c_int,
                &y,
                out.as_mut_ptr(),
                1,
                ptr::null(),
                0,
                ptr::null_mut(),
                status,
            );
            check(api, status, "TF_SessionRun");
            (api.TF_DeleteTensor)(out[0]);
        });
        unsafe {
            (api.TF_CloseSession)(session, status);
            (api.TF_DeleteSession)(session, status);
            (api.TF_DeleteStatus)(status);
        }
        drop(f);
        eprintln!(
            "floor {:<12} tfe {:>9.2} us  tfe(polyfn-tf) {:>9.2} us  session {:>9.2} us",
            w.name, tfe.0, tfe_pf.0, sess.0
        );
        let entry = |(median, min, batch): (f64, f64, usize)| {
            format!("{{\"us\": {median:.4}, \"min_us\": {min:.4}, \"batch\": {batch}, \"rounds\": {}}}", t.rounds)
        };
        results.push(format!(
            "    \"{}\": {{\"floor_tfe\": {}, \"floor_tfe_polyfn_tf\": {}, \"floor_session\": {}}}",
            w.name,
            entry(tfe),
            entry(tfe_pf),
            entry(sess)
        ));
    }
    unsafe { ctx.delete(rt) };
    println!(
        "{{\n  \"tf_version\": \"{}\",\n  \"library\": \"{}\",\n  \"mode\": \"{}\",\n  \"workloads\": {{\n{}\n  }}\n}}",
        rt.version(),
        lib.display(),
        if quick { "quick" } else { "full" },
        results.join(",\n")
    );
}
