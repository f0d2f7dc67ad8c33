//! A traced graph turned into a `TF_Function` and registered in an eager context.

use crate::c_api::{TFE_Context, TFE_Op, TFE_TensorHandle, TF_Function, TF_Graph, TF_Operation, TF_Output, TF_Tensor};
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::ffi::{c_int, CString};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Functions registered by [`EagerFunction`] and not yet removed, process-wide (for leak checks).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// An eager context Polyfn registers functions in. Owned by TensorFlow Java (its default
/// `EagerSession`), or by the caller of [`EagerContext::new_owned`] in Rust-only tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EagerContext(pub *mut TFE_Context);

// SAFETY: TFE_Context is internally synchronized; TensorFlow executes ops on it from any thread.
unsafe impl Send for EagerContext {}
unsafe impl Sync for EagerContext {}

impl EagerContext {
    /// A new context owned by the caller (delete it with [`EagerContext::delete`]).
    pub fn new_owned(rt: &Runtime) -> Result<Self, TfError> {
        let api = rt.api();
        let status = Status::new(api);
        // SAFETY: plain C API calls with live arguments.
        unsafe {
            let opts = (api.TFE_NewContextOptions)();
            let ctx = (api.TFE_NewContext)(opts, status.raw());
            (api.TFE_DeleteContextOptions)(opts);
            status.check("TFE_NewContext")?;
            Ok(EagerContext(ctx))
        }
    }

    /// Deletes a context made by [`EagerContext::new_owned`].
    ///
    /// # Safety
    /// No function registered in it may be used afterwards.
    pub unsafe fn delete(self, rt: &Runtime) {
        CachedOp::forget_context(rt, self);
        (rt.api().TFE_DeleteContext)(self.0)
    }
}

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
    rt: &'static Runtime,
    ctx: EagerContext,
    /// Kept to copy the function into graphs that call it (nested calls, user graphs).
    function: *mut TF_Function,
    /// The functions its graph calls (its library), copied along with it.
    library: Vec<*mut TF_Function>,
    /// Functions this one calls, kept registered while it lives.
    keep_alive: Vec<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
    name: CString,
    num_inputs: usize,
    input_dtypes: Vec<i32>,
    output_dtypes: Vec<i32>,
}

// SAFETY: the function is identified by name in a thread-safe context; nothing here is mutated.
unsafe impl Send for EagerFunction {}
unsafe impl Sync for EagerFunction {}

impl EagerFunction {
    /// Converts `graph` into a `TF_Function` named `name` and registers it in `ctx`.
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
        let api = rt.api();
        let status = Status::new(api);
        let cname = CString::new(name).map_err(|_| TfError::new(3, "function name contains NUL"))?;
        let names: Vec<*const libc::c_char> = sig.output_names.iter().map(|n| n.as_ptr()).collect();
        let control_names: Vec<CString> =
            (0..sig.control_outputs.len()).map(|i| CString::new(format!("effect_{i}")).unwrap()).collect();
        let control_name_ptrs: Vec<*const libc::c_char> = control_names.iter().map(|n| n.as_ptr()).collect();
        let control_ops: Vec<*const TF_Operation> = sig.control_outputs.iter().map(|&o| o as *const _).collect();
        let func = (api.TF_GraphToFunctionWithControlOutputs)(
            graph,
            cname.as_ptr(),
            0,
            -1,
            ptr::null(),
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
        );
        status.check("converting the traced graph to a function")?;
        (api.TFE_ContextAddFunction)(ctx.0, func, status.raw());
        if let Err(e) = status.check("registering the function in the eager context") {
            (api.TF_DeleteFunction)(func);
            return Err(e);
        }
        LIVE.fetch_add(1, Ordering::Relaxed);
        let dtype = |o: &TF_Output| (api.TF_OperationOutputType)(*o);
        let n = (api.TF_GraphNumFunctions)(graph);
        let mut library = vec![ptr::null_mut(); n.max(0) as usize];
        let got = (api.TF_GraphGetFunctions)(graph, library.as_mut_ptr(), n, status.raw());
        if status.check("").is_err() {
            library.clear();
        } else {
            library.truncate(got.max(0) as usize);
        }
        Ok(EagerFunction {
            rt,
            ctx,
            function: func,
            library,
            keep_alive: Vec::new(),
            name: cname,
            num_inputs: sig.inputs.len(),
            input_dtypes: sig.inputs.iter().map(dtype).collect(),
            output_dtypes: sig.outputs.iter().map(dtype).collect(),
        })
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

