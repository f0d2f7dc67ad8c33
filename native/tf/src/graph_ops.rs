//! The graph scans: finding the operations of a traced graph by name (the graph is built in
//! Java; Polyfn gets operation names back), reading what TensorFlow inferred about them, and
//! listing a graph's operations (what a function's body holds, and what its call path and
//! options are chosen from).

use crate::c_api::{TF_Graph, TF_Operation, TF_Output};
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_char, CStr, CString};

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

/// Control-flow op types (their branches and bodies are functions).
pub(crate) const CONTROL_FLOW: [&str; 6] = ["If", "While", "StatelessIf", "StatelessWhile", "Case", "StatelessCase"];
/// Call op types (they run the function named in their attribute `f`).
pub(crate) const CALLS: [&str; 2] = ["StatefulPartitionedCall", "PartitionedCall"];

/// Whether ops of type `ty` run other functions (control flow or calls).
pub(crate) fn refers_to_functions(ty: &str) -> bool {
    CONTROL_FLOW.contains(&ty) || CALLS.contains(&ty)
}

/// The `(op type, node name)` of every operation of a graph.
///
/// # Safety
/// `graph` must be live and not mutated concurrently.
pub(crate) unsafe fn graph_ops(rt: &Runtime, graph: *mut TF_Graph) -> Vec<(String, String)> {
    let mut opers = Vec::new();
    let mut pos = 0usize;
    loop {
        // SAFETY: live graph; pos is the iteration cursor TensorFlow expects.
        let oper = unsafe { (rt.api().TF_GraphNextOperation)(graph, &mut pos) };
        if oper.is_null() {
            // SAFETY: operations of the live graph.
            return unsafe { described(rt, &opers) };
        }
        opers.push(oper as *const TF_Operation);
    }
}

/// The operations of `graph` that make the function's body when some are `excluded`: all but
/// those and the inputs' placeholders (which an explicit body must not list), in graph order.
/// None when nothing is excluded: TensorFlow then takes every operation but the inputs itself.
///
/// # Safety
/// `graph` must be live and not mutated concurrently.
pub(crate) unsafe fn body_of(
    rt: &Runtime,
    graph: *mut TF_Graph,
    inputs: &[TF_Output],
    excluded: &[*mut TF_Operation],
) -> Option<Vec<*const TF_Operation>> {
    if excluded.is_empty() {
        return None;
    }
    let skip: std::collections::HashSet<*mut TF_Operation> =
        excluded.iter().copied().chain(inputs.iter().map(|o| o.oper)).collect();
    let mut body = Vec::new();
    let mut pos = 0usize;
    loop {
        // SAFETY: live graph; pos is the iteration cursor TensorFlow expects.
        let oper = unsafe { (rt.api().TF_GraphNextOperation)(graph, &mut pos) };
        if oper.is_null() {
            return Some(body);
        }
        if !skip.contains(&oper) {
            body.push(oper as *const TF_Operation);
        }
    }
}

/// The `(op type, node name)` of each operation.
///
/// # Safety
/// The operations must belong to a live graph not mutated concurrently.
pub(crate) unsafe fn described(rt: &Runtime, opers: &[*const TF_Operation]) -> Vec<(String, String)> {
    let api = rt.api();
    let text = |p: *const c_char| {
        // SAFETY: a NUL-terminated string owned by the live graph, copied at once.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    opers
        .iter()
        // SAFETY: an operation of the live graph (caller's contract).
        .map(|&oper| unsafe { (text((api.TF_OperationOpType)(oper.cast_mut())), text((api.TF_OperationName)(oper.cast_mut()))) })
        .collect()
}

/// `TF_OpIsStateful`, resolved once (None when the loaded TensorFlow lacks it).
type OpIsStateful = unsafe extern "C" fn(*const c_char, *mut crate::c_api::TF_Status) -> std::ffi::c_int;

fn op_is_stateful_fn(rt: &Runtime) -> Option<OpIsStateful> {
    static F: std::sync::OnceLock<Option<OpIsStateful>> = std::sync::OnceLock::new();
    *F.get_or_init(|| {
        // SAFETY: the symbol is `int TF_OpIsStateful(const char*, TF_Status*)` of c_api_experimental.h.
        rt.optional_symbol(c"TF_OpIsStateful").map(|p| unsafe { std::mem::transmute::<*mut libc::c_void, OpIsStateful>(p) })
    })
}

/// Whether TensorFlow registers ops of type `ty` (NUL-terminated) as stateful; an unknown type,
/// or a runtime without the query, counts as stateful. Known answers are kept: an op type's
/// registration does not change.
pub(crate) fn is_stateful(rt: &Runtime, ty: &CStr) -> bool {
    static KNOWN: std::sync::Mutex<Option<std::collections::HashMap<Vec<u8>, bool>>> = std::sync::Mutex::new(None);
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = known.as_ref().and_then(|k| k.get(ty.to_bytes())) {
        return s;
    }
    let Some(f) = op_is_stateful_fn(rt) else { return true };
    let status = Status::new(rt.api());
    // SAFETY: a NUL-terminated op type and a live status.
    let stateful = unsafe { f(ty.as_ptr(), status.raw()) } != 0;
    if status.check("").is_err() {
        return true;
    }
    known.get_or_insert_with(Default::default).insert(ty.to_bytes().to_vec(), stateful);
    stateful
}

/// Whether any operation of `graph` may have to run for its effect: one without outputs (a
/// variable assignment, a `NoOp`), or of a type TensorFlow registers as stateful (or does not
/// know). When none does, a trace has no effects to order or keep, and Java skips the walk over
/// every operation that would find that out (see `TraceOutputs.effects`).
///
/// # Safety
/// `graph` must be live and not mutated concurrently.
pub unsafe fn may_have_effects(rt: &Runtime, graph: *mut TF_Graph) -> bool {
    let api = rt.api();
    let mut pos = 0usize;
    loop {
        // SAFETY: live graph; pos is the iteration cursor TensorFlow expects.
        let oper = unsafe { (api.TF_GraphNextOperation)(graph, &mut pos) };
        if oper.is_null() {
            return false;
        }
        // SAFETY: an operation of the live graph; its type string lives as long as the graph.
        let (outputs, ty) = unsafe { ((api.TF_OperationNumOutputs)(oper), CStr::from_ptr((api.TF_OperationOpType)(oper))) };
        if outputs == 0 || is_stateful(rt, ty) {
            return true;
        }
    }
}
