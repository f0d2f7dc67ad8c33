//! `TF_Status` ownership and TensorFlow errors.

use crate::c_api::{Api, TF_Status};
use std::ffi::CStr;

/// A TensorFlow error: the status code (`TF_Code`) and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TfError {
    /// `TF_Code`: 3 INVALID_ARGUMENT, 9 FAILED_PRECONDITION, 12 UNIMPLEMENTED, ...
    pub code: i32,
    pub message: String,
}

impl TfError {
    /// An error raised by Polyfn itself with a TensorFlow code.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        TfError { code, message: message.into() }
    }
}

/// Owned `TF_Status`.
pub struct Status<'a> {
    api: &'a Api,
    raw: *mut TF_Status,
}

impl<'a> Status<'a> {
    pub fn new(api: &'a Api) -> Self {
        // SAFETY: no preconditions.
        Status { api, raw: unsafe { (api.TF_NewStatus)() } }
    }

    pub fn raw(&self) -> *mut TF_Status {
        self.raw
    }

    /// `Ok` if the last call succeeded, else the error with `context` prepended.
    pub fn check(&self, context: &str) -> Result<(), TfError> {
        // SAFETY: raw is a live status.
        let code = unsafe { (self.api.TF_GetCode)(self.raw) };
        if code == 0 {
            return Ok(());
        }
        let msg = unsafe { CStr::from_ptr((self.api.TF_Message)(self.raw)) }.to_string_lossy();
        let message = if context.is_empty() { msg.into_owned() } else { format!("{context}: {msg}") };
        Err(TfError { code, message })
    }
}

impl Drop for Status<'_> {
    fn drop(&mut self) {
        // SAFETY: raw was created by TF_NewStatus and is deleted once.
        unsafe { (self.api.TF_DeleteStatus)(self.raw) }
    }
}
