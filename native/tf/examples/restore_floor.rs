//! TensorFlow's own floor for a warm start or a load (issue 27 item 4), without the JVM: after
//! TensorFlow's start-up (the library, an eager context, a first op, as `StartupMain` counts
//! it), read a SavedModel's `saved_model.pb`, register each of its concrete functions and run
//! each once. That is the work Polyfn's warm start and `Function.load` cannot avoid (TensorFlow
//! prepares each function, Grappler included, on its first run); what they take beyond it is
//! Polyfn's and the JVM's.
//!
//! The concrete functions are those the SavedModel's object graph lists (`StartupMain prepare`
//! saves 10, for x of shape [k, 16]); the k-th in the library's order runs on a [k, 16] input of
//! 0.25 (the body is a dense layer, so any batch size fits any of them).
//!
//! Usage: `POLYFN_TF_LIB=/path/libtensorflow_cc.so.2 cargo run --release -p polyfn-tf --example
//! restore_floor -- SAVED_MODEL_DIR`. Prints one JSON object on stdout (`"mode": "floor"`).

use polyfn_tf::tensor::OwnedTensor;
use polyfn_tf::{EagerContext, EagerFunction, Runtime};
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

/// The length-delimited fields numbered `field` of protobuf message `msg` (others skipped).
fn fields(msg: &[u8], field: u64) -> Vec<&[u8]> {
    fn varint(b: &[u8], at: &mut usize) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let byte = b[*at];
            *at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return v;
            }
            shift += 7;
        }
    }
    let (mut out, mut at) = (Vec::new(), 0);
    while at < msg.len() {
        let key = varint(msg, &mut at);
        match key & 7 {
            0 => drop(varint(msg, &mut at)),
            1 => at += 8,
            5 => at += 4,
            2 => {
                let len = varint(msg, &mut at) as usize;
                if key >> 3 == field {
                    out.push(&msg[at..at + len]);
                }
                at += len;
            }
            w => panic!("wire type {w} in a SavedModel"),
        }
    }
    out
}

/// The message at `path` (field numbers) below `msg`: the first of each level.
fn at<'a>(msg: &'a [u8], path: &[u64]) -> &'a [u8] {
    path.iter().fold(msg, |m, &f| fields(m, f).first().copied().unwrap_or_else(|| panic!("no field {f}")))
}

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).expect("usage: restore_floor SAVED_MODEL_DIR"));
    let lib = std::env::var_os("POLYFN_TF_LIB").map(PathBuf::from).expect("POLYFN_TF_LIB");
    // TensorFlow's start-up, not timed: the library, a context and a first eager op.
    let rt = Runtime::load(&lib).unwrap_or_else(|e| panic!("loading {}: {e}", lib.display()));
    let ctx = EagerContext::new_owned(rt).unwrap();
    first_op(rt, ctx);

    let start = Instant::now();
    let bytes = std::fs::read(dir.join("saved_model.pb")).expect("saved_model.pb");
    // SavedModel.meta_graphs (2) -> MetaGraphDef.object_graph_def (7).nodes (1): a function's node
    // (SavedObject.function, 6) names its concrete functions (SavedFunction.concrete_functions,
    // 1; the serving signatures' wrappers are others); MetaGraphDef.graph_def (2).library (2)
    // .function (1) holds their definitions.
    let meta = at(&bytes, &[2]);
    let concrete: HashSet<&[u8]> =
        fields(at(meta, &[7]), 1).iter().flat_map(|node| fields(node, 6)).flat_map(|f| fields(f, 1)).collect();
    let defs: Vec<&[u8]> = fields(at(meta, &[2, 2]), 1)
        .into_iter()
        .filter(|d| concrete.contains(at(d, &[1, 1])))
        .collect();
    assert!(!defs.is_empty(), "no concrete function in {}", dir.display());
    let read = start.elapsed();
    let mut functions = Vec::new();
    for def in &defs {
        // Registered under its own name, as saved (a fresh process has no other).
        let name = String::from_utf8_lossy(at(def, &[1, 1])).into_owned();
        functions.push(EagerFunction::from_function_def(rt, ctx, def, &[], &name).unwrap());
    }
    let registered = start.elapsed();
    let mut out = Vec::new();
    for (i, f) in functions.iter().enumerate() {
        let k = i as i64 + 1;
        let x = OwnedTensor::from_f32(rt, &[k, 16], &vec![0.25; 16 * k as usize]);
        // SAFETY: a live float tensor for the function's one input.
        unsafe { f.call(&[x.raw()], &mut out) }.unwrap();
        for o in out.drain(..) {
            // SAFETY: outputs are ours to delete.
            unsafe { (rt.api().TF_DeleteTensor)(o) };
        }
    }
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let all = start.elapsed();
    println!(
        "{{\"mode\": \"floor\", \"functions\": {}, \"read_ms\": {:.2}, \"register_ms\": {:.2}, \"first_runs_ms\": {:.2}, \"after_init_ms\": {:.2}}}",
        defs.len(),
        ms(read),
        ms(registered - read),
        ms(all - registered),
        ms(all)
    );
    drop(functions);
    // SAFETY: every function registered in it was dropped above.
    unsafe { ctx.delete(rt) };
}

/// One eager `AddV2` of two scalars, as `StartupMain`'s TensorFlow start-up ends.
fn first_op(rt: &'static Runtime, ctx: EagerContext) {
    let api = rt.api();
    let one = OwnedTensor::from_f32(rt, &[], &[1.0]);
    // SAFETY: plain C API calls on live objects; every handle, op and status made here is deleted.
    unsafe {
        let status = (api.TF_NewStatus)();
        let h = (api.TFE_NewTensorHandle)(one.raw(), status);
        let op = (api.TFE_NewOp)(ctx.0, c"AddV2".as_ptr(), status);
        (api.TFE_OpAddInput)(op, h, status);
        (api.TFE_OpAddInput)(op, h, status);
        let mut ret = [std::ptr::null_mut(); 1];
        let mut n = 1;
        (api.TFE_Execute)(op, ret.as_mut_ptr(), &mut n, status);
        assert_eq!((api.TF_GetCode)(status), 0, "the first eager op failed");
        (api.TFE_DeleteTensorHandle)(ret[0]);
        (api.TFE_DeleteOp)(op);
        (api.TFE_DeleteTensorHandle)(h);
        (api.TF_DeleteStatus)(status);
    }
}
