//! A minimal graph builder for Rust-side tests and the C API floor benchmark. Polyfn's product
//! path builds graphs in Java with TensorFlow Java's `Ops`; this exists so the runtime can be
//! exercised and measured without a JVM.

use crate::c_api::{TF_Graph, TF_Operation, TF_Output};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use crate::tensor::OwnedTensor;
use std::ffi::CString;

/// An owned `TF_Graph`.
#[derive(Debug)]
pub struct Graph {
    rt: &'static Runtime,
    raw: *mut TF_Graph,
    next_id: usize,
}

impl Graph {
    pub fn new(rt: &'static Runtime) -> Self {
        // SAFETY: no preconditions.
        Graph { rt, raw: unsafe { (rt.api().TF_NewGraph)() }, next_id: 0 }
    }

    pub fn raw(&self) -> *mut TF_Graph {
        self.raw
    }

    /// A placeholder of `dtype` and `dims` (`None` = unknown rank, -1 = unknown dim).
    pub fn placeholder(&mut self, dtype: i32, dims: Option<&[i64]>) -> Result<TF_Output, TfError> {
        self.op("Placeholder", &[], |api, d| unsafe {
            (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype);
            if let Some(dims) = dims {
                (api.TF_SetAttrShape)(d, c"shape".as_ptr(), dims.as_ptr(), dims.len() as i32);
            }
        })
    }

    /// A constant holding `value`.
    pub fn constant(&mut self, value: &OwnedTensor) -> Result<TF_Output, TfError> {
        let (dtype, _) = value.describe();
        let status = Status::new(self.rt.api());
        let out = self.op("Const", &[], |api, d| unsafe {
            (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype);
            (api.TF_SetAttrTensor)(d, c"value".as_ptr(), value.raw(), status.raw());
        })?;
        status.check("Const value")?;
        Ok(out)
    }

    /// An operation of `op_type` over `inputs` with attribute `T` set to the first input's dtype.
    pub fn binary(&mut self, op_type: &str, a: TF_Output, b: TF_Output) -> Result<TF_Output, TfError> {
        // SAFETY: a belongs to this graph.
        let dtype = unsafe { (self.rt.api().TF_OperationOutputType)(a) };
        self.op(op_type, &[a, b], |api, d| unsafe { (api.TF_SetAttrType)(d, c"T".as_ptr(), dtype) })
    }

    fn op(
        &mut self,
        op_type: &str,
        inputs: &[TF_Output],
        attrs: impl FnOnce(&crate::c_api::Api, *mut crate::c_api::TF_OperationDescription),
    ) -> Result<TF_Output, TfError> {
        let api = self.rt.api();
        let status = Status::new(api);
        self.next_id += 1;
        let name = CString::new(format!("{op_type}_{}", self.next_id)).unwrap();
        let ty = CString::new(op_type).unwrap();
        // SAFETY: live graph; the description is finished exactly once.
        unsafe {
            let d = (api.TF_NewOperation)(self.raw, ty.as_ptr(), name.as_ptr());
            for &i in inputs {
                (api.TF_AddInput)(d, i);
            }
            attrs(api, d);
            let oper: *mut TF_Operation = (api.TF_FinishOperation)(d, status.raw());
            status.check(op_type)?;
            Ok(TF_Output { oper, index: 0 })
        }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: owned, deleted once.
        unsafe { (self.rt.api().TF_DeleteGraph)(self.raw) }
    }
}
