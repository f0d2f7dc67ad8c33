//! Shape-and-type data of resource handles: what lets TensorFlow's shape inference give a
//! `ReadVariableOp` the variable's dtype and static shape, as Python's `_handle_data` does.
//!
//! The C API takes the data as a serialized `CppShapeInferenceResult.HandleData` protocol
//! buffer; the few fields needed are encoded here by hand (no protobuf dependency):
//!
//! ```text
//! HandleData         { bool is_set = 1; repeated HandleShapeAndType shape_and_type = 2; }
//! HandleShapeAndType { TensorShapeProto shape = 1; DataType dtype = 2; }
//! TensorShapeProto   { repeated Dim dim = 2; bool unknown_rank = 3; }   Dim { int64 size = 1; }
//! ```

use crate::c_api::{TF_Graph, TF_Output};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use crate::tensor::{DT_RESOURCE, DT_VARIANT};

/// TensorFlow's limit on the rank of a shape (`TensorShape::MaxDimensions`).
pub const MAX_RANK: usize = 254;

/// The largest `DataType` code of a value type (`DT_UINT4` in TensorFlow 2.18); larger codes
/// are reference types, which no resource holds.
const MAX_DTYPE: i32 = 30;

/// Records that the resource handle `output` refers to a value of `dtype` and shape `dims`
/// (`None`: unknown rank; -1: unknown dimension). Operations added to the graph afterwards that
/// read the resource (`ReadVariableOp`) get that dtype and static shape.
///
/// # Safety
/// `graph` must be a live graph not mutated concurrently, and `output.oper` an operation of it.
pub unsafe fn set_handle_shape(
    rt: &Runtime,
    graph: *mut TF_Graph,
    output: TF_Output,
    dtype: i32,
    dims: Option<&[i64]>,
) -> Result<(), TfError> {
    let api = rt.api();
    // TensorFlow indexes the output's inference context unchecked: check the index first.
    // SAFETY: output.oper is an operation of the live graph (caller's contract).
    let outputs = unsafe { (api.TF_OperationNumOutputs)(output.oper) };
    if output.index < 0 || output.index >= outputs {
        return Err(TfError::invalid_argument(format!(
            "the operation has {outputs} output(s); output {} does not exist",
            output.index
        )));
    }
    // SAFETY: an existing output of a live operation.
    let handle_type = unsafe { (api.TF_OperationOutputType)(output) };
    if handle_type != DT_RESOURCE && handle_type != DT_VARIANT {
        return Err(TfError::invalid_argument(format!(
            "only resource or variant handles carry shape-and-type data; this output has dtype {handle_type}"
        )));
    }
    if !(1..=MAX_DTYPE).contains(&dtype) || dtype == DT_RESOURCE || dtype == DT_VARIANT {
        return Err(TfError::invalid_argument(format!("dtype {dtype} is not the dtype of a variable's value")));
    }
    if let Some(dims) = dims {
        if dims.len() > MAX_RANK {
            return Err(TfError::invalid_argument(format!("rank {} exceeds TensorFlow's limit {MAX_RANK}", dims.len())));
        }
        if let Some(d) = dims.iter().find(|&&d| d < -1) {
            return Err(TfError::invalid_argument(format!("dimension {d} in {dims:?}: only -1 (unknown) may be negative")));
        }
    }
    let proto = encode_handle_data(dtype, dims);
    let status = Status::new(api);
    // SAFETY: live graph and existing output (checked above); proto is proto.len() bytes.
    unsafe { (api.TF_SetHandleShapeAndType)(graph, output, proto.as_ptr().cast(), proto.len(), status.raw()) };
    status.check("setting a resource handle's shape and dtype")
}

/// The serialized `HandleData` for one value of `dtype` and `dims`.
fn encode_handle_data(dtype: i32, dims: Option<&[i64]>) -> Vec<u8> {
    let mut shape = Vec::new();
    match dims {
        None => shape.extend([0x18, 1]), // unknown_rank = true
        Some(dims) => {
            for &d in dims {
                let mut dim = vec![0x08]; // Dim.size
                varint(d as u64, &mut dim);
                message(0x12, &dim, &mut shape); // TensorShapeProto.dim
            }
        }
    }
    let mut shape_and_type = Vec::new();
    message(0x0a, &shape, &mut shape_and_type); // HandleShapeAndType.shape
    shape_and_type.push(0x10); // HandleShapeAndType.dtype
    varint(dtype as u64, &mut shape_and_type);
    let mut data = vec![0x08, 1]; // HandleData.is_set = true
    message(0x12, &shape_and_type, &mut data); // HandleData.shape_and_type
    data
}

/// A length-delimited field: tag, length, bytes.
fn message(tag: u8, body: &[u8], out: &mut Vec<u8>) {
    out.push(tag);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// A protobuf base-128 varint (negative int64 values take ten bytes, as protobuf encodes them).
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_known_and_unknown_shapes() {
        // float [2, -1]
        let mut expected = vec![0x08, 1, 0x12];
        let dim2 = [0x12, 2, 0x08, 2];
        let mut dim_unknown = vec![0x12, 11, 0x08];
        dim_unknown.extend([0xff; 9]);
        dim_unknown.push(0x01);
        let shape_len = dim2.len() + dim_unknown.len();
        let body_len = 2 + shape_len + 2;
        expected.push(body_len as u8);
        expected.extend([0x0a, shape_len as u8]);
        expected.extend(dim2);
        expected.extend(&dim_unknown);
        expected.extend([0x10, 1]);
        assert_eq!(encode_handle_data(1, Some(&[2, -1])), expected);
        // int32, unknown rank; scalar
        assert_eq!(encode_handle_data(3, None), [0x08, 1, 0x12, 6, 0x0a, 2, 0x18, 1, 0x10, 3]);
        assert_eq!(encode_handle_data(1, Some(&[])), [0x08, 1, 0x12, 4, 0x0a, 0, 0x10, 1]);
    }
}