    /// The registered function name.
    pub fn name(&self) -> &str {
        self.name.to_str().unwrap_or("")
    }

    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    pub fn num_outputs(&self) -> usize {
        self.output_dtypes.len()
    }

    /// Keeps `dependency` (a function this one calls) alive, and so registered, as long as this one.
    pub fn keep_alive(&mut self, dependency: std::sync::Arc<dyn std::any::Any + Send + Sync>) {
        self.keep_alive.push(dependency);
    }

    /// The dtype codes of the function's outputs.
    pub fn output_dtypes(&self) -> &[i32] {
        &self.output_dtypes
    }

    /// Adds a call of this function to `graph` (a `StatefulPartitionedCall` named `op_name` on
    /// `inputs`), copying the function into the graph's library so the graph is self-contained.
    ///
    /// # Safety
    /// `graph` must be live and not mutated concurrently; the inputs must belong to it.
    pub unsafe fn add_call(
        &self,
        graph: *mut TF_Graph,
        op_name: &str,
        inputs: &[TF_Output],
    ) -> Result<*mut TF_Operation, TfError> {
        let api = self.rt.api();
        if inputs.len() != self.num_inputs {
            return Err(TfError::new(
                3,
                format!("function {} takes {} inputs, got {}", self.name(), self.num_inputs, inputs.len()),
            ));
        }
        for (i, (o, &want)) in inputs.iter().zip(&self.input_dtypes).enumerate() {
            let got = (api.TF_OperationOutputType)(*o);
            if got != want {
                return Err(TfError::new(3, format!("input {i} of {} has dtype {got}, expected {want}", self.name())));
            }
        }
        let status = Status::new(api);
        for &f in self.library.iter().chain(std::iter::once(&self.function)) {
            (api.TF_GraphCopyFunction)(graph, f, ptr::null(), status.raw());
            status.check("copying the function into the graph")?;
        }
        let ty = c"StatefulPartitionedCall";
        let name = CString::new(op_name).map_err(|_| TfError::new(3, "operation name contains NUL"))?;
        let desc = (api.TF_NewOperation)(graph, ty.as_ptr(), name.as_ptr());
        (api.TF_AddInputList)(desc, inputs.as_ptr(), inputs.len() as c_int);
        (api.TF_SetAttrTypeList)(desc, c"Tin".as_ptr(), self.input_dtypes.as_ptr(), self.input_dtypes.len() as c_int);
        (api.TF_SetAttrTypeList)(desc, c"Tout".as_ptr(), self.output_dtypes.as_ptr(), self.output_dtypes.len() as c_int);
        let fname = self.name.as_bytes();
        (api.TF_SetAttrFuncName)(desc, c"f".as_ptr(), fname.as_ptr().cast(), fname.len());
        let op = (api.TF_FinishOperation)(desc, status.raw());
        status.check("adding the function call to the graph")?;
        Ok(op)
    }

    /// Executes the function on `inputs` (borrowed; their buffers are shared, not copied) and
    /// appends one new `TF_Tensor` per output to `out`; the caller owns them.
    ///
    /// # Safety
    /// Every input must be a live `TF_Tensor`.
    pub unsafe fn call(&self, inputs: &[*mut TF_Tensor], out: &mut Vec<*mut TF_Tensor>) -> Result<(), TfError> {
        if inputs.len() != self.num_inputs {
            return Err(TfError::new(
                3,
                format!("function {} takes {} inputs, got {}", self.name(), self.num_inputs, inputs.len()),
            ));
        }
        let api = self.rt.api();
        let status = Status::new(api);
        let op = CachedOp::take(self.rt, self.ctx, &self.name, &status)?;
        let mut handles = HandleList::new(self.rt);
        let mut result = Ok(());
        for &t in inputs {
            let h = (api.TFE_NewTensorHandle)(t, status.raw());
            if let Err(e) = status.check("wrapping an input tensor") {
                result = Err(e);
                break;
            }
            handles.0.push(h);
            (api.TFE_OpAddInput)(op.raw, h, status.raw());
            if let Err(e) = status.check("adding an input") {
                result = Err(e);
                break;
            }
        }
        if result.is_ok() {
            let n_out = self.num_outputs();
            let mut retvals: [*mut TFE_TensorHandle; 8] = [ptr::null_mut(); 8];
            let mut spill: Vec<*mut TFE_TensorHandle> = Vec::new();
            let slots: &mut [*mut TFE_TensorHandle] = if n_out <= retvals.len() {
                &mut retvals[..n_out]
            } else {
                spill.resize(n_out, ptr::null_mut());
                &mut spill
            };
            let mut n = n_out as c_int;
            (api.TFE_Execute)(op.raw, slots.as_mut_ptr(), &mut n, status.raw());
            result = status.check("");
            if result.is_ok() {
                let start = out.len();
                for &h in &slots[..n as usize] {
                    let t = (api.TFE_TensorHandleResolve)(h, status.raw());
                    (api.TFE_DeleteTensorHandle)(h);
                    if result.is_ok() {
                        result = status.check("reading an output");
                        if result.is_ok() {
                            out.push(t);
                        }
                    }
                }
                if result.is_err() {
                    for t in out.drain(start..) {
                        (api.TF_DeleteTensor)(t);
                    }
                }
            }
        }
        // Only an op that executed cleanly is kept for reuse.
        op.give_back(result.is_ok());
        result
    }
}

