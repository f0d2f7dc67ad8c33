//! One `TFE_Op` kept per thread between calls, as TensorFlow's Python fast path does.
//!
//! Resetting an op to a function name (`TFE_OpReset`, also what `TFE_NewOp` does) looks the name
//! up in the op registry first; a function is not an op, so every call pays a registry miss that
//! builds a `NotFound` status with the host name (a `uname` system call) and takes the registry's
//! global lock, only to conclude "function". When the cached op already calls the same function,
//! only its inputs need clearing. The C API has no call for that, but TensorFlow's
//! `EagerOperation::Clear` (the first half of `TFE_OpReset`) is an exported symbol: when it is
//! present and the op is exactly an `EagerOperation`, the op is cleared after each call and
//! reused as is by the next call of the same function. Anything else takes `TFE_OpReset`.
//!
//! Skipping the reset keeps everything `Reset` would set to the same value anyway: the name,
//! the attributes (a function call sets none), the device (`Reset` keeps the device the last
//! execution picked unless the requested device name changes; Polyfn requests none), the
//! executor (per thread, and the op is per thread).

use crate::c_api::{TFE_Context, TFE_Op};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// `tensorflow::EagerOperation::Clear()`: unrefs and drops the op's inputs.
type ClearFn = unsafe extern "C" fn(op: *mut TFE_Op);

/// How to clear an op without resetting it, if this runtime allows it.
struct Clearing {
    clear: ClearFn,
    /// The virtual table pointer an `EagerOperation` object starts with.
    vptr: usize,
}

/// Whether ops are cleared and reused without a reset (on by default, where supported).
static REUSE: AtomicBool = AtomicBool::new(true);

fn clearing(rt: &Runtime) -> Option<&'static Clearing> {
    static CLEARING: OnceLock<Option<Clearing>> = OnceLock::new();
    CLEARING
        .get_or_init(|| {
            let clear = rt.optional_symbol(c"_ZN10tensorflow14EagerOperation5ClearEv")?;
            let vtable = rt.optional_symbol(c"_ZTVN10tensorflow14EagerOperationE")?;
            // SAFETY: the symbol is `void tensorflow::EagerOperation::Clear()`; under the
            // Itanium C++ ABI a non-static member function taking no argument is called as a C
            // function taking `this`.
            let clear = unsafe { std::mem::transmute::<*mut c_void, ClearFn>(clear) };
            // An object's vptr points past the vtable's offset-to-top and RTTI entries.
            Some(Clearing { clear, vptr: vtable as usize + 2 * std::mem::size_of::<usize>() })
        })
        .as_ref()
}

/// Turns op reuse without reset on or off for the process (for measuring and comparing both
/// paths; both give the same results).
pub fn set_op_reuse(enabled: bool) {
    REUSE.store(enabled, Ordering::Relaxed);
}

/// Whether calls on this runtime clear and reuse their op instead of resetting it.
pub fn op_reuse_active(rt: &Runtime) -> bool {
    REUSE.load(Ordering::Relaxed) && clearing(rt).is_some()
}

/// This thread's cached op: its context, the op, and the function it was last set to call and
/// has been cleared for (0: none; the op must be reset before use).
#[derive(Clone, Copy)]
struct Slot {
    ctx: *mut TFE_Context,
    op: *mut TFE_Op,
    ready_for: u64,
}

const EMPTY: Slot = Slot { ctx: ptr::null_mut(), op: ptr::null_mut(), ready_for: 0 };

thread_local! {
    /// The op calling functions by name.
    static OP: std::cell::Cell<Slot> = const { std::cell::Cell::new(EMPTY) };
    /// The `StatefulPartitionedCall` op of the caller-thread path (kept apart: resetting it to
    /// that registered op type is cheap, to a function name is not).
    static CALL_OP: std::cell::Cell<Slot> = const { std::cell::Cell::new(EMPTY) };
}

/// An op taken from this thread's cache (or new) for one call; give it back with
/// [`CachedOp::give_back`].
pub(crate) struct CachedOp {
    rt: &'static Runtime,
    ctx: *mut TFE_Context,
    pub(crate) raw: *mut TFE_Op,
    /// A `StatefulPartitionedCall` op (cached in its own slot) rather than a call by name.
    fast: bool,
}

