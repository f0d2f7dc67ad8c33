//! The per-thread op cache: ops cleared and reused without a reset give the same results as
//! ops reset per call, across functions, failures and threads.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::op_cache::{live_call_ops, op_reuse_active, set_op_reuse};
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{naming, EagerContext, EagerFunction, GraphSignature, Runtime};

/// `x + y` over two inputs of any shape.
fn add(rt: &'static Runtime, ctx: EagerContext) -> EagerFunction {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let y = g.placeholder(DT_FLOAT, None).unwrap();
    let s = g.binary("AddV2", x, y).unwrap();
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x, y], outputs: &[s], output_names: &names, control_outputs: &[] };
    unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), &naming::function_name("add"), &sig) }.unwrap()
}

/// `x * x` and `x * 3`.
fn square_and_triple(rt: &'static Runtime, ctx: EagerContext) -> EagerFunction {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let three = g.constant(&OwnedTensor::from_f32(rt, &[], &[3.0])).unwrap();
    let sq = g.binary("Mul", x, x).unwrap();
    let tr = g.binary("Mul", x, three).unwrap();
    let names = naming::output_arg_names(2);
    let sig = GraphSignature { inputs: &[x], outputs: &[sq, tr], output_names: &names, control_outputs: &[] };
    unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), &naming::function_name("sq3"), &sig) }.unwrap()
}

/// The tests toggle reuse for the process and count its ops: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(rt: &'static Runtime, f: &EagerFunction, inputs: &[&OwnedTensor]) -> Result<Vec<Vec<f32>>, polyfn_tf::TfError> {
    let raw: Vec<_> = inputs.iter().map(|t| t.raw()).collect();
    let mut out = Vec::new();
    unsafe { f.call(&raw, &mut out) }?;
    Ok(out.into_iter().map(|t| unsafe { OwnedTensor::from_raw(rt, t) }.to_f32()).collect())
}

/// A mixed sequence of calls on one thread: two functions alternating, shapes changing, a call
/// that fails in TensorFlow's kernel in the middle.
fn sequence(rt: &'static Runtime, add: &EagerFunction, sq3: &EagerFunction, seed: f32) -> Vec<String> {
    let mut log = Vec::new();
    for i in 0..20 {
        let v = seed + i as f32;
        let a = OwnedTensor::from_f32(rt, &[2], &[v, -v]);
        let b = OwnedTensor::from_f32(rt, &[2], &[1.0, 2.0]);
        let c = OwnedTensor::from_f32(rt, &[3], &[1.0, 2.0, 3.0]);
        let scalar = OwnedTensor::from_f32(rt, &[], &[v]);
        log.push(format!("{:?}", run(rt, add, &[&a, &b])));
        log.push(format!("{:?}", run(rt, add, &[&a, &b])));
        log.push(format!("{:?}", run(rt, sq3, &[&scalar])));
        if i % 5 == 2 {
            // [2] + [3]: TensorFlow rejects it at run time; the next calls must not be affected.
            let err = run(rt, add, &[&a, &c]).unwrap_err();
            assert!(err.message.contains("Incompatible shapes"), "{err}");
        }
        log.push(format!("{:?}", run(rt, add, &[&c, &c])));
        log.push(format!("{:?}", run(rt, sq3, &[&c])));
    }
    log
}

#[test]
fn reused_ops_give_the_same_results_as_reset_ops() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    // This runtime supports reuse; if detection broke, calls would silently take the slow path.
    assert!(op_reuse_active(rt), "op reuse should be active on TensorFlow {}", rt.version());
    let ctx = EagerContext::new_owned(rt).unwrap();
    let (add, sq3) = (add(rt, ctx), square_and_triple(rt, ctx));
    set_op_reuse(false);
    let reset = sequence(rt, &add, &sq3, 0.5);
    set_op_reuse(true);
    let reused = sequence(rt, &add, &sq3, 0.5);
    assert_eq!(reset, reused);
    assert_eq!(reused[0], "Ok([[1.5, 1.5]])");
    assert_eq!(reused[2], "Ok([[0.25], [1.5]])");
    drop((add, sq3));
    unsafe { ctx.delete(rt) };
}

#[test]
fn threads_each_reuse_their_own_op() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let (add, sq3) = (add(rt, ctx), square_and_triple(rt, ctx));
    let expected: Vec<Vec<String>> = (0..4).map(|t| sequence(rt, &add, &sq3, t as f32 * 10.0)).collect();
    let (add_ref, sq3_ref) = (&add, &sq3);
    std::thread::scope(|s| {
        let handles: Vec<_> =
            (0..4).map(|t| (t, s.spawn(move || sequence(rt, add_ref, sq3_ref, t as f32 * 10.0)))).collect();
        for (t, h) in handles {
            assert_eq!(h.join().unwrap(), expected[t]);
        }
    });
    drop((add, sq3));
    unsafe { ctx.delete(rt) };
}

/// A thread that ends deletes the op it kept (a pool that shrinks, short-lived callers: one op
/// each was never freed), and an op that cannot be cleared is not kept (it would hold the call's
/// inputs, however large, until the thread's next call).
#[test]
fn ending_threads_and_ops_that_cannot_be_cleared_keep_no_op() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let add = add(rt, ctx);
    let x = OwnedTensor::from_f32(rt, &[2], &[1.0, 2.0]);
    run(rt, &add, &[&x, &x]).unwrap(); // this thread keeps its op
    let kept = live_call_ops();
    let add_ref = &add;
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(move || {
                    let x = OwnedTensor::from_f32(rt, &[2], &[1.0, 2.0]);
                    assert_eq!(run(rt, add_ref, &[&x, &x]).unwrap(), vec![vec![2.0, 4.0]]);
                })
            })
            .collect();
        // Joined one by one: a join waits for the thread's end, thread-local destructors (which
        // delete its op) included; the scope's own wait can return before they ran.
        for t in threads {
            t.join().unwrap();
        }
    });
    assert_eq!(live_call_ops(), kept, "ops left by ended threads");
    set_op_reuse(false); // as on a runtime whose ops cannot be cleared
    run(rt, &add, &[&x, &x]).unwrap();
    assert_eq!(live_call_ops(), kept - 1, "an op that was not cleared is not kept");
    set_op_reuse(true);
    run(rt, &add, &[&x, &x]).unwrap();
    assert_eq!(live_call_ops(), kept);
    drop(add);
    unsafe { ctx.delete(rt) };
}
