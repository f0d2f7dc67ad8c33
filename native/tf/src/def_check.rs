//! Checks a `FunctionDef` from outside (a cache file) against TensorFlow's op registry before
//! TensorFlow sees it: every node names a registered op and sets every attribute that op
//! requires. TensorFlow's graph optimizer (Grappler) trusts function definitions and aborts the
//! process on some malformed nodes (a `Const` without its `value`), so a damaged definition must
//! be refused here, not by TensorFlow.

use crate::c_api::{TF_Buffer, TF_Graph, TF_Status};
use crate::function_def_proto::{nested, single};
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_char, c_void, CString};
use std::sync::OnceLock;

type GetOpDef = unsafe extern "C" fn(*mut TF_Graph, *const c_char, *mut TF_Buffer, *mut TF_Status);

type NewBuffer = unsafe extern "C" fn() -> *mut TF_Buffer;
type DeleteBuffer = unsafe extern "C" fn(*mut TF_Buffer);

struct CheckApi {
    get_op_def: GetOpDef,
    new_buffer: NewBuffer,
    delete_buffer: DeleteBuffer,
}

fn check_api(rt: &Runtime) -> Result<&'static CheckApi, TfError> {
    static API: OnceLock<Option<CheckApi>> = OnceLock::new();
    API.get_or_init(|| {
        let (get, new, delete) = (
            rt.optional_symbol(c"TF_GraphGetOpDef")?,
            rt.optional_symbol(c"TF_NewBuffer")?,
            rt.optional_symbol(c"TF_DeleteBuffer")?,
        );
        // SAFETY: the C functions of those names, declared as in tensorflow/c/c_api.h and
        // tensorflow/c/tf_buffer.h.
        unsafe {
            Some(CheckApi {
                get_op_def: std::mem::transmute::<*mut c_void, GetOpDef>(get),
                new_buffer: std::mem::transmute::<*mut c_void, NewBuffer>(new),
                delete_buffer: std::mem::transmute::<*mut c_void, DeleteBuffer>(delete),
            })
        }
    })
    .as_ref()
    .ok_or_else(|| TfError::new(Code::Unimplemented, format!("the loaded TensorFlow {} cannot list op definitions", rt.version())))
}

/// The attributes `op` requires (those without a default value), or an error if it is not a
/// registered op.
fn required_attrs(rt: &Runtime, api: &CheckApi, graph: *mut TF_Graph, op: &str) -> Result<Vec<Vec<u8>>, String> {
    let c = CString::new(op).map_err(|_| "an op type with a NUL byte".to_owned())?;
    let status = Status::new(rt.api());
    // SAFETY: live graph and buffer, both owned here; the bytes are copied before the buffer
    // is deleted.
    let def = unsafe {
        let buf = (api.new_buffer)();
        (api.get_op_def)(graph, c.as_ptr(), buf, status.raw());
        let bytes = crate::c_api::buffer_bytes(buf).to_vec();
        (api.delete_buffer)(buf);
        bytes
    };
    status.check("").map_err(|e| format!("op {op:?} is not registered: {e}"))?;
    // OpDef.attr (4) is an AttrDef: name (1), default_value (3).
    let mut out = Vec::new();
    for attr in nested(&def, &[4])? {
        if nested(attr, &[3])?.is_empty() {
            out.extend(nested(attr, &[1])?.into_iter().map(<[u8]>::to_vec));
        }
    }
    Ok(out)
}

/// Checks every node of `def` (see the module docs); the error says which node and why.
pub(crate) fn check_nodes(rt: &Runtime, def: &[u8]) -> Result<(), String> {
    let api = check_api(rt).map_err(|e| e.message)?;
    struct OwnedGraph<'a>(&'a Runtime, *mut TF_Graph);
    impl Drop for OwnedGraph<'_> {
        fn drop(&mut self) {
            // SAFETY: made below, deleted once.
            unsafe { (self.0.api().TF_DeleteGraph)(self.1) }
        }
    }
    // SAFETY: TF_NewGraph has no preconditions; the graph only serves op definition lookups.
    let graph = OwnedGraph(rt, unsafe { (rt.api().TF_NewGraph)() });
    let mut known: std::collections::HashMap<Vec<u8>, Vec<Vec<u8>>> = Default::default();
    // FunctionDef.node_def (3) is a NodeDef: name (1), op (2), attr (5, map entries keyed by 1).
    for node in nested(def, &[3])? {
        let name = String::from_utf8_lossy(single(node, 1)?.unwrap_or_default()).into_owned();
        let op = single(node, 2)?.unwrap_or_default();
        if !known.contains_key(op) {
            let text = std::str::from_utf8(op).map_err(|_| format!("node {name:?}: an op type that is not UTF-8"))?;
            let required = required_attrs(rt, api, graph.1, text).map_err(|e| format!("node {name:?}: {e}"))?;
            known.insert(op.to_vec(), required);
        }
        let mut set = Vec::new();
        for entry in nested(node, &[5])? {
            set.extend(single(entry, 1).map_err(|e| format!("node {name:?}: an attribute entry: {e}"))?);
        }
        for attr in &known[op] {
            if !set.iter().any(|a| a == attr) {
                return Err(format!(
                    "node {name:?} ({}) lacks its required attribute {:?}",
                    String::from_utf8_lossy(op),
                    String::from_utf8_lossy(attr)
                ));
            }
        }
    }
    Ok(())
}
