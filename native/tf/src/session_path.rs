//! The session path: a concrete function called often enough runs through a `TF_Session` on
//! the calling thread, TensorFlow's cheapest way to run a graph.
//!
//! The eager caller-thread path (`fast_path`) still builds an op and a tensor handle per input
//! on every call. A `TF_Session` over a graph that feeds placeholders into a call of the
//! function, with `inter_op_parallelism_threads = -1` (run on the caller's thread) and
//! `do_function_inlining` (so the call is replaced by the function's body), runs a function in
//! about the time of the bare graph, and takes and returns `TF_Tensor`s directly.
//!
//! A session costs milliseconds to make and to run the first time (graph optimization, kernel
//! creation), so a function moves to it only after [`PROMOTE_AFTER`] calls ("promotion"): the
//! call that reaches the count builds it, on its own thread, while other callers keep using the
//! eager path; the session is published only once it has run that call's inputs correctly.
//! A function gets one session per core (up to 4), and each calling thread keeps to one of them:
//! TensorFlow locks a session's graph on every run, which would make threads wait for each other.
//!
//! Only functions whose results cannot depend on where they run take it: those the eager fast
//! path takes (no control flow, no nested calls), with no effects (control outputs), no
//! resource or variant values (variables and other state live in the eager context, which a
//! session cannot see) and no stateful op (a random op's state would restart in the session,
//! repeating values the eager kernel already returned).

use crate::c_api::{TF_Graph, TF_Output, TF_Session, TF_SessionOptions, TF_Status, TF_Tensor};
use crate::function::EagerFunction;
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use crate::tensor::{DT_RESOURCE, DT_VARIANT};
use std::ffi::{c_int, c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Calls on the eager path before a function moves to its session, by default
/// ([`crate::CallOptions::session_after`] sets it per function; tests set it low to run every
/// function on the session path).
pub const PROMOTE_AFTER: u32 = 64;

/// The session configuration (`ConfigProto`): `inter_op_parallelism_threads: -1` (field 5),
/// `allow_soft_placement: true` (7), and `graph_options` (10) with
/// `optimizer_options { do_function_inlining: true }` (GraphOptions 3, OptimizerOptions 4).
const SESSION_CONFIG: &[u8] = b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x38\x01\x52\x04\x1a\x02\x20\x01";
/// The same with Grappler off: `graph_options.rewrite_options { disable_meta_optimizer: true }`
/// (GraphOptions 10, RewriterConfig 19), as [`crate::call_options::NO_GRAPPLER_CONFIG_PROTO`].
const SESSION_CONFIG_NO_GRAPPLER: &[u8] =
    b"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x38\x01\x52\x09\x1a\x02\x20\x01\x52\x03\x98\x01\x01";

/// `OpDef.is_stateful`, field 17 of a `FunctionDef`'s signature (field 1).
const SIGNATURE: u64 = 1;
const IS_STATEFUL: u64 = 17;

type SetConfig = unsafe extern "C" fn(*mut TF_SessionOptions, *const c_void, usize, *mut TF_Status);

/// Where a function stands on the way to its session.
const COUNTING: u8 = 0;
const BUILDING: u8 = 1;
const READY: u8 = 2;
const NEVER: u8 = 3;

/// How many sessions a promoted function gets: one per core (at most 4). Threads calling one
/// session contend on its locks (TensorFlow takes its graph's and session's mutexes on every
/// run); threads spread over separate sessions do not.
fn session_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4))
}

/// This thread's index among the threads that called a promoted function (round robin), which
/// picks its session.
fn thread_slot() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    SLOT.try_with(|s| *s).unwrap_or(0)
}

/// A function's session path: its call count until promotion, then its sessions.
#[derive(Debug)]
pub(crate) struct SessionTier {
    state: AtomicU8,
    calls: AtomicU32,
    after: u32,
    sessions: OnceLock<Box<[SessionCall]>>,
}

impl SessionTier {
    /// A tier that promotes after `after` eager calls, or never when `after` is 0 or the
    /// function cannot take the path (`blocked`).
    pub(crate) fn new(blocked: bool, after: u32) -> Self {
        let state = if blocked || after == 0 { NEVER } else { COUNTING };
        SessionTier { state: AtomicU8::new(state), calls: AtomicU32::new(0), after, sessions: OnceLock::new() }
    }

    /// This thread's session, once published (an atomic load and a thread-local read).
    pub(crate) fn ready(&self) -> Option<&SessionCall> {
        let sessions = self.sessions.get()?;
        sessions.get(thread_slot() % sessions.len())
    }

    /// How many sessions to build.
    pub(crate) fn count(&self) -> usize {
        session_count()
    }

    /// Counts an eager call; true for exactly one caller, the one that should build the session.
    pub(crate) fn count_call(&self) -> bool {
        if self.state.load(Ordering::Relaxed) != COUNTING {
            return false;
        }
        if self.calls.fetch_add(1, Ordering::Relaxed) + 1 < self.after {
            return false;
        }
        self.state.compare_exchange(COUNTING, BUILDING, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// Publishes the built sessions, or records that the function stays on the eager path.
    pub(crate) fn finish(&self, built: Option<Box<[SessionCall]>>) {
        match built {
            Some(s) if !s.is_empty() => {
                // Only the builder gets here, once: the slot is empty.
                let _ = self.sessions.set(s);
                self.state.store(READY, Ordering::Release);
            }
            _ => self.state.store(NEVER, Ordering::Release),
        }
    }

    /// Whether calls run through the session.
    pub(crate) fn is_ready(&self) -> bool {
        self.state.load(Ordering::Acquire) == READY
    }
}

/// Why a function must stay off the session path even though the eager fast path takes it:
/// effects, state kept in the eager context, or stateful ops. `def` is its `FunctionDef`.
pub(crate) fn blocker(def: &[u8], input_dtypes: &[i32], output_dtypes: &[i32]) -> Option<String> {
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
    match stateful {
        Ok(None | Some(0)) => None,
        _ => Some("it has stateful ops".to_owned()),
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
        let def = f.to_function_def()?;
        if let Some(why) = blocker(&def, &f.input_dtypes, &f.output_dtypes) {
            return Err(TfError::new(Code::FailedPrecondition, why));
        }
        let set_config = rt
            .optional_symbol(c"TF_SetConfig")
            .ok_or_else(|| TfError::new(Code::Unimplemented, "the loaded TensorFlow has no TF_SetConfig"))?;
        // SAFETY: the symbol is TF_SetConfig, declared as in tensorflow/c/c_api.h.
        let set_config = unsafe { std::mem::transmute::<*mut c_void, SetConfig>(set_config) };
        let status = Status::new(api);
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
        let op = unsafe { f.add_call(graph, "call", &call.feeds) }?;
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
        let config = if f.options.grappler { SESSION_CONFIG } else { SESSION_CONFIG_NO_GRAPPLER };
        // SAFETY: options made and deleted here; the config bytes outlive the call; the session
        // is owned by `call` from here on.
        unsafe {
            let opts = (api.TF_NewSessionOptions)();
            set_config(opts, config.as_ptr().cast(), config.len(), status.raw());
            if status.check("").is_ok() {
                call.session = (api.TF_NewSession)(graph, opts, status.raw());
            }
            (api.TF_DeleteSessionOptions)(opts);
        }
        status.check("making the function's session")?;
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
