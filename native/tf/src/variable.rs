//! Giving a released variable's memory back.
//!
//! Polyfn's variables (and a loaded model's) are anonymous: TensorFlow 2.18's `VarHandleOp` makes
//! them reference-counted by their handles, so the variable lives while any tensor holding its
//! handle lives, and `DestroyResourceOp` does nothing to it. Such tensors outlive a close in
//! places Polyfn does not control (TensorFlow Java's eager operations, freed when the garbage
//! collector finds them; ops and kernels TensorFlow keeps). So releasing a variable first assigns
//! it an empty value: its buffer goes at once, and whatever still holds the handle holds only
//! the small variable object.

use crate::c_api::{TFE_TensorHandle, TF_Tensor};
use crate::context::EagerContext;
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::ffi::c_int;
use std::ptr;

/// Assigns the variable whose resource handle `resource` holds an empty value (shape `[0]`) of
/// its dtype `dtype`, which drops its current buffer. (AssignVariableOp does not check the
/// shape by default, and nothing reads a released variable.)
///
/// # Safety
/// `resource` must be a live resource tensor of a variable of dtype `dtype`, and `ctx` a live
/// eager context of the same device.
pub unsafe fn assign_empty(rt: &Runtime, ctx: EagerContext, resource: *mut TF_Tensor, dtype: i32) -> Result<(), TfError> {
    let api = rt.api();
    let status = Status::new(api);
    let mut owned = Owned { rt, tensor: ptr::null_mut(), handles: [ptr::null_mut(); 2], op: ptr::null_mut() };
    // SAFETY: plain C API calls on live arguments; everything made here is freed by `owned`.
    unsafe {
        owned.tensor = (api.TF_AllocateTensor)(dtype, [0i64].as_ptr(), 1, 0);
        if owned.tensor.is_null() {
            return Err(TfError::invalid_argument(format!("no empty tensor of dtype {dtype}")));
        }
        owned.handles[0] = (api.TFE_NewTensorHandle)(resource, status.raw());
        status.check("wrapping a variable's handle")?;
        owned.handles[1] = (api.TFE_NewTensorHandle)(owned.tensor, status.raw());
        status.check("wrapping an empty value")?;
        owned.op = (api.TFE_NewOp)(ctx.0, c"AssignVariableOp".as_ptr(), status.raw());
        status.check("AssignVariableOp")?;
        (api.TFE_OpSetAttrType)(owned.op, c"dtype".as_ptr(), dtype as c_int);
        for h in owned.handles {
            (api.TFE_OpAddInput)(owned.op, h, status.raw());
            status.check("adding an input")?;
        }
        let mut none: [*mut TFE_TensorHandle; 1] = [ptr::null_mut()];
        let mut n: c_int = 1;
        (api.TFE_Execute)(owned.op, none.as_mut_ptr(), &mut n, status.raw());
        status.check("emptying a released variable")
    }
}

/// What [`assign_empty`] made, freed whatever way it returns.
struct Owned<'a> {
    rt: &'a Runtime,
    tensor: *mut TF_Tensor,
    handles: [*mut TFE_TensorHandle; 2],
    op: *mut crate::c_api::TFE_Op,
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        let api = self.rt.api();
        // SAFETY: each was made once by assign_empty and is deleted once (null: never made).
        unsafe {
            if !self.op.is_null() {
                (api.TFE_DeleteOp)(self.op);
            }
            for &h in self.handles.iter().filter(|h| !h.is_null()) {
                (api.TFE_DeleteTensorHandle)(h);
            }
            if !self.tensor.is_null() {
                (api.TF_DeleteTensor)(self.tensor);
            }
        }
    }
}
