//! Checks the device each node of a `FunctionDef` from outside (a SavedModel, a cache file) asks
//! for. TensorFlow reads a node's device only when it places the function, at its first call: a
//! definition asking for a device string TensorFlow cannot read would register, then fail every
//! call ("Failed to parse explicit device specification"). Read here with TensorFlow's own parser
//! (the one an eager op's device goes through), it is refused at load with the node named.

use crate::c_api::{TFE_Op, TF_Status};
use crate::context::EagerContext;
use crate::function_def_proto::{nested, single};
use crate::runtime::Runtime;
use crate::status::Status;
use std::collections::HashSet;
use std::ffi::{c_char, c_void, CString};
use std::sync::OnceLock;

type SetDevice = unsafe extern "C" fn(*mut TFE_Op, *const c_char, *mut TF_Status);

fn set_device(rt: &Runtime) -> Option<SetDevice> {
    static API: OnceLock<Option<SetDevice>> = OnceLock::new();
    *API.get_or_init(|| {
        let sym = rt.optional_symbol(c"TFE_OpSetDevice")?;
        // SAFETY: the C function of that name, declared as in tensorflow/c/eager/c_api.h.
        Some(unsafe { std::mem::transmute::<*mut c_void, SetDevice>(sym) })
    })
}

/// Refuses a definition with a node whose device (NodeDef field 4) TensorFlow cannot read; the
/// error names the node and the device. Each distinct device is read once.
pub(crate) fn check_devices(rt: &Runtime, ctx: EagerContext, def: &[u8]) -> Result<(), String> {
    let mut seen: HashSet<&[u8]> = HashSet::new();
    // FunctionDef.node_def (3) is a NodeDef: name (1), device (4).
    for node in nested(def, &[3])? {
        let device = single(node, 4)?.unwrap_or_default();
        if device.is_empty() || !seen.insert(device) {
            continue;
        }
        let name = String::from_utf8_lossy(single(node, 1)?.unwrap_or_default()).into_owned();
        let shown = String::from_utf8_lossy(device);
        if !readable(rt, ctx, device) {
            return Err(format!("node {name:?} asks for device {shown:?}, which is no device specification TensorFlow can read"));
        }
    }
    Ok(())
}

/// Whether TensorFlow's device-name parser reads `device`; true when this runtime cannot tell
/// (then the call decides, as before).
fn readable(rt: &Runtime, ctx: EagerContext, device: &[u8]) -> bool {
    let Ok(text) = CString::new(device) else {
        return false; // a NUL inside: no device name has one
    };
    if std::str::from_utf8(device).is_err() {
        return false;
    }
    let Some(set_device) = set_device(rt) else {
        return true;
    };
    let api = rt.api();
    let status = Status::new(api);
    // SAFETY: a live context; the op is made, used and deleted here; the name is NUL-terminated.
    unsafe {
        let op = (api.TFE_NewOp)(ctx.0, c"NoOp".as_ptr(), status.raw());
        if op.is_null() || status.check("").is_err() {
            if !op.is_null() {
                (api.TFE_DeleteOp)(op);
            }
            return true;
        }
        set_device(op, text.as_ptr(), status.raw());
        let ok = status.check("").is_ok();
        (api.TFE_DeleteOp)(op);
        ok
    }
}
