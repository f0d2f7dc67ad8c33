//! Executes real TensorFlow functions through the C API, without a JVM.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{EagerContext, EagerFunction, GraphSignature};
use std::ffi::CString;

#[test]
fn add_two_runs_in_an_eager_context_and_shares_input_buffers() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let two = g.constant(&OwnedTensor::from_f32(rt, &[], &[2.0])).unwrap();
    let y = g.binary("AddV2", x, two).unwrap();
    let names = [CString::new("y").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    let f = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "polyfn_test_add2", &sig) }.unwrap();

    for (dims, values) in [(vec![], vec![1.0f32]), (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0])] {
        let input = OwnedTensor::from_f32(rt, &dims, &values);
        let mut out = Vec::new();
        unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
        let y = unsafe { OwnedTensor::from_raw(rt, out[0]) };
        assert_eq!(y.describe(), (DT_FLOAT, dims.clone()));
        assert_eq!(y.to_f32(), values.iter().map(|v| v + 2.0).collect::<Vec<_>>());
    }
    drop(f);
    unsafe { ctx.delete(rt) };
}

#[test]
fn identity_output_aliases_the_input_buffer() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[-1])).unwrap();
    let names = [CString::new("y").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[x], output_names: &names, control_outputs: &[] };
    let f = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "polyfn_test_identity", &sig) }.unwrap();
    let input = OwnedTensor::from_f32(rt, &[1 << 20], &vec![1.5; 1 << 20]);
    let mut out = Vec::new();
    unsafe { f.call(&[input.raw()], &mut out) }.unwrap();
    let y = unsafe { OwnedTensor::from_raw(rt, out[0]) };
    // Zero copy in both directions: the output is the input's buffer.
    assert_eq!(y.data_ptr(), input.data_ptr());
    drop(f);
    unsafe { ctx.delete(rt) };
}

#[test]
fn wrong_input_count_is_an_error_not_a_crash() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let names = [CString::new("y").unwrap()];
    let sig = GraphSignature { inputs: &[x], outputs: &[x], output_names: &names, control_outputs: &[] };
    let f = unsafe { EagerFunction::from_graph(rt, ctx, g.raw(), "polyfn_test_count", &sig) }.unwrap();
    let err = unsafe { f.call(&[], &mut Vec::new()) }.unwrap_err();
    assert!(err.message.contains("takes 1 inputs, got 0"), "{err}");
    drop(f);
    unsafe { ctx.delete(rt) };
}
