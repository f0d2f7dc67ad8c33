//! Native methods for a polymorphic function's life: create, clear, close, free.

use crate::convert;
use crate::errors::Result;
use crate::handles::{self, Function};
use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::Env;
use polyfn_core::Options;

/// `Native.newFunction`: a polymorphic function with no concrete function yet.
pub fn new_function<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    name: JString<'l>,
    reduce_retracing: jboolean,
    max_concrete_functions: jint,
) -> Result<jlong> {
    let name = convert::string(env, &name, "name")?;
    let options = Options {
        reduce_retracing,
        max_concrete_functions: usize::try_from(max_concrete_functions).ok().filter(|&n| n > 0),
    };
    Ok(handles::into_handle(Function::new(polyfn_core::Polymorphic::with_options(name, options))))
}

/// `Native.closeFunction`: releases every concrete function; the handle stays valid.
pub fn close_function<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<()> {
    handles::function(env, handle)?.close();
    Ok(())
}

/// `Native.freeFunction`: frees the function's Rust state.
pub fn free_function<'l>(_env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<()> {
    // SAFETY: made by newFunction; Java's Cleaner calls this once, when the owner is unreachable.
    unsafe { handles::free_handle::<Function>(handle) };
    Ok(())
}

/// `Native.traceCount`: traces that produced a concrete function.
pub fn trace_count<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<jint> {
    Ok(handles::function(env, handle)?.trace_count() as jint)
}

/// `Native.clearCache`: releases every concrete function; the parameter list stays.
pub fn clear_cache<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong) -> Result<()> {
    handles::function(env, handle)?.clear_cache();
    Ok(())
}

/// `Native.setCallOptions`: how the function's concrete functions run (bits of
/// `handles::CallFlags`); set before the first trace.
pub fn set_call_options<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong, flags: jint) -> Result<()> {
    handles::function(env, handle)?.set_call_options(flags as u32);
    Ok(())
}
