//! Checks a `FunctionDef` from outside (a cache file) against TensorFlow's op registry before
//! TensorFlow sees it: every node names a registered op and sets every attribute that op
//! requires. TensorFlow's graph optimizer (Grappler) trusts function definitions and aborts the
//! process on some malformed nodes (a `Const` without its `value`), so a damaged definition must
//! be refused here, not by TensorFlow. The attribute values themselves (tensors, shapes, kinds)
//! are checked by [`crate::attr_check`].

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

/// The attributes `op` defines: name, type (`"tensor"`, `"list(shape)"`...) and whether it is
/// required (has no default value); an error if `op` is not a registered op.
fn op_attrs(rt: &Runtime, api: &CheckApi, graph: *mut TF_Graph, op: &str) -> Result<Vec<OpAttr>, String> {
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
    // OpDef.attr (4) is an AttrDef: name (1), type (2), default_value (3).
    let mut out = Vec::new();
    for attr in nested(&def, &[4])? {
        out.push(OpAttr {
            name: single(attr, 1)?.unwrap_or_default().to_vec(),
            kind: String::from_utf8_lossy(single(attr, 2)?.unwrap_or_default()).into_owned(),
            required: nested(attr, &[3])?.is_empty(),
        });
    }
    Ok(out)
}

/// One attribute of an op's definition.
struct OpAttr {
    name: Vec<u8>,
    kind: String,
    required: bool,
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
    let mut known: std::collections::HashMap<Vec<u8>, Vec<OpAttr>> = Default::default();
    let mut budget = crate::attr_check::TensorBudget::default();
    // FunctionDef.node_def (3) is a NodeDef: name (1), op (2), attr (5, map entries: key 1, value 2).
    for node in nested(def, &[3])? {
        let name = String::from_utf8_lossy(single(node, 1)?.unwrap_or_default()).into_owned();
        let op = single(node, 2)?.unwrap_or_default();
        let op_text = String::from_utf8_lossy(op).into_owned();
        if !known.contains_key(op) {
            let text = std::str::from_utf8(op).map_err(|_| format!("node {name:?}: an op type that is not UTF-8"))?;
            let attrs = op_attrs(rt, api, graph.1, text).map_err(|e| format!("node {name:?}: {e}"))?;
            known.insert(op.to_vec(), attrs);
        }
        let defined = &known[op];
        let mut set: Vec<(Vec<u8>, &[u8])> = Vec::new();
        for entry in nested(node, &[5])? {
            let bad = |e: String| format!("node {name:?}: an attribute entry: {e}");
            let key = single(entry, 1).map_err(bad)?.unwrap_or_default();
            let value = single(entry, 2).map_err(bad)?.unwrap_or_default();
            let kind = defined.iter().find(|a| a.name == key).map(|a| a.kind.as_str());
            crate::attr_check::check_value(value, kind, &mut budget).map_err(|e| {
                format!("node {name:?} ({op_text}): attribute {:?}: {e}", String::from_utf8_lossy(key))
            })?;
            set.push((key.to_vec(), value));
        }
        for attr in defined.iter().filter(|a| a.required) {
            if !set.iter().any(|(a, _)| *a == attr.name) {
                return Err(format!(
                    "node {name:?} ({op_text}) lacks its required attribute {:?}",
                    String::from_utf8_lossy(&attr.name)
                ));
            }
        }
        if op == b"Const" || op == b"HostConst" {
            let get = |k: &[u8]| set.iter().rev().find(|(a, _)| a == k).map(|(_, v)| *v);
            crate::attr_check::check_const(get(b"value"), get(b"dtype")).map_err(|e| format!("node {name:?} ({op_text}): {e}"))?;
        }
    }
    check_function_attrs(def, &mut budget)
}

