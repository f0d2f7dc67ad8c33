//! The caller-thread call paths, chosen per function when it is registered: the session path
//! (`session_path`, after a number of calls) and, only when the caller opts in
//! ([`crate::CallOptions::eager_op_as_function`]), the eager caller-thread path described here.
//!
//! Executing a function by name hands it to TensorFlow's inter-op thread pool and waits for a
//! worker. With the eager context's experimental "run eager op as function" mode on, a
//! `StatefulPartitionedCall` op naming the function (attributes `Tin`, `Tout`, `f` only) takes
//! TensorFlow's synchronous small-function path instead and runs on the calling thread.
//!
//! Limits, why some functions are kept off it:
//! - the mode is set on the whole eager context (TensorFlow Java's, shared with its own eager
//!   ops), and TensorFlow marks it experimental. Under it every eager op is wrapped in a one-op
//!   function instantiated once per summary of its attributes, and a tensor attribute is
//!   summarized by dtype, shape and its first values: an eager `Const` then returns an earlier
//!   constant's value when those agree (seen with Keras LSTM biases). So it is off unless asked
//!   for, and Polyfn's own eager values are fed as tensor handles, never as constants;
//! - functions with control flow (`If`, `While` and their stateless forms) run slower on it, and
//!   an int32 output carrying a shape (from `Shape`, directly or through `Identity`) fails at
//!   instantiation ("int32 output with unexpected full type information", INTERNAL);
//! - independent ops inside one function lose inter-op parallelism.
//!
//! A function whose graph contains control flow, calls other functions (whose bodies are not
//! inspected), or has an int32 output and a `Shape` op anywhere is refused ([`blocker`]); so is
//! a function compiled with XLA (its compiled kernel is run by the default path), and, with
//! Grappler on, a function with control outputs (effects such as variable assignments, which
//! Grappler on that path prunes). Everything else may take it; it does only when the caller's
//! [`crate::CallOptions::eager_op_as_function`] opts in (otherwise its eager calls take the
//! thread pool, and only the session path runs on the caller's thread).

use crate::c_api::{TFE_Context, TFE_Op, TF_Status};
use crate::call_options::CallOptions;
use super::EagerFunction;
use crate::graph_ops;
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_char, c_int, c_uchar, c_void};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

/// C API functions only the fast path needs, resolved when first asked for: a TensorFlow build
/// without them still runs everything else.
pub(crate) struct FastApi {
    pub(crate) set_run_eager_op_as_function: SetRunEagerOpAsFunction,
    pub(crate) set_attr_type_list: SetAttrTypeList,
    pub(crate) set_attr_function_name: SetAttrFunctionName,
}

type SetRunEagerOpAsFunction = unsafe extern "C" fn(*mut TFE_Context, c_uchar, *mut TF_Status);
type SetAttrTypeList = unsafe extern "C" fn(*mut TFE_Op, *const c_char, *const c_int, c_int);
type SetAttrFunctionName = unsafe extern "C" fn(*mut TFE_Op, *const c_char, *const c_char, usize);

pub(crate) fn fast_api(rt: &Runtime) -> Option<&'static FastApi> {
    static API: OnceLock<Option<FastApi>> = OnceLock::new();
    API.get_or_init(|| {
        let run = rt.optional_symbol(c"TFE_ContextSetRunEagerOpAsFunction")?;
        let types = rt.optional_symbol(c"TFE_OpSetAttrTypeList")?;
        let func = rt.optional_symbol(c"TFE_OpSetAttrFunctionName")?;
        // SAFETY: the symbols are the C functions of those names, declared as in
        // tensorflow/c/eager/c_api.h and c_api_experimental.h.
        unsafe {
            Some(FastApi {
                set_run_eager_op_as_function: std::mem::transmute::<*mut c_void, SetRunEagerOpAsFunction>(run),
                set_attr_type_list: std::mem::transmute::<*mut c_void, SetAttrTypeList>(types),
                set_attr_function_name: std::mem::transmute::<*mut c_void, SetAttrFunctionName>(func),
            })
        }
    })
    .as_ref()
}

/// Ops whose int32 result is typed as a shape tensor, a type that follows it through `Identity`
/// and that the caller-thread path rejects on a function output (`Size`, `Abs` of a shape... pass).
const SHAPE_OPS: [&str; 2] = ["Shape", "ShapeN"];
const DT_INT32: i32 = 3;