impl CachedOp {
    /// An op with no inputs set to call `function` (its name, `function_id` its id) in `ctx`:
    /// by name, or as the `StatefulPartitionedCall` of the caller-thread path (`fast`, cached
    /// in its own slot). The flag says whether the op is new or was reset, and so needs the
    /// call's attributes set; an op kept ready for this function has them still.
    ///
    /// # Safety
    /// `ctx` must be live.
    pub(crate) unsafe fn take(
        rt: &'static Runtime,
        ctx: *mut TFE_Context,
        function: &CStr,
        function_id: u64,
        fast: bool,
        status: &Status<'_>,
    ) -> Result<(Self, bool), TfError> {
        let api = rt.api();
        let slot = if fast { &CALL_OP } else { &OP };
        let op_type: &CStr = if fast { c"StatefulPartitionedCall" } else { function };
        let cached = slot.with(|c| c.replace(EMPTY));
        let mut raw = ptr::null_mut();
        if !cached.op.is_null() {
            if cached.ctx == ctx {
                if cached.ready_for == function_id {
                    return Ok((CachedOp { rt, ctx, raw: cached.op, fast }, false));
                }
                // SAFETY: the cached op is owned here and belongs to the live ctx.
                unsafe { (api.TFE_OpReset)(cached.op, op_type.as_ptr(), ptr::null(), status.raw()) };
                if status.check("").is_ok() {
                    raw = cached.op;
                }
            }
            if raw.is_null() {
                // SAFETY: owned here; an op of another context is deleted before that context
                // is (EagerContext::delete forgets it), so its context is still live.
                unsafe { (api.TFE_DeleteOp)(cached.op) };
            }
        }
        if raw.is_null() {
            // SAFETY: live context, NUL-terminated name.
            raw = unsafe { (api.TFE_NewOp)(ctx, op_type.as_ptr(), status.raw()) };
            status.check("creating the function call")?;
        }
        Ok((CachedOp { rt, ctx, raw, fast }, true))
    }

    /// Caches the op for this thread's next call if it executed cleanly (`reusable`), else
    /// deletes it. A reusable op is cleared now where the runtime allows it, so it holds no
    /// input between calls and the next call of `function_id` needs no reset.
    pub(crate) fn give_back(self, reusable: bool, function_id: u64) {
        let api = self.rt.api();
        let (ctx, raw, rt, slot) = (self.ctx, self.raw, self.rt, if self.fast { &CALL_OP } else { &OP });
        std::mem::forget(self);
        if !reusable {
            // SAFETY: the op is owned here.
            unsafe { (api.TFE_DeleteOp)(raw) };
            return;
        }
        let mut ready_for = 0;
        if REUSE.load(Ordering::Relaxed) {
            if let Some(c) = clearing(rt) {
                // SAFETY: a TFE_Op is a pointer to a polymorphic C++ object (TensorFlow's
                // ImmediateExecutionOperation), whose first word is its vptr under the Itanium
                // ABI; reading it is reading memory of a live object we own.
                let vptr = unsafe { *(raw as *const usize) };
                if vptr == c.vptr {
                    // SAFETY: the op is exactly an EagerOperation (its vptr is that class's),
                    // owned here and not executing; Clear only drops its inputs.
                    unsafe { (c.clear)(raw) };
                    ready_for = function_id;
                }
            }
        }
        let previous = slot.with(|c| c.replace(Slot { ctx, op: raw, ready_for }));
        if !previous.op.is_null() {
            // SAFETY: owned by the cache, replaced just now.
            unsafe { (api.TFE_DeleteOp)(previous.op) };
        }
    }

    /// Deletes this thread's cached op if it belongs to `ctx` (before `ctx` is deleted).
    pub(crate) fn forget_context(rt: &Runtime, ctx: *mut TFE_Context) {
        for slot in [&OP, &CALL_OP] {
            let cached = slot.with(|c| c.get());
            if cached.ctx == ctx && !cached.op.is_null() {
                slot.with(|c| c.set(EMPTY));
                // SAFETY: owned by the cache, its context still alive.
                unsafe { (rt.api().TFE_DeleteOp)(cached.op) };
            }
        }
    }
}

impl Drop for CachedOp {
    fn drop(&mut self) {
        // SAFETY: owned; reached only on unwinding paths.
        unsafe { (self.rt.api().TFE_DeleteOp)(self.raw) }
    }
}
