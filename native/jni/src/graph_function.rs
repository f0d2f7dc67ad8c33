//! `Native.graphFunction`: control flow's branch and loop-body functions, made from operations of
//! a graph Java is building (see `polyfn_tf::graph_function`).

use crate::convert;
use crate::errors::Result;
use crate::graph_names::{graph_at, named_operations, named_outputs};
use crate::runtime::runtime;
use jni::objects::{JByteArray, JClass, JIntArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::Env;
use polyfn_tf::graph_function::{add_graph_function, GraphPart};

/// Makes function `name` of `graph`'s operations `body_ops` (inputs and outputs named by
/// operation and output index, control outputs by operation), adds it to the graph's library and
/// returns it as a serialized `FunctionDef`. A missing operation or output is an error naming it.
#[allow(clippy::too_many_arguments)]
pub fn graph_function<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    graph: jlong,
    name: JString<'l>,
    body_ops: JObjectArray<'l, JString<'l>>,
    input_ops: JObjectArray<'l, JString<'l>>,
    input_indices: JIntArray<'l>,
    output_ops: JObjectArray<'l, JString<'l>>,
    output_indices: JIntArray<'l>,
    control_ops: JObjectArray<'l, JString<'l>>,
) -> Result<JByteArray<'l>> {
    let (rt, _) = runtime()?;
    let graph = graph_at(graph)?;
    let name = convert::string(env, &name, "function name")?;
    let body = named_operations(env, rt, graph, &body_ops, "body operations")?;
    let inputs = named_outputs(env, rt, graph, &input_ops, &input_indices, "input")?;
    let outputs = named_outputs(env, rt, graph, &output_ops, &output_indices, "output")?;
    let control_outputs = named_operations(env, rt, graph, &control_ops, "control operations")?;
    let part = GraphPart { body: &body, inputs: &inputs, outputs: &outputs, control_outputs: &control_outputs };
    // SAFETY: the graph is the live graph Java holds open (and does not change) for this call;
    // every operation was just found in it.
    let def = unsafe { add_graph_function(rt, graph, &name, &part) }?;
    Ok(env.byte_array_from_slice(&def)?)
}