/// The reads a function's control outputs may hold besides its effects: Python's
/// `auto_control_deps` makes every read whose value is used one (so a write after a call waits
/// for it), and so does Polyfn. A used read has consumers, so Grappler never prunes it as it
/// prunes an effect only control outputs depend on: such reads keep no function off this path.
const READS: &[&str] = &["ReadVariableOp", "ResourceGather", "ResourceGatherNd"];

/// Whether a function whose control outputs have these op types has effects: control outputs
/// other than [`READS`].
pub(crate) fn has_effects<'a>(control_output_types: impl IntoIterator<Item = &'a str>) -> bool {
    control_output_types.into_iter().any(|ty| !READS.contains(&ty))
}

/// Why a function must not take the fast path; `None` if it may. `ops` are its operations
/// (type, name), `output_dtypes` its results' dtypes, `effects` whether it has control outputs
/// other than [`READS`].
pub(crate) fn blocker(ops: &[(String, String)], output_dtypes: &[i32], effects: bool, options: &CallOptions) -> Option<String> {
    if effects && options.grappler {
        // Grappler, run by the `StatefulPartitionedCall` kernel, prunes ops that only control
        // outputs depend on (a variable assignment whose result nothing reads): measured here,
        // the assignment silently did not happen. The default path keeps them.
        return Some("it has effects (control outputs) that Grappler would prune on that path".to_owned());
    }
    let mut shape_op = None;
    for (ty, _) in ops {
        if graph_ops::CONTROL_FLOW.contains(&ty.as_str()) {
            return Some(format!("it contains control flow ({ty})"));
        }
        if graph_ops::CALLS.contains(&ty.as_str()) {
            return Some("it calls other functions".to_owned());
        }
        if SHAPE_OPS.contains(&ty.as_str()) {
            shape_op = Some(ty);
        }
    }
    let shape_op = shape_op?;
    // Whether the shape reaches an output is not traced through the graph: any int32 output
    // with a shape op in the graph is refused.
    output_dtypes.iter().position(|&d| d == DT_INT32).map(|i| format!("its output {i} is an int32 and the function computes {shape_op}"))
}

/// Whether the loaded runtime has the caller-thread path as Polyfn uses it: the experimental
/// context flag exists from TensorFlow 2.9, but the path was checked (results, speed, limits)
/// on 2.18 and later, so older versions keep the default path.
pub fn fast_path_supported(rt: &Runtime) -> bool {
    let mut parts = rt.version().split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 18) && fast_api(rt).is_some()
}

impl EagerFunction {
    /// Turns the caller-thread paths on or off for calls of this function. Turning them on sets
    /// the eager context's (experimental, context-wide) "run eager op as function" mode only if
    /// the function's options ask for it ([`crate::CallOptions::eager_op_as_function`]). Fails,
    /// leaving the function on the default path, if the function cannot take it (see
    /// [`EagerFunction::fast_path_blocker`]) or the TensorFlow runtime lacks it.
    pub fn set_fast_path(&self, enabled: bool) -> Result<(), TfError> {
        if !enabled {
            self.fast_path.store(false, Ordering::Relaxed);
            return Ok(());
        }
        if let Some(why) = &self.fast_path_blocker {
            return Err(TfError::new(
                Code::FailedPrecondition,
                format!("function {} cannot take the caller-thread path: {why}", self.name()),
            ));
        }
        let Some(fast) = fast_api(self.rt).filter(|_| fast_path_supported(self.rt)) else {
            return Err(TfError::new(
                Code::Unimplemented,
                format!("TensorFlow {} lacks the caller-thread function path", self.rt.version()),
            ));
        };
        if self.options.eager_op_as_function {
            let status = Status::new(self.rt.api());
            // SAFETY: the context outlives the functions registered in it.
            unsafe { (fast.set_run_eager_op_as_function)(self.ctx.0, 1, status.raw()) };
            status.check("enabling the caller-thread function path")?;
        }
        self.fast_path.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Whether calls take the caller-thread paths (the session path once promoted; the eager
    /// caller-thread path too if [`EagerFunction::eager_inline`]).
    pub fn fast_path(&self) -> bool {
        self.fast_path.load(Ordering::Relaxed)
    }

    /// Whether eager calls run on the calling thread, under the context's "run eager op as
    /// function" mode (opted into, see [`crate::CallOptions::eager_op_as_function`]).
    pub fn eager_inline(&self) -> bool {
        self.fast_path() && self.options.eager_op_as_function
    }

    /// Why this function cannot take the caller-thread path, if it cannot.
    pub fn fast_path_blocker(&self) -> Option<&str> {
        self.fast_path_blocker.as_deref()
    }
}
