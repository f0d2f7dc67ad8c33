//! A traced graph turned into a `TF_Function` and registered in an eager context: the
//! [`EagerFunction`] type, its registration and removal here, the rest of it in the child
//! modules (one type over several files, none of them used by another type of the crate).

mod call;
mod def;
mod executor_trial;
mod fast_path;
mod resource_inputs;
mod session_path;
mod session_tier;

pub use fast_path::fast_path_supported;

/// Deletes a released variable's (or other resource's) handle tensor, after the wrappers calls
/// kept for it (see `resource_inputs`), which would otherwise keep its memory while a function
/// that took it lives.
///
/// # Safety
/// `tensor` is a live resource tensor owned by the caller, deleted here once.
pub unsafe fn release_resource(rt: &Runtime, tensor: *mut crate::c_api::TF_Tensor) {
    // SAFETY: a live tensor (caller's contract).
    let data = unsafe { (rt.api().TF_TensorData)(tensor) } as usize;
    resource_inputs::forget(data);
    // SAFETY: owned by the caller, deleted once; no kept wrapper refers to it any more.
    unsafe { crate::tensor::delete(rt, tensor) };
}

use crate::c_api::{TF_Function, TF_Graph, TF_Operation, TF_Output};
use crate::call_options::CallOptions;
use crate::context::{EagerContext, LIVE_FUNCTIONS as LIVE};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::ffi::{c_int, CString};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Identifies EagerFunctions for the per-thread op cache (never 0; unique in this copy).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What a traced graph exposes as a function: its inputs and named outputs.
#[derive(Debug)]
pub struct GraphSignature<'a> {
    /// Placeholder outputs, in flat parameter order.
    pub inputs: &'a [TF_Output],
    /// Result tensors, in output order.
    pub outputs: &'a [TF_Output],
    /// Output names (valid TensorFlow argument names).
    pub output_names: &'a [CString],
    /// Operations run for their side effects (e.g. variable assignments) though no output
    /// depends on them: the function's control outputs.
    pub control_outputs: &'a [*mut TF_Operation],
}

/// A function registered in an eager context; removed from the context on drop.
#[derive(Debug)]
pub struct EagerFunction {
    pub(crate) rt: &'static Runtime,
    pub(crate) ctx: EagerContext,
    /// Kept to copy the function into graphs that call it (nested calls, user graphs).
    pub(crate) function: *mut TF_Function,
    /// The functions its graph calls (its library), copied along with it.
    pub(crate) library: Vec<*mut TF_Function>,
    /// Library functions this one registered in the context (control-flow branches), removed on drop.
    pub(crate) added_library: Vec<CString>,
    /// Functions this one calls, kept registered while it lives.
    pub(crate) keep_alive: Vec<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
    pub(crate) name: CString,
    pub(crate) id: u64,
    pub(crate) num_inputs: usize,
    pub(crate) input_dtypes: Vec<i32>,
    pub(crate) output_dtypes: Vec<i32>,
    /// Why the caller-thread path would not give this function's results (None: it would).
    pub(crate) fast_path_blocker: Option<String>,
    /// Whether calls take the caller-thread path (chosen at registration, see
    /// [`EagerFunction::set_fast_path`]).
    pub(crate) fast_path: std::sync::atomic::AtomicBool,
    /// Whether Grappler's TFG optimizer could change the function (see
    /// [`crate::call_options::tfg_can_change`]); when not, it is not run. With `options`, it
    /// gives every call's `config_proto` (`CallOptions::config_proto`).
    pub(crate) tfg: bool,
    /// The options it was registered with.
    pub(crate) options: CallOptions,
    /// Its session path: the call count until promotion, then the session.
    pub(crate) session: session_tier::SessionTier,
    /// The kept tensor handles of its resource inputs (None: it has none).
    pub(crate) resource_inputs: Option<resource_inputs::ResourceInputs>,
    /// Its trial of the single-threaded executor, where the session path is refused.
    pub(crate) executor: executor_trial::ExecutorTrial,
}

