//! The scalar function the kernel-cache tests register by the hundred: `x + k` over one float.

use polyfn_tf::graph::Graph;
use polyfn_tf::tensor::{OwnedTensor, DT_FLOAT};
use polyfn_tf::{naming, EagerContext, EagerFunction, GraphSignature, Runtime, TfError};

/// `x + k` over one float scalar, registered in `ctx` under a fresh name made from `display`.
pub fn add_constant(rt: &'static Runtime, ctx: EagerContext, k: f32, display: &str) -> EagerFunction {
    add_constant_with(rt, ctx, k, display, polyfn_tf::CallOptions::default())
}

/// [`add_constant`] whose eager calls run on the calling thread, under the context's "run eager
/// op as function" mode (the opt-in path whose kernels `kernel_cache` purges).
pub fn add_constant_inline(rt: &'static Runtime, ctx: EagerContext, k: f32, display: &str) -> EagerFunction {
    add_constant_with(rt, ctx, k, display, polyfn_tf::CallOptions { eager_op_as_function: true, ..Default::default() })
}

fn add_constant_with(rt: &'static Runtime, ctx: EagerContext, k: f32, display: &str, options: polyfn_tf::CallOptions) -> EagerFunction {
    let mut g = Graph::new(rt);
    let x = g.placeholder(DT_FLOAT, Some(&[])).unwrap();
    let c = g.constant(&OwnedTensor::from_f32(rt, &[], &[k])).unwrap();
    let y = g.binary("AddV2", x, c).unwrap();
    let names = naming::output_arg_names(1);
    let sig = GraphSignature { inputs: &[x], outputs: &[y], output_names: &names, control_outputs: &[] };
    // SAFETY: a live graph, not mutated while converted.
    unsafe { EagerFunction::from_graph_with(rt, ctx, g.raw(), &naming::function_name(display), &sig, options) }.unwrap()
}

/// Calls a function of one float scalar on `x`: its one result.
pub fn call_scalar(rt: &'static Runtime, f: &EagerFunction, x: &OwnedTensor) -> Result<f32, TfError> {
    let mut out = Vec::new();
    // SAFETY: a live float scalar for the function's one input.
    unsafe { f.call(&[x.raw()], &mut out) }?;
    // SAFETY: the output is ours.
    Ok(unsafe { OwnedTensor::from_raw(rt, out[0]) }.to_f32()[0])
}
