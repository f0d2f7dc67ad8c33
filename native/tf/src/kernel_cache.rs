//! Giving back the eager context's cached kernels of functions and variables that are gone.
//!
//! With the context's "run eager op as function" mode on (the opt-in eager caller-thread path,
//! `fast_path`), TensorFlow runs each primitive eager op as a call of a generated function named by the op
//! type, its list lengths and its device (`__wrapped__StatefulPartitionedCall_Tin_1_Tout_1_device_
//! /job:localhost/replica:0/task:0/device:CPU:0`), and caches one instantiated kernel per
//! distinct set of attributes. A Polyfn function's `StatefulPartitionedCall` names the function
//! in its `f` attribute, so every concrete function ever called leaves a kernel there (its
//! instantiated, optimized graph: about 45 KB), which removing the function itself does not
//! drop: the kernel is filed under the wrapper's name. (TensorFlow Java's own eager ops do the
//! same, e.g. one `Const` kernel per distinct constant; those wrappers are never purged here:
//! TensorFlow Java's ops cannot be retried, and a user's `tf.constant` on another thread failed
//! when a purge met it.)
//!
//! TensorFlow drops a function's cached kernels when the function is removed from the context,
//! and the wrapper is re-added by the next op that needs it. So dropped functions and closed
//! variables are counted here per wrapper name, and once as many are stale as [`threshold`]
//! allows (at least [`MIN_STALE`], and at least as many as there are live functions, so the live
//! ones' kernels, dropped with the stale ones and rebuilt on their next call, cost at most one
//! rebuild per stale kernel over time), the wrapper is removed ("purged").
//!
//! A purge must not overlap a call that may build a kernel under the wrapper: TensorFlow reads
//! the wrapper's definition while it builds the kernel, and one removed meanwhile crashed the
//! process (a null `OpDef` in `GetOrCreateKernelAndDevice`, 8 threads defining, calling and
//! closing functions). So every call on that path holds `calls_guard` (a shared lock; purges
//! take it exclusively, and are rare). Only the wrappers of Polyfn's own calls
//! (`StatefulPartitionedCall` with Polyfn's input and output counts) are purged; a TensorFlow Java
//! program that runs its own `StatefulPartitionedCall` eagerly with the same counts, on another
//! thread, at the moment of a purge, is not covered by the lock: that path is opt-in
//! (`CallOptions::eager_op_as_function`) for this reason too.

use crate::context::EagerContext;
use crate::runtime::Runtime;
use crate::status::Status;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock, RwLock, RwLockReadGuard};

/// Stale kernels of one wrapper before it may be purged, whatever the number of live functions.
pub const MIN_STALE: usize = 64;


/// Stale kernels counted per (context, wrapper name).
fn stale() -> &'static Mutex<HashMap<(usize, String), usize>> {
    static STALE: OnceLock<Mutex<HashMap<(usize, String), usize>>> = OnceLock::new();
    STALE.get_or_init(Default::default)
}

/// Held for writing by a purge, for reading by a call retried after one.
fn purging() -> &'static RwLock<()> {
    static PURGING: RwLock<()> = RwLock::new(());
    &PURGING
}

/// How many stale kernels a wrapper may collect before it is purged.
pub fn threshold() -> usize {
    MIN_STALE.max(crate::context::LIVE_FUNCTIONS.load(Ordering::Relaxed))
}

/// The wrapper name TensorFlow gives `op_type` on `device`, with its list attributes' lengths
/// (sorted by name, as TensorFlow's `BuildWrappedOpName` writes them).
fn wrapper_name(op_type: &str, lists: &[(&str, usize)], device: &str) -> String {
    let mut name = format!("__wrapped__{}", op_type.replace('_', "__"));
    let mut lists = lists.to_vec();
    lists.sort();
    for (attr, len) in lists {
        name.push_str(&format!("_{attr}_{len}"));
    }
    name.push_str("_device_");
    name.push_str(device);
    name
}

type ListDevices = unsafe extern "C" fn(*mut crate::c_api::TFE_Context, *mut crate::c_api::TF_Status) -> *mut c_void;
type DeviceCount = unsafe extern "C" fn(*const c_void) -> c_int;
type DeviceName = unsafe extern "C" fn(*const c_void, c_int, *mut crate::c_api::TF_Status) -> *const c_char;
type DeleteDevices = unsafe extern "C" fn(*mut c_void);