// SAFETY: the function is identified by name in a thread-safe context; nothing here is mutated.
unsafe impl Send for EagerFunction {}
unsafe impl Sync for EagerFunction {}

impl EagerFunction {
    /// Converts `graph` into a `TF_Function` named `name` and registers it in `ctx`, with the
    /// default [`CallOptions`].
    ///
    /// # Safety
    /// `graph` must be a live graph not mutated concurrently; the `TF_Output`s must belong to it.
    pub unsafe fn from_graph(
        rt: &'static Runtime,
        ctx: EagerContext,
        graph: *mut TF_Graph,
        name: &str,
        sig: &GraphSignature<'_>,
    ) -> Result<Self, TfError> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::from_graph_with(rt, ctx, graph, name, sig, CallOptions::default()) }
    }

    /// [`EagerFunction::from_graph`] with the given options: the graph is inspected here to
    /// choose the call path, and, with XLA, to check that every op compiles.
    ///
    /// # Safety
    /// As for [`EagerFunction::from_graph`].
    pub unsafe fn from_graph_with(
        rt: &'static Runtime,
        ctx: EagerContext,
        graph: *mut TF_Graph,
        name: &str,
        sig: &GraphSignature<'_>,
        options: CallOptions,
    ) -> Result<Self, TfError> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::from_graph_excluding(rt, ctx, graph, name, sig, options, &[]) }
    }

    /// [`EagerFunction::from_graph_with`] leaving the `excluded` operations of the graph out of
    /// the function: control flow's originals, gathered into branch functions but left in the
    /// graph (the C API cannot delete operations), and the dead values wired into them. Nothing
    /// kept may read them. With none excluded, the function holds every operation of the graph.
    ///
    /// # Safety
    /// As for [`EagerFunction::from_graph`]; the excluded operations must belong to `graph`.
    pub unsafe fn from_graph_excluding(
        rt: &'static Runtime,
        ctx: EagerContext,
        graph: *mut TF_Graph,
        name: &str,
        sig: &GraphSignature<'_>,
        options: CallOptions,
        excluded: &[*mut TF_Operation],
    ) -> Result<Self, TfError> {
        let api = rt.api();
        // SAFETY: live graph (caller's contract).
        let body = unsafe { crate::graph_ops::body_of(rt, graph, sig.inputs, excluded) };
        let status = Status::new(api);
        let cname = CString::new(name).map_err(|_| TfError::invalid_argument("function name contains NUL"))?;
        let names: Vec<*const libc::c_char> = sig.output_names.iter().map(|n| n.as_ptr()).collect();
        let control_names: Vec<CString> =
            (0..sig.control_outputs.len()).map(|i| CString::new(format!("effect_{i}")).unwrap()).collect();
        let control_name_ptrs: Vec<*const libc::c_char> = control_names.iter().map(|n| n.as_ptr()).collect();
        let control_ops: Vec<*const TF_Operation> = sig.control_outputs.iter().map(|&o| o as *const _).collect();
        if sig.output_names.len() != sig.outputs.len() {
            return Err(TfError::invalid_argument(format!(
                "{} output names for {} outputs",
                sig.output_names.len(),
                sig.outputs.len()
            )));
        }
        // SAFETY: graph is live and not mutated concurrently (caller's contract); every array
        // passed holds as many elements as the count passed with it, and outlives the call.
        let func = unsafe { (api.TF_GraphToFunctionWithControlOutputs)(
            graph,
            cname.as_ptr(),
            0,
            body.as_ref().map_or(-1, |b| b.len() as c_int),
            body.as_ref().map_or(ptr::null(), |b| b.as_ptr()),
            sig.inputs.len() as c_int,
            sig.inputs.as_ptr(),
            sig.outputs.len() as c_int,
            sig.outputs.as_ptr(),
            names.as_ptr(),
            control_ops.len() as c_int,
            control_ops.as_ptr(),
            control_name_ptrs.as_ptr(),
            ptr::null(),
            ptr::null(),
            status.raw(),
        ) };
        status.check("converting the traced graph to a function")?;
        // What XLA must compile and the call path depends on: the function's operations only.
        let ops = match &body {
            // SAFETY: operations of the live graph (caller's contract).
            Some(b) => unsafe { crate::graph_ops::described(rt, b) },
            // SAFETY: live graph (caller's contract).
            None => unsafe { crate::graph_ops::graph_ops(rt, graph) },
        };
        if options.jit_compile {
            // SAFETY: func was just made, is owned here and not registered.
            if let Err(e) = unsafe { crate::call_options::mark_for_xla(rt, func, name, &ops) } {
                // SAFETY: owned here, deleted once.
                unsafe { (api.TF_DeleteFunction)(func) };
                return Err(e);
            }
        }
        // SAFETY: the outputs belong to the live graph (caller's contract).
        let dtype = |o: &TF_Output| unsafe { (api.TF_OperationOutputType)(*o) };
        // SAFETY: live graph; the buffer holds n pointers, and TF_GraphGetFunctions writes at most
        // n new references that this function then owns.
        let n = unsafe { (api.TF_GraphNumFunctions)(graph) };
        let mut library = vec![ptr::null_mut(); n.max(0) as usize];
        let got = unsafe { (api.TF_GraphGetFunctions)(graph, library.as_mut_ptr(), n, status.raw()) };
        if status.check("").is_err() {
            library.clear();
        } else {
            library.truncate(got.max(0) as usize);
        }
        if options.jit_compile {
            if let Err(e) = def::refuse_lists_of_lists_in(rt, &library) {
                // SAFETY: func and the library are owned here and not registered.
                unsafe {
                    (api.TF_DeleteFunction)(func);
                    for f in library {
                        (api.TF_DeleteFunction)(f);
                    }
                }
                return Err(e);
            }
        }
        let (inputs, outputs): (Vec<i32>, Vec<i32>) = (sig.inputs.iter().map(dtype).collect(), sig.outputs.iter().map(dtype).collect());
        let control: Vec<*const TF_Operation> = sig.control_outputs.iter().map(|&o| o as *const _).collect();
        // SAFETY: operations of the live graph (caller's contract).
        let effects = fast_path::has_effects(unsafe { crate::graph_ops::described(rt, &control) }.iter().map(|(ty, _)| ty.as_str()));
        let mut fast_path_blocker = fast_path::blocker(&ops, &outputs, effects, &options);
        if !library.is_empty() {
            fast_path_blocker = Some("it calls other functions".to_owned());
        }
        // SAFETY: live context; the library functions were just made and are owned here.
        let added = match unsafe { crate::branch_library::register_missing(rt, ctx, &library) } {
            Ok(added) => added,
            Err(e) => {
                // SAFETY: func and the library are owned here and not registered.
                unsafe {
                    (api.TF_DeleteFunction)(func);
                    for f in library {
                        (api.TF_DeleteFunction)(f);
                    }
                }
                return Err(e);
            }
        };
        let tfg = crate::call_options::tfg_can_change(&ops, library.len());
        // SAFETY: func and the library functions were just made and are owned here.
        let mut made =
            unsafe { Self::register(rt, ctx, func, library, cname, inputs, outputs, fast_path_blocker, tfg, options) };
        match &mut made {
            Ok(f) => f.added_library = added,
            // SAFETY: live context; removing what was just added.
            Err(_) => unsafe { crate::branch_library::remove(rt, ctx, &added) },
        }
        made
    }

    /// Registers `func` in `ctx` and wraps it; on failure deletes `func` and `library`. `tfg`:
    /// whether Grappler's TFG optimizer could change it (see `call_options::tfg_can_change`).
    ///
    /// # Safety
    /// `func` and every `library` function must be owned by the caller, which hands them over.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn register(
        rt: &'static Runtime,
        ctx: EagerContext,
        func: *mut TF_Function,
        library: Vec<*mut TF_Function>,
        name: CString,
        input_dtypes: Vec<i32>,
        output_dtypes: Vec<i32>,
        mut fast_path_blocker: Option<String>,
        tfg: bool,
        options: CallOptions,
    ) -> Result<Self, TfError> {
        if options.jit_compile {
            fast_path_blocker = Some("it is compiled with XLA".to_owned());
        }
        let api = rt.api();
        let status = Status::new(api);
        // SAFETY: ctx is a live context; func is owned here (caller's contract).
        unsafe { (api.TFE_ContextAddFunction)(ctx.0, func, status.raw()) };
        if let Err(e) = status.check("registering the function in the eager context") {
            // SAFETY: func and the library are owned here and not registered.
            unsafe {
                (api.TF_DeleteFunction)(func);
                for f in library {
                    (api.TF_DeleteFunction)(f);
                }
            }
            return Err(e);
        }
        LIVE.fetch_add(1, Ordering::Relaxed);
        let resource_inputs = resource_inputs::ResourceInputs::for_inputs(rt, &input_dtypes);
        let f = EagerFunction {
            rt,
            ctx,
            function: func,
            library,
            added_library: Vec::new(),
            keep_alive: Vec::new(),
            name,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            num_inputs: input_dtypes.len(),
            input_dtypes,
            output_dtypes,
            session: session_tier::SessionTier::new(
                fast_path_blocker.is_some() || !options.fast_path,
                options.session_after,
            ),
            resource_inputs,
            // Functions the session tier does not count (those the caller-thread paths refuse)
            // count their calls toward the executor's trial themselves.
            executor: executor_trial::ExecutorTrial::new(
                fast_path_blocker.is_some() && options.fast_path && !options.jit_compile && !options.eager_op_as_function,
                options.session_after,
            ),
            fast_path_blocker,
            fast_path: Default::default(),
            tfg,
            options,
        };
        if options.fast_path && f.fast_path_blocker.is_none() && fast_path::fast_path_supported(rt) {
            // Refused only by a runtime error setting the context flag: the default path is
            // then kept, which gives the same results.
            if let Err(e) = f.set_fast_path(true) {
                log::warn!("function {} stays on the default call path: {e}", f.name());
            }
        }
        Ok(f)
    }

    /// The options the function was registered with.
    pub fn call_options(&self) -> CallOptions {
        self.options
    }

    /// How many functions Polyfn has registered and not yet removed, in this process.
    pub fn live_count() -> usize {
        LIVE.load(Ordering::Relaxed)
    }

    /// Whether `ctx` has a function called `name`.
    pub fn is_registered(rt: &Runtime, ctx: EagerContext, name: &str) -> bool {
        let Ok(c) = CString::new(name) else { return false };
        // SAFETY: live context, NUL-terminated name.
        unsafe { (rt.api().TFE_ContextHasFunction)(ctx.0, c.as_ptr()) != 0 }
    }

    /// The TensorFlow runtime the function is registered with (what its outputs are deleted by).
    pub fn runtime(&self) -> &'static Runtime {
        self.rt
    }

    /// The registered function name.
    pub fn name(&self) -> &str {
        self.name.to_str().unwrap_or("")
    }

    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// An error unless the function takes exactly `n` inputs.
    pub(crate) fn check_input_count(&self, n: usize) -> Result<(), TfError> {
        if n == self.num_inputs {
            return Ok(());
        }
        Err(TfError::invalid_argument(format!("function {} takes {} inputs, got {}", self.name(), self.num_inputs, n)))
    }

    pub fn num_outputs(&self) -> usize {
        self.output_dtypes.len()
    }

    /// Keeps `dependency` (a function this one calls) alive, and so registered, as long as this one.
    pub fn keep_alive(&mut self, dependency: std::sync::Arc<dyn std::any::Any + Send + Sync>) {
        self.keep_alive.push(dependency);
    }

    /// Whether its body calls other Polyfn functions (nested calls), whose bodies another
    /// function owns.
    pub fn calls_other_functions(&self) -> bool {
        !self.keep_alive.is_empty()
    }

    /// The dtype codes of the function's outputs.
    pub fn output_dtypes(&self) -> &[i32] {
        &self.output_dtypes
    }

    /// Adds a call of this function to `graph` (a `StatefulPartitionedCall` named `op_name` on
    /// `inputs`), copying the function into the graph's library so the graph is self-contained;
    /// `unmarked` copies its definitions as they leave Polyfn (for a graph of the user's, see
    /// [`crate::auto_clustering`]).
    ///
    /// # Safety
    /// `graph` must be live and not mutated concurrently; the inputs must belong to it.
    pub unsafe fn add_call(
        &self,
        graph: *mut TF_Graph,
        op_name: &str,
        inputs: &[TF_Output],
        unmarked: bool,
    ) -> Result<*mut TF_Operation, TfError> {
        let api = self.rt.api();
        self.check_input_count(inputs.len())?;
        for (i, (o, &want)) in inputs.iter().zip(&self.input_dtypes).enumerate() {
            // SAFETY: the inputs belong to the live graph (caller's contract).
            let got = unsafe { (api.TF_OperationOutputType)(*o) };
            if got != want {
                return Err(TfError::invalid_argument(format!(
                    "input {i} of {} has dtype {got}, expected {want}",
                    self.name()
                )));
            }
        }
        let name = CString::new(op_name).map_err(|_| TfError::invalid_argument("operation name contains NUL"))?;
        let status = Status::new(api);
        if unmarked {
            // SAFETY: live graph (caller's contract).
            unsafe { self.copy_unmarked_into(graph) }?;
        }
        for &f in self.library.iter().chain(std::iter::once(&self.function)).filter(|_| !unmarked) {
            // SAFETY: live graph and functions owned by self.
            unsafe { (api.TF_GraphCopyFunction)(graph, f, ptr::null(), status.raw()) };
            status.check("copying the function into the graph")?;
        }
        let fname = self.name.as_bytes();
        // SAFETY: live graph not mutated concurrently (caller's contract); every array holds the
        // count passed with it; the description is finished exactly once.
        let op = unsafe {
            let desc = (api.TF_NewOperation)(graph, c"StatefulPartitionedCall".as_ptr(), name.as_ptr());
            (api.TF_AddInputList)(desc, inputs.as_ptr(), inputs.len() as c_int);
            (api.TF_SetAttrTypeList)(desc, c"Tin".as_ptr(), self.input_dtypes.as_ptr(), self.input_dtypes.len() as c_int);
            (api.TF_SetAttrTypeList)(desc, c"Tout".as_ptr(), self.output_dtypes.as_ptr(), self.output_dtypes.len() as c_int);
            (api.TF_SetAttrFuncName)(desc, c"f".as_ptr(), fname.as_ptr().cast(), fname.len());
            (api.TF_FinishOperation)(desc, status.raw())
        };
        status.check("adding the function call to the graph")?;
        Ok(op)
    }
}

impl Drop for EagerFunction {
    fn drop(&mut self) {
        let api = self.rt.api();
        let status = Status::new(api);
        // SAFETY: the function was registered under this name in this context.
        unsafe { (api.TFE_ContextRemoveFunction)(self.ctx.0, self.name.as_ptr(), status.raw()) };
        LIVE.fetch_sub(1, Ordering::Relaxed);
        if let Err(e) = status.check("") {
            log::warn!("removing function {} from the eager context: {e}", self.name());
        }
        // Its caller-thread kernel is filed under TensorFlow's wrapper, not under its name:
        // counted stale there (after the function's own removal).
        if self.eager_inline() {
            let lists = [("Tin", self.input_dtypes.len()), ("Tout", self.output_dtypes.len())];
            crate::kernel_cache::note(self.rt, self.ctx, "StatefulPartitionedCall", &lists, 1);
        }
        // SAFETY: live context; these names were registered by this function.
        unsafe { crate::branch_library::remove(self.rt, self.ctx, &self.added_library) };
        // SAFETY: owned since from_graph, deleted once.
        unsafe {
            (api.TF_DeleteFunction)(self.function);
            for &f in &self.library {
                (api.TF_DeleteFunction)(f);
            }
        }
    }
}
