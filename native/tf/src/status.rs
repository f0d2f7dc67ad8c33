//! TensorFlow status codes, errors and `TF_Status` ownership.

use crate::c_api::{Api, TF_Status};
use std::ffi::CStr;

/// A TensorFlow status code (`TF_Code` of `tensorflow/c/tf_status.h`). This is the one table of
/// codes in Polyfn's Rust code: compare and create codes through it, never as bare numbers.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl Code {
    /// Every code, in numeric order (`Code::ALL[n].raw() == n`).
    pub const ALL: [Code; 17] = [
        Code::Ok,
        Code::Cancelled,
        Code::Unknown,
        Code::InvalidArgument,
        Code::DeadlineExceeded,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::ResourceExhausted,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Internal,
        Code::Unavailable,
        Code::DataLoss,
        Code::Unauthenticated,
    ];

    /// The code for a raw `TF_Code`; a value TensorFlow does not define becomes `Unknown`, as
    /// TensorFlow itself treats unknown codes.
    pub fn from_raw(raw: i32) -> Code {
        usize::try_from(raw).ok().and_then(|i| Code::ALL.get(i).copied()).unwrap_or(Code::Unknown)
    }

    /// The raw `TF_Code` value.
    pub fn raw(self) -> i32 {
        self as i32
    }

    /// TensorFlow's name of the code, e.g. `INVALID_ARGUMENT`.
    pub fn name(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "CANCELLED",
            Code::Unknown => "UNKNOWN",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Aborted => "ABORTED",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
            Code::DataLoss => "DATA_LOSS",
            Code::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl From<Code> for i32 {
    fn from(code: Code) -> i32 {
        code.raw()
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A TensorFlow error: the status code and message, from TensorFlow or raised by Polyfn with
/// the code TensorFlow would use for the same problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TfError {
    pub code: Code,
    pub message: String,
}

impl TfError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        TfError { code, message: message.into() }
    }

    /// An `INVALID_ARGUMENT` error (bad input caught before it reaches TensorFlow).
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        TfError::new(Code::InvalidArgument, message)
    }
}

/// A `TF_Status`, owned (deleted on drop) or lent by this thread's call slot.
pub struct Status<'a> {
    api: &'a Api,
    raw: *mut TF_Status,
    owned: bool,
}

/// The status kept per thread for calls, so a call allocates none.
struct CallStatus(std::cell::Cell<*mut TF_Status>);

impl Drop for CallStatus {
    fn drop(&mut self) {
        let raw = self.0.replace(std::ptr::null_mut());
        if let (false, Some(rt)) = (raw.is_null(), crate::runtime::Runtime::get()) {
            // SAFETY: made by TF_NewStatus for this slot, deleted once, at thread exit.
            unsafe { (rt.api().TF_DeleteStatus)(raw) }
        }
    }
}

thread_local! {
    static CALL_STATUS: CallStatus = const { CallStatus(std::cell::Cell::new(std::ptr::null_mut())) };
}

/// Runs `f` with this thread's call status, reset to OK (a new one if it is in use, by a call
/// made from inside a call, or if the thread is exiting). Public for the tests of the slot only.
#[doc(hidden)]
pub fn with_call_status<R>(api: &Api, f: impl FnOnce(&Status<'_>) -> R) -> R {
    let raw = CALL_STATUS.try_with(|s| s.0.replace(std::ptr::null_mut())).unwrap_or(std::ptr::null_mut());
    if raw.is_null() {
        let status = Status::new(api);
        let r = f(&status);
        let _ = CALL_STATUS.try_with(|s| {
            if s.0.get().is_null() {
                s.0.set(status.raw);
                std::mem::forget(status);
            }
        });
        return r;
    }
    // SAFETY: a live status owned by this thread's slot; resetting it to OK allocates nothing.
    unsafe { (api.TF_SetStatus)(raw, Code::Ok.raw(), c"".as_ptr()) };
    // Given back by a guard, so that a panic inside `f` (caught at the JNI boundary) neither
    // leaks the status nor leaves the slot empty for the thread's later calls.
    let lent = Lent { api, raw };
    f(&Status { api, raw: lent.raw, owned: false })
}

/// The slot's status while a call uses it: put back in the slot when the call ends, normally or
/// by a panic, or deleted when the slot was refilled meanwhile or the thread is exiting.
struct Lent<'a> {
    api: &'a Api,
    raw: *mut TF_Status,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let raw = self.raw;
        let returned = CALL_STATUS.try_with(|s| s.0.get().is_null() && { s.0.set(raw); true }).unwrap_or(false);
        if !returned {
            // SAFETY: taken from the slot and not put back: deleted once, here.
            unsafe { (self.api.TF_DeleteStatus)(raw) };
        }
    }
}

impl<'a> Status<'a> {
    pub fn new(api: &'a Api) -> Self {
        // SAFETY: TF_NewStatus has no preconditions and returns a new status we own.
        Status { api, raw: unsafe { (api.TF_NewStatus)() }, owned: true }
    }

    pub fn raw(&self) -> *mut TF_Status {
        self.raw
    }

    /// `Ok` if the last call succeeded, else the error with `context` prepended.
    pub fn check(&self, context: &str) -> Result<(), TfError> {
        // SAFETY: raw is a live status owned by self.
        unsafe { check_raw(self.api, self.raw, context) }
    }
}

/// `Ok` if `status` holds OK, else its error with `context` prepended.
///
/// # Safety
/// `status` must be a live `TF_Status`.
pub(crate) unsafe fn check_raw(api: &Api, status: *mut TF_Status, context: &str) -> Result<(), TfError> {
    // SAFETY: status is live (caller's contract).
    let code = unsafe { (api.TF_GetCode)(status) };
    if code == Code::Ok.raw() {
        return Ok(());
    }
    // SAFETY: TF_Message returns a NUL-terminated string owned by the live status; it is copied
    // into an owned String before the status can change.
    let msg = unsafe { CStr::from_ptr((api.TF_Message)(status)) }.to_string_lossy();
    let message = if context.is_empty() { msg.into_owned() } else { format!("{context}: {msg}") };
    Err(TfError { code: Code::from_raw(code), message })
}

impl Drop for Status<'_> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: raw was created by TF_NewStatus and is deleted once.
            unsafe { (self.api.TF_DeleteStatus)(self.raw) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn codes_round_trip_through_their_raw_values() {
        for (i, code) in Code::ALL.iter().enumerate() {
            assert_eq!(code.raw(), i as i32);
            assert_eq!(Code::from_raw(i as i32), *code);
        }
        assert_eq!(Code::InvalidArgument.raw(), 3);
        assert_eq!(Code::Unauthenticated.raw(), 16);
        assert_eq!(Code::from_raw(17), Code::Unknown);
        assert_eq!(Code::from_raw(-1), Code::Unknown);
        assert_eq!(Code::FailedPrecondition.to_string(), "FAILED_PRECONDITION");
    }
}