/// The definition's own attributes (FunctionDef.attr (5): map entries, key 1, value 2) and its
/// arguments' (arg_attr (7): map entries whose value (2) is an ArgAttrs, whose attr (1) is such a
/// map), checked as node attributes are: TensorFlow reads some of them (`_input_shapes`, output
/// shapes, `_read_only_resource_inputs`) into shapes and tensors it trusts.
fn check_function_attrs(def: &[u8], budget: &mut crate::attr_check::TensorBudget) -> Result<(), String> {
    let check = |entry: &[u8], budget: &mut crate::attr_check::TensorBudget, whose: &str| -> Result<(), String> {
        let key = String::from_utf8_lossy(single(entry, 1)?.unwrap_or_default()).into_owned();
        let value = single(entry, 2)?.unwrap_or_default();
        crate::attr_check::check_value(value, None, budget).map(drop).map_err(|e| format!("{whose} attribute {key:?}: {e}"))
    };
    for entry in nested(def, &[5])? {
        check(entry, budget, "the function's")?;
    }
    for arg in nested(def, &[7])? {
        let attrs = single(arg, 2)?.unwrap_or_default();
        for entry in nested(attrs, &[1])? {
            check(entry, budget, "an argument's")?;
        }
    }
    Ok(())
}

/// Each of `def`'s `count` inputs' recorded shape as dims (-1 unknown), None where none is
/// recorded, its rank is unknown, or it is no shape TensorFlow accepts (`attr_check::check_shape`:
/// dims >= -1, at most 254 of them, fewer than 2^63 elements), so that it can be given to a
/// placeholder safely.
pub(crate) fn input_shapes(def: &[u8], count: usize) -> Vec<Option<Vec<i64>>> {
    let Ok(recorded) = crate::function_def_proto::arg_output_shapes(def, count) else {
        return vec![None; count];
    };
    recorded.into_iter().map(|shape| shape.and_then(known_rank_dims)).collect()
}

/// A `TensorShapeProto`'s dims (dim (2): size (1); unknown_rank (3)) when its rank is known and
/// it is a shape TensorFlow accepts.
fn known_rank_dims(shape: &[u8]) -> Option<Vec<i64>> {
    crate::attr_check::check_shape(shape, false).ok()?;
    if crate::function_def_proto::varint_field(shape, 3).ok()?.unwrap_or(0) != 0 {
        return None;
    }
    let mut dims = Vec::new();
    for dim in nested(shape, &[2]).ok()? {
        // int64: two's complement in a varint
        dims.push(crate::function_def_proto::varint_field(dim, 1).ok()?.unwrap_or(0) as i64);
    }
    Some(dims)
}

/// One imported function whose body [`check_bodies`] checks: its TensorFlow object, the name it
/// was imported under, its input and output dtypes.
pub(crate) struct Body<'a> {
    pub(crate) function: *mut crate::c_api::TF_Function,
    pub(crate) name: &'a str,
    pub(crate) inputs: &'a [i32],
    pub(crate) outputs: &'a [i32],
    /// Each input's recorded shape ([`input_shapes`]), None where unknown: with
    /// them, shape inference finds what only a call would (a reduction over an axis a scalar lacks).
    pub(crate) shapes: Vec<Option<Vec<i64>>>,
}

