//! The JNI entry points of `dev.polyfn.internal.Native`. Each converts its Java arguments, calls
//! the polymorphic function or the runtime, and resolves errors and panics with [`ThrowJava`].

use crate::convert;
use crate::errors::{NativeError, Result, ThrowJava};
use jni::objects::{JClass, JIntArray, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use polyfn_core::{
    DType, DTypeSet, ListConstraint, LiteralConstraint, MapConstraint, Options, ParamKind, PolyError, Polymorphic,
    Shape, TensorConstraint, TraceSession, TypeRef, VariableConstraint,
};
use polyfn_tf::c_api::{TF_Graph, TF_Output, TF_Tensor};
use polyfn_tf::{EagerContext, EagerFunction, GraphSignature, Runtime, TfError};
use std::cell::RefCell;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

type Function = Polymorphic<EagerFunction>;

/// TensorFlow Java's default eager context, where concrete functions are registered and run.
static CONTEXT: OnceLock<EagerContext> = OnceLock::new();
/// Makes registered function names unique in the process.
static NEXT_FUNCTION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Reused per thread so a call allocates nothing here but its result array.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

#[derive(Default)]
struct Scratch {
    facts: Vec<i64>,
    tensors: Vec<i64>,
    outputs: Vec<*mut TF_Tensor>,
    result: Vec<i64>,
}

impl From<PolyError<TfError>> for NativeError {
    fn from(e: PolyError<TfError>) -> Self {
        match e {
            PolyError::Bind(b) => b.into(),
            PolyError::Build(t) => NativeError::TensorFlow(t),
            other => NativeError::IllegalState(other.to_string()),
        }
    }
}

fn runtime() -> Result<(&'static Runtime, EagerContext)> {
    match (Runtime::get(), CONTEXT.get()) {
        (Some(rt), Some(ctx)) => Ok((rt, *ctx)),
        _ => Err(NativeError::IllegalState("Polyfn's native library is not initialized".into())),
    }
}

/// # Safety contract with Java
/// `handle` is a live `Box<Function>` address made by `newFunction` and not yet freed.
fn function<'a>(handle: jlong) -> Result<&'a Function> {
    if handle == 0 {
        return Err(NativeError::IllegalState("null function handle".into()));
    }
    // SAFETY: see the contract above; FunctionHandle frees it only when unreachable.
    Ok(unsafe { &*(handle as *const Function) })
}

/// A trace in progress: the session, the function it belongs to, and the concrete functions its
/// graph calls (nested calls), which the traced function keeps alive.
struct Trace {
    function: jlong,
    session: TraceSession,
    calls: Vec<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_init<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    context: jlong,
    log_level: jint,
) -> JObject<'l> {
    env.with_env(|env| -> Result<JObject<'l>> {
        crate::logging::install(env, log_level)?;
        let rt = Runtime::attach_loaded().map_err(NativeError::IllegalState)?;
        if context == 0 {
            return Err(NativeError::IllegalState("TensorFlow Java's eager context is null".into()));
        }
        let ctx = *CONTEXT.get_or_init(|| EagerContext(context as *mut _));
        if ctx.0 as jlong != context {
            return Err(NativeError::IllegalState("Polyfn is already bound to another eager context".into()));
        }
        Ok(env.new_string(rt.version())?.into())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_newFunction<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    name: JString<'l>,
    reduce_retracing: jboolean,
    max_concrete_functions: jint,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        let name = convert::string(env, &name, "name")?;
        let options = Options {
            reduce_retracing,
            max_concrete_functions: usize::try_from(max_concrete_functions).ok().filter(|&n| n > 0),
        };
        Ok(Box::into_raw(Box::new(Function::with_options(name, options))) as jlong)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_closeFunction<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        function(handle)?.close();
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_freeFunction<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        if handle != 0 {
            // SAFETY: made by newFunction; the Java owner is unreachable, so this is the last use.
            drop(unsafe { Box::from_raw(handle as *mut Function) });
        }
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_call<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    facts: JLongArray<'l>,
    fact_count: jint,
    tensors: JLongArray<'l>,
    tensor_count: jint,
    count: jboolean,
) -> JLongArray<'l> {
    env.with_env(|env| -> Result<JLongArray<'l>> {
        let f = function(handle)?;
        SCRATCH.with(|scratch| {
            let mut guard = scratch.borrow_mut();
            let s = &mut *guard;
            convert::longs_into(env, &facts, fact_count, &mut s.facts)?;
            // A hit counts once per call; re-checks after the call's own trace pass count = false.
            let found = if count { f.lookup::<TfError>(&s.facts)? } else { f.find::<TfError>(&s.facts)? };
            let Some(concrete) = found else {
                return Ok(JLongArray::default());
            };
            convert::longs_into(env, &tensors, tensor_count, &mut s.tensors)?;
            // SAFETY: i64 and *mut TF_Tensor have the same size; Java passed live TF_Tensor addresses.
            let inputs: &[*mut TF_Tensor] =
                unsafe { std::slice::from_raw_parts(s.tensors.as_ptr().cast(), s.tensors.len()) };
            s.outputs.clear();
            unsafe { concrete.inner.call(inputs, &mut s.outputs) }?;
            s.result.clear();
            s.result.push(concrete.id as i64);
            s.result.extend(s.outputs.iter().map(|&t| t as i64));
            match convert::new_longs(env, &s.result) {
                Ok(array) => Ok(array),
                Err(e) => {
                    let (rt, _) = runtime()?;
                    for &t in &s.outputs {
                        // SAFETY: the outputs were never handed to Java.
                        unsafe { (rt.api().TF_DeleteTensor)(t) };
                    }
                    Err(e)
                }
            }
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_find<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    facts: JLongArray<'l>,
    fact_count: jint,
) -> jint {
    env.with_env(|env| -> Result<jint> {
        let mut buf = Vec::new();
        convert::longs_into(env, &facts, fact_count, &mut buf)?;
        Ok(function(handle)?.find::<TfError>(&buf)?.map_or(-1, |c| c.id as jint))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_beginTrace<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    arg_names: JObjectArray<'l, JString<'l>>,
    facts: JLongArray<'l>,
    fact_count: jint,
    for_call: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong> {
        let f = function(handle)?;
        let names = convert::strings(env, &arg_names, "argument names")?;
        let call_facts = if facts.is_null() {
            None
        } else {
            let mut buf = Vec::new();
            convert::longs_into(env, &facts, fact_count, &mut buf)?;
            Some(buf)
        };
        let session = f.begin_trace::<TfError>(names, call_facts.as_deref(), for_call)?;
        Ok(Box::into_raw(Box::new(Trace { function: handle, session, calls: Vec::new() })) as jlong)
    })
    .resolve::<ThrowJava>()
}

/// Parameter kinds as Java passes them (`dev.polyfn.internal.Native.KIND_*`).
fn param_kind(kind: jint) -> Result<ParamKind> {
    Ok(match kind {
        0 => ParamKind::Tensor,
        1 => ParamKind::List,
        2 => ParamKind::Map,
        3 => ParamKind::Java,
        4 => ParamKind::Variable,
        _ => return Err(NativeError::IllegalArgument(format!("unknown parameter kind {kind}"))),
    })
}

/// The declared constraint of a parameter: element dtypes and shape for tensors, lists and maps
/// of tensors, the value class for Java values.
fn constraint(kind: ParamKind, dtypes: DTypeSet, shape: Option<Shape>, java_class: String) -> TypeRef {
    let tensor = || TypeRef::new(TensorConstraint { dtypes: dtypes.clone(), shape: shape.clone() });
    match kind {
        ParamKind::Tensor => tensor(),
        ParamKind::List => TypeRef::new(ListConstraint::new(Some(tensor()), None)),
        ParamKind::Map => TypeRef::new(MapConstraint::new(Some(tensor()))),
        ParamKind::Java => TypeRef::new(LiteralConstraint::new(java_class)),
        ParamKind::Variable => TypeRef::new(VariableConstraint::new(dtypes)),
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_declareParameter<'l>(
    mut env: EnvUnowned<'l>,
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
) -> JLongArray<'l> {
    env.with_env(|env| -> Result<JLongArray<'l>> {
        let trace = trace_ref(trace)?;
        let f = function(trace.function)?;
        let name = convert::string(env, &name, "name")?;
        let kind = param_kind(kind)?;
        let dtypes: Vec<DType> = convert::ints(env, &dtypes)?.into_iter().map(DType).collect();
        let dtypes = if dtypes.is_empty() { DTypeSet::any() } else { DTypeSet::of(&dtypes) };
        let shape = match shape_rank {
            -2 => None,
            -1 => Some(Shape::Unknown),
            _ => Some(Shape::of(&convert::longs(env, &dims)?)),
        };
        let java_class = if java_class.is_null() { String::new() } else { convert::string(env, &java_class, "class")? };
        let constraint = constraint(kind, dtypes, shape, java_class);
        let mut facts_buf = Vec::new();
        convert::longs_into(env, &facts, fact_count, &mut facts_buf)?;
        let value = if facts_buf.is_empty() { None } else { Some(f.decode_value(&facts_buf)?) };
        let specs = trace.session.declare::<TfError>(&name, kind, optional, constraint, value)?;
        let flat = flatten_specs(&specs);
        convert::new_longs(env, &flat)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_registerString<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    id: jint,
    value: JString<'l>,
) {
    env.with_env(|env| -> Result<()> {
        let value = convert::string(env, &value, "string")?;
        function(handle)?.register_string(id as i64, &value);
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_registerLiteral<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    id: jint,
    repr: JString<'l>,
    class_name: JString<'l>,
) {
    env.with_env(|env| -> Result<()> {
        let repr = convert::string(env, &repr, "literal")?;
        let class_name = convert::string(env, &class_name, "class")?;
        function(handle)?.register_literal(id as i64, &repr, &class_name);
        Ok(())
    })
    .resolve::<ThrowJava>()
}

fn trace_ref<'a>(handle: jlong) -> Result<&'a mut Trace> {
    if handle == 0 {
        return Err(NativeError::IllegalState("null trace handle".into()));
    }
    // SAFETY: a live Box<Trace> made by beginTrace, used by the one thread that traces.
    Ok(unsafe { &mut *(handle as *mut Trace) })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_finishTrace<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    trace: jlong,
    graph: jlong,
    placeholders: JObjectArray<'l, JString<'l>>,
    output_names: JObjectArray<'l, JString<'l>>,
    output_ops: JObjectArray<'l, JString<'l>>,
    output_indices: JIntArray<'l>,
    control_ops: JObjectArray<'l, JString<'l>>,
) -> jint {
    env.with_env(|env| -> Result<jint> {
        let trace = trace_ref(trace)?;
        let f = function(trace.function)?;
        let (rt, ctx) = runtime()?;
        let graph = graph as *mut TF_Graph;
        let placeholders = convert::strings(env, &placeholders, "placeholders")?;
        let names = convert::strings(env, &output_names, "output names")?;
        let ops = convert::strings(env, &output_ops, "output operations")?;
        let indices = convert::ints(env, &output_indices)?;
        let inputs = placeholders.iter().map(|op| output_of(rt, graph, op, 0)).collect::<Result<Vec<_>>>()?;
        let outputs =
            ops.iter().zip(&indices).map(|(op, &i)| output_of(rt, graph, op, i)).collect::<Result<Vec<_>>>()?;
        let control = convert::strings(env, &control_ops, "control operations")?
            .iter()
            .map(|op| output_of(rt, graph, op, 0).map(|o| o.oper))
            .collect::<Result<Vec<_>>>()?;
        // TensorFlow argument names must match [a-z][a-z0-9_]*; user names stay on the Java side.
        let arg_names: Vec<CString> =
            (0..outputs.len()).map(|i| CString::new(format!("output_{i}")).unwrap()).collect();
        let tf_name = format!("polyfn_{}_{}", sanitize(f.name()), NEXT_FUNCTION.fetch_add(1, Ordering::Relaxed));
        let id = f.finish_trace(&trace.session, names, |_ty, _id| {
            let sig = GraphSignature {
                inputs: &inputs,
                outputs: &outputs,
                output_names: &arg_names,
                control_outputs: &control,
            };
            // SAFETY: the graph is the live trace graph Java holds open for this call.
            let mut function = unsafe { EagerFunction::from_graph(rt, ctx, graph, &tf_name, &sig) }?;
            for dependency in trace.calls.drain(..) {
                function.keep_alive(dependency);
            }
            Ok(function)
        })?;
        Ok(id as jint)
    })
    .resolve::<ThrowJava>()
}

fn output_of(rt: &Runtime, graph: *mut TF_Graph, op: &str, index: i32) -> Result<TF_Output> {
    let c = CString::new(op).map_err(|_| NativeError::IllegalArgument(format!("bad operation name {op:?}")))?;
    // SAFETY: graph is live; the name is NUL-terminated.
    let oper = unsafe { (rt.api().TF_GraphOperationByName)(graph, c.as_ptr()) };
    if oper.is_null() {
        return Err(NativeError::IllegalState(format!("operation {op} is not in the traced graph")));
    }
    Ok(TF_Output { oper, index })
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .take(40)
        .collect()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_freeTrace<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    trace: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        if trace != 0 {
            // SAFETY: made by beginTrace, freed once by the tracing thread.
            drop(unsafe { Box::from_raw(trace as *mut Trace) });
        }
        Ok(())
    })
    .resolve::<ThrowJava>()
}

/// A FunctionType as `(name, kind, optional, type)` quadruples: parameters, then captures (kind
/// `capture`).
fn type_quadruples(ty: &polyfn_core::FunctionType, out: &mut Vec<String>) {
    for p in &ty.parameters {
        out.push(p.name.clone());
        out.push(p.kind.to_string());
        out.push(p.optional.to_string());
        out.push(p.type_constraint.as_ref().map(|t| t.to_string()).unwrap_or_else(|| p.kind.to_string()));
    }
    for (name, t) in &ty.captures {
        out.extend([name.clone(), "capture".to_owned(), "false".to_owned(), t.to_string()]);
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_parameters<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JObject<'l> {
    env.with_env(|env| -> Result<JObject<'l>> {
        let Some(declared) = function(handle)?.declared() else { return Ok(JObject::null()) };
        let mut flat = Vec::new();
        type_quadruples(&declared, &mut flat);
        convert::new_strings(env, &flat)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_concreteFunctions<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JObject<'l> {
    env.with_env(|env| -> Result<JObject<'l>> {
        let mut flat = Vec::new();
        for c in function(handle)?.concrete_functions() {
            flat.push(c.id.to_string());
            flat.push(c.inner.name().to_owned());
            flat.push(c.inner.num_inputs().to_string());
            flat.push(c.output_names.len().to_string());
            flat.extend(c.output_names.iter().cloned());
            flat.push((c.function_type.parameters.len() + c.function_type.captures.len()).to_string());
            type_quadruples(&c.function_type, &mut flat);
        }
        convert::new_strings(env, &flat)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_traceCount<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jint {
    env.with_env(|_env| -> Result<jint> { Ok(function(handle)?.trace_count() as jint) }).resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_clearCache<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        function(handle)?.clear_cache();
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_statistics<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JLongArray<'l> {
    env.with_env(|env| -> Result<JLongArray<'l>> {
        let s = function(handle)?.stats();
        let values = [
            s.exact_hits,
            s.inexact_hits,
            s.misses,
            s.traces,
            s.evictions,
            s.total_trace_nanos,
            s.last_trace_nanos,
        ];
        convert::new_longs(env, &values.map(|v| v as i64))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_traceHistory<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JObject<'l> {
    env.with_env(|env| -> Result<JObject<'l>> {
        let mut flat = Vec::new();
        for r in function(handle)?.history() {
            flat.extend([r.function_type, r.parameter, r.reason, r.nanos.to_string()]);
        }
        convert::new_strings(env, &flat)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_liveConcreteFunctions<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> jlong {
    env.with_env(|_env| -> Result<jlong> { Ok(EagerFunction::live_count() as jlong) }).resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_isRegistered<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    name: JString<'l>,
) -> jboolean {
    env.with_env(|env| -> Result<jboolean> {
        let name = convert::string(env, &name, "name")?;
        let (rt, ctx) = runtime()?;
        Ok(EagerFunction::is_registered(rt, ctx, &name))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_declareCapture<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    trace: jlong,
    name: JString<'l>,
    variable: jboolean,
    facts: JLongArray<'l>,
    fact_count: jint,
) -> JLongArray<'l> {
    env.with_env(|env| -> Result<JLongArray<'l>> {
        let trace = trace_ref(trace)?;
        let f = function(trace.function)?;
        let name = convert::string(env, &name, "name")?;
        let mut buf = Vec::new();
        convert::longs_into(env, &facts, fact_count, &mut buf)?;
        let value = f.decode_value(&buf)?;
        // A capture accepts any value of its kind: its type is part of each call's signature.
        let constraint = if variable {
            TypeRef::new(VariableConstraint::new(DTypeSet::any()))
        } else {
            TypeRef::new(TensorConstraint { dtypes: DTypeSet::any(), shape: None })
        };
        let specs = trace.session.declare_capture::<TfError>(&name, constraint, value)?;
        convert::new_longs(env, &flatten_specs(&specs))
    })
    .resolve::<ThrowJava>()
}

/// Placeholder specs as Java reads them: `[count, (dtype, rank, dims...)...]`, rank -1 unknown.
fn flatten_specs(specs: &[polyfn_core::PlaceholderSpec]) -> Vec<i64> {
    let mut flat = vec![specs.len() as i64];
    for spec in specs {
        flat.push(spec.dtype.0 as i64);
        match &spec.shape {
            Shape::Unknown => flat.push(-1),
            Shape::Known(dims) => {
                flat.push(dims.len() as i64);
                flat.extend(dims.iter().map(|d| d.unwrap_or(-1)));
            }
        }
    }
    flat
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_addCall<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    concrete_id: jint,
    outer_trace: jlong,
    graph: jlong,
    op_name: JString<'l>,
    input_ops: JObjectArray<'l, JString<'l>>,
    input_indices: JIntArray<'l>,
) -> jint {
    env.with_env(|env| -> Result<jint> {
        let f = function(handle)?;
        let (rt, _) = runtime()?;
        let graph = graph as *mut TF_Graph;
        let op_name = convert::string(env, &op_name, "operation name")?;
        let ops = convert::strings(env, &input_ops, "input operations")?;
        let indices = convert::ints(env, &input_indices)?;
        let inputs =
            ops.iter().zip(&indices).map(|(op, &i)| output_of(rt, graph, op, i)).collect::<Result<Vec<_>>>()?;
        let concrete = f
            .concrete_functions()
            .into_iter()
            .find(|c| c.id == concrete_id as u32)
            .ok_or_else(|| NativeError::IllegalState(format!("concrete function {concrete_id} is not cached")))?;
        // SAFETY: the graph is live and owned by the calling thread's trace or user code.
        unsafe { concrete.inner.add_call(graph, &op_name, &inputs) }?;
        let outputs = concrete.inner.num_outputs() as jint;
        if outer_trace != 0 {
            trace_ref(outer_trace)?.calls.push(concrete);
        }
        Ok(outputs)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_resolveHandle<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlong {
    env.with_env(|_env| -> Result<jlong> {
        let (rt, _) = runtime()?;
        if handle == 0 {
            return Err(NativeError::IllegalArgument("null tensor handle".into()));
        }
        // SAFETY: Java passes a live TFE_TensorHandle owned by TensorFlow Java's eager session.
        Ok(unsafe { polyfn_tf::tensor::resolve(rt, handle as *mut _) }? as jlong)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_deleteTensor<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    tensor: jlong,
) {
    env.with_env(|_env| -> Result<()> {
        let (rt, _) = runtime()?;
        if tensor != 0 {
            // SAFETY: made by resolveHandle and owned by the caller, deleted once.
            unsafe { (rt.api().TF_DeleteTensor)(tensor as *mut TF_Tensor) };
        }
        Ok(())
    })
    .resolve::<ThrowJava>()
}
