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
    /// The operations made here: inputs given back are checked against it, so these safe
    /// methods never pass TensorFlow a pointer that is not an operation of this graph.
    made: std::collections::HashSet<*mut TF_Operation>,
}

impl Graph {
    pub fn new(rt: &'static Runtime) -> Self {
        // SAFETY: no preconditions.
        Graph { rt, raw: unsafe { (rt.api().TF_NewGraph)() }, next_id: 0, made: Default::default() }
    }

    pub fn raw(&self) -> *mut TF_Graph {
        self.raw
    }

    /// A placeholder of `dtype` and `dims` (`None` = unknown rank, -1 = unknown dim).
    pub fn placeholder(&mut self, dtype: i32, dims: Option<&[i64]>) -> Result<TF_Output, TfError> {
        // SAFETY (attribute closures here): `d` is the live description `op` is building, and
        // every pointer passed with a count points at that many elements.
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
        // SAFETY: live description; value is a live tensor TensorFlow copies.
        let out = self.op("Const", &[], |api, d| unsafe {
            (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype);
            (api.TF_SetAttrTensor)(d, c"value".as_ptr(), value.raw(), status.raw());
        })?;
        status.check("Const value")?;
        Ok(out)
    }

    /// An operation of `op_type` over `inputs` with attribute `T` set to the first input's dtype.
    pub fn binary(&mut self, op_type: &str, a: TF_Output, b: TF_Output) -> Result<TF_Output, TfError> {
        self.check_input(a)?;
        // SAFETY: a is an output of an operation of this live graph (checked above).
        let dtype = unsafe { (self.rt.api().TF_OperationOutputType)(a) };
        // SAFETY: live description.
        self.op(op_type, &[a, b], |api, d| unsafe { (api.TF_SetAttrType)(d, c"T".as_ptr(), dtype) })
    }

    /// An operation of `op_type` over one input with attribute `T` set to its dtype.
    pub fn unary(&mut self, op_type: &str, x: TF_Output) -> Result<TF_Output, TfError> {
        self.check_input(x)?;
        // SAFETY: x is an output of an operation of this live graph (checked above).
        let dtype = unsafe { (self.rt.api().TF_OperationOutputType)(x) };
        // SAFETY: live description.
        self.op(op_type, &[x], |api, d| unsafe { (api.TF_SetAttrType)(d, c"T".as_ptr(), dtype) })
    }

    /// An operation of `op_type` over one input with attribute `T` set to its dtype and the
    /// type attribute `attr` set to `dtype` (e.g. `Shape` with `out_type`).
    pub fn unary_typed(&mut self, op_type: &str, x: TF_Output, attr: &str, dtype: i32) -> Result<TF_Output, TfError> {
        self.check_input(x)?;
        // SAFETY: x is an output of an operation of this live graph (checked above).
        let t = unsafe { (self.rt.api().TF_OperationOutputType)(x) };
        let attr = CString::new(attr).map_err(|_| TfError::invalid_argument("attribute name contains NUL"))?;
        // SAFETY: live description; attr is NUL-terminated.
        self.op(op_type, &[x], |api, d| unsafe {
            (api.TF_SetAttrType)(d, c"T".as_ptr(), t);
            (api.TF_SetAttrType)(d, attr.as_ptr(), dtype);
        })
    }

    /// A `ReadVariableOp` of `dtype` over the resource handle `handle`.
    pub fn read_variable(&mut self, handle: TF_Output, dtype: i32) -> Result<TF_Output, TfError> {
        // SAFETY: live description.
        self.op("ReadVariableOp", &[handle], |api, d| unsafe { (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype) })
    }

    /// A `VarHandleOp` of an anonymous variable of `dtype` and shape `dims` (each run makes a
    /// new variable, alive while a tensor holds its handle).
    pub fn var_handle(&mut self, dtype: i32, dims: &[i64]) -> Result<TF_Output, TfError> {
        // SAFETY: live description; dims holds its count.
        self.op("VarHandleOp", &[], |api, d| unsafe {
            (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype);
            (api.TF_SetAttrShape)(d, c"shape".as_ptr(), dims.as_ptr(), dims.len() as std::ffi::c_int);
        })
    }

    /// An `AssignVariableOp` of `value` to the variable `handle` holds; returns the op (it has
    /// no output), for a function's control outputs.
    pub fn assign_variable(&mut self, handle: TF_Output, value: TF_Output) -> Result<*mut TF_Operation, TfError> {
        self.check_input(value)?;
        // SAFETY: value is an output of an operation of this live graph (checked above).
        let dtype = unsafe { (self.rt.api().TF_OperationOutputType)(value) };
        // SAFETY: live description.
        self.op("AssignVariableOp", &[handle, value], |api, d| unsafe { (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype) })
            .map(|o| o.oper)
    }

    /// An error unless `o` is an existing output of an operation made by this graph.
    pub fn check_input(&self, o: TF_Output) -> Result<(), TfError> {
        if !self.made.contains(&o.oper) {
            return Err(TfError::invalid_argument("input is not an operation of this graph"));
        }
        // SAFETY: o.oper is an operation of this live graph (checked above).
        let n = unsafe { (self.rt.api().TF_OperationNumOutputs)(o.oper) };
        if o.index < 0 || o.index >= n {
            return Err(TfError::invalid_argument(format!("output {} of an operation with {n} outputs", o.index)));
        }
        Ok(())
    }

    fn op(
        &mut self,
        op_type: &str,
        inputs: &[TF_Output],
        attrs: impl FnOnce(&crate::c_api::Api, *mut crate::c_api::TF_OperationDescription),
    ) -> Result<TF_Output, TfError> {
        for &i in inputs {
            self.check_input(i)?;
        }
        let api = self.rt.api();
        let status = Status::new(api);
        self.next_id += 1;
        let name = CString::new(format!("{op_type}_{}", self.next_id)).unwrap();
        let ty = CString::new(op_type).unwrap();
        // SAFETY: live graph; inputs are its own outputs (checked above); the description is
        // finished exactly once.
        unsafe {
            let d = (api.TF_NewOperation)(self.raw, ty.as_ptr(), name.as_ptr());
            for &i in inputs {
                (api.TF_AddInput)(d, i);
            }
            attrs(api, d);
            let oper: *mut TF_Operation = (api.TF_FinishOperation)(d, status.raw());
            status.check(op_type)?;
            self.made.insert(oper);
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
