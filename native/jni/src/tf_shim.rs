//! PLACEHOLDER (lead): TensorFlow naming and op lookup, replaced by polyfn-tf's at merge.
use crate::errors::{NativeError, Result};
use polyfn_tf::c_api::{TF_Graph, TF_Output};
use polyfn_tf::Runtime;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_FUNCTION: AtomicU64 = AtomicU64::new(1);

pub fn function_name(display: &str) -> String {
    let s: String = display
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .take(40)
        .collect();
    format!("polyfn_{}_{}", s, NEXT_FUNCTION.fetch_add(1, Ordering::Relaxed))
}

pub unsafe fn graph_output(rt: &Runtime, graph: *mut TF_Graph, op: &str, index: i32) -> Result<TF_Output> {
    let c = CString::new(op).map_err(|_| NativeError::IllegalArgument(format!("bad operation name {op:?}")))?;
    let oper = unsafe { (rt.api().TF_GraphOperationByName)(graph, c.as_ptr()) };
    if oper.is_null() {
        return Err(NativeError::IllegalState(format!("operation {op} is not in the traced graph")));
    }
    Ok(TF_Output { oper, index })
}
