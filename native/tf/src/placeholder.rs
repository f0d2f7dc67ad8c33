//! A trace's placeholders, added to its graph in one C API sequence each (new operation, dtype,
//! shape, finish) instead of TensorFlow Java's operation builder, whose Java side costs several
//! times more on a first call, before the JIT has compiled it. Java names each placeholder
//! through its scope, so TensorFlow Java's own names stay unique.

use crate::c_api::{TF_Graph, TF_Operation};
use crate::handle_data::MAX_RANK;
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::ffi::{c_int, CString};

/// The largest `TF_DataType` code a placeholder may have (`DT_UINT64`): every code from 1 to it
/// is a dtype of TensorFlow 2.18 to 2.21.
const MAX_PLACEHOLDER_DTYPE: i32 = 23;

/// Checks what [`add_placeholder`] would hand TensorFlow: a name TensorFlow accepts for an
/// operation (`[A-Za-z0-9.][A-Za-z0-9_.\-/>]*`), a known dtype, and dims of at most
/// [`MAX_RANK`], each at least -1 (unknown); `None` is an unknown rank.
pub fn check_placeholder(name: &str, dtype: i32, dims: Option<&[i64]>) -> Result<(), TfError> {
    let valid_name = name.bytes().enumerate().all(|(i, b)| {
        b.is_ascii_alphanumeric() || b == b'.' || (i > 0 && matches!(b, b'_' | b'-' | b'/' | b'>'))
    });
    if name.is_empty() || !valid_name {
        return Err(TfError::invalid_argument(format!("{name:?} is not a valid operation name")));
    }
    if !(1..=MAX_PLACEHOLDER_DTYPE).contains(&dtype) {
        return Err(TfError::invalid_argument(format!("dtype {dtype} is not a dtype a placeholder can have")));
    }
    if let Some(dims) = dims {
        if dims.len() > MAX_RANK {
            return Err(TfError::invalid_argument(format!("rank {} exceeds TensorFlow's limit {MAX_RANK}", dims.len())));
        }
        if let Some(d) = dims.iter().find(|&&d| d < -1) {
            return Err(TfError::invalid_argument(format!("dimension {d} in {dims:?}: only -1 (unknown) may be negative")));
        }
    }
    Ok(())
}

/// Adds placeholder `name` of `dtype` and shape `dims` (`None`: unknown rank) to `graph`,
/// checked first (see [`check_placeholder`]); a name already in the graph is TensorFlow's error.
/// With `unclustered`, it carries the mark that spares the function TensorFlow's XLA
/// auto-clustering pass (see [`crate::auto_clustering`]).
///
/// # Safety
/// `graph` must be a live graph.
pub unsafe fn add_placeholder(
    rt: &Runtime,
    graph: *mut TF_Graph,
    name: &str,
    dtype: i32,
    dims: Option<&[i64]>,
    unclustered: bool,
) -> Result<*mut TF_Operation, TfError> {
    check_placeholder(name, dtype, dims)?;
    let api = rt.api();
    let cname = CString::new(name).map_err(|_| TfError::invalid_argument("operation name contains NUL"))?;
    let status = Status::new(api);
    // SAFETY: live graph (caller's contract), NUL-terminated strings; the dims pointer holds the
    // count passed with it (-1, unknown rank, reads none); the description is finished once.
    let op = unsafe {
        let d = (api.TF_NewOperation)(graph, c"Placeholder".as_ptr(), cname.as_ptr());
        (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype);
        match dims {
            Some(dims) => (api.TF_SetAttrShape)(d, c"shape".as_ptr(), dims.as_ptr(), dims.len() as c_int),
            None => (api.TF_SetAttrShape)(d, c"shape".as_ptr(), std::ptr::null(), -1),
        }
        if unclustered {
            (api.TF_SetAttrBool)(d, crate::auto_clustering::ALREADY_CLUSTERED.as_ptr(), 1);
        }
        (api.TF_FinishOperation)(d, status.raw())
    };
    status.check("adding a placeholder")?;
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_names_dtypes_and_dims_before_tensorflow_sees_them() {
        assert!(check_placeholder("Placeholder_12", 1, Some(&[2, -1])).is_ok());
        assert!(check_placeholder("scope/x.y-z", 20, None).is_ok());
        for bad in ["", "_x", "a b", "a\0b", "é"] {
            assert!(check_placeholder(bad, 1, None).is_err(), "{bad:?}");
        }
        for dtype in [0, -1, 24, 101] {
            let e = check_placeholder("p", dtype, None).unwrap_err();
            assert!(e.message.contains(&format!("dtype {dtype}")), "{}", e.message);
        }
        assert!(check_placeholder("p", 1, Some(&[3, -2])).unwrap_err().message.contains("-2"));
        assert!(check_placeholder("p", 1, Some(&vec![1; MAX_RANK + 1])).unwrap_err().message.contains("rank"));
    }
}
