//! Native methods of the trace protocol: begin, declare each parameter and capture, finish (turn
//! the traced graph into a registered concrete function), free; and adding a call of a concrete
//! function to a graph (nested calls).

use crate::convert;
use crate::errors::{NativeError, Result};
use crate::graph_names::{named_operations, named_outputs, outputs_of};
use crate::handles::{self, Trace, Traced};
use crate::logging;
use crate::runtime::runtime;
use jni::objects::{JClass, JIntArray, JLongArray, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::Env;
use polyfn_core::placeholder::{encode_composite_shapes, encode_placeholder_specs};
use polyfn_core::polymorphic::duration_text;
use polyfn_core::{DType, DTypeSet, ParamKind};
use polyfn_tf::c_api::TF_Graph;
use polyfn_tf::naming::{output_arg_names, unused_function_name};
use polyfn_tf::{graph_output, EagerFunction, GraphSignature, TfError};

/// `Native.beginTrace`: starts a trace of a call with these argument names. `facts` (null when the
/// parameter list is not known yet) type the call, to explain the retrace and generalize it.
pub fn begin_trace<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    arg_names: JObjectArray<'l, JString<'l>>,
    facts: JLongArray<'l>,
    fact_count: jint,
    for_call: jboolean,
    slow_nanos: jlong,
    log_level: jint,
) -> Result<jlong> {
    let f = handles::function(env, handle)?;
    let names = convert::strings(env, &arg_names, "argument names")?;
    let call_facts = if facts.is_null() { None } else { Some(convert::longs_prefix(env, &facts, fact_count)?) };
    let session = logging::with_level(log_level, || f.begin_trace::<TfError>(names, call_facts.as_deref(), for_call))?;
    let calls = Vec::new();
    Ok(handles::into_handle(Trace { function: handle, session, calls, traced: None, examples: false, slow_nanos, log_level }))
}

/// `Native.declareParameter`: declares a parameter with its constraint and the call's argument;
/// returns its placeholder specs (see `polyfn_core::placeholder::encode_placeholder_specs`), then
/// the traced static shapes of its composites (`encode_composite_shapes`).
pub fn declare_parameter<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    trace: jlong,
    name: JString<'l>,
    kind: jint,
    optional: jboolean,
    dtypes: JIntArray<'l>,
    shape_rank: jint,
    dims: JLongArray<'l>,
    java_class: JString<'l>,
    facts: JLongArray<'l>,
    fact_count: jint,
) -> Result<JLongArray<'l>> {
    let trace = handles::trace(env, trace)?;
    let f = handles::function(env, trace.function)?;
    let name = convert::string(env, &name, "name")?;
    let kind = ParamKind::from_wire(kind)
        .ok_or_else(|| NativeError::IllegalArgument(format!("unknown parameter kind {kind}")))?;
    let dtypes: Vec<DType> = convert::ints(env, &dtypes)?.into_iter().map(DType).collect();
    let dtypes = if dtypes.is_empty() { DTypeSet::any() } else { DTypeSet::of(&dtypes) };
    let shape = polyfn_core::declare::declared_shape(&name, shape_rank as i64, &convert::longs(env, &dims)?)?;
    let java_class = if java_class.is_null() { String::new() } else { convert::string(env, &java_class, "class")? };
    let constraint = polyfn_core::declared_constraint(&name, kind, dtypes, shape, java_class)?;
    // A constraint inferred from examples or a profile narrows or widens what the body declared.
    let constraint = f.effective_constraint(&name, constraint)?;
    let facts = convert::longs_prefix(env, &facts, fact_count)?;
    let value = if facts.is_empty() { None } else { Some(f.decode_argument::<TfError>(&name, &facts)?) };
    // An example is traced as the declaration allows (narrowed to it, or another example).
    let value = if trace.examples { f.example_argument(&name, &constraint, value) } else { value };
    let specs = trace.session.declare::<TfError>(&name, kind, optional, constraint, value).map_err(|e| f.annotate(e))?;
    let mut flat = encode_placeholder_specs(&specs);
    encode_composite_shapes(&mut flat, &trace.session.take_composite_shapes());
    convert::new_longs(env, &flat)
}

/// `Native.traceExamples`: marks a trace as one of example inputs at definition, whose arguments
/// are narrowed to the declared constraints (see `Polymorphic::example_argument`).
pub fn trace_examples<'l>(env: &mut Env<'l>, _class: JClass<'l>, trace: jlong) -> Result<()> {
    handles::trace(env, trace)?.examples = true;
    Ok(())
}