/// Checks that each function's body is a valid graph (every input and returned value names an
/// existing node output, every edge joins matching dtypes) by adding a call of it to a scratch
/// graph: the graph's shape inference builds the body as TensorFlow will at the first call. A
/// definition whose body TensorFlow cannot build would otherwise load, then fail every call.
///
/// # Safety
/// Every function must be live; they are copied, not taken.
pub(crate) unsafe fn check_bodies(rt: &Runtime, bodies: &[Body<'_>]) -> Result<(), String> {
    use crate::c_api::TF_Output;
    let api = rt.api();
    struct OwnedGraph<'a>(&'a Runtime, *mut TF_Graph);
    impl Drop for OwnedGraph<'_> {
        fn drop(&mut self) {
            // SAFETY: made below, deleted once.
            unsafe { (self.0.api().TF_DeleteGraph)(self.1) }
        }
    }
    // SAFETY: TF_NewGraph has no preconditions.
    let graph = OwnedGraph(rt, unsafe { (api.TF_NewGraph)() });
    let status = Status::new(api);
    for b in bodies {
        // SAFETY: live graph and function (caller's contract).
        unsafe { (api.TF_GraphCopyFunction)(graph.1, b.function, std::ptr::null(), status.raw()) };
        status.check("").map_err(|e| format!("function {}: {}", b.name, e.message))?;
    }
    for (n, b) in bodies.iter().enumerate() {
        let mut feeds = Vec::with_capacity(b.inputs.len());
        for (i, &dtype) in b.inputs.iter().enumerate() {
            let name = CString::new(format!("x{n}_{i}")).map_err(|_| "a NUL in a name".to_owned())?;
            // SAFETY: live graph; the description is finished exactly once.
            let shape = b.shapes.get(i).and_then(Option::as_ref);
            let op = unsafe {
                let d = (api.TF_NewOperation)(graph.1, c"Placeholder".as_ptr(), name.as_ptr());
                (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype);
                if let Some(dims) = shape {
                    // Checked by input_shapes: dims >= -1, at most 254 of them, fewer than 2^63 elements.
                    (api.TF_SetAttrShape)(d, c"shape".as_ptr(), dims.as_ptr(), dims.len() as std::ffi::c_int);
                }
                (api.TF_FinishOperation)(d, status.raw())
            };
            status.check("").map_err(|e| format!("function {}: input {i}: {}", b.name, e.message))?;
            feeds.push(TF_Output { oper: op, index: 0 });
        }
        let name = CString::new(format!("call{n}")).map_err(|_| "a NUL in a name".to_owned())?;
        let fname = b.name.as_bytes();
        // SAFETY: as above; every array holds the count passed with it.
        unsafe {
            let d = (api.TF_NewOperation)(graph.1, c"StatefulPartitionedCall".as_ptr(), name.as_ptr());
            (api.TF_AddInputList)(d, feeds.as_ptr(), feeds.len() as std::ffi::c_int);
            (api.TF_SetAttrTypeList)(d, c"Tin".as_ptr(), b.inputs.as_ptr(), b.inputs.len() as std::ffi::c_int);
            (api.TF_SetAttrTypeList)(d, c"Tout".as_ptr(), b.outputs.as_ptr(), b.outputs.len() as std::ffi::c_int);
            (api.TF_SetAttrFuncName)(d, c"f".as_ptr(), fname.as_ptr().cast(), fname.len());
            (api.TF_FinishOperation)(d, status.raw());
        }
        status.check("").map_err(|e| format!("function {}: its body is not a valid graph: {}", b.name, e.message))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::input_shapes;
    use crate::function_def_proto::{put_bytes as bytes, put_varint as varint, with_arg_attr};

    /// An `AttrValue` holding a list of these `TensorShapeProto`s (None: unknown rank).
    fn shapes(list: &[Option<&[i64]>]) -> Vec<u8> {
        let mut values = Vec::new();
        for shape in list {
            let mut proto = Vec::new();
            match shape {
                Some(dims) => {
                    for &d in *dims {
                        let mut dim = Vec::new();
                        varint(&mut dim, 1 << 3);
                        varint(&mut dim, d as u64);
                        bytes(&mut proto, 2, &dim);
                    }
                }
                None => {
                    varint(&mut proto, 3 << 3);
                    varint(&mut proto, 1);
                }
            }
            bytes(&mut values, 7, &proto);
        }
        let mut attr = Vec::new();
        bytes(&mut attr, 1, &values);
        attr
    }

    #[test]
    fn recorded_shapes_of_known_rank_are_read_and_others_left_unknown() {
        let mut def = Vec::new();
        for (i, value) in [
            shapes(&[Some(&[3, -1])]),
            shapes(&[None]),
            shapes(&[Some(&[-5])]),
            shapes(&[Some(&[2]), Some(&[3])]),
            shapes(&[Some(&[])]),
            shapes(&[Some(&[i64::MAX, 4])]),
        ]
        .iter()
        .enumerate()
        {
            def = with_arg_attr(&def, i as u64, "_output_shapes", value).unwrap();
        }
        // A later entry for argument 4 wins, as in TensorFlow's parser; argument 6 records nothing.
        def = with_arg_attr(&def, 4, "_output_shapes", &shapes(&[Some(&[7])])).unwrap();
        assert_eq!(
            input_shapes(&def, 7),
            vec![Some(vec![3, -1]), None, None, None, Some(vec![7]), None, None],
            "known rank kept; unknown rank, a dim below -1, two shapes and 2^63 elements left unknown"
        );
        // Entries beyond the inputs are ignored; a malformed definition leaves every input unknown.
        assert_eq!(input_shapes(&def, 1), vec![Some(vec![3, -1])]);
        assert_eq!(input_shapes(&[0xff], 2), vec![None, None]);
    }
}
