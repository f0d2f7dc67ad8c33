//! The eager context functions are registered in (TensorFlow Java's, or one a Rust tool owns).

use crate::c_api::TFE_Context;
use crate::op_cache::CachedOp;
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::sync::atomic::AtomicUsize;

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
        // SAFETY: the context is live and, by the caller's contract, no longer used.
        unsafe { (rt.api().TFE_DeleteContext)(self.0) }
    }
}
