//! Graph operations and outputs that Java names (by operation name, and output index), found
//! in a live graph for tracing and for control flow's graph functions; a missing one is an error.

use crate::convert;
use crate::errors::{NativeError, Result};
use jni::objects::{JIntArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::Env;
use polyfn_tf::c_api::{TF_Graph, TF_Operation, TF_Output};
use polyfn_tf::{graph_operation, graph_output, Runtime};

/// The graph Java passes by address (a trace's, or the user's); an error for a null one.
pub(crate) fn graph_at(address: jlong) -> Result<*mut TF_Graph> {
    if address == 0 {
        return Err(NativeError::IllegalArgument("null graph".into()));
    }
    Ok(address as *mut TF_Graph)
}

/// The graph outputs Java names as two arrays, operation names and output indices (of one length).
pub(crate) fn named_outputs<'l>(
    env: &mut Env<'l>,
    rt: &Runtime,
    graph: *mut TF_Graph,
    ops: &JObjectArray<'l, JString<'l>>,
    indices: &JIntArray<'l>,
    what: &str,
) -> Result<Vec<TF_Output>> {
    let ops = convert::strings(env, ops, &format!("{what} operations"))?;
    let indices = convert::ints(env, indices)?;
    if ops.len() != indices.len() {
        return Err(NativeError::IllegalArgument(format!("{what} operations and indices differ in length")));
    }
    outputs_of(rt, graph, ops.iter().map(String::as_str).zip(indices.iter().copied()))
}

/// The graph operations Java names; a missing one is an error.
pub(crate) fn named_operations<'l>(
    env: &mut Env<'l>,
    rt: &Runtime,
    graph: *mut TF_Graph,
    names: &JObjectArray<'l, JString<'l>>,
    what: &str,
) -> Result<Vec<*mut TF_Operation>> {
    let names = convert::strings(env, names, what)?;
    names
        .iter()
        // SAFETY: the graph is live for the duration of the native call that passed it.
        .map(|op| unsafe { graph_operation(rt, graph, op) }.map_err(NativeError::from))
        .collect()
}

/// The graph outputs named by `(operation, index)` pairs; a missing operation is an error.
pub(crate) fn outputs_of<'a>(rt: &Runtime, graph: *mut TF_Graph, ops: impl Iterator<Item = (&'a str, i32)>) -> Result<Vec<TF_Output>> {
    // SAFETY: the graph is live for the duration of the native call that passed it.
    ops.map(|(op, index)| unsafe { graph_output(rt, graph, op, index) }.map_err(NativeError::from)).collect()
}
