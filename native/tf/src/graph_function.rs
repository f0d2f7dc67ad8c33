//! Part of a graph turned into a function of that graph's library: the branch and loop-body
//! functions Java's control flow (`Regions`) gathers from the operations a lambda built in the
//! body's graph. The function is copied into the graph (its `If`/`While` operations call it by
//! name, and the traced function's library takes it from there) and returned as a serialized
//! `FunctionDef`; no eager registration, no handle to keep.

use crate::c_api::{TF_Buffer, TF_Function, TF_Graph, TF_Operation, TF_Output};
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_int, CString};
use std::ptr;
use std::sync::OnceLock;

/// The operations of one graph function: its body, its inputs (arguments then captures), its
/// outputs and its control outputs (effects that run whenever it runs, named `effect_<i>`).
pub struct GraphPart<'a> {
    pub body: &'a [*mut TF_Operation],
    pub inputs: &'a [TF_Output],
    pub outputs: &'a [TF_Output],
    pub control_outputs: &'a [*mut TF_Operation],
}

type ToDef = unsafe extern "C" fn(*mut TF_Function, *mut TF_Buffer, *mut crate::c_api::TF_Status);
type NewBuffer = unsafe extern "C" fn() -> *mut TF_Buffer;
type DeleteBuffer = unsafe extern "C" fn(*mut TF_Buffer);

/// `TF_FunctionToFunctionDef` and the buffer functions, resolved on first use.
fn def_api(rt: &Runtime) -> Result<(ToDef, NewBuffer, DeleteBuffer), TfError> {
    static API: OnceLock<Result<(usize, usize, usize), &'static str>> = OnceLock::new();
    let api = API.get_or_init(|| {
        let sym = |name: &'static std::ffi::CStr| {
            rt.optional_symbol(name).map(|p| p as usize).ok_or(name.to_str().unwrap_or("a C API function"))
        };
        Ok((sym(c"TF_FunctionToFunctionDef")?, sym(c"TF_NewBuffer")?, sym(c"TF_DeleteBuffer")?))
    });
    match api {
        // SAFETY: the symbols are the C functions of those names, declared as in
        // tensorflow/c/c_api.h and tensorflow/c/tf_buffer.h.
        Ok((to_def, new_buffer, delete_buffer)) => unsafe {
            Ok((
                std::mem::transmute::<usize, ToDef>(*to_def),
                std::mem::transmute::<usize, NewBuffer>(*new_buffer),
                std::mem::transmute::<usize, DeleteBuffer>(*delete_buffer),
            ))
        },
        Err(missing) => Err(TfError::new(
            Code::Unimplemented,
            format!("the loaded TensorFlow {} has no {missing}: control flow cannot build its functions", rt.version()),
        )),
    }
}

/// Makes function `name` of `part` of `graph`, copies it into `graph`'s library and returns it as
/// a serialized `FunctionDef`. A failure leaves the graph's library as it was.
///
/// # Safety
/// `graph` must be a live graph not mutated concurrently; every operation and output in `part`
/// must belong to it.
pub unsafe fn add_graph_function(rt: &Runtime, graph: *mut TF_Graph, name: &str, part: &GraphPart<'_>) -> Result<Vec<u8>, TfError> {
    let api = rt.api();
    let (to_def, new_buffer, delete_buffer) = def_api(rt)?;
    let cname = CString::new(name).map_err(|_| TfError::invalid_argument("function name contains NUL"))?;
    let control_names: Vec<CString> =
        (0..part.control_outputs.len()).map(|i| CString::new(format!("effect_{i}")).unwrap()).collect();
    let control_name_ptrs: Vec<*const libc::c_char> = control_names.iter().map(|n| n.as_ptr()).collect();
    let control: Vec<*const TF_Operation> = part.control_outputs.iter().map(|&o| o as *const _).collect();
    let body: Vec<*const TF_Operation> = part.body.iter().map(|&o| o as *const _).collect();
    let status = Status::new(api);
    // SAFETY: graph is live and not mutated concurrently (caller's contract); every array passed
    // holds as many elements as the count passed with it (0 operations: none, not the whole
    // graph, which -1 would mean) and outlives the call.
    let func = unsafe {
        (api.TF_GraphToFunctionWithControlOutputs)(
            graph,
            cname.as_ptr(),
            0,
            body.len() as c_int,
            body.as_ptr(),
            part.inputs.len() as c_int,
            part.inputs.as_ptr(),
            part.outputs.len() as c_int,
            part.outputs.as_ptr(),
            ptr::null(),
            control.len() as c_int,
            control.as_ptr(),
            control_name_ptrs.as_ptr(),
            ptr::null(),
            ptr::null(),
            status.raw(),
        )
    };
    // No context: the message is TensorFlow's own, as when Java called the C API itself.
    status.check("")?;
    // SAFETY: func was made above and is owned here; the buffer is made and deleted here, its
    // bytes copied out first; func is deleted once, after its last use (the graph keeps a copy).
    unsafe {
        (api.TF_GraphCopyFunction)(graph, func, ptr::null(), status.raw());
        let copied = status.check("");
        let def = copied.and_then(|()| {
            let buf = new_buffer();
            to_def(func, buf, status.raw());
            let bytes = crate::c_api::buffer_bytes(buf).to_vec();
            delete_buffer(buf);
            status.check("").map(|()| bytes)
        });
        (api.TF_DeleteFunction)(func);
        def
    }
}

