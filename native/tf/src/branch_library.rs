//! Functions a traced graph's operations refer to by name (the branches of `If`/`While` built by
//! Polyfn's control flow) must be registered in the eager context for a call to instantiate them;
//! `TFE_ContextAddFunction` of the traced function adds only that function.

use crate::c_api::TF_Function;
use crate::runtime::Runtime;
use crate::status::Status;
use crate::context::EagerContext;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::OnceLock;

type FunctionName = unsafe extern "C" fn(*mut TF_Function) -> *const c_char;

/// `TF_FunctionName`, resolved on first use (the C API table lists only what every call needs).
fn function_name(rt: &Runtime) -> Result<FunctionName, crate::status::TfError> {
    static SYM: OnceLock<Option<usize>> = OnceLock::new();
    let sym = SYM.get_or_init(|| rt.optional_symbol(c"TF_FunctionName").map(|p| p as usize));
    match sym {
        // SAFETY: the symbol is the C function of that name, declared as in tensorflow/c/c_api.h.
        Some(p) => Ok(unsafe { std::mem::transmute::<*mut c_void, FunctionName>(*p as *mut c_void) }),
        None => Err(crate::status::TfError::new(
            crate::status::Code::Unimplemented,
            format!("the loaded TensorFlow {} has no TF_FunctionName: control flow cannot run", rt.version()),
        )),
    }
}

/// Registers each function of `library` that `ctx` does not have yet; returns the names added,
/// which the owner removes when it is dropped. A function already there (a nested call's callee
/// registered it) stays with its owner.
///
/// # Safety
/// `ctx` is live; every `library` pointer is a live function.
pub(crate) unsafe fn register_missing(
    rt: &Runtime,
    ctx: EagerContext,
    library: &[*mut TF_Function],
) -> Result<Vec<CString>, crate::status::TfError> {
    let api = rt.api();
    let status = Status::new(api);
    let mut added = Vec::new();
    if library.is_empty() {
        return Ok(added);
    }
    let name_of = function_name(rt)?;
    for &f in library {
        // SAFETY: live function (caller's contract); the name lives as long as the function.
        let name = unsafe { CStr::from_ptr(name_of(f)) }.to_owned();
        // SAFETY: live context, NUL-terminated name.
        if unsafe { (api.TFE_ContextHasFunction)(ctx.0, name.as_ptr()) } != 0 {
            continue;
        }
        // SAFETY: live context and function; the context copies the function.
        unsafe { (api.TFE_ContextAddFunction)(ctx.0, f, status.raw()) };
        if let Err(e) = status.check("registering a branch function in the eager context") {
            // SAFETY: removing what this call added, by name, from the live context.
            unsafe { remove(rt, ctx, &added) };
            return Err(e);
        }
        added.push(name);
    }
    Ok(added)
}

/// Removes the named functions from `ctx` (logging, not failing, if one is already gone).
///
/// # Safety
/// `ctx` is live.
pub(crate) unsafe fn remove(rt: &Runtime, ctx: EagerContext, names: &[CString]) {
    let api = rt.api();
    let status = Status::new(api);
    for n in names {
        // SAFETY: live context, NUL-terminated name.
        unsafe { (api.TFE_ContextRemoveFunction)(ctx.0, n.as_ptr(), status.raw()) };
        if let Err(e) = status.check("") {
            log::warn!("removing branch function {n:?} from the eager context: {e}");
        }
    }
}
