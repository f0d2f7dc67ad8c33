//! The session path: a concrete function called often enough runs through a `TF_Session` on
//! the calling thread, TensorFlow's cheapest way to run a graph.
//!
//! The eager caller-thread path (`fast_path`) still builds an op and a tensor handle per input
//! on every call. A `TF_Session` over a graph that feeds placeholders into a call of the
//! function, with `inter_op_parallelism_threads = -1` (run on the caller's thread) and
//! `do_function_inlining` (so the call is replaced by the function's body), runs a function in
//! about the time of the bare graph, and takes and returns `TF_Tensor`s directly.
//!
//! When calls use the sessions (the promotion count, a slot per core, the trial that keeps the
//! path only where it is faster) is `session_tier`'s.
//!
//! A session costs milliseconds to make and to run the first time (graph optimization, kernel
//! creation), so a function moves to it only after [`crate::call_options::PROMOTE_AFTER`] calls ("promotion"): the
//! call that reaches the count builds it, on its own thread, while other callers keep using the
//! eager path; the session is published only once it has run that call's inputs correctly.
//! A function can have one session per core (up to 4), and each calling thread keeps to one of
//! them, so threads calling one function share no lock of TensorFlow's: the promoting call builds
//! the first, and a thread whose own is missing builds it on one of its calls (checked against
//! the first session's results), using the first until then.
//!
//! Only functions whose results cannot depend on where they run take it: those the eager fast
//! path takes (no control flow, no nested calls), with no effects (control outputs), no
//! resource or variant values (variables and other state live in the eager context, which a
//! session cannot see), no stateful op (a random op's state would restart in the session,
//! repeating values the eager kernel already returned; checked in the function's signature and
//! in TensorFlow's op registry), and only while the eager context has no device but CPUs (a
//! session makes its own devices, and would place the function on a GPU the context may not use).

use crate::c_api::{TF_Buffer, TF_Graph, TF_Output, TF_Session, TF_SessionOptions, TF_Status, TF_Tensor};
use super::EagerFunction;
use crate::context::EagerContext;
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use crate::tensor::{DT_RESOURCE, DT_VARIANT};
use std::ffi::{c_int, c_void, CString};
use std::ptr;
use std::sync::OnceLock;

/// The session configuration (`ConfigProto`): `inter_op_parallelism_threads: -1` (field 5),
/// `allow_soft_placement: true` (7), and `graph_options` (10) with
/// `optimizer_options { do_function_inlining: true }` (GraphOptions 3, OptimizerOptions 4) and
/// `rewrite_options { memory_optimization: SCHEDULING_HEURISTICS }` (GraphOptions 10,
/// RewriterConfig 4): sessions run only on contexts with no device but CPUs, where the memory
/// optimizer's swapping heuristics do nothing (see [`crate::call_options::CPU_CONFIG_PROTO`]).
const SESSION_CONFIG: &[u8] = b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x38\x01\x52\x08\x1a\x02\x20\x01\x52\x02\x20\x06";
/// The same without Grappler's TFG optimizer (`rewrite_options { disable_tfg_optimizer: true }`,
/// GraphOptions 10, RewriterConfig 32), for functions it cannot change, as
/// [`crate::call_options::PYTHON_CONFIG_PROTO_NO_TFG`].
const SESSION_CONFIG_NO_TFG: &[u8] =
    b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x38\x01\x52\x0b\x1a\x02\x20\x01\x52\x05\x20\x06\x80\x02\x01";
/// [`SESSION_CONFIG`] and [`SESSION_CONFIG_NO_TFG`] with the memory optimizer left at Python's
/// default, for a process whose `TF_XLA_FLAGS` may turn global XLA auto-clustering on (see
/// [`crate::call_options::global_jit_flags`]).
const SESSION_CONFIG_PYTHON_MEMORY: &[u8] = b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x38\x01\x52\x04\x1a\x02\x20\x01";
const SESSION_CONFIG_PYTHON_MEMORY_NO_TFG: &[u8] =
    b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x38\x01\x52\x09\x1a\x02\x20\x01\x52\x03\x80\x02\x01";
/// The same with Grappler off: `graph_options.rewrite_options { disable_meta_optimizer: true }`
/// (GraphOptions 10, RewriterConfig 19), as [`crate::call_options::NO_GRAPPLER_CONFIG_PROTO`].
const SESSION_CONFIG_NO_GRAPPLER: &[u8] =
    b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x38\x01\x52\x09\x1a\x02\x20\x01\x52\x03\x98\x01\x01";

