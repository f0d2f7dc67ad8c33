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
//! the attributes (a call sets the same ones every time for one key: its `config_proto`, and its
//! `executor_type` where the key says so), the device (`Reset` keeps the device the last
//! execution picked unless the requested device name changes; Polyfn requests none), the
//! executor (per thread, and the op is per thread).

use crate::c_api::{TFE_Context, TFE_Op};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
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

/// This thread's cached op: its runtime and context, the op, the function it was last set to
/// call and has been cleared for (always a function: an op that could not be cleared is not
/// kept, so it holds no input between calls), and how many contexts had been deleted when it was
/// kept (see [`CONTEXTS_DELETED`]).
#[derive(Clone, Copy)]
struct Slot {
    rt: Option<&'static Runtime>,
    ctx: *mut TFE_Context,
    op: *mut TFE_Op,
    ready_for: u64,
    deleted_before: u64,
}

const EMPTY: Slot = Slot { rt: None, ctx: ptr::null_mut(), op: ptr::null_mut(), ready_for: 0, deleted_before: 0 };

/// Contexts deleted so far in the process. A context deletion forgets only the deleting thread's
/// op; another thread's op of that context must never be touched again (its context is gone, and
/// a new context may reuse its address), so an op kept before any deletion since is left alone.
static CONTEXTS_DELETED: AtomicU64 = AtomicU64::new(0);

impl Slot {
    /// Whether no context was deleted since this op was kept: its context is still live.
    fn context_live(&self) -> bool {
        self.deleted_before == CONTEXTS_DELETED.load(Ordering::Acquire)
    }
}

/// Ops made here and not yet deleted, in every thread (cached or in a call): made and deleted
/// off the cached path, so counting them costs a call that reuses its op nothing.
static LIVE_OPS: AtomicI64 = AtomicI64::new(0);

/// How many call ops exist now (cached per thread or in use), for tests of what threads leave.
pub fn live_call_ops() -> i64 {
    LIVE_OPS.load(Ordering::Relaxed)
}

/// Deletes an op made here.
///
/// # Safety
/// `op` is owned by the caller and its context is live.
unsafe fn delete_op(rt: &Runtime, op: *mut TFE_Op) {
    LIVE_OPS.fetch_sub(1, Ordering::Relaxed);
    // SAFETY: the caller's contract.
    unsafe { (rt.api().TFE_DeleteOp)(op) }
}

/// A thread's slot, whose op is deleted when the thread ends (threads of a pool that shrinks,
/// short-lived callers), while its context is still live.
struct SlotCell(std::cell::Cell<Slot>);

impl Drop for SlotCell {
    fn drop(&mut self) {
        let slot = self.0.get();
        if let (Some(rt), false) = (slot.rt, slot.op.is_null()) {
            if slot.context_live() {
                // SAFETY: owned by the cache; its context is live (no deletion since it was kept).
                unsafe { delete_op(rt, slot.op) };
            }
        }
    }
}

thread_local! {
    /// The op calling functions by name.
    static OP: SlotCell = const { SlotCell(std::cell::Cell::new(EMPTY)) };
    /// The `StatefulPartitionedCall` op of the caller-thread path (kept apart: resetting it to
    /// that registered op type is cheap, to a function name is not).
    static CALL_OP: SlotCell = const { SlotCell(std::cell::Cell::new(EMPTY)) };
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
        // An op left over from before a context was deleted is never touched (leaked): its
        // context may be gone, and `ctx` may be a new context at the same address.
        let cached = slot.try_with(|c| c.0.replace(EMPTY)).unwrap_or(EMPTY);
        let cached = if cached.context_live() { cached } else { EMPTY };
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
                unsafe { delete_op(rt, cached.op) };
            }
        }
        if raw.is_null() {
            // SAFETY: live context, NUL-terminated name.
            raw = unsafe { (api.TFE_NewOp)(ctx, op_type.as_ptr(), status.raw()) };
            status.check("creating the function call")?;
            LIVE_OPS.fetch_add(1, Ordering::Relaxed);
        }
        Ok((CachedOp { rt, ctx, raw, fast }, true))
    }

    /// Caches the op for this thread's next call if it executed cleanly (`reusable`) and can be
    /// cleared (where the runtime allows it), so it holds no input between calls and the next
    /// call of `function_id` needs no reset; else deletes it.
    pub(crate) fn give_back(self, reusable: bool, function_id: u64) {
        let (ctx, raw, rt, slot) = (self.ctx, self.raw, self.rt, if self.fast { &CALL_OP } else { &OP });
        std::mem::forget(self);
        if !reusable {
            // SAFETY: the op is owned here.
            unsafe { delete_op(rt, raw) };
            return;
        }
        let mut cleared = false;
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
                    cleared = true;
                }
            }
        }
        // An op that could not be cleared still holds this call's inputs (and their memory,
        // however large) until a reset: deleted now rather than kept until the thread's next call.
        let kept = Slot { rt: Some(rt), ctx, op: raw, ready_for: function_id, deleted_before: CONTEXTS_DELETED.load(Ordering::Acquire) };
        let previous = if cleared { slot.try_with(|c| c.0.replace(kept)).ok() } else { None };
        match previous {
            Some(previous) if !previous.op.is_null() && previous.context_live() => {
                // SAFETY: owned by the cache, replaced just now; its context is live.
                unsafe { delete_op(rt, previous.op) };
            }
            Some(_) => {}
            None => {
                // Not cleared, or the thread is ending (its slot destroyed): not kept.
                // SAFETY: owned here.
                unsafe { delete_op(rt, raw) }
            }
        }
    }

    /// Deletes this thread's cached op if it belongs to `ctx` (before `ctx` is deleted).
    pub(crate) fn forget_context(rt: &Runtime, ctx: *mut TFE_Context) {
        for slot in [&OP, &CALL_OP] {
            let Ok(cached) = slot.try_with(|c| c.0.get()) else { continue };
            if cached.ctx == ctx && !cached.op.is_null() && cached.context_live() {
                let _ = slot.try_with(|c| c.0.set(EMPTY));
                // SAFETY: owned by the cache, its context still alive.
                unsafe { delete_op(rt, cached.op) };
            }
        }
        // Other threads' ops of this context are left alone from now on.
        CONTEXTS_DELETED.fetch_add(1, Ordering::AcqRel);
    }
}

impl Drop for CachedOp {
    fn drop(&mut self) {
        // SAFETY: owned; reached only on unwinding paths.
        unsafe { delete_op(self.rt, self.raw) }
    }
}
