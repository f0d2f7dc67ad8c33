//! The call path: one native call per Polyfn call. Java hands over the call's type facts and its
//! argument tensors; Rust dispatches, executes and returns the output tensors.

use crate::convert;
use crate::errors::{NativeError, Result, ThrowJava};
use crate::handles::{self, ConcreteFn, Function};
use crate::logging;
use crate::raw_env::RawEnv;
use jni::objects::{JClass, JLongArray};
use jni::sys::{jint, jlong};
use jni::{Env, EnvUnowned};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use polyfn_tf::c_api::TF_Tensor;
use polyfn_tf::TfError;
use polyfn_core::polymorphic::duration_text;
use std::cell::RefCell;
use std::time::Instant;

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
/// Returns `[head, output addresses..., output descriptions...]` (head: the outputs key and how
/// many addresses follow; each description a dtype, rank and dims: see
/// `wire::RESULT_COUNT_SHIFT`) in `result` (the caller's reused array) or in a new array if it is
/// too short, or null when the call must be traced first.
///
/// The one raw entry point (see [`RawEnv`]): a cached call is measured in microseconds, and
/// jni-rs's per-call bookkeeping was a tenth of it. Errors and panics are thrown by `ThrowJava`
/// as for every other method.
#[allow(clippy::too_many_arguments)] // the Java method's parameters, as JNI passes them
pub fn call<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    facts: JLongArray<'l>,
    fact_count: jint,
    tensors: JLongArray<'l>,
    tensor_count: jint,
    result: JLongArray<'l>,
) -> JLongArray<'l> {
    // SAFETY: this native call's env, on entry: no exception is pending.
    let raw = unsafe { RawEnv::new(env.as_raw()) };
    let outcome = catch_unwind(AssertUnwindSafe(|| cached_call(&raw, handle, &facts, fact_count, &tensors, tensor_count, result)));
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => env.with_env(|_| Err::<JLongArray<'l>, _>(e)).resolve::<ThrowJava>(),
        // Re-raised inside jni-rs's wrapper, whose policy turns it into an exception.
        Err(panic) => env.with_env(|_| -> Result<JLongArray<'l>> { resume_unwind(panic) }).resolve::<ThrowJava>(),
    }
}