/// A `TFE_Op` kept per thread between calls, as TensorFlow's Python fast path does: the next
/// call in the same context resets it to its function (`TFE_OpReset`) instead of allocating one.
/// (One op per thread that ever called stays cached for the thread's life.)
struct CachedOp {
    rt: &'static Runtime,
    ctx: EagerContext,
    raw: *mut TFE_Op,
}

thread_local! {
    static OP: std::cell::Cell<(*mut TFE_Context, *mut TFE_Op)> =
        const { std::cell::Cell::new((ptr::null_mut(), ptr::null_mut())) };
}

impl CachedOp {
    unsafe fn take(rt: &'static Runtime, ctx: EagerContext, name: &CString, status: &Status<'_>) -> Result<Self, TfError> {
        let api = rt.api();
        let (cached_ctx, cached) = OP.with(|c| c.replace((ptr::null_mut(), ptr::null_mut())));
        if !cached.is_null() {
            if cached_ctx == ctx.0 {
                (api.TFE_OpReset)(cached, name.as_ptr(), ptr::null(), status.raw());
                if status.check("").is_ok() {
                    return Ok(CachedOp { rt, ctx, raw: cached });
                }
            }
            (api.TFE_DeleteOp)(cached);
        }
        let raw = (api.TFE_NewOp)(ctx.0, name.as_ptr(), status.raw());
        status.check("creating the function call")?;
        Ok(CachedOp { rt, ctx, raw })
    }

    fn give_back(self, reusable: bool) {
        let api = self.rt.api();
        let (ctx, raw) = (self.ctx, self.raw);
        std::mem::forget(self);
        // SAFETY: the op is owned here; either cached for this thread or deleted.
        unsafe {
            if reusable {
                let (_, previous) = OP.with(|c| c.replace((ctx.0, raw)));
                if !previous.is_null() {
                    (api.TFE_DeleteOp)(previous);
                }
            } else {
                (api.TFE_DeleteOp)(raw);
            }
        }
    }

    /// Deletes this thread's cached op if it belongs to `ctx` (before `ctx` is deleted).
    fn forget_context(rt: &Runtime, ctx: EagerContext) {
        let (cached_ctx, cached) = OP.with(|c| c.get());
        if cached_ctx == ctx.0 && !cached.is_null() {
            OP.with(|c| c.set((ptr::null_mut(), ptr::null_mut())));
            // SAFETY: owned by the cache, its context still alive.
            unsafe { (rt.api().TFE_DeleteOp)(cached) };
        }
    }
}

impl Drop for CachedOp {
    fn drop(&mut self) {
        // SAFETY: owned; reached only on unwinding paths.
        unsafe { (self.rt.api().TFE_DeleteOp)(self.raw) }
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
        // SAFETY: owned since from_graph, deleted once.
        unsafe {
            (api.TF_DeleteFunction)(self.function);
            for &f in &self.library {
                (api.TF_DeleteFunction)(f);
            }
        }
    }
}

/// Input handles deleted when the call ends, whatever path it takes.
struct HandleList(Vec<*mut TFE_TensorHandle>, &'static Runtime);

impl HandleList {
    fn new(rt: &'static Runtime) -> Self {
        HandleList(Vec::new(), rt)
    }
}

impl Drop for HandleList {
    fn drop(&mut self) {
        for &h in &self.0 {
            // SAFETY: each handle was created by TFE_NewTensorHandle and is deleted once.
            unsafe { (self.1.api().TFE_DeleteTensorHandle)(h) }
        }
    }
}
