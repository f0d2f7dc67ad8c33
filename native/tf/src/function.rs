//! A traced graph turned into a `TF_Function` and registered in an eager context.

use crate::c_api::{TFE_Context, TFE_TensorHandle, TF_Graph, TF_Output, TF_Tensor};
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
}

/// A function registered in an eager context; removed from the context on drop.
#[derive(Debug)]
pub struct EagerFunction {
    rt: &'static Runtime,
    ctx: EagerContext,
    name: CString,
    num_inputs: usize,
    num_outputs: usize,
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
        let func = (api.TF_GraphToFunction)(
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
            ptr::null(),
            ptr::null(),
            status.raw(),
        );
        status.check("converting the traced graph to a function")?;
        (api.TFE_ContextAddFunction)(ctx.0, func, status.raw());
        // The context keeps its own copy of the FunctionDef.
        (api.TF_DeleteFunction)(func);
        status.check("registering the function in the eager context")?;
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(EagerFunction {
            rt,
            ctx,
            name: cname,
            num_inputs: sig.inputs.len(),
            num_outputs: sig.outputs.len(),
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
        self.num_outputs
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
        let op = (api.TFE_NewOp)(self.ctx.0, self.name.as_ptr(), status.raw());
        status.check("creating the function call")?;
        let mut handles = HandleList::new(self.rt);
        let mut result = Ok(());
        for &t in inputs {
            let h = (api.TFE_NewTensorHandle)(t, status.raw());
            if let Err(e) = status.check("wrapping an input tensor") {
                result = Err(e);
                break;
            }
            handles.0.push(h);
            (api.TFE_OpAddInput)(op, h, status.raw());
            if let Err(e) = status.check("adding an input") {
                result = Err(e);
                break;
            }
        }
        if result.is_ok() {
            let mut retvals: Vec<*mut TFE_TensorHandle> = vec![ptr::null_mut(); self.num_outputs];
            let mut n = self.num_outputs as c_int;
            (api.TFE_Execute)(op, retvals.as_mut_ptr(), &mut n, status.raw());
            result = status.check("");
            if result.is_ok() {
                let start = out.len();
                for &h in &retvals[..n as usize] {
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
        (api.TFE_DeleteOp)(op);
        result
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
