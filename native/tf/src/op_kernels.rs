//! Whether the loaded TensorFlow can run an op at all: some ops are registered (their definition
//! is known, so a function using them imports and registers) but have no kernel in this runtime.
//! `EagerPyFunc` and `PyFunc` (`tf.py_function`, `tf.numpy_function`) are the common case: their
//! kernels live in Python's TensorFlow, since they call back into Python. A SavedModel holding one
//! loads in any runtime and fails every call; checked at load, it is refused with the reason.

use crate::c_api::{TF_Buffer, TF_Status};
use crate::runtime::Runtime;
use crate::status::Status;
use std::collections::HashSet;
use std::ffi::{c_char, c_void, CString};
use std::sync::{Mutex, OnceLock};

type GetKernels = unsafe extern "C" fn(*const c_char, *mut TF_Status) -> *mut TF_Buffer;
type DeleteBuffer = unsafe extern "C" fn(*mut TF_Buffer);

/// Ops run without a kernel of their own: TensorFlow's function runtime calls the function they
/// name (`SymbolicGradient` differentiates a function and runs the result).
const RUN_WITHOUT_KERNEL: &[&str] = &["SymbolicGradient"];

struct KernelApi {
    get: GetKernels,
    delete: DeleteBuffer,
}

fn api(rt: &Runtime) -> Option<&'static KernelApi> {
    static API: OnceLock<Option<KernelApi>> = OnceLock::new();
    API.get_or_init(|| {
        let (get, delete) = (rt.optional_symbol(c"TF_GetRegisteredKernelsForOp")?, rt.optional_symbol(c"TF_DeleteBuffer")?);
        // SAFETY: the C functions of those names, declared as in tensorflow/c/c_api.h and
        // tensorflow/c/tf_buffer.h.
        unsafe {
            Some(KernelApi {
                get: std::mem::transmute::<*mut c_void, GetKernels>(get),
                delete: std::mem::transmute::<*mut c_void, DeleteBuffer>(delete),
            })
        }
    })
    .as_ref()
}

/// Ops found to have a kernel. Only positive answers are kept: a library loaded later
/// (`TF_LoadLibrary`) may add kernels, never remove them. Listing an op's kernels scans
/// TensorFlow's whole kernel registry, so each op is looked up once per process.
fn with_kernels() -> &'static Mutex<HashSet<String>> {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    SEEN.get_or_init(Default::default)
}

/// Whether TensorFlow has a kernel for `op` on some device (or the op needs none); true when
/// this runtime cannot tell (an older C API without the lookup).
pub(crate) fn has_kernel(rt: &Runtime, op: &str) -> bool {
    if RUN_WITHOUT_KERNEL.contains(&op) || with_kernels().lock().unwrap_or_else(|e| e.into_inner()).contains(op) {
        return true;
    }
    let (Some(api), Ok(name)) = (api(rt), CString::new(op)) else {
        return true;
    };
    let status = Status::new(rt.api());
    // SAFETY: a NUL-terminated name and a live status; the returned buffer is ours to delete,
    // and its length is read before that.
    let found = unsafe {
        let buf = (api.get)(name.as_ptr(), status.raw());
        let any = !buf.is_null() && !crate::c_api::buffer_bytes(buf).is_empty();
        if !buf.is_null() {
            (api.delete)(buf);
        }
        any
    };
    // KernelList.kernel (1) is repeated: an empty list serializes to no bytes at all.
    if status.check("").is_err() {
        return true; // the lookup failed: leave the answer to the call, as before
    }
    if found {
        with_kernels().lock().unwrap_or_else(|e| e.into_inner()).insert(op.to_owned());
    }
    found
}

/// Refuses a definition with a node whose op this runtime has no kernel for; `ops` are the
/// definition's (op type, node name) pairs. The message names the node and the op, and says why
/// for ops that run Python code.
pub(crate) fn check(rt: &Runtime, ops: &[(String, String)]) -> Result<(), String> {
    let mut checked = HashSet::new();
    for (op, node) in ops {
        if checked.insert(op.as_str()) && !has_kernel(rt, op) {
            let why = match op.as_str() {
                "EagerPyFunc" | "PyFunc" | "PyFuncStateless" => {
                    " (it calls back into Python, e.g. a tf.py_function or tf.numpy_function, which no SavedModel holds \
                     and only Python's TensorFlow can run)"
                }
                _ => " (a custom op's kernel library may need to be loaded first, with TensorFlow.loadLibrary)",
            };
            return Err(format!("node {node:?}: op {op} has no kernel in this TensorFlow runtime{why}"));
        }
    }
    Ok(())
}
