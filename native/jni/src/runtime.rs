//! Native methods about the TensorFlow runtime itself: binding to it, the eager context's
//! function registry, tensors that belong to no function, and the wire constants.

use crate::convert;
use crate::errors::{NativeError, Result};
use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::Env;
use polyfn_tf::c_api::TF_Tensor;
use polyfn_tf::{EagerContext, EagerFunction, Runtime};
use std::sync::OnceLock;

/// TensorFlow Java's default eager context, where concrete functions are registered and run.
static CONTEXT: OnceLock<EagerContext> = OnceLock::new();

/// The runtime and eager context, once `init` has bound them.
pub fn runtime() -> Result<(&'static Runtime, EagerContext)> {
    match (Runtime::get(), CONTEXT.get()) {
        (Some(rt), Some(ctx)) => Ok((rt, *ctx)),
        _ => Err(NativeError::IllegalState("Polyfn's native library is not initialized".into())),
    }
}

/// `Native.init`: binds to the TensorFlow library TensorFlow Java loaded and to its eager context;
/// returns TensorFlow's version.
pub fn init<'l>(env: &mut Env<'l>, _class: JClass<'l>, context: jlong) -> Result<JString<'l>> {
    crate::logging::install(env)?;
    let rt = Runtime::attach_loaded().map_err(|e| NativeError::IllegalState(e.to_string()))?;
    if context == 0 {
        return Err(NativeError::IllegalState("TensorFlow Java's eager context is null".into()));
    }
    let ctx = *CONTEXT.get_or_init(|| EagerContext(context as *mut _));
    if ctx.0 as jlong != context {
        return Err(NativeError::IllegalState("Polyfn is already bound to another eager context".into()));
    }
    Ok(env.new_string(rt.version())?)
}

/// `Native.liveConcreteFunctions`: concrete functions registered and not yet released.
pub fn live_concrete_functions<'l>(_env: &mut Env<'l>, _class: JClass<'l>) -> Result<jlong> {
    Ok(EagerFunction::live_count() as jlong)
}

/// `Native.isRegistered`: whether the eager context has a function called `name`.
pub fn is_registered<'l>(env: &mut Env<'l>, _class: JClass<'l>, name: JString<'l>) -> Result<jboolean> {
    let name = convert::string(env, &name, "name")?;
    let (rt, ctx) = runtime()?;
    Ok(EagerFunction::is_registered(rt, ctx, &name))
}

/// `Native.resolveHandle`: a new `TF_Tensor` with the value of an eager tensor handle.
pub fn resolve_handle<'l>(_env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<jlong> {
    let (rt, _) = runtime()?;
    if handle == 0 {
        return Err(NativeError::IllegalArgument("null tensor handle".into()));
    }
    // SAFETY: Java passes a live TFE_TensorHandle owned by TensorFlow Java's eager session.
    Ok(unsafe { polyfn_tf::tensor::resolve(rt, handle as *mut _) }? as jlong)
}

/// `Native.deleteTensor`: deletes a tensor made by `resolveHandle`.
pub fn delete_tensor<'l>(_env: &mut Env<'l>, _class: JClass<'l>, tensor: jlong) -> Result<()> {
    let (rt, _) = runtime()?;
    if tensor != 0 {
        // SAFETY: made by resolveHandle and owned by the caller, deleted once.
        unsafe { polyfn_tf::tensor::delete(rt, tensor as *mut TF_Tensor) };
    }
    Ok(())
}

/// `Native.releaseVariable`: gives a released variable's memory back and deletes its resource
/// tensor (made by `resolveHandle`), with the wrappers calls kept for it. `dtype` is the
/// variable's dtype code, or -1 for another resource (a lookup table), which is left as is.
/// (TensorFlow Java's eager `Const` kernel of its initial value stays cached, as for any eager
/// constant; see `polyfn_tf::kernel_cache`.)
pub fn release_variable<'l>(_env: &mut Env<'l>, _class: JClass<'l>, resource: jlong, dtype: jint) -> Result<()> {
    let (rt, ctx) = runtime()?;
    if resource == 0 {
        return Ok(());
    }
    if dtype >= 0 {
        // SAFETY: a live resource tensor (made by resolveHandle, not yet released) of a variable
        // of that dtype, in TensorFlow Java's context.
        if let Err(e) = unsafe { polyfn_tf::variable::assign_empty(rt, ctx, resource as *mut TF_Tensor, dtype) } {
            // The variable's memory then goes with the last tensor holding its handle.
            log::warn!("emptying a closed variable: {e}");
        }
    }
    // SAFETY: made by resolveHandle and owned by the caller, released once.
    unsafe { polyfn_tf::function::release_resource(rt, resource as *mut TF_Tensor) };
    Ok(())
}

/// `Native.wireNames` / `Native.wireValues`: the Rust side's wire constants, which a Java test
/// compares with `Wire.java` so that the two sides cannot drift apart unnoticed.
pub fn wire_names<'l>(env: &mut Env<'l>, _class: JClass<'l>) -> Result<JObjectArray<'l, JString<'l>>> {
    let names: Vec<String> = polyfn_core::wire::constants().iter().map(|(n, _)| (*n).to_owned()).collect();
    convert::new_strings(env, &names)
}

pub fn wire_values<'l>(env: &mut Env<'l>, _class: JClass<'l>) -> Result<jni::objects::JLongArray<'l>> {
    let values: Vec<i64> = polyfn_core::wire::constants().iter().map(|(_, v)| *v).collect();
    convert::new_longs(env, &values)
}
