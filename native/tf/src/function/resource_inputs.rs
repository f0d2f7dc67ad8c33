//! Tensor handles of a function's resource inputs (variables, lookup tables), kept from one call
//! to the next.
//!
//! An eager call wraps every input tensor in a new `TFE_TensorHandle` and deletes it afterwards.
//! A model restored from a SavedModel takes each of its variables as an input (MobileNetV2: 262
//! of them, next to one image), and the same handles come back call after call: making and
//! deleting their wrappers took about a fifth of a millisecond per call, on the caller's thread
//! before TensorFlow could start (Python keeps its captured handles as tensors). So a resource
//! input's wrapper is kept, one per input, and reused while the call passes the same handle.
//!
//! "The same handle" is decided by the tensor's data address: the kept wrapper holds a reference
//! to the tensor's buffer, so that buffer stays allocated while it is kept, and a tensor whose data
//! sits at that address shares the buffer, whose resource handle nothing rewrites. Another handle
//! (another variable passed, or one made anew) replaces the kept wrapper.

use crate::c_api::{TFE_TensorHandle, TF_Tensor};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use crate::tensor::DT_RESOURCE;
use std::ptr;
use std::sync::{Mutex, MutexGuard, TryLockError};

/// The kept wrappers of one function's resource inputs, by input position (null: none yet).
#[derive(Debug)]
pub(crate) struct ResourceInputs {
    rt: &'static Runtime,
    slots: Mutex<Vec<Slot>>,
}

/// A kept wrapper and the data address of the tensor it wraps.
#[derive(Debug, Clone, Copy)]
struct Slot {
    data: usize,
    handle: *mut TFE_TensorHandle,
}

// SAFETY: tensor handles may be used from any thread (TensorFlow counts their references
// atomically); the slots are only read or changed under the mutex.
unsafe impl Send for ResourceInputs {}
unsafe impl Sync for ResourceInputs {}

impl ResourceInputs {
    /// Slots for the resource inputs among `input_dtypes`, or None when there are none.
    pub(crate) fn for_inputs(rt: &'static Runtime, input_dtypes: &[i32]) -> Option<Self> {
        input_dtypes.contains(&DT_RESOURCE).then(|| ResourceInputs {
            rt,
            slots: Mutex::new(vec![Slot { data: 0, handle: ptr::null_mut() }; input_dtypes.len()]),
        })
    }

    /// The slots, for one call's inputs, if no other call holds them: held while the call adds
    /// its inputs to its op (which takes its own reference to each handle), never while it runs.
    /// A call that finds them held wraps its inputs for itself instead of waiting, so calls on
    /// other threads never wait for one another here.
    pub(crate) fn try_lock(&self) -> Option<Kept<'_>> {
        let slots = match self.slots.try_lock() {
            Ok(slots) => slots,
            // A panic while the lock was held left no slot half-written (each is one assignment).
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(Kept { rt: self.rt, slots })
    }
}

/// The slots, locked for one call.
pub(crate) struct Kept<'a> {
    rt: &'static Runtime,
    slots: MutexGuard<'a, Vec<Slot>>,
}

impl Kept<'_> {
    /// The kept wrapper of `t`, input `i`, making (and keeping) it if the slot holds another one;
    /// None if `t` is not a resource tensor with data (it is then wrapped for the call only).
    ///
    /// # Safety
    /// `t` must be a live `TF_Tensor`.
    pub(crate) unsafe fn handle(&mut self, i: usize, t: *mut TF_Tensor, status: &Status<'_>) -> Result<Option<*mut TFE_TensorHandle>, TfError> {
        let api = self.rt.api();
        // SAFETY: a live tensor (caller's contract).
        let (dtype, data) = unsafe { ((api.TF_TensorType)(t), (api.TF_TensorData)(t) as usize) };
        let Some(slot) = self.slots.get_mut(i).filter(|_| dtype == DT_RESOURCE && data != 0) else {
            return Ok(None);
        };
        if slot.data == data && !slot.handle.is_null() {
            return Ok(Some(slot.handle));
        }
        // SAFETY: a live tensor; the handle shares its buffer.
        let h = unsafe { (api.TFE_NewTensorHandle)(t, status.raw()) };
        status.check("wrapping a resource input")?;
        if !slot.handle.is_null() {
            // SAFETY: made here and kept; an op it was added to holds its own reference.
            unsafe { (api.TFE_DeleteTensorHandle)(slot.handle) };
        }
        *slot = Slot { data, handle: h };
        Ok(Some(h))
    }
}

impl Drop for ResourceInputs {
    fn drop(&mut self) {
        let slots = self.slots.get_mut().unwrap_or_else(|e| e.into_inner());
        for s in slots.iter().filter(|s| !s.handle.is_null()) {
            // SAFETY: made by `handle`, kept here, deleted once; no call is running (the function
            // is being dropped).
            unsafe { (self.rt.api().TFE_DeleteTensorHandle)(s.handle) };
        }
    }
}