/// `OpDef.is_stateful`, field 17 of a `FunctionDef`'s signature (field 1).
const SIGNATURE: u64 = 1;
const IS_STATEFUL: u64 = 17;

type SetConfig = unsafe extern "C" fn(*mut TF_SessionOptions, *const c_void, usize, *mut TF_Status);
type ExtendSession = unsafe extern "C" fn(*mut TF_Session, *mut TF_Status);
type GetAllOpList = unsafe extern "C" fn() -> *mut TF_Buffer;
type DeleteBuffer = unsafe extern "C" fn(*mut TF_Buffer);

/// The C API functions only the session path needs, resolved once: a TensorFlow without one of
/// them keeps every function on the eager path.
struct SessionApi {
    set_config: SetConfig,
    extend_session: ExtendSession,
    /// The names of the ops TensorFlow's registry marks stateful.
    stateful_ops: std::collections::HashSet<String>,
    /// The names of every op in the registry.
    known_ops: std::collections::HashSet<String>,
}

fn session_api(rt: &Runtime) -> Result<&'static SessionApi, TfError> {
    static API: OnceLock<Result<SessionApi, String>> = OnceLock::new();
    API.get_or_init(|| {
        let sym = |name: &'static std::ffi::CStr| {
            rt.optional_symbol(name).ok_or_else(|| format!("the loaded TensorFlow has no {}", name.to_string_lossy()))
        };
        // SAFETY: each symbol is the C function of that name, declared as in tensorflow/c/c_api.h,
        // tensorflow/c/tf_buffer.h and tensorflow/c/eager/c_api.h (a TF_DeviceList is opaque here).
        unsafe {
            let op_list = std::mem::transmute::<*mut c_void, GetAllOpList>(sym(c"TF_GetAllOpList")?);
            let delete_buffer = std::mem::transmute::<*mut c_void, DeleteBuffer>(sym(c"TF_DeleteBuffer")?);
            let (known_ops, stateful_ops) = read_registry(op_list, delete_buffer)?;
            Ok(SessionApi {
                set_config: std::mem::transmute::<*mut c_void, SetConfig>(sym(c"TF_SetConfig")?),
                extend_session: std::mem::transmute::<*mut c_void, ExtendSession>(sym(c"TF_ExtendSession")?),
                stateful_ops,
                known_ops,
            })
        }
    })
    .as_ref()
    .map_err(|why| TfError::new(Code::Unimplemented, why.clone()))
}

/// The op types of TensorFlow's registry, and those it marks stateful (read once; also used by
/// `executor_trial`).
pub(crate) fn registry_ops(rt: &Runtime) -> Result<(&'static OpNames, &'static OpNames), TfError> {
    session_api(rt).map(|api| (&api.known_ops, &api.stateful_ops))
}

type OpNames = std::collections::HashSet<String>;

/// The names of the ops in TensorFlow's registry, and of the stateful ones (`OpList.op` is field
/// 1, an `OpDef` whose name is field 1).
///
/// # Safety
/// The functions must be TensorFlow's `TF_GetAllOpList` and `TF_DeleteBuffer`.
unsafe fn read_registry(op_list: GetAllOpList, delete_buffer: DeleteBuffer) -> Result<(OpNames, OpNames), String> {
    // SAFETY: a new buffer owned here, read, then deleted.
    unsafe {
        let buf = op_list();
        let bytes = crate::c_api::buffer_bytes(buf);
        let names = crate::function_def_proto::nested(bytes, &[1]).and_then(|ops| {
            let (mut all, mut stateful) = (OpNames::new(), OpNames::new());
            for op in ops {
                let name = String::from_utf8_lossy(crate::function_def_proto::single(op, 1)?.unwrap_or_default()).into_owned();
                if crate::function_def_proto::varint_field(op, IS_STATEFUL)?.unwrap_or(0) != 0 {
                    stateful.insert(name.clone());
                }
                all.insert(name);
            }
            Ok((all, stateful))
        });
        delete_buffer(buf);
        names.map_err(|e| format!("TensorFlow's op list could not be read: {e}"))
    }
}

/// Why the eager context's devices keep functions off the session path: any device that is not
/// a CPU (a session would make and use its own).
fn device_blocker(rt: &Runtime, ctx: EagerContext) -> Result<Option<String>, TfError> {
    let other = ctx.device_types(rt)?.into_iter().find(|ty| ty != "CPU");
    Ok(other.map(|ty| format!("the eager context has a {ty} device, which a session would not share")))
}

