//! The caller-thread path gives the same outputs as the default path, and is refused for
//! functions it would get wrong. Functions here start on the default path and are switched.

mod support;

use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{naming, Code, EagerContext, EagerFunction, GraphSignature, Runtime};

fn function(rt: &'static Runtime, ctx: EagerContext, g: &Graph, inputs: &[polyfn_tf::c_api::TF_Output], outputs: &[polyfn_tf::c_api::TF_Output]) -> EagerFunction {
    let names = naming::output_arg_names(outputs.len());
    let sig = GraphSignature { inputs, outputs, output_names: &names, control_outputs: &[] };
    // The eager caller-thread path is the opt-in one (see CallOptions::eager_op_as_function).
    let options = polyfn_tf::CallOptions { fast_path: false, eager_op_as_function: true, ..Default::default() };
    unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &naming::function_name("fast"), &sig, options) }.unwrap()
}

fn outputs(rt: &'static Runtime, f: &EagerFunction, inputs: &[&OwnedTensor]) -> Vec<(Vec<i64>, Vec<u32>)> {
    let raw: Vec<_> = inputs.iter().map(|t| t.raw()).collect();
    let mut out = Vec::new();
    unsafe { f.call(&raw, &mut out) }.unwrap();
    out.into_iter()
        .map(|t| {
            let t = unsafe { OwnedTensor::from_raw(rt, t) };
            // Bitwise comparison of the values.
            (t.describe().1, t.to_f32().iter().map(|v| v.to_bits()).collect())
        })
        .collect()
}

#[test]
fn both_paths_give_bitwise_equal_outputs() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    let weights: Vec<f32> = (0..64 * 16).map(|i| ((i % 17) as f32 - 8.0) * 0.013).collect();

    // A small MLP layer: MatMul, BiasAdd-like AddV2, Relu, and a second output.
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[-1, 64])).unwrap();
    let w = g.constant(&OwnedTensor::from_f32(rt, &[64, 16], &weights)).unwrap();
    let b = g.constant(&OwnedTensor::from_f32(rt, &[16], &weights[..16])).unwrap();
    let h = g.binary("MatMul", x, w).unwrap();
    let h = g.binary("AddV2", h, b).unwrap();
    let y = g.unary("Relu", h).unwrap();
    let z = g.unary("Tanh", h).unwrap();
    let mlp = function(rt, ctx, &g, &[x], &[y, z]);

    // Two inputs, elementwise.
    let mut g2 = Graph::new(rt);
    let a = g2.placeholder(DT_FLOAT, None).unwrap();
    let c = g2.placeholder(DT_FLOAT, None).unwrap();
    let s = g2.binary("Mul", a, c).unwrap();
    let s = g2.binary("Sub", s, a).unwrap();
    let mul = function(rt, ctx, &g2, &[a, c], &[s]);

    let xs: Vec<f32> = (0..3 * 64).map(|i| (i as f32 * 0.37).sin()).collect();
    let x_in = OwnedTensor::from_f32(rt, &[3, 64], &xs);
    let (p, q) = (OwnedTensor::from_f32(rt, &[4], &[1.5, -2.0, 3.25, 0.1]), OwnedTensor::from_f32(rt, &[4], &[0.3; 4]));

    assert!(!mlp.fast_path());
    let default = (outputs(rt, &mlp, &[&x_in]), outputs(rt, &mul, &[&p, &q]));
    mlp.set_fast_path(true).unwrap();
    mul.set_fast_path(true).unwrap();
    assert!(mlp.fast_path() && mul.fast_path());
    for _ in 0..3 {
        // Alternating functions on the fast path, then back to the default path.
        assert_eq!(outputs(rt, &mlp, &[&x_in]), default.0);
        assert_eq!(outputs(rt, &mul, &[&p, &q]), default.1);
    }
    mul.set_fast_path(false).unwrap();
    assert_eq!(outputs(rt, &mul, &[&p, &q]), default.1);
    assert_eq!(outputs(rt, &mlp, &[&x_in]), default.0);
    // A failing call on the fast path is an error, and the next call works.
    let wrong = OwnedTensor::from_f32(rt, &[2, 32], &xs[..64]);
    let mut out = Vec::new();
    let err = unsafe { mlp.call(&[wrong.raw()], &mut out) }.unwrap_err();
    assert!(err.message.contains("Matrix size-incompatible") || err.code == Code::InvalidArgument, "{err}");
    assert_eq!(outputs(rt, &mlp, &[&x_in]), default.0);
    drop((mlp, mul));
    unsafe { ctx.delete(rt) };
}

#[test]
fn functions_the_path_would_get_wrong_are_refused() {
    let rt = support::runtime();
    let ctx = EagerContext::new_owned(rt).unwrap();
    // An int32 output carrying a shape (through Identity: the shape type follows it), which
    // the caller-thread path fails with INTERNAL "unexpected full type information".
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let shape = g.unary_typed("Shape", x, "out_type", 3).unwrap();
    let shape = g.unary("Identity", shape).unwrap();
    let f = function(rt, ctx, &g, &[x], &[x, shape]);
    assert_eq!(f.fast_path_blocker(), Some("its output 1 is an int32 and the function computes Shape"));
    let err = f.set_fast_path(true).unwrap_err();
    assert_eq!(err.code, Code::FailedPrecondition);
    assert!(err.message.contains("cannot take the caller-thread path"), "{err}");
    assert!(!f.fast_path());

    // A function calling another one.
    let mut outer = Graph::new(rt);
    let y = outer.placeholder(DT_FLOAT, None).unwrap();
    let call = unsafe { f.add_call(outer.raw(), "inner_call", &[y], false) }.unwrap();
    let caller = function(rt, ctx, &outer, &[y], &[polyfn_tf::c_api::TF_Output { oper: call, index: 0 }]);

    assert_eq!(caller.fast_path_blocker(), Some("it calls other functions"));
    assert!(caller.set_fast_path(true).is_err());

    // An int32 output from Size is fine, and so is a float output next to a Shape.
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let _size = g.unary_typed("Size", x, "out_type", 3).unwrap();
    let _shape = g.unary_typed("Shape", x, "out_type", 3).unwrap();
    let floats_only = function(rt, ctx, &g, &[x], &[x]);
    assert_eq!(floats_only.fast_path_blocker(), None);
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, None).unwrap();
    let size = g.unary_typed("Size", x, "out_type", 3).unwrap();
    let sized = function(rt, ctx, &g, &[x], &[size]);
    assert_eq!(sized.fast_path_blocker(), None);
    sized.set_fast_path(true).unwrap();
    let input = OwnedTensor::from_f32(rt, &[2, 3], &[1.0; 6]);
    let mut out = Vec::new();
    unsafe { sized.call(&[input.raw()], &mut out) }.unwrap();
    let n = unsafe { OwnedTensor::from_raw(rt, out[0]) };
    assert_eq!(n.describe(), (3, vec![]));
    assert_eq!(unsafe { *((rt.api().TF_TensorData)(n.raw()) as *const i32) }, 6);
    drop((floats_only, sized));
    drop((caller, f));
    unsafe { ctx.delete(rt) };
}
