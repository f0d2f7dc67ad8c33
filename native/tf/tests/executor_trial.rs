//! The single-threaded executor: a function that reads a variable cannot take the session path,
//! so after the promotion count it tries TensorFlow's single-threaded executor, with the same
//! results on every call and across threads; functions whose graph that executor would refuse, or
//! whose kernels hold state, never try it.

mod support;

use polyfn_tf::c_api::TF_Output;
use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT, DT_RESOURCE};
use polyfn_tf::{naming, CallOptions, EagerContext, EagerFunction, GraphSignature, Runtime};
use std::sync::Arc;

fn after(n: u32) -> CallOptions {
    CallOptions { session_after: n, ..CallOptions::default() }
}

fn function(rt: &'static Runtime, ctx: EagerContext, g: &Graph, inputs: &[TF_Output], outputs: &[TF_Output],
    effects: &[*mut polyfn_tf::c_api::TF_Operation], options: CallOptions) -> EagerFunction {
    let names = naming::output_arg_names(outputs.len());
    let sig = GraphSignature { inputs, outputs, output_names: &names, control_outputs: effects };
    unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &naming::function_name("executor"), &sig, options) }.unwrap()
}

/// A new variable of shape [3] holding `value` (a function that makes it and returns its handle).
fn variable(rt: &'static Runtime, ctx: EagerContext, value: &[f32]) -> OwnedTensor {
    let mut g = Graph::new(rt);
    let h = g.var_handle(DT_FLOAT, &[3]).unwrap();
    let v = g.constant(&OwnedTensor::from_f32(rt, &[3], value)).unwrap();
    let assign = g.assign_variable(h, v).unwrap();
    let make = function(rt, ctx, &g, &[], &[h], &[assign], CallOptions { session_after: 0, ..CallOptions::default() });
    let mut out = Vec::new();
    unsafe { make.call(&[], &mut out) }.unwrap();
    assert_eq!(out.len(), 1);
    unsafe { OwnedTensor::from_raw(rt, out[0]) }
}

/// `x * v + 1` for a variable `v`: a resource input, as a loaded model's variables are.
fn scaled(rt: &'static Runtime, ctx: EagerContext, options: CallOptions) -> EagerFunction {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[3])).unwrap();
    let h = g.placeholder(DT_RESOURCE, Some(&[])).unwrap();
    let v = g.read_variable(h, DT_FLOAT).unwrap();
    let one = g.constant(&OwnedTensor::from_f32(rt, &[], &[1.0])).unwrap();
    let y = g.binary("Mul", x, v).unwrap();
    let y = g.binary("AddV2", y, one).unwrap();
    function(rt, ctx, &g, &[x, h], &[y], &[], options)
}

fn run(rt: &'static Runtime, f: &EagerFunction, inputs: &[&OwnedTensor]) -> Vec<f32> {
    let raw: Vec<_> = inputs.iter().map(|t| t.raw()).collect();
    let mut out = Vec::new();
    unsafe { f.call(&raw, &mut out) }.unwrap();
    assert_eq!(out.len(), 1);
    unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32()
}

#[test]
fn a_function_reading_a_variable_tries_the_single_threaded_executor_with_the_same_results() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let v = variable(rt, ctx, &[2.0, -1.0, 0.5]);
    let f = scaled(rt, ctx, after(3));
    let x = OwnedTensor::from_f32(rt, &[3], &[1.0, 2.0, 4.0]);
    for call in 1..=60 {
        assert_eq!(run(rt, &f, &[&x, &v]), vec![3.0, -1.0, 3.0], "call {call}");
        assert!(!f.on_session_path(), "a resource input keeps it off the session: call {call}");
        if call == 3 {
            // The promotion call found the session path refused and started the trial.
            assert!(f.on_single_threaded_executor(), "call {call}");
        }
    }
    // Whether it kept the executor depends on timing; either way the results stay the same,
    // and another variable is read through the same function.
    let w = variable(rt, ctx, &[1.0, 1.0, 1.0]);
    assert_eq!(run(rt, &f, &[&x, &w]), vec![2.0, 3.0, 5.0]);
    drop((f, v, w));
    unsafe { ctx.delete(rt) };
}

#[test]
fn threads_calling_across_the_switch_all_get_correct_results() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let v = variable(rt, ctx, &[3.0, 3.0, 3.0]);
    // The variable's handle tensor is only read by the calls, and outlives the threads.
    let handle = v.raw() as usize;
    let f = Arc::new(scaled(rt, ctx, after(5)));
    let wrong: usize = std::thread::scope(|s| {
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let f = f.clone();
                s.spawn(move || {
                    let x = OwnedTensor::from_f32(rt, &[3], &[t as f32, 1.0, -1.0]);
                    let want = vec![3.0 * t as f32 + 1.0, 4.0, -2.0];
                    let inputs = [x.raw(), handle as *mut polyfn_tf::c_api::TF_Tensor];
                    (0..40)
                        .filter(|_| {
                            let mut out = Vec::new();
                            unsafe { f.call(&inputs, &mut out) }.unwrap();
                            unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32() != want
                        })
                        .count()
                })
            })
            .collect();
        threads.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(wrong, 0);
    assert!(f.call_options().fast_path);
    drop((f, v));
    unsafe { ctx.delete(rt) };
}

#[test]
fn functions_it_would_refuse_or_change_never_try_it() {
    let rt = support::runtime();
    if !polyfn_tf::fast_path_supported(rt) {
        return;
    }
    let ctx = EagerContext::new_owned(rt).unwrap();
    let v = variable(rt, ctx, &[1.0, 2.0, 3.0]);
    // A random op's kernel holds its sequence: a new instantiation would restart it.
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[3])).unwrap();
    let h = g.placeholder(DT_RESOURCE, Some(&[])).unwrap();
    let read = g.read_variable(h, DT_FLOAT).unwrap();
    let shape = g.unary_typed("Shape", x, "out_type", 3).unwrap();
    let noise = g.unary_typed("RandomUniform", shape, "dtype", DT_FLOAT).unwrap();
    let y = g.binary("AddV2", read, noise).unwrap();
    let random = function(rt, ctx, &g, &[x, h], &[y], &[], after(2));
    let x0 = OwnedTensor::from_f32(rt, &[3], &[0.0; 3]);
    let draws: Vec<Vec<u32>> = (0..6).map(|_| run(rt, &random, &[&x0, &v]).iter().map(|f| f.to_bits()).collect()).collect();
    assert!(!random.on_single_threaded_executor());
    assert!(draws.windows(2).all(|w| w[0] != w[1]), "every call draws new numbers: {draws:?}");
    // Options that choose the path: the thread pool only, or no promotion at all.
    for options in [CallOptions { fast_path: false, ..after(2) }, after(0)] {
        let f = scaled(rt, ctx, options);
        for _ in 0..4 {
            assert_eq!(run(rt, &f, &[&x0, &v]), vec![1.0; 3]);
        }
        assert!(!f.on_single_threaded_executor(), "{options:?}");
    }
    drop((random, v));
    unsafe { ctx.delete(rt) };
}