/// `Native.declareCapture`: declares a capture (a hidden input fed at every call) of a tensor or a
/// variable; returns its placeholder specs (none when it aliases one already placed).
pub fn declare_capture<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    trace: jlong,
    name: JString<'l>,
    variable: jboolean,
    facts: JLongArray<'l>,
    fact_count: jint,
) -> Result<JLongArray<'l>> {
    let trace = handles::trace(env, trace)?;
    let f = handles::function(env, trace.function)?;
    let name = convert::string(env, &name, "name")?;
    let value = f.decode_argument::<TfError>(&name, &convert::longs_prefix(env, &facts, fact_count)?)?;
    let constraint = polyfn_core::capture_constraint(variable);
    let specs = trace.session.declare_capture::<TfError>(&name, constraint, value)?;
    convert::new_longs(env, &encode_placeholder_specs(&specs))
}

/// `Native.registerString`: the map key an id stands for in facts.
pub fn register_string<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong, id: jint, value: JString<'l>) -> Result<()> {
    let value = convert::string(env, &value, "string")?;
    handles::function(env, handle)?.register_string(id as i64, &value);
    Ok(())
}

/// `Native.registerLiteral`: the Java value a literal id stands for in facts; `profile_value`
/// (its whole text for signature profiles) is null for a value no profile can restore.
pub fn register_literal<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    id: jint,
    repr: JString<'l>,
    class_name: JString<'l>,
    profile_value: JString<'l>,
) -> Result<()> {
    let repr = convert::string(env, &repr, "literal")?;
    let class_name = convert::string(env, &class_name, "class")?;
    let profile_value = if profile_value.is_null() { None } else { Some(convert::string(env, &profile_value, "profile value")?) };
    handles::function(env, handle)?.register_literal(id as i64, &repr, &class_name, profile_value.as_deref());
    Ok(())
}

/// `Native.finishTrace`: turns the traced graph into a concrete function, registers and caches
/// it; returns its id. Java recorded the output names under `outputs_key` beforehand.
pub fn finish_trace<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    trace: jlong,
    graph: jlong,
    placeholders: JObjectArray<'l, JString<'l>>,
    output_names: JObjectArray<'l, JString<'l>>,
    output_ops: JObjectArray<'l, JString<'l>>,
    output_indices: JIntArray<'l>,
    control_ops: JObjectArray<'l, JString<'l>>,
    absorbed_ops: JObjectArray<'l, JString<'l>>,
    outputs_key: jint,
) -> Result<jint> {
    let trace = handles::trace(env, trace)?;
    let f = handles::function(env, trace.function)?;
    let (rt, ctx) = runtime()?;
    let graph = graph as *mut TF_Graph;
    let placeholders = convert::strings(env, &placeholders, "placeholders")?;
    let names = convert::strings(env, &output_names, "output names")?;
    let inputs = outputs_of(rt, graph, placeholders.iter().map(|op| (op.as_str(), 0)))?;
    let outputs = named_outputs(env, rt, graph, &output_ops, &output_indices, "output")?;
    if outputs.len() != names.len() {
        return Err(NativeError::IllegalArgument("output names and operations differ in length".into()));
    }
    // SAFETY: the live trace graph Java holds open for this call; the outputs were found in it.
    let output_shapes = outputs
        .iter()
        .map(|&o| unsafe { polyfn_tf::graph_ops::static_shape(rt, graph, o) })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let control = named_operations(env, rt, graph, &control_ops, "control operations")?;
    let absorbed = named_operations(env, rt, graph, &absorbed_ops, "absorbed operations")?;
    // TensorFlow argument names must match [a-z][a-z0-9_]*; user names stay on the Java side.
    let arg_names = output_arg_names(outputs.len());
    let tf_name = unused_function_name(rt, ctx, f.name());
    let calls = std::mem::take(&mut trace.calls);
    let options = f.call_options();
    let concrete = logging::with_level(trace.log_level, || f.finish_trace(&trace.session, names, |_ty, _id| {
        let sig = GraphSignature { inputs: &inputs, outputs: &outputs, output_names: &arg_names, control_outputs: &control };
        // SAFETY: the graph is the live trace graph Java holds open for this call.
        let mut function = unsafe { EagerFunction::from_graph_excluding(rt, ctx, graph, &tf_name, &sig, options, &absorbed) }?;
        for dependency in calls {
            function.keep_alive(dependency);
        }
        Ok(Traced { function, outputs_key, output_shapes: Some(output_shapes) })
    }))?;
    let p = concrete.preparation;
    // After the function's lock is released (the logger is user code), before the first run.
    logging::slow_work(p.total_nanos(), Some(trace.slow_nanos), || {
        format!(
            "function '{}' took {} to trace {}: {}; TensorFlow prepares it in its first run",
            f.name(),
            duration_text(p.total_nanos()),
            concrete.function_type,
            p.phases()
        )
    });
    let id = concrete.id as jint;
    trace.traced = Some(concrete);
    Ok(id)
}