fn cached_call<'l>(
    env: &RawEnv,
    handle: jlong,
    facts: &JLongArray<'l>,
    fact_count: jint,
    tensors: &JLongArray<'l>,
    tensor_count: jint,
    result: JLongArray<'l>,
) -> Result<JLongArray<'l>> {
    with_scratch(|s| {
        env.longs_into(facts, fact_count, "facts", &mut s.facts)?;
        let f = handles::function_in(env, handle)?;
        // Taken out for the call so that the scratch buffers stay borrowable; put back after.
        let facts = std::mem::take(&mut s.facts);
        let found = f.lookup_with::<TfError, _>(&facts, |concrete| execute(env, f, concrete, tensors, tensor_count, s, result, None));
        s.facts = facts;
        found?.unwrap_or_else(|| Ok(JLongArray::default()))
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
    let f = handles::function(env, trace.function)?;
    let concrete = trace
        .traced
        .clone()
        .ok_or_else(|| NativeError::IllegalState("the trace has not produced a concrete function".into()))?;
    // SAFETY: this native call's env; jni-rs leaves no exception pending between its calls.
    let raw = unsafe { RawEnv::new(env.get_raw()) };
    let slow = Some(trace.slow_nanos);
    with_scratch(|s| execute(&raw, f, &concrete, &tensors, tensor_count, s, JLongArray::default(), slow))
}

/// Executes `concrete` (of `f`) on the first `tensor_count` addresses of `tensors` and packs the
/// result into `into` (or a new array: see `RawEnv::write_longs`). The first run is timed, and
/// logged if slower than `slow` (the threshold its trace read; `None` asks Java, see
/// `logging::slow_work`).
#[allow(clippy::too_many_arguments)]
fn execute<'l>(
    env: &RawEnv,
    f: &Function,
    concrete: &ConcreteFn,
    tensors: &JLongArray<'l>,
    tensor_count: jint,
    s: &mut Scratch,
    into: JLongArray<'l>,
    slow: Option<i64>,
) -> Result<JLongArray<'l>> {
    env.longs_into(tensors, tensor_count, "tensors", &mut s.tensors)?;
    let rt = concrete.inner.function.runtime();
    // SAFETY: i64 and *mut TF_Tensor have the same size; Java passed live TF_Tensor addresses and
    // holds a reference to each buffer until this call returns.
    let inputs: &[*mut TF_Tensor] = unsafe { std::slice::from_raw_parts(s.tensors.as_ptr().cast(), s.tensors.len()) };
    s.outputs.clear();
    // TensorFlow prepares a function in its first run: the one call that claims it is timed,
    // every later one pays this load and branch only.
    let first_run = concrete.first_run.claim().then(Instant::now);
    // SAFETY: as above; the concrete function is alive (we hold an Arc to it).
    let ran = unsafe { concrete.inner.function.call(inputs, &mut s.outputs) };
    if let Some(started) = first_run {
        first_run_finished(f, concrete, started.elapsed().as_nanos() as u64, ran.is_ok(), slow);
    }
    ran?;
    s.result.clear();
    // The head says how many addresses follow: Java reads no further (the array is reused, and
    // its tail holds addresses of earlier calls).
    let count = s.outputs.len() as i64;
    s.result.push((count << polyfn_core::wire::RESULT_COUNT_SHIFT) | i64::from(concrete.inner.outputs_key as u32));
    s.result.extend(s.outputs.iter().map(|&t| t as i64));
    for &t in &s.outputs {
        // SAFETY: the outputs are live tensors this call owns until Java adopts them.
        unsafe { polyfn_tf::tensor::describe_into(rt, t, &mut s.result) };
    }
    match env.write_longs(into, &s.result) {
        Ok(array) => Ok(array),
        Err(e) => {
            for &t in &s.outputs {
                // SAFETY: the outputs were never handed to Java, so they are ours to delete.
                unsafe { polyfn_tf::tensor::delete(rt, t) };
            }
            Err(e)
        }
    }
}

/// Records the first run of `concrete` and logs it when it took longer than the threshold, with
/// what Polyfn's preparation took before it. No lock is held: the logger is user code.
#[cold]
fn first_run_finished(f: &Function, concrete: &ConcreteFn, nanos: u64, succeeded: bool, slow: Option<i64>) {
    if !f.first_run_finished(concrete, nanos, succeeded) {
        return;
    }
    logging::slow_work(nanos, slow, || {
        let p = &concrete.preparation;
        format!(
            "function '{}': first run of {} {} took {} (TensorFlow's preparation: instantiation, Grappler, XLA if \
             enabled, kernels; and the run); prepared before in {}: {}",
            f.name(),
            concrete.inner.function.name(),
            concrete.function_type,
            duration_text(nanos),
            duration_text(p.total_nanos()),
            p.phases()
        )
    });
}

/// `Native.recordFirstCall`: records the first call's facts in the profile (typed only once its
/// trace has fixed the parameter list).
pub fn record_first_call<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong, facts: JLongArray<'l>, fact_count: jint) -> Result<()> {
    let mut buf = Vec::new();
    convert::longs_into(env, &facts, fact_count, &mut buf)?;
    handles::function(env, handle)?.record_first_call::<TfError>(&buf)?;
    Ok(())
}

/// `Native.find`: the id of the cached concrete function that accepts `facts`, or -1
/// (introspection: not counted as a call).
pub fn find<'l>(env: &mut Env<'l>, _class: JClass<'l>, handle: jlong, facts: JLongArray<'l>, fact_count: jint) -> Result<jint> {
    let mut buf = Vec::new();
    convert::longs_into(env, &facts, fact_count, &mut buf)?;
    Ok(handles::function(env, handle)?.find::<TfError>(&buf)?.map_or(-1, |c| c.id as jint))
}
