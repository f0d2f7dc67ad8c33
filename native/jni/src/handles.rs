//! Rust objects that Java holds as `long` handles, and how a native call borrows them.
//!
//! A handle is the address of a `Box` made by a native method and freed by exactly one other
//! (`freeFunction`, `freeTrace`). Java keeps the owner reachable for the whole of every native
//! call that passes the handle (`Reference.reachabilityFence` after the call), and frees the box
//! only when the owner is unreachable. So a handle is valid for the duration of the call that
//! receives it, and the borrows below are tied to that call's JNI frame (`'local`): they cannot
//! outlive it.

use crate::errors::{NativeError, Result};
use crate::raw_env::RawEnv;
use jni::sys::jlong;
use jni::Env;
use polyfn_core::{Polymorphic, TraceSession};
use polyfn_tf::{CallOptions, EagerFunction};
use std::any::Any;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A concrete function as the JNI layer caches it: the TensorFlow function and the key under
/// which Java recorded its output names before the function was published (so a call that finds
/// it can always name its outputs).
pub struct Traced {
    pub function: EagerFunction,
    pub outputs_key: i32,
    /// Each output's static shape as the trace inferred it (`None` in it: an unknown rank, -1 an
    /// unknown dim), which a SavedModel's output signature carries; `None` for a restored
    /// definition, whose outputs' shapes were not recorded.
    pub output_shapes: Option<Vec<Option<Vec<i64>>>>,
}

/// A polymorphic function whose concrete functions are TensorFlow eager functions, and how
/// their calls run (set by Java right after creation, read when a concrete function is made).
pub struct Function {
    pub poly: Polymorphic<Traced>,
    call_options: AtomicU32,
}

impl Function {
    pub fn new(poly: Polymorphic<Traced>) -> Self {
        Function { poly, call_options: AtomicU32::new(CallFlags::DEFAULT) }
    }

    /// The options concrete functions made from now on are registered with.
    pub fn call_options(&self) -> CallOptions {
        CallFlags::decode(self.call_options.load(Ordering::Relaxed))
    }

    pub fn set_call_options(&self, flags: u32) {
        self.call_options.store(flags, Ordering::Relaxed);
    }
}

impl std::ops::Deref for Function {
    type Target = Polymorphic<Traced>;
    fn deref(&self) -> &Self::Target {
        &self.poly
    }
}

/// The bits of `Native.setCallOptions`' flags (`dev.polyfn.internal.CallPaths`).
pub struct CallFlags;

impl CallFlags {
    pub const FAST_PATH: u32 = 1;
    pub const GRAPPLER: u32 = 2;
    pub const JIT_COMPILE: u32 = 4;
    /// `CallOptions::eager_op_as_function`, from `dev.polyfn.eagerOpAsFunction`.
    pub const EAGER_OP_AS_FUNCTION: u32 = 8;
    /// The bits above this shift hold `CallOptions::session_after`.
    pub const SESSION_AFTER_SHIFT: u32 = 8;
    const DEFAULT: u32 = Self::FAST_PATH | Self::GRAPPLER | (polyfn_tf::PROMOTE_AFTER << Self::SESSION_AFTER_SHIFT);

    pub fn decode(flags: u32) -> CallOptions {
        CallOptions {
            fast_path: flags & Self::FAST_PATH != 0,
            eager_op_as_function: flags & Self::EAGER_OP_AS_FUNCTION != 0,
            grappler: flags & Self::GRAPPLER != 0,
            jit_compile: flags & Self::JIT_COMPILE != 0,
            session_after: flags >> Self::SESSION_AFTER_SHIFT,
        }
    }
}

/// One cached concrete function.
pub type ConcreteFn = polyfn_core::Concrete<Traced>;

/// A trace in progress: the session, the function it belongs to, and the concrete functions its
/// graph calls (nested calls), which the traced function keeps alive.
pub struct Trace {
    pub function: jlong,
    pub session: TraceSession,
    pub calls: Vec<Arc<dyn Any + Send + Sync>>,
    /// The concrete function this trace produced, once finished: the call that traced runs it
    /// directly, so a concurrent `clearCache` cannot take it away from that call.
    pub traced: Option<Arc<ConcreteFn>>,
    /// A trace of example inputs at definition: arguments are narrowed to the declarations.
    pub examples: bool,
    /// The slow-work threshold in nanoseconds when the trace began (negative: never slow); see
    /// `logging::slow_work`.
    pub slow_nanos: i64,
    /// The most verbose log level Java wanted when the trace began (see `logging::with_level`).
    pub log_level: i32,
}

/// Moves `value` to the heap and returns its address for Java to hold.
pub fn into_handle<T>(value: T) -> jlong {
    Box::into_raw(Box::new(value)) as jlong
}

/// Frees a handle made by [`into_handle`]. 0 is ignored.
///
/// # Safety
/// `handle` was made by `into_handle::<T>` and is freed once, when no call can still use it.
pub unsafe fn free_handle<T>(handle: jlong) {
    if handle != 0 {
        // SAFETY: the caller guarantees it is a live Box<T> freed only here.
        drop(unsafe { Box::from_raw(handle as *mut T) });
    }
}

/// Borrows the function behind `handle` for the current native call.
pub fn function<'local>(_frame: &Env<'local>, handle: jlong) -> Result<&'local Function> {
    // SAFETY: as `function_at`'s contract; the borrow is tied to the call's frame.
    unsafe { function_at(handle) }
}

/// [`function`], for the raw call path (see `raw_env`).
pub fn function_in(_frame: &RawEnv, handle: jlong) -> Result<&Function> {
    // SAFETY: as `function_at`'s contract; the borrow is tied to the call's env.
    unsafe { function_at(handle) }
}

/// # Safety
/// The returned borrow must not outlive the native call in progress.
unsafe fn function_at<'a>(handle: jlong) -> Result<&'a Function> {
    if handle == 0 {
        return Err(NativeError::IllegalState("null function handle".into()));
    }
    // SAFETY: a live Box<Function> made by newFunction; Java keeps its owner reachable until this
    // call returns (module docs), and the borrow cannot outlive the call's frame.
    Ok(unsafe { &*(handle as *const Function) })
}

/// Borrows the trace behind `handle` for the current native call, mutably: a trace belongs to the
/// one thread that runs the body, so no other call uses it at the same time.
pub fn trace<'local>(_frame: &Env<'local>, handle: jlong) -> Result<&'local mut Trace> {
    if handle == 0 {
        return Err(NativeError::IllegalState("null trace handle".into()));
    }
    // SAFETY: a live Box<Trace> made by beginTrace and used only by its tracing thread (module docs).
    Ok(unsafe { &mut *(handle as *mut Trace) })
}
