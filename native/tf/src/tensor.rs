//! Owned `TF_Tensor`s for Rust-side tests and benchmarks (the JVM path borrows TensorFlow Java's).

use crate::c_api::{TFE_TensorHandle, TF_Tensor};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};

/// A new `TF_Tensor` (owned by the caller) with the value of an eager tensor handle. For a
/// resource handle it holds the serialized handle, which names the variable: a handle made from
/// it later refers to the same variable.
///
/// # Safety
/// `handle` must be a live `TFE_TensorHandle`.
pub unsafe fn resolve(rt: &Runtime, handle: *mut TFE_TensorHandle) -> Result<*mut TF_Tensor, TfError> {
    let status = Status::new(rt.api());
    // SAFETY: handle is live (caller's contract); the result is a new tensor the caller owns.
    let t = unsafe { (rt.api().TFE_TensorHandleResolve)(handle, status.raw()) };
    status.check("resolving a tensor handle")?;
    Ok(t)
}

/// Deletes a tensor the caller owns (one made by [`resolve`], or a call's output never handed on).
///
/// # Safety
/// `tensor` must be a live `TF_Tensor` owned by the caller, not used afterwards.
pub unsafe fn delete(rt: &Runtime, tensor: *mut TF_Tensor) {
    // SAFETY: the caller's contract.
    unsafe { (rt.api().TF_DeleteTensor)(tensor) }
}

/// Appends `tensor`'s dtype code, rank and dims to `out`: how a call's result describes each
/// output to Java (see `polyfn_core::wire::RESULT_COUNT_SHIFT`), so that Java builds its tensor
/// objects without asking TensorFlow again.
///
/// # Safety
/// `tensor` must be a live `TF_Tensor`.
pub unsafe fn describe_into(rt: &Runtime, tensor: *const TF_Tensor, out: &mut Vec<i64>) {
    let api = rt.api();
    // SAFETY: tensor is live (caller's contract); these only read its header.
    unsafe {
        let rank = (api.TF_NumDims)(tensor);
        out.push(i64::from((api.TF_TensorType)(tensor)));
        out.push(i64::from(rank));
        out.extend((0..rank).map(|i| (api.TF_Dim)(tensor, i)));
    }
}

/// `TF_FLOAT`.
pub const DT_FLOAT: i32 = 1;
/// `TF_RESOURCE`: a handle to a resource such as a variable.
pub const DT_RESOURCE: i32 = 20;
/// `TF_VARIANT`.
pub const DT_VARIANT: i32 = 21;

/// A `TF_Tensor` deleted on drop.
#[derive(Debug)]
pub struct OwnedTensor {
    rt: &'static Runtime,
    raw: *mut TF_Tensor,
}

impl OwnedTensor {
    /// A float tensor of `dims` holding `values` (row-major).
    pub fn from_f32(rt: &'static Runtime, dims: &[i64], values: &[f32]) -> Self {
        let n: i64 = dims.iter().product();
        assert!(dims.iter().all(|&d| d >= 0), "negative dimension in {dims:?}");
        assert_eq!(n as usize, values.len(), "values do not fill dims {dims:?}");
        let bytes = std::mem::size_of_val(values);
        // SAFETY: TF_AllocateTensor returns a buffer of `bytes` bytes, filled right after.
        unsafe {
            let raw = (rt.api().TF_AllocateTensor)(DT_FLOAT, dims.as_ptr(), dims.len() as i32, bytes);
            let data = (rt.api().TF_TensorData)(raw) as *mut f32;
            std::ptr::copy_nonoverlapping(values.as_ptr(), data, values.len());
            OwnedTensor { rt, raw }
        }
    }

    /// Takes ownership of `raw`.
    ///
    /// # Safety
    /// `raw` must be a live tensor owned by nobody else.
    pub unsafe fn from_raw(rt: &'static Runtime, raw: *mut TF_Tensor) -> Self {
        OwnedTensor { rt, raw }
    }

    pub fn raw(&self) -> *mut TF_Tensor {
        self.raw
    }

    /// Dtype code and dims.
    pub fn describe(&self) -> (i32, Vec<i64>) {
        let mut d = Vec::new();
        // SAFETY: raw is live.
        unsafe { describe_into(self.rt, self.raw, &mut d) };
        (d[0] as i32, d.split_off(2))
    }

    /// The data address (to show buffers are shared, not copied).
    pub fn data_ptr(&self) -> *const u8 {
        // SAFETY: raw is live.
        unsafe { (self.rt.api().TF_TensorData)(self.raw) as *const u8 }
    }

    /// The values of a float tensor.
    pub fn to_f32(&self) -> Vec<f32> {
        let api = self.rt.api();
        // SAFETY: raw is live; the length comes from the tensor itself.
        unsafe {
            assert_eq!((api.TF_TensorType)(self.raw), DT_FLOAT);
            let n = (api.TF_TensorByteSize)(self.raw) / 4;
            std::slice::from_raw_parts((api.TF_TensorData)(self.raw) as *const f32, n).to_vec()
        }
    }
}

impl Drop for OwnedTensor {
    fn drop(&mut self) {
        // SAFETY: owned, deleted once.
        unsafe { (self.rt.api().TF_DeleteTensor)(self.raw) }
    }
}