/// The names of `ctx`'s devices (empty if the runtime cannot list them: nothing is purged then).
fn devices(rt: &Runtime, ctx: EagerContext) -> Vec<String> {
    let (Some(list), Some(count), Some(name), Some(delete)) = (
        rt.optional_symbol(c"TFE_ContextListDevices"),
        rt.optional_symbol(c"TF_DeviceListCount"),
        rt.optional_symbol(c"TF_DeviceListName"),
        rt.optional_symbol(c"TF_DeleteDeviceList"),
    ) else {
        return Vec::new();
    };
    let status = Status::new(rt.api());
    let mut out = Vec::new();
    // SAFETY: the symbols are the C functions of those names (tensorflow/c/eager/c_api.h,
    // tensorflow/c/c_api.h); the list is owned here and deleted once; names are copied first.
    unsafe {
        let (list, count, name, delete) = (
            std::mem::transmute::<*mut c_void, ListDevices>(list),
            std::mem::transmute::<*mut c_void, DeviceCount>(count),
            std::mem::transmute::<*mut c_void, DeviceName>(name),
            std::mem::transmute::<*mut c_void, DeleteDevices>(delete),
        );
        let devices = list(ctx.0, status.raw());
        if status.check("").is_err() || devices.is_null() {
            return out;
        }
        for i in 0..count(devices) {
            let n = name(devices, i, status.raw());
            if status.check("").is_ok() && !n.is_null() {
                out.push(std::ffi::CStr::from_ptr(n).to_string_lossy().into_owned());
            }
        }
        delete(devices);
    }
    out
}

/// The context's device names, listed once per context.
fn context_devices(rt: &Runtime, ctx: EagerContext) -> Vec<String> {
    static BY_CONTEXT: OnceLock<Mutex<HashMap<usize, Vec<String>>>> = OnceLock::new();
    let map = BY_CONTEXT.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(ctx.0 as usize).or_insert_with(|| devices(rt, ctx)).clone()
}

/// Counts `n` stale kernels of `op_type` (with these list lengths) on every device of `ctx`, and
/// purges the wrappers that reached the threshold.
pub(crate) fn note(rt: &Runtime, ctx: EagerContext, op_type: &str, lists: &[(&str, usize)], n: usize) {
    let limit = threshold();
    let mut due = Vec::new();
    {
        let mut counts = stale().lock().unwrap_or_else(|e| e.into_inner());
        for device in context_devices(rt, ctx) {
            let key = (ctx.0 as usize, wrapper_name(op_type, lists, &device));
            let count = counts.entry(key.clone()).or_insert(0);
            *count += n;
            if *count >= limit {
                counts.remove(&key);
                due.push(key.1);
            }
        }
    }
    for name in due {
        purge(rt, ctx, &name);
    }
}

/// Removes the wrapper `name` from `ctx` if it is there, and with it every kernel cached under it.
fn purge(rt: &Runtime, ctx: EagerContext, name: &str) {
    let Ok(c) = CString::new(name) else { return };
    let api = rt.api();
    let failed = {
        let _exclusive = purging().write().unwrap_or_else(|e| e.into_inner());
        // SAFETY: live context, NUL-terminated name.
        if unsafe { (api.TFE_ContextHasFunction)(ctx.0, c.as_ptr()) } == 0 {
            return;
        }
        let status = Status::new(api);
        // SAFETY: as above. Kernels in use keep their own reference and finish.
        unsafe { (api.TFE_ContextRemoveFunction)(ctx.0, c.as_ptr(), status.raw()) };
        status.check("").err()
    };
    // Logged after the lock is released: a log handler is user code, which may close a function
    // or variable and so start another purge on this thread.
    match failed {
        None => log::debug!("purged the eager kernels cached under {name}"),
        Some(e) => log::debug!("purging the eager kernels of {name}: {e}"),
    }
}

/// Keeps purges out while held.
pub(crate) fn calls_guard() -> RwLockReadGuard<'static, ()> {
    purging().read().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::wrapper_name;

    #[test]
    fn wrapper_names_follow_tensorflow() {
        assert_eq!(
            wrapper_name("StatefulPartitionedCall", &[("Tout", 2), ("Tin", 1)], "/job:localhost/replica:0/task:0/device:CPU:0"),
            "__wrapped__StatefulPartitionedCall_Tin_1_Tout_2_device_/job:localhost/replica:0/task:0/device:CPU:0"
        );
        assert_eq!(wrapper_name("Var_Op", &[], "d"), "__wrapped__Var__Op_device_d");
    }
}
