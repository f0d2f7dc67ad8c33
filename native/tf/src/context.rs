//! The eager context functions are registered in (TensorFlow Java's, or one a Rust tool owns).

use crate::c_api::TFE_Context;
use crate::op_cache::CachedOp;
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::AtomicUsize;
use std::sync::{Mutex, OnceLock};

/// Functions registered by [`crate::EagerFunction`] and not yet removed, process-wide (for leak
/// checks, and the kernel cache's purge threshold).
pub(crate) static LIVE_FUNCTIONS: AtomicUsize = AtomicUsize::new(0);

/// An eager context Polyfn registers functions in. Owned by TensorFlow Java (its default
/// `EagerSession`), or by the caller of [`EagerContext::new_owned`] in Rust-only tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EagerContext(pub *mut TFE_Context);

// SAFETY: TFE_Context is internally synchronized; TensorFlow executes ops on it from any thread.
unsafe impl Send for EagerContext {}
unsafe impl Sync for EagerContext {}

impl EagerContext {
    /// A new context owned by the caller (delete it with [`EagerContext::delete`]).
    pub fn new_owned(rt: &Runtime) -> Result<Self, TfError> {
        let api = rt.api();
        let status = Status::new(api);
        // SAFETY: plain C API calls with live arguments.
        unsafe {
            let opts = (api.TFE_NewContextOptions)();
            let ctx = (api.TFE_NewContext)(opts, status.raw());
            (api.TFE_DeleteContextOptions)(opts);
            status.check("TFE_NewContext")?;
            Ok(EagerContext(ctx))
        }
    }

    /// Deletes a context made by [`EagerContext::new_owned`].
    ///
    /// # Safety
    /// No function registered in it may be used afterwards.
    pub unsafe fn delete(self, rt: &Runtime) {
        CachedOp::forget_context(rt, self.0);
        lock_only_cpus().retain(|&(ctx, _)| ctx != self.0 as usize);
        // SAFETY: the context is live and, by the caller's contract, no longer used.
        unsafe { (rt.api().TFE_DeleteContext)(self.0) }
    }
}

/// Whether each live context has no device but CPUs, as first asked (a context's devices are
/// fixed when it is made); forgotten when Polyfn deletes the context.
static ONLY_CPUS: Mutex<Vec<(usize, bool)>> = Mutex::new(Vec::new());

fn lock_only_cpus() -> std::sync::MutexGuard<'static, Vec<(usize, bool)>> {
    // The list is whole after every push, so a panic elsewhere cannot leave it half-written.
    ONLY_CPUS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl EagerContext {
    /// Whether the context has no device but CPUs (false if they cannot be listed): what
    /// only matters on GPUs can then be skipped (see `call_options`), and a session, which
    /// makes its own devices, places a function where the context would.
    pub fn only_cpus(self, rt: &Runtime) -> bool {
        if let Some(&(_, known)) = lock_only_cpus().iter().find(|&&(ctx, _)| ctx == self.0 as usize) {
            return known;
        }
        // Listed outside the lock: TensorFlow's call may take its own locks.
        let only = self.device_types(rt).is_ok_and(|types| types.iter().all(|t| t == "CPU"));
        let mut known = lock_only_cpus();
        if !known.iter().any(|&(ctx, _)| ctx == self.0 as usize) {
            known.push((self.0 as usize, only));
        }
        only
    }

    /// The type of each of the context's devices ("CPU", "GPU"...).
    pub(crate) fn device_types(self, rt: &Runtime) -> Result<Vec<String>, TfError> {
        let api = device_api(rt)?;
        let status = Status::new(rt.api());
        // SAFETY: live context; the list is owned here and deleted once; the type strings belong
        // to the list and are copied before it is deleted.
        unsafe {
            let list = (api.list_devices)(self.0, status.raw());
            status.check("listing the eager context's devices")?;
            let mut types = Vec::new();
            for i in 0..(api.device_count)(list) {
                let ty = (api.device_type)(list, i, status.raw());
                if status.check("").is_err() || ty.is_null() {
                    types.push("?".to_owned());
                    continue;
                }
                types.push(CStr::from_ptr(ty).to_string_lossy().into_owned());
            }
            (api.delete_devices)(list);
            Ok(types)
        }
    }
}

type ListDevices = unsafe extern "C" fn(*mut TFE_Context, *mut crate::c_api::TF_Status) -> *mut c_void;
type DeviceListCount = unsafe extern "C" fn(*const c_void) -> c_int;
type DeviceListType = unsafe extern "C" fn(*const c_void, c_int, *mut crate::c_api::TF_Status) -> *const c_char;
type DeleteDeviceList = unsafe extern "C" fn(*mut c_void);

/// The C API functions that list a context's devices, resolved once (a TensorFlow without them
/// is treated as having other devices than CPUs).
struct DeviceApi {
    list_devices: ListDevices,
    device_count: DeviceListCount,
    device_type: DeviceListType,
    delete_devices: DeleteDeviceList,
}

fn device_api(rt: &Runtime) -> Result<&'static DeviceApi, TfError> {
    static API: OnceLock<Result<DeviceApi, String>> = OnceLock::new();
    API.get_or_init(|| {
        let sym = |name: &'static CStr| {
            rt.optional_symbol(name).ok_or_else(|| format!("the loaded TensorFlow has no {}", name.to_string_lossy()))
        };
        // SAFETY: each symbol is the C function of that name, declared as in tensorflow/c/c_api.h
        // and tensorflow/c/eager/c_api.h (a TF_DeviceList is opaque here).
        unsafe {
            Ok(DeviceApi {
                list_devices: std::mem::transmute::<*mut c_void, ListDevices>(sym(c"TFE_ContextListDevices")?),
                device_count: std::mem::transmute::<*mut c_void, DeviceListCount>(sym(c"TF_DeviceListCount")?),
                device_type: std::mem::transmute::<*mut c_void, DeviceListType>(sym(c"TF_DeviceListType")?),
                delete_devices: std::mem::transmute::<*mut c_void, DeleteDeviceList>(sym(c"TF_DeleteDeviceList")?),
            })
        }
    })
    .as_ref()
    .map_err(|why| TfError::new(Code::Unimplemented, why.clone()))
}
