//! How far two threads calling one function can scale on this machine without the JVM: the
//! floor for Polyfn's two-thread row (`bench/run.sh`, `ThreadScalingMain`).
//!
//! For `add2` it measures, one thread against two in alternating phases of one process (the
//! order flips every round; the speed-up is the median of the rounds' ratios):
//! * `floor_inline_session`: each thread runs `TF_SessionRun` on its own caller-thread session of
//!   one graph (`inter_op_parallelism_threads = -1`), the least a session call does;
//! * `polyfn_tf`: both threads call one `polyfn_tf::EagerFunction` (its session path once warm),
//!   the Rust code under Polyfn's JNI entry point.
//!
//! What the threads still share is TensorFlow's: the process-wide run-time metrics every
//! `DirectSession::Run` records (a histogram under a mutex, counters) and the step-id counter.
//!
//! Usage: `POLYFN_TF_LIB=/path/libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example thread_scaling -- [rounds] [phase_ms]`
//! Prints one JSON object on stdout.

mod support;

use support::{add2_graph, check, inline_session, median};
use polyfn_tf::c_api::{TF_Output, TF_Session, TF_Status, TF_Tensor};
use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::{EagerContext, EagerFunction, GraphSignature, Runtime};
use std::ffi::CString;
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Something each thread can call: made once per thread, so nothing of its own is shared.
trait Caller: Send {
    fn call(&mut self);
}

struct SessionCaller {
    rt: &'static Runtime,
    session: *mut TF_Session,
    status: *mut TF_Status,
    x: TF_Output,
    y: TF_Output,
    input: OwnedTensor,
}

// SAFETY: each caller is used by one thread at a time; the graph it reads is not mutated.
unsafe impl Send for SessionCaller {}

impl Caller for SessionCaller {
    fn call(&mut self) {
        let api = self.rt.api();
        let mut out = [ptr::null_mut::<TF_Tensor>(); 1];
        let raw = [self.input.raw()];
        // SAFETY: a live session over the graph holding x and y; one input, one output.
        unsafe {
            (api.TF_SessionRun)(self.session, ptr::null(), &self.x, raw.as_ptr(), 1, &self.y, out.as_mut_ptr(), 1, ptr::null(), 0, ptr::null_mut(), self.status);
            check(self.rt, self.status, "TF_SessionRun");
            (api.TF_DeleteTensor)(out[0]);
        }
    }
}

struct FunctionCaller {
    rt: &'static Runtime,
    f: Arc<EagerFunction>,
    input: OwnedTensor,
    out: Vec<*mut TF_Tensor>,
}

// SAFETY: the output buffer is this thread's; EagerFunction is Sync.
unsafe impl Send for FunctionCaller {}

impl Caller for FunctionCaller {
    fn call(&mut self) {
        // SAFETY: a live input tensor of the function's one float scalar input.
        unsafe { self.f.call(&[self.input.raw()], &mut self.out) }.unwrap();
        for o in self.out.drain(..) {
            // SAFETY: outputs are ours to delete.
            unsafe { (self.rt.api().TF_DeleteTensor)(o) };
        }
    }
}

/// One thread against two, alternating: `(median speed-up, one thread's calls/ms, two threads')`.
fn scaling(mut callers: Vec<Box<dyn Caller>>, rounds: usize, phase: Duration) -> (f64, f64, f64) {
    let b = callers.pop().unwrap();
    let a = callers.pop().unwrap();
    let run = |workers: Vec<&mut Box<dyn Caller>>, phase: Duration| -> f64 {
        let stop = AtomicBool::new(false);
        let start = Barrier::new(workers.len() + 1);
        std::thread::scope(|s| {
            let handles: Vec<_> = workers
                .into_iter()
                .map(|w| {
                    let (stop, start) = (&stop, &start);
                    s.spawn(move || {
                        start.wait();
                        let mut n = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            w.call();
                            n += 1;
                        }
                        n
                    })
                })
                .collect();
            start.wait();
            let t = Instant::now();
            std::thread::sleep(phase);
            stop.store(true, Ordering::Relaxed);
            let calls: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
            calls as f64 / (t.elapsed().as_secs_f64() * 1e3)
        })
    };
    let (mut a, mut b) = (a, b);
    run(vec![&mut a, &mut b], phase * 2); // warm-up
    let (mut one, mut two, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds {
        let (o, t) = if r % 2 == 0 {
            let o = run(vec![&mut a], phase);
            (o, run(vec![&mut a, &mut b], phase))
        } else {
            let t = run(vec![&mut a, &mut b], phase);
            (run(vec![&mut a], phase), t)
        };
        one.push(o);
        two.push(t);
        ratio.push(t / o);
    }
    (median(&mut ratio), median(&mut one), median(&mut two))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(21);
    let phase = Duration::from_millis(args.get(2).and_then(|a| a.parse().ok()).unwrap_or(400));
    let lib = std::env::var_os("POLYFN_TF_LIB").map(PathBuf::from).expect("POLYFN_TF_LIB");
    let rt = Runtime::load(&lib).unwrap_or_else(|e| panic!("loading {}: {e}", lib.display()));
    let api = rt.api();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let (g, x, y) = add2_graph(rt, &[]);
    let input = || OwnedTensor::from_f32(rt, &[], &[1.0]);

    let sessions: Vec<Box<dyn Caller>> = (0..2)
        .map(|_| {
            // SAFETY: a live graph and status; each session and status lives until exit.
            let (session, status) = unsafe {
                let status = (api.TF_NewStatus)();
                (inline_session(rt, g.raw(), status), status)
            };
            Box::new(SessionCaller { rt, session, status, x, y, input: input() }) as Box<dyn Caller>
        })
        .collect();
    let session = scaling(sessions, rounds, phase);

    let names = [CString::new("y").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    // SAFETY: a live graph, not mutated while converted.
    let f = Arc::new(unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "scaling_add2", &sig) }.unwrap());
    let functions: Vec<Box<dyn Caller>> =
        (0..2).map(|_| Box::new(FunctionCaller { rt, f: f.clone(), input: input(), out: Vec::new() }) as Box<dyn Caller>).collect();
    let function = scaling(functions, rounds, phase);

    let row = |(speedup, one, two): (f64, f64, f64)| {
        format!("{{\"speedup_median\": {speedup:.3}, \"one_thread_calls_per_ms\": {one:.1}, \"two_threads_calls_per_ms\": {two:.1}}}")
    };
    eprintln!("two threads / one: session floor {:.3}x, polyfn-tf {:.3}x", session.0, function.0);
    println!(
        "{{\"rounds\": {rounds}, \"phase_ms\": {}, \"workload\": \"add2\", \"floor_inline_session\": {}, \"polyfn_tf\": {}}}",
        phase.as_millis(),
        row(session),
        row(function)
    );
}