/// Why a function must stay off the session path even though the eager fast path takes it:
/// effects, state kept in the eager context, or stateful ops (by the signature's flag, or by
/// any node whose op the registry calls stateful). `def` is its `FunctionDef`.
fn blocker(def: &[u8], input_dtypes: &[i32], output_dtypes: &[i32], stateful_ops: &std::collections::HashSet<String>) -> Option<String> {
    if input_dtypes.iter().chain(output_dtypes).any(|&d| d == DT_RESOURCE || d == DT_VARIANT) {
        return Some("it takes or returns a resource or variant (state of the eager context)".to_owned());
    }
    match crate::function_def_proto::has_control_outputs(def) {
        Ok(false) => {}
        Ok(true) => return Some("it has effects (control outputs)".to_owned()),
        Err(e) => return Some(format!("its definition could not be read: {e}")),
    }
    let stateful = crate::function_def_proto::nested(def, &[SIGNATURE])
        .ok()
        .and_then(|sig| sig.first().map(|s| crate::function_def_proto::varint_field(s, IS_STATEFUL)))
        .unwrap_or(Ok(Some(1)));
    if !matches!(stateful, Ok(None | Some(0))) {
        return Some("it has stateful ops".to_owned());
    }
    match crate::function_def_proto::node_ops(def) {
        Ok(ops) => ops.iter().find(|(op, _)| stateful_ops.contains(op)).map(|(op, node)| format!("its op {node} ({op}) is stateful")),
        Err(e) => Some(format!("its definition could not be read: {e}")),
    }
}

/// A session running one function on the calling thread: its graph (placeholders, the call,
/// one `Identity` per output) and the session over it, both deleted on drop.
#[derive(Debug)]
pub(crate) struct SessionCall {
    rt: &'static Runtime,
    graph: *mut TF_Graph,
    session: *mut TF_Session,
    feeds: Vec<TF_Output>,
    fetches: Vec<TF_Output>,
}

// SAFETY: TF_SessionRun may be called from any thread concurrently; the graph is never changed
// after the session is made.
unsafe impl Send for SessionCall {}
unsafe impl Sync for SessionCall {}

impl SessionCall {
    /// Builds the session of `f` and runs it once on `inputs`, checking that it returns what
    /// the eager call returned (`expected`, same count and dtypes and shapes); the first run is
    /// where TensorFlow optimizes the graph and makes its kernels, so an error shows here.
    ///
    /// # Safety
    /// Every input must be a live `TF_Tensor`.
    pub(crate) unsafe fn build(f: &EagerFunction, inputs: &[*mut TF_Tensor], expected: &[*mut TF_Tensor]) -> Result<Self, TfError> {
        let rt = f.rt;
        let api = rt.api();
        let session_api = session_api(rt)?;
        let status = Status::new(api);
        let def = f.to_function_def()?;
        let why = blocker(&def, &f.input_dtypes, &f.output_dtypes, &session_api.stateful_ops);
        if let Some(why) = why.or(device_blocker(rt, f.ctx)?) {
            return Err(TfError::new(Code::FailedPrecondition, why));
        }
        // SAFETY: a new graph, owned by `call` from here on (deleted by its drop).
        let graph = unsafe { (api.TF_NewGraph)() };
        let mut call = SessionCall { rt, graph, session: ptr::null_mut(), feeds: Vec::new(), fetches: Vec::new() };
        for (i, &dtype) in f.input_dtypes.iter().enumerate() {
            let name = CString::new(format!("x{i}")).expect("no NUL");
            // SAFETY: live graph; the description is finished exactly once.
            let op = unsafe {
                let d = (api.TF_NewOperation)(graph, c"Placeholder".as_ptr(), name.as_ptr());
                (api.TF_SetAttrType)(d, c"dtype".as_ptr(), dtype);
                (api.TF_FinishOperation)(d, status.raw())
            };
            status.check("adding a placeholder to the session graph")?;
            call.feeds.push(TF_Output { oper: op, index: 0 });
        }
        // SAFETY: live graph, not shared yet; the inputs belong to it.
        let op = unsafe { f.add_call(graph, "call", &call.feeds, false) }?;
        for i in 0..f.num_outputs() {
            let name = CString::new(format!("y{i}")).expect("no NUL");
            // SAFETY: as above. The fetches are Identity ops, not the call itself: TensorFlow
            // does not inline a call whose outputs are fetched directly.
            let id = unsafe {
                let d = (api.TF_NewOperation)(graph, c"Identity".as_ptr(), name.as_ptr());
                (api.TF_AddInput)(d, TF_Output { oper: op, index: i as c_int });
                (api.TF_FinishOperation)(d, status.raw())
            };
            status.check("adding an output to the session graph")?;
            call.fetches.push(TF_Output { oper: id, index: 0 });
        }
        let config = match (f.options.grappler, f.tfg, crate::call_options::global_jit_flags()) {
            (true, true, false) => SESSION_CONFIG,
            (true, false, false) => SESSION_CONFIG_NO_TFG,
            (true, true, true) => SESSION_CONFIG_PYTHON_MEMORY,
            (true, false, true) => SESSION_CONFIG_PYTHON_MEMORY_NO_TFG,
            (false, _, _) => SESSION_CONFIG_NO_GRAPPLER,
        };
        // SAFETY: options made and deleted here; the config bytes outlive the call; the session
        // is owned by `call` from here on.
        unsafe {
            let opts = (api.TF_NewSessionOptions)();
            (session_api.set_config)(opts, config.as_ptr().cast(), config.len(), status.raw());
            if status.check("").is_ok() {
                call.session = (api.TF_NewSession)(graph, opts, status.raw());
            }
            (api.TF_DeleteSessionOptions)(opts);
        }
        status.check("making the function's session")?;
        // Hands the graph to the session now, once: otherwise every run takes the graph's and
        // the session's mutexes to check whether the graph grew (it never does here).
        // SAFETY: live session.
        unsafe { (session_api.extend_session)(call.session, status.raw()) };
        status.check("extending the function's session")?;
        let mut out = Vec::with_capacity(expected.len());
        // SAFETY: live inputs (caller's contract).
        unsafe { call.run(inputs, &mut out, &status) }?;
        let got: Vec<_> = out.iter().map(|&t| describe(rt, t)).collect();
        let want: Vec<_> = expected.iter().map(|&t| describe(rt, t)).collect();
        for t in out {
            // SAFETY: made by the run above, owned here.
            unsafe { (api.TF_DeleteTensor)(t) };
        }
        if got != want {
            return Err(TfError::new(Code::Internal, format!("the session returned {got:?}, the eager call {want:?}")));
        }
        Ok(call)
    }

