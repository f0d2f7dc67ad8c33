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
//!
//! Holding the buffer holds the variable: an anonymous variable (Polyfn's, and a loaded model's)
//! lives as long as its handle's buffer. So releasing a variable ([`release_resource`]) deletes
//! every wrapper kept for it, found in a registry by data address: a function that stays alive
//! never keeps a closed variable's memory.

use crate::c_api::{TFE_TensorHandle, TF_Tensor};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use crate::tensor::DT_RESOURCE;
use std::collections::HashMap;
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError, Weak};

/// The kept wrappers of one function's resource inputs, by input position (null: none yet).
#[derive(Debug)]
pub(crate) struct ResourceInputs {
    slots: Arc<Slots>,
}

/// The slots, shared with the registry (weakly), which clears them when a variable is released.
#[derive(Debug)]
struct Slots {
    rt: &'static Runtime,
    list: Mutex<Vec<Slot>>,
}

/// For each data address with a kept wrapper, the slots that may hold one. Locked only to add a
/// new wrapper (never on a call that reuses one) and to release a variable, and never while a
/// function's slots are locked by the releasing thread.
static REGISTRY: Mutex<Registry> = Mutex::new(Registry { by_data: None, prune_at: 64 });

struct Registry {
    by_data: Option<HashMap<usize, Vec<Weak<Slots>>>>,
    /// Entries of dropped functions are pruned when the map reaches this size (then doubled).
    prune_at: usize,
}

impl Registry {
    fn add(&mut self, data: usize, slots: Weak<Slots>) {
        let map = self.by_data.get_or_insert_with(HashMap::new);
        let list = map.entry(data).or_default();
        if !list.iter().any(|w| w.ptr_eq(&slots)) {
            list.push(slots);
        }
        if map.len() >= self.prune_at {
            map.retain(|_, l| {
                l.retain(|w| w.strong_count() > 0);
                !l.is_empty()
            });
            self.prune_at = (map.len() * 2).max(64);
        }
    }
}

/// Deletes every wrapper kept for the resource tensor whose data is at `data` (a variable about
/// to be released): the wrappers hold its buffer, and so the variable's memory.
pub(crate) fn forget(data: usize) {
    if data == 0 {
        return;
    }
    let holders = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner).by_data.as_mut().and_then(|m| m.remove(&data));
    for slots in holders.into_iter().flatten().filter_map(|w| w.upgrade()) {
        // Waits for a call adding its inputs (a few microseconds); the registry is not held.
        let mut list = slots.list.lock().unwrap_or_else(PoisonError::into_inner);
        for slot in list.iter_mut().filter(|s| s.data == data && !s.handle.is_null()) {
            // SAFETY: made by `handle` and kept; an op it was added to holds its own reference.
            unsafe { (slots.rt.api().TFE_DeleteTensorHandle)(slot.handle) };
            *slot = Slot { data: 0, handle: ptr::null_mut() };
        }
    }
}

/// A kept wrapper and the data address of the tensor it wraps.
#[derive(Debug, Clone, Copy)]
struct Slot {
    data: usize,
    handle: *mut TFE_TensorHandle,
}

// SAFETY: tensor handles may be used from any thread (TensorFlow counts their references
// atomically); the slots are only read or changed under the mutex.
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

impl ResourceInputs {
    /// Slots for the resource inputs among `input_dtypes`, or None when there are none.
    pub(crate) fn for_inputs(rt: &'static Runtime, input_dtypes: &[i32]) -> Option<Self> {
        input_dtypes.contains(&DT_RESOURCE).then(|| ResourceInputs {
            slots: Arc::new(Slots {
                rt,
                list: Mutex::new(vec![Slot { data: 0, handle: ptr::null_mut() }; input_dtypes.len()]),
            }),
        })
    }

    /// The slots, for one call's inputs, if no other call holds them: held while the call adds
    /// its inputs to its op (which takes its own reference to each handle), never while it runs.
    /// A call that finds them held wraps its inputs for itself instead of waiting, so calls on
    /// other threads never wait for one another here.
    pub(crate) fn try_lock(&self) -> Option<Kept<'_>> {
        let list = match self.slots.list.try_lock() {
            Ok(slots) => slots,
            // A panic while the lock was held left no slot half-written (each is one assignment).
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(Kept { owner: &self.slots, list })
    }
}

/// The slots, locked for one call.
pub(crate) struct Kept<'a> {
    owner: &'a Arc<Slots>,
    list: MutexGuard<'a, Vec<Slot>>,
}

impl Kept<'_> {
    /// The kept wrapper of `t`, input `i`, making (and keeping) it if the slot holds another one;
    /// None if `t` is not a resource tensor with data (it is then wrapped for the call only).
    ///
    /// # Safety
    /// `t` must be a live `TF_Tensor`.
    pub(crate) unsafe fn handle(&mut self, i: usize, t: *mut TF_Tensor, status: &Status<'_>) -> Result<Option<*mut TFE_TensorHandle>, TfError> {
        let api = self.owner.rt.api();
        // SAFETY: a live tensor (caller's contract).
        let (dtype, data) = unsafe { ((api.TF_TensorType)(t), (api.TF_TensorData)(t) as usize) };
        let Some(slot) = self.list.get_mut(i).filter(|_| dtype == DT_RESOURCE && data != 0) else {
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
        // Under this function's slots lock; `forget` never takes a slots lock while it holds the
        // registry's, so the two are always taken in this order.
        REGISTRY.lock().unwrap_or_else(PoisonError::into_inner).add(data, Arc::downgrade(self.owner));
        Ok(Some(h))
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        let list = self.list.get_mut().unwrap_or_else(PoisonError::into_inner);
        for s in list.iter().filter(|s| !s.handle.is_null()) {
            // SAFETY: made by `handle`, kept here, deleted once; no call is running (the function
            // is dropped, and a release that held these slots is done with them).
            unsafe { (self.rt.api().TFE_DeleteTensorHandle)(s.handle) };
        }
    }
}
