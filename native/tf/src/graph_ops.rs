//! Finding the operations of a traced graph by name (the graph is built in Java; Polyfn gets
//! operation names back) and reading what TensorFlow inferred about them.

use crate::c_api::{TF_Graph, TF_Operation, TF_Output};
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::CString;

/// The operation called `op_name` in `graph`; an error if there is none.
///
/// # Safety
/// `graph` must be a live graph not mutated concurrently.
pub unsafe fn graph_operation(rt: &Runtime, graph: *mut TF_Graph, op_name: &str) -> Result<*mut TF_Operation, TfError> {
    let c = CString::new(op_name)
        .map_err(|_| TfError::invalid_argument(format!("operation name {op_name:?} contains a NUL character")))?;
    // SAFETY: graph is live (caller's contract); the name is NUL-terminated.
    let oper = unsafe { (rt.api().TF_GraphOperationByName)(graph, c.as_ptr()) };
    if oper.is_null() {
        return Err(TfError::new(Code::NotFound, format!("operation {op_name} is not in the traced graph")));
    }
    Ok(oper)
}

/// Output `index` of the operation called `op_name` in `graph`. A missing operation or an index
/// outside its outputs is an error, never a `TF_Output` TensorFlow would read out of bounds.
///
/// # Safety
/// `graph` must be a live graph not mutated concurrently.
pub unsafe fn graph_output(rt: &Runtime, graph: *mut TF_Graph, op_name: &str, index: i32) -> Result<TF_Output, TfError> {
    // SAFETY: caller's contract.
    let oper = unsafe { graph_operation(rt, graph, op_name) }?;
    // SAFETY: oper is an operation of the live graph.
    let n = unsafe { (rt.api().TF_OperationNumOutputs)(oper) };
    if index < 0 || index >= n {
        return Err(TfError::invalid_argument(format!(
            "operation {op_name} has {n} output(s); output {index} does not exist"
        )));
    }
    Ok(TF_Output { oper, index })
}

/// The static shape TensorFlow inferred for `output`: `None` for an unknown rank, -1 for an
/// unknown dimension.
///
/// # Safety
/// `graph` must be a live graph not mutated concurrently, `output` an existing output of it
/// (as [`graph_output`] returns).
pub unsafe fn static_shape(rt: &Runtime, graph: *mut TF_Graph, output: TF_Output) -> Result<Option<Vec<i64>>, TfError> {
    let api = rt.api();
    let status = Status::new(api);
    // SAFETY: live graph and output (caller's contract).
    let rank = unsafe { (api.TF_GraphGetTensorNumDims)(graph, output, status.raw()) };
    status.check("reading an output's rank")?;
    if rank < 0 {
        return Ok(None);
    }
    let mut dims = vec![0i64; rank as usize];
    // SAFETY: dims holds rank entries.
    unsafe { (api.TF_GraphGetTensorShape)(graph, output, dims.as_mut_ptr(), rank, status.raw()) };
    status.check("reading an output's shape")?;
    Ok(Some(dims))
}