    /// Runs the function on `inputs` (borrowed, not copied) and appends one new `TF_Tensor` per
    /// output to `out`; the caller owns them.
    ///
    /// # Safety
    /// Every input must be a live `TF_Tensor`; there must be one per parameter.
    pub(crate) unsafe fn run(&self, inputs: &[*mut TF_Tensor], out: &mut Vec<*mut TF_Tensor>, status: &Status<'_>) -> Result<(), TfError> {
        let api = self.rt.api();
        debug_assert_eq!(inputs.len(), self.feeds.len());
        let start = out.len();
        out.resize(start + self.fetches.len(), ptr::null_mut());
        // SAFETY: live session; every array holds the count passed with it; TensorFlow borrows
        // the inputs and writes one new tensor per fetch.
        unsafe {
            (api.TF_SessionRun)(
                self.session,
                ptr::null(),
                self.feeds.as_ptr(),
                inputs.as_ptr(),
                self.feeds.len() as c_int,
                self.fetches.as_ptr(),
                out[start..].as_mut_ptr(),
                self.fetches.len() as c_int,
                ptr::null(),
                0,
                ptr::null_mut(),
                status.raw(),
            )
        };
        let result = status.check("");
        if result.is_err() {
            for t in out.drain(start..) {
                if !t.is_null() {
                    // SAFETY: written by the failed run, not handed out.
                    unsafe { (api.TF_DeleteTensor)(t) };
                }
            }
        }
        result
    }
}

/// A tensor's dtype and dims.
fn describe(rt: &Runtime, t: *mut TF_Tensor) -> (i32, Vec<i64>) {
    let api = rt.api();
    // SAFETY: a live tensor.
    unsafe {
        let rank = (api.TF_NumDims)(t);
        ((api.TF_TensorType)(t), (0..rank).map(|i| (api.TF_Dim)(t, i)).collect())
    }
}

impl Drop for SessionCall {
    fn drop(&mut self) {
        let api = self.rt.api();
        let status = Status::new(api);
        // SAFETY: owned here and deleted once; no run is in progress (the owner is being dropped).
        unsafe {
            if !self.session.is_null() {
                (api.TF_CloseSession)(self.session, status.raw());
                (api.TF_DeleteSession)(self.session, status.raw());
            }
            (api.TF_DeleteGraph)(self.graph);
        }
    }
}

#[cfg(test)]
#[path = "session_path_tests.rs"]
mod tests;
