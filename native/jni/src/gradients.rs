//! `Native.unbroadcastGradients`: one `TF_AddGradients` call's gradients without the reductions
//! static shapes show reduce nothing (see `polyfn_tf::unbroadcast`).

use crate::convert;
use crate::errors::Result;
use crate::graph_names::{graph_at, named_outputs};
use crate::runtime::runtime;
use jni::objects::{JClass, JIntArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::Env;
use polyfn_tf::c_api::TF_Output;
use polyfn_tf::unbroadcast::operation_name;

/// Rewires the gradient operations named under `prefix` that the outputs `dx_ops`/`dx_indices`
/// depend on; returns each of those outputs, or what replaced it, as `"operation:index"`, then
/// the names of the operations under `prefix` that none of them depends on.
pub fn unbroadcast_gradients<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    graph: jlong,
    prefix: JString<'l>,
    dx_ops: JObjectArray<'l, JString<'l>>,
    dx_indices: JIntArray<'l>,
) -> Result<JObjectArray<'l, JString<'l>>> {
    let (rt, _) = runtime()?;
    let graph = graph_at(graph)?;
    let prefix = convert::string(env, &prefix, "gradient name prefix")?;
    let dx = named_outputs(env, rt, graph, &dx_ops, &dx_indices, "gradient")?;
    // SAFETY: the graph is the live trace graph Java holds open for this call; every output was
    // just found in it.
    let out = unsafe { polyfn_tf::unbroadcast::unbroadcast(rt, graph, &prefix, &dx) }?;
    // SAFETY: outputs of the live graph, just returned by the pass.
    let mut names: Vec<String> = out.dx.iter().map(|o: &TF_Output| format!("{}:{}", unsafe { operation_name(rt, o.oper) }, o.index)).collect();
    // SAFETY: operations of the live graph, just returned by the pass.
    names.extend(out.unused.iter().map(|&op| unsafe { operation_name(rt, op) }));
    convert::new_strings(env, &names)
}
