//! The call path: one native call per Polyfn call. Java hands over the call's type facts and its
//! argument tensors; Rust dispatches, executes and returns the output tensors.

use crate::convert;
use crate::errors::{NativeError, Result};
use crate::handles::{self, ConcreteFn};
use crate::runtime::runtime;
use jni::objects::{JClass, JLongArray};
use jni::sys::{jboolean, jint, jlong};
use jni::Env;
use polyfn_tf::c_api::TF_Tensor;
use polyfn_tf::TfError;
use std::cell::RefCell;

thread_local! {
    /// Reused per thread so a call allocates nothing here but its result array.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers, or fresh ones if they are busy: a call made from
/// user code that runs inside a call (a log handler calling a function) must not find them taken.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

#[derive(Default)]
struct Scratch {
    facts: Vec<i64>,
    tensors: Vec<i64>,
    outputs: Vec<*mut TF_Tensor>,
    result: Vec<i64>,
}

/// `Native.call`: dispatches on `facts` and runs the concrete function found on `tensors`.
/// Returns `[outputsKey, output addresses...]`, or null when the call must be traced first.
/// `count` counts a hit in the statistics (the retry after a call's own trace passes false).
pub fn call<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    handle: jlong,
    facts: JLongArray<'l>,
    fact_count: jint,
    tensors: JLongArray<'l>,
    tensor_count: jint,
    count: jboolean,
) -> Result<JLongArray<'l>> {
    let f = handles::function(env, handle)?;
    with_scratch(|s| {
        convert::longs_into(env, &facts, fact_count, &mut s.facts)?;
        if !count {
            let Some(concrete) = f.find::<TfError>(&s.facts)? else { return Ok(JLongArray::default()) };
            return execute(env, &concrete, &tensors, tensor_count, s);
        }
        // Taken out for the call so that the scratch buffers stay borrowable; put back after.
        let facts = std::mem::take(&mut s.facts);
        let result = f.lookup_with::<TfError, _>(&facts, |concrete| execute(env, concrete, &tensors, tensor_count, s));
        s.facts = facts;
        result?.unwrap_or_else(|| Ok(JLongArray::default()))
    })
}

/// `Native.callTraced`: runs the concrete function that trace `trace` just produced, on `tensors`
/// (the call that traced it needs no second lookup, which a concurrent `clearCache` could fail).
pub fn call_traced<'l>(
    env: &mut Env<'l>,
    _class: JClass<'l>,
    trace: jlong,
    tensors: JLongArray<'l>,
    tensor_count: jint,
) -> Result<JLongArray<'l>> {
    let trace = handles::trace(env, trace)?;
    let concrete = trace
        .traced
        .clone()
        .ok_or_else(|| NativeError::IllegalState("the trace has not produced a concrete function".into()))?;
    with_scratch(|s| execute(env, &concrete, &tensors, tensor_count, s))
}

/// Executes `concrete` on the first `tensor_count` addresses of `tensors` and packs the result.
fn execute<'l>(
    env: &mut Env<'l>,
    concrete: &ConcreteFn,
    tensors: &JLongArray<'l>,
    tensor_count: jint,
    s: &mut Scratch,
) -> Result<JLongArray<'l>> {
    convert::longs_into(env, tensors, tensor_count, &mut s.tensors)?;
    // SAFETY: i64 and *mut TF_Tensor have the same size; Java passed live TF_Tensor addresses and
    // holds a reference to each buffer until this call returns.
    let inputs: &[*mut TF_Tensor] = unsafe { std::slice::from_raw_parts(s.tensors.as_ptr().cast(), s.tensors.len()) };
    s.outputs.clear();
    // SAFETY: as above; the concrete function is alive (we hold an Arc to it).
    unsafe { concrete.inner.function.call(inputs, &mut s.outputs) }?;
    s.result.clear();
    s.result.push(concrete.inner.outputs_key as i64);
    s.result.extend(s.outputs.iter().map(|&t| t as i64));
    match convert::new_longs(env, &s.result) {
        Ok(array) => Ok(array),
        Err(e) => {
            let (rt, _) = runtime()?;
            for &t in &s.outputs {
                // SAFETY: the outputs were never handed to Java, so they are ours to delete.
                unsafe { (rt.api().TF_DeleteTensor)(t) };
            }
            Err(e)
        }
    }
}

/// `Native.find`: the id of the cached concrete function that accepts `facts`, or -1
/// (introspection: not counted as a call).
pub fn find<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong, facts: JLongArray<'l>, fact_count: jint) -> Result<jint> {
    let mut buf = Vec::new();
    convert::longs_into(env, &facts, fact_count, &mut buf)?;
    Ok(handles::function(env, handle)?.find::<TfError>(&buf)?.map_or(-1, |c| c.id as jint))
}
