//! The table of `dev.polyfn.internal.Native`'s methods, registered with the JVM when the library
//! loads. Each entry's JNI signature is derived from the Rust function's types at compile time
//! (`native_method!`), and registration checks it against the Java declaration, so a change made
//! on one side only fails at load time, naming the method, instead of at its first call.

use crate::errors::{NativeError, Result, ThrowJava};
use crate::{cache, call, function, gradients, graph_function, infer, introspection, runtime, saved, stack, trace};
use jni::objects::JClass;
use jni::{native_method, Env, NativeMethod};

/// Java's `dev.polyfn.internal.Native`.
const NATIVE_CLASS: &str = "dev/polyfn/internal/Native";

const METHODS: &[NativeMethod] = &[
    native_method! { static fn init(context: jlong) -> JString, fn = runtime::init, error_policy = ThrowJava },
    native_method! { static fn wire_names() -> java.lang.String[], fn = runtime::wire_names, error_policy = ThrowJava },
    native_method! { static fn wire_values() -> jlong[], fn = runtime::wire_values, error_policy = ThrowJava },
    native_method! { static fn live_concrete_functions() -> jlong, fn = runtime::live_concrete_functions, error_policy = ThrowJava },
    native_method! { static fn stack_left() -> jlong, fn = stack::stack_left, error_policy = ThrowJava },
    native_method! { static fn is_registered(name: JString) -> jboolean, fn = runtime::is_registered, error_policy = ThrowJava },
    native_method! { static fn resolve_handle(handle: jlong) -> jlong, fn = runtime::resolve_handle, error_policy = ThrowJava },
    native_method! { static fn delete_tensor(tensor: jlong), fn = runtime::delete_tensor, error_policy = ThrowJava },
    native_method! { static fn release_variable(resource: jlong, dtype: jint), fn = runtime::release_variable, error_policy = ThrowJava },
    native_method! { static fn new_function(name: JString, reduce_retracing: jboolean, max_concrete_functions: jint) -> jlong, fn = function::new_function, error_policy = ThrowJava },
    native_method! { static fn close_function(handle: jlong), fn = function::close_function, error_policy = ThrowJava },
    native_method! { static fn set_call_options(handle: jlong, flags: jint), fn = function::set_call_options, error_policy = ThrowJava },
    native_method! { static fn free_function(handle: jlong), fn = function::free_function, error_policy = ThrowJava },
    native_method! { static fn trace_count(handle: jlong) -> jint, fn = function::trace_count, error_policy = ThrowJava },
    native_method! { static fn clear_cache(handle: jlong), fn = function::clear_cache, error_policy = ThrowJava },
    native_method! { static raw fn call(handle: jlong, facts: jlong[], fact_count: jint, tensors: jlong[], tensor_count: jint, result: jlong[]) -> jlong[], fn = call::call },
    native_method! { static fn call_traced(trace: jlong, tensors: jlong[], tensor_count: jint) -> jlong[], fn = call::call_traced, error_policy = ThrowJava },
    native_method! { static fn find(handle: jlong, facts: jlong[], fact_count: jint) -> jint, fn = call::find, error_policy = ThrowJava },
    native_method! { static fn record_first_call(handle: jlong, facts: jlong[], fact_count: jint), fn = call::record_first_call, error_policy = ThrowJava },
    native_method! { static fn begin_trace(handle: jlong, arg_names: java.lang.String[], facts: jlong[], fact_count: jint, for_call: jboolean, slow_nanos: jlong, log_level: jint) -> jlong, fn = trace::begin_trace, error_policy = ThrowJava },
    native_method! { static fn declare_parameter(trace: jlong, name: JString, kind: jint, optional: jboolean, dtypes: jint[], shape_rank: jint, dims: jlong[], java_class: JString, facts: jlong[], fact_count: jint) -> jlong[], fn = trace::declare_parameter, error_policy = ThrowJava },
    native_method! { static fn declare_capture(trace: jlong, name: JString, variable: jboolean, facts: jlong[], fact_count: jint) -> jlong[], fn = trace::declare_capture, error_policy = ThrowJava },
    native_method! { static fn register_string(handle: jlong, id: jint, value: JString), fn = trace::register_string, error_policy = ThrowJava },
    native_method! { static fn register_literal(handle: jlong, id: jint, repr: JString, class_name: JString, profile_value: JString), fn = trace::register_literal, error_policy = ThrowJava },
    native_method! { static fn finish_trace(trace: jlong, graph: jlong, placeholders: java.lang.String[], output_names: java.lang.String[], output_ops: java.lang.String[], output_indices: jint[], control_ops: java.lang.String[], absorbed_ops: java.lang.String[], outputs_key: jint) -> jint, fn = trace::finish_trace, error_policy = ThrowJava },
    native_method! { static fn free_trace(trace: jlong), fn = trace::free_trace, error_policy = ThrowJava },
    native_method! { static fn set_handle_shape(graph: jlong, op_name: JString, dtype: jint, dims: jlong[]), fn = trace::set_handle_shape, error_policy = ThrowJava },
    native_method! { static fn may_have_effects(graph: jlong) -> jboolean, fn = trace::may_have_effects, error_policy = ThrowJava },
    native_method! { static fn add_placeholder(graph: jlong, name: JString, spec: jlong[], at: jint) -> jlong, fn = trace::add_placeholder, error_policy = ThrowJava },
    native_method! { static fn add_call(handle: jlong, concrete_id: jint, outer_trace: jlong, graph: jlong, op_name: JString, input_ops: java.lang.String[], input_indices: jint[]) -> jint, fn = trace::add_call, error_policy = ThrowJava },
    native_method! { static fn parameters(handle: jlong) -> dev.polyfn.FunctionType, fn = introspection::parameters, error_policy = ThrowJava },
    native_method! { static fn concrete_functions(handle: jlong) -> dev.polyfn.ConcreteFunctionInfo[], fn = introspection::concrete_functions, error_policy = ThrowJava },
    native_method! { static fn statistics(handle: jlong) -> jlong[], fn = introspection::statistics, error_policy = ThrowJava },
    native_method! { static fn trace_history(handle: jlong) -> dev.polyfn.TraceEvent[], fn = introspection::trace_history, error_policy = ThrowJava },
    native_method! { static fn infer_parameter(handle: jlong, name: JString, facts: jlong[], lengths: jint[], profile_calls: jlong) -> java.lang.String[], fn = infer::infer_parameter, error_policy = ThrowJava },
    native_method! { static fn example_served(handle: jlong, facts: jlong[], fact_count: jint) -> jboolean, fn = infer::example_served, error_policy = ThrowJava },
    native_method! { static fn trace_examples(trace: jlong), fn = trace::trace_examples, error_policy = ThrowJava },
    native_method! { static fn inference_notes(handle: jlong) -> java.lang.String[], fn = infer::inference_notes, error_policy = ThrowJava },
    native_method! { static fn suggested_signature(handle: jlong) -> dev.polyfn.SignatureSuggestion, fn = infer::suggested_signature, error_policy = ThrowJava },
    native_method! { static fn export_concrete_types(handle: jlong, concrete_id: jint, with_literals: jboolean) -> java.lang.String[], fn = cache::export_concrete_types, error_policy = ThrowJava },
    native_method! { static fn sha256(data: jbyte[]) -> jbyte[], fn = cache::sha256, error_policy = ThrowJava },
    native_method! { static fn export_function_def(handle: jlong, concrete_id: jint, for_cache: jboolean) -> jbyte[], fn = cache::export_function_def, error_policy = ThrowJava },
    native_method! { static fn export_library(handle: jlong, concrete_id: jint) -> jbyte[], fn = cache::export_library, error_policy = ThrowJava },
    native_method! { static fn restore_concrete(handle: jlong, declared: JString, traced: JString, def: jbyte[], library: jbyte[], output_names: java.lang.String[], outputs_key: jint, output_shapes: JString) -> jint, fn = cache::restore_concrete, error_policy = ThrowJava },
    native_method! { static fn use_saved_order(handle: jlong), fn = saved::use_saved_order, error_policy = ThrowJava },
    native_method! { static fn explain_miss(handle: jlong, facts: jlong[], fact_count: jint) -> JString, fn = saved::explain_miss, error_policy = ThrowJava },
    native_method! { static fn signature_profile(handle: jlong) -> JString, fn = infer::signature_profile, error_policy = ThrowJava },
    native_method! { static fn unbroadcast_gradients(graph: jlong, prefix: JString, dx_ops: java.lang.String[], dx_indices: jint[]) -> java.lang.String[], fn = gradients::unbroadcast_gradients, error_policy = ThrowJava },
    native_method! { static fn graph_function(graph: jlong, name: JString, body_ops: java.lang.String[], input_ops: java.lang.String[], input_indices: jint[], output_ops: java.lang.String[], output_indices: jint[], control_ops: java.lang.String[]) -> jbyte[], fn = graph_function::graph_function, error_policy = ThrowJava },
];

/// `Native.registerNatives`, the one entry point the JVM finds by its exported name: registers
/// every other method, one at a time so that a mismatch names the method.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyfn_internal_Native_registerNatives<'l>(
    mut env: jni::EnvUnowned<'l>,
    class: JClass<'l>,
) {
    env.with_env(|env| -> Result<()> { register(env, &class) }).resolve::<ThrowJava>()
}

fn register(env: &mut Env<'_>, class: &JClass<'_>) -> Result<()> {
    let mut missing = Vec::new();
    for method in METHODS {
        // SAFETY: every entry comes from native_method!, which checks the function against the
        // signature it registers; all are static, matching `static` in the macro.
        if let Err(e) = unsafe { env.register_native_methods(class, std::slice::from_ref(method)) } {
            let _ = env.exception_clear();
            missing.push(e.to_string());
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(NativeError::IllegalState(format!(
        "Polyfn's native library does not match its Java classes ({NATIVE_CLASS}): {}. \
         The jar and libpolyfn_jni.so must come from the same build.",
        missing.join("; ")
    )))
}