/// `Native.freeTrace`: frees a trace, finished or not.
pub fn free_trace<'l>(_env: &mut Env<'l>, _class: JClass<'l>, trace: jlong) -> Result<()> {
    // SAFETY: made by beginTrace, freed once by the tracing thread after its last use.
    unsafe { handles::free_handle::<Trace>(trace) };
    Ok(())
}

/// `Native.addCall`: adds a call of concrete function `concrete_id` to `graph` as operation
/// `op_name`; returns its number of outputs, or -1 (nothing added) when that concrete function
/// is no longer cached. In a nested call (`outer_trace` non-zero) the traced function keeps the
/// callee alive.
pub fn add_call<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    concrete_id: jint,
    outer_trace: jlong,
    graph: jlong,
    op_name: JString<'l>,
    input_ops: JObjectArray<'l, JString<'l>>,
    input_indices: JIntArray<'l>,
) -> Result<jint> {
    let f = handles::function(env, handle)?;
    let (rt, _) = runtime()?;
    let graph = graph as *mut TF_Graph;
    let op_name = convert::string(env, &op_name, "operation name")?;
    let inputs = named_outputs(env, rt, graph, &input_ops, &input_indices, "input")?;
    // Gone when a clear or eviction on another thread dropped it since Java found it: -1 (nothing
    // added) tells Java to find it again.
    let Some(concrete) = u32::try_from(concrete_id).ok().and_then(|id| f.concrete_by_id(id)) else {
        return Ok(-1);
    };
    // SAFETY: the graph is live and owned by the calling thread's trace or user code. A graph of
    // the user's (no outer trace) gets the definitions as they leave Polyfn (unmarked).
    unsafe { concrete.inner.function.add_call(graph, &op_name, &inputs, outer_trace == 0) }?;
    let outputs = concrete.inner.function.num_outputs() as jint;
    if outer_trace != 0 {
        handles::trace(env, outer_trace)?.calls.push(concrete);
    }
    Ok(outputs)
}

/// `Native.setHandleShape`: gives a variable's resource placeholder the dtype and shape of the
/// variable's value (TensorFlow's handle data), so reads of it in the trace have a static shape.
pub fn set_handle_shape<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    graph: jlong,
    op_name: JString<'l>,
    dtype: jint,
    dims: JLongArray<'l>,
) -> Result<()> {
    let (rt, _) = runtime()?;
    let graph = graph as *mut TF_Graph;
    let op_name = convert::string(env, &op_name, "operation name")?;
    let dims = convert::longs(env, &dims)?;
    // SAFETY: the graph is the live trace graph Java holds open for this call.
    let output = unsafe { graph_output(rt, graph, &op_name, 0) }?;
    // SAFETY: as above; set_handle_shape validates dtype and dims before TensorFlow sees them.
    unsafe { polyfn_tf::set_handle_shape(rt, graph, output, dtype, Some(&dims)) }?;
    Ok(())
}

/// `Native.mayHaveEffects`: whether any operation of `graph` may run for its effect (see
/// `polyfn_tf::graph_ops::may_have_effects`); when none does, Java skips its walk over them.
pub fn may_have_effects<'l>(_env: &mut Env<'l>, _class: JClass<'l>, graph: jlong) -> Result<jboolean> {
    let (rt, _) = runtime()?;
    let graph = crate::graph_names::graph_at(graph)?;
    // SAFETY: the graph is the live trace graph Java holds open for this call.
    Ok(unsafe { polyfn_tf::may_have_effects(rt, graph) })
}

/// `Native.addPlaceholder`: adds placeholder `name` to `graph` as described at `spec[at..]`
/// (dtype, rank, then the dims; rank -1 unknown) in the specs `declareParameter` or
/// `declareCapture` returned; returns the operation's address (see `polyfn_tf::placeholder`).
pub fn add_placeholder<'l>(env: &mut Env<'l>, _class: JClass<'l>, graph: jlong, name: JString<'l>, spec: JLongArray<'l>, at: jint) -> Result<jlong> {
    let (rt, ctx) = runtime()?;
    let graph = crate::graph_names::graph_at(graph)?;
    let name = convert::string(env, &name, "placeholder name")?;
    let spec = convert::longs(env, &spec)?;
    let (dtype, dims) = polyfn_core::placeholder::spec_at(&spec, at as i64)
        .ok_or_else(|| NativeError::IllegalArgument(format!("no placeholder spec at {at} of {spec:?}")))?;
    // SAFETY: the graph is the live trace graph Java holds open for this call.
    let unclustered = polyfn_tf::auto_clustering::pass_does_nothing(rt, ctx);
    Ok(unsafe { polyfn_tf::placeholder::add_placeholder(rt, graph, &name, dtype, dims, unclustered) }? as jlong)
}
