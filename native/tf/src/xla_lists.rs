//! Lists of lists kept away from XLA. TensorFlow's XLA compiler aborts the process (a failed
//! check, `shape.IsTuple()` in `TensorListPushBackOp::Compile`) when a TensorList of unknown
//! element shape is pushed into a TensorList of TensorLists, so a definition restored from outside
//! (a trace cache entry), or a function a trace calls, is refused before XLA sees it when any
//! TensorList operation in it has TensorLists for elements (not only those making a list: a push
//! decides from its input). A trace's own operations are refused earlier, at trace time, by the
//! Java side's `FlowChecks.refuseListsOfListsUnderXla`, which applies the same rule.

use crate::function_def_proto::{nested, single, varint_field};

/// Whether ops of type `op` are TensorList operations (most have an `element_dtype`).
fn is_list_op(op: &[u8]) -> bool {
    op.starts_with(b"TensorList") || op == b"EmptyTensorList"
}

/// `DT_VARIANT`, the dtype of a TensorList.
const DT_VARIANT: u64 = 21;

/// Refuses a `FunctionDef` with a TensorList operation on TensorLists of TensorLists; the error
/// names the node.
pub(crate) fn refuse_lists_of_lists(def: &[u8]) -> Result<(), String> {
    // FunctionDef.node_def (3) is a NodeDef: name (1), op (2), attr (5, map entries: key 1,
    // value 2, an AttrValue whose type is field 6).
    for node in nested(def, &[3])? {
        let op = single(node, 2)?.unwrap_or_default();
        if !is_list_op(op) {
            continue;
        }
        for entry in nested(node, &[5])? {
            // Every copy is looked at: whichever TensorFlow's map parser keeps, none is a variant.
            if single(entry, 1)? == Some(b"element_dtype".as_slice())
                && varint_field(single(entry, 2)?.unwrap_or_default(), 6)? == Some(DT_VARIANT)
            {
                return Err(format!(
                    "node {:?} ({}) has a TensorList of TensorLists, which TensorFlow's XLA compiler cannot \
                     always compile (it aborts the process on some): restore it without jitCompile",
                    String::from_utf8_lossy(single(node, 1)?.unwrap_or_default()),
                    String::from_utf8_lossy(op)
                ));
            }
        }
    }
    Ok(())
}
