//! Executing a registered function eagerly: the hot path of a cache hit.

use crate::c_api::{TFE_TensorHandle, TF_Tensor};
use super::fast_path::fast_api;
use super::EagerFunction;
use crate::op_cache::CachedOp;
use crate::runtime::Runtime;
use crate::status::{Status, TfError};
use std::ffi::c_int;
use std::ptr;
use std::time::{Duration, Instant};

/// A duration in nanoseconds (saturating: a call longer than 584 years is not timed right).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl EagerFunction {
    /// Executes the function on `inputs` (borrowed; their buffers are shared, not copied) and
    /// appends one new `TF_Tensor` per output to `out`; the caller owns them.
    ///
    /// # Safety
    /// Every input must be a live `TF_Tensor`.
    pub unsafe fn call(&self, inputs: &[*mut TF_Tensor], out: &mut Vec<*mut TF_Tensor>) -> Result<(), TfError> {
        self.check_input_count(inputs.len())?;
        let api = self.rt.api();
        // Kernels running on this thread see TensorFlow's float mode, as on its own threads.
        let _float_mode = crate::float_mode::TensorFlowFloatMode::set();
        crate::status::with_call_status(api, |status| {
            let fast = self.fast_path();
            if let Some(chosen) = self.session.ready().filter(|_| fast) {
                let start = out.len();
                let timed = self.session.times_session().then(Instant::now);
                // SAFETY: the caller's contract; one input per parameter, checked above.
                let result = unsafe { chosen.session.run(inputs, out, status) };
                if let (Some(t), Ok(())) = (timed, &result) {
                    self.session_timed(t.elapsed());
                }
                match (&result, chosen.build_own()) {
                    (Ok(()), Some(own)) => {
                        // SAFETY: as above; the outputs were just made and are live.
                        match unsafe { super::session_path::SessionCall::build(self, inputs, &out[start..]) } {
                            Ok(session) => drop(own.set(session)),
                            Err(e) => log::debug!("function {}: this thread keeps to its first session: {e}", self.name()),
                        }
                    }
                    (Err(_), Some(_)) => chosen.give_back_claim(),
                    _ => {}
                }
                return result;
            }
            let start = out.len();
            // Functions the session path refused (or never could take) may run on the
            // single-threaded executor; a call on it is never timed as a pool call.
            let pool_tiers = self.may_try_executor();
            let single = pool_tiers && self.executor.in_use();
            let timed = (!single && ((fast && self.session.times_eager()) || (pool_tiers && self.executor.times_pool())))
                .then(Instant::now);
            let mut timed_single = (single && self.executor.times()).then(Instant::now);
            let result = {
                // A purge of the wrapper this call's kernel is filed under (see kernel_cache) must
                // not overlap the call: TensorFlow reads the wrapper's definition while it builds
                // the kernel, and one removed meanwhile crashed the process (a null OpDef). Held
                // for the call only: promotion below may log, and a log handler may close a
                // function, whose purge on this thread would then wait for this very guard.
                let _no_purge = self.eager_inline().then(crate::kernel_cache::calls_guard);
                // SAFETY: the caller's contract, passed on.
                match unsafe { self.call_with(inputs, out, status, single) } {
                    Err(e) if single => {
                        let refused = super::executor_trial::refused(&e.message);
                        // Any failure during the trial ends it (the pool is known to work).
                        if refused || self.executor.on_trial() {
                            self.executor.end();
                        }
                        if refused && self.executor.rerun_safe() {
                            log::debug!("function {} stays on TensorFlow's thread pool: {}", self.name(), e.message);
                            timed_single = None;
                            // SAFETY: as above.
                            unsafe { self.call_with(inputs, out, status, false) }
                        } else {
                            Err(e)
                        }
                    }
                    r => r,
                }
            };
            if let (Some(t), Ok(())) = (timed, &result) {
                self.session.eager_took(nanos(t.elapsed()));
                self.executor.pool_took(nanos(t.elapsed()));
            }
            if let (Some(t), Ok(())) = (timed_single, &result) {
                self.single_threaded_timed(t.elapsed());
            }
            if result.is_ok() && fast && self.session.count_call() {
                // SAFETY: as above; the outputs were just made and are live.
                unsafe { self.promote(inputs, &out[start..]) };
            }
            if result.is_ok() && pool_tiers && self.executor.count_call() {
                self.try_single_threaded();
            }
            result
        })
    }

    /// Moves the function to its session path (this thread won the count): builds its first
    /// session and publishes it if its first run returns what the eager call just did; otherwise
    /// the function stays on the eager path for good.
    ///
    /// # Safety
    /// Every input and output must be a live `TF_Tensor`.
    unsafe fn promote(&self, inputs: &[*mut TF_Tensor], outputs: &[*mut TF_Tensor]) {
        // SAFETY: the caller's contract, passed on.
        match unsafe { super::session_path::SessionCall::build(self, inputs, outputs) } {
            Ok(session) => self.session.publish(session),
            Err(e) => {
                log::debug!("function {} stays on the eager call path: {e}", self.name());
                self.try_single_threaded();
            }
        }
    }

    /// Starts the trial of the single-threaded executor (see `executor_trial`) if the function
    /// may take it.
    fn try_single_threaded(&self) {
        match self.single_threaded_check() {
            Ok(only_reads) if self.executor.start(only_reads) => {
                log::debug!("function {} tries TensorFlow's single-threaded executor", self.name())
            }
            Ok(_) => {}
            Err(why) => {
                self.executor.end();
                log::debug!("function {} keeps TensorFlow's thread pool: {why}", self.name());
            }
        }
    }

    /// Why the function must not try the single-threaded executor; if it may, whether it only
    /// reads its state (see `executor_trial`).
    fn single_threaded_check(&self) -> Result<bool, String> {
        if self.options.jit_compile || self.eager_inline() || !self.may_try_executor() {
            return Err("its options choose the call path".to_owned());
        }
        if !super::fast_path_supported(self.rt) {
            return Err(format!("TensorFlow {} predates the caller-thread paths", self.rt.version()));
        }
        if !self.ctx.only_cpus(self.rt) {
            return Err("the eager context has devices other than CPUs".to_owned());
        }
        let (known, stateful) = super::session_path::registry_ops(self.rt).map_err(|e| e.message)?;
        let ops = self
            .all_defs()
            .map_err(|e| e.message)
            .and_then(|defs| defs.iter().map(|d| crate::function_def_proto::node_ops(d)).collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("its definition could not be read: {e}"))?
            .concat();
        match super::executor_trial::blocker(&ops, |ty| known.contains(ty), |ty| stateful.contains(ty)) {
            Some(why) => Err(why),
            None => Ok(super::executor_trial::only_reads(&ops, |ty| stateful.contains(ty))),
        }
    }

    /// Records a timed call on the single-threaded executor; logs the trial's verdict when this
    /// call ended it.
    fn single_threaded_timed(&self, took: Duration) {
        if let Some(v) = self.executor.took(nanos(took), self.session.eager_best()) {
            let (pool, single) = (v.pool_nanos as f64 / 1e3, v.single_nanos as f64 / 1e3);
            if v.kept {
                log::debug!("function {} keeps the single-threaded executor ({single:.1} µs against {pool:.1} µs on the pool)", self.name());
            } else {
                log::debug!("function {} goes back to the thread pool: the single-threaded executor took {single:.1} µs, the pool {pool:.1} µs", self.name());
            }
        }
    }

    /// Whether eager calls run on TensorFlow's single-threaded executor (on trial or kept).
    pub fn on_single_threaded_executor(&self) -> bool {
        self.may_try_executor() && self.executor.in_use()
    }

    /// Whether the options let calls leave the thread pool (the caller-thread paths are on, or
    /// the function could never take them: only the executor remains to try).
    fn may_try_executor(&self) -> bool {
        self.options.fast_path && (self.fast_path() || self.fast_path_blocker.is_some())
    }

    /// Records a timed session call; logs the trial's verdict when this call ended it.
    fn session_timed(&self, took: Duration) {
        if let Some(v) = self.session.session_took(nanos(took)) {
            let (eager, session) = (v.eager_nanos as f64 / 1e3, v.session_nanos as f64 / 1e3);
            if v.kept {
                log::debug!("function {} keeps its session path ({session:.1} µs against {eager:.1} µs eager)", self.name());
            } else {
                log::debug!("function {} goes back to the eager path: its session took {session:.1} µs, the eager call {eager:.1} µs", self.name());
            }
        }
    }

    /// Whether calls now run through the function's session (see `session_path`).
    pub fn on_session_path(&self) -> bool {
        self.fast_path() && self.session.is_ready()
    }

    /// This thread's op, set to call this function: by name, or through a
    /// `StatefulPartitionedCall` on the eager caller-thread path.
    ///
    /// # Safety
    /// The function's context must be live.
    unsafe fn take_op(&self, status: &Status<'_>, single: bool) -> Result<CachedOp, TfError> {
        let fast = if self.eager_inline() { fast_api(self.rt) } else { None };
        // SAFETY: the caller's contract, passed on.
        let (op, fresh) = unsafe { CachedOp::take(self.rt, self.ctx.0, &self.name, self.op_key(single), fast.is_some(), status) }?;
        if !fresh {
            return Ok(op);
        }
        // Grappler's configuration, as Python's tf.function sends it with every call (kept by
        // the op across calls: clearing an op keeps its attributes).
        crate::call_options::set_config(self.rt, op.raw, self.options.config_proto(self.tfg, self.ctx.only_cpus(self.rt)))?;
        if single {
            crate::call_options::set_executor_type(self.rt, op.raw, super::executor_trial::SINGLE_THREADED)?;
        }
        if let Some(fast) = fast {
            let fname = self.name.as_bytes();
            let (tin, tout) = (&self.input_dtypes, &self.output_dtypes);
            // SAFETY: live op; each list holds the count passed with it.
            unsafe {
                (fast.set_attr_type_list)(op.raw, c"Tin".as_ptr(), tin.as_ptr(), tin.len() as c_int);
                (fast.set_attr_type_list)(op.raw, c"Tout".as_ptr(), tout.as_ptr(), tout.len() as c_int);
                (fast.set_attr_function_name)(op.raw, c"f".as_ptr(), fname.as_ptr().cast(), fname.len());
            }
        }
        Ok(op)
    }

    /// The key this thread's cached op is kept under: the function and its executor (an op
    /// set for one executor is reset before it calls with the other).
    fn op_key(&self, single: bool) -> u64 {
        self.id << 1 | u64::from(single)
    }

    /// [`EagerFunction::call`] with the status to use, on the single-threaded executor if `single`.
    ///
    /// # Safety
    /// As for [`EagerFunction::call`].
    unsafe fn call_with(&self, inputs: &[*mut TF_Tensor], out: &mut Vec<*mut TF_Tensor>, status: &Status<'_>, single: bool) -> Result<(), TfError> {
        let api = self.rt.api();
        // SAFETY: the context outlives every function registered in it.
        let op = unsafe { self.take_op(status, single) }?;
        let mut handles = HandleList::new(self.rt);
        let mut result = Ok(());
        // Resource inputs' handles are kept across calls (see resource_inputs); locked until the
        // op holds its own references, released before it runs; never waited for.
        let mut kept = self.resource_inputs.as_ref().and_then(|r| r.try_lock());
        for (i, &t) in inputs.iter().enumerate() {
            // SAFETY: t is a live tensor (caller's contract).
            let reused = match kept.as_mut().map(|k| unsafe { k.handle(i, t, status) }) {
                Some(Err(e)) => {
                    result = Err(e);
                    break;
                }
                Some(Ok(h)) => h,
                None => None,
            };
            let h = match reused {
                Some(h) => h,
                None => {
                    // SAFETY: t is a live tensor (caller's contract); the handle shares its buffer.
                    let h = unsafe { (api.TFE_NewTensorHandle)(t, status.raw()) };
                    if let Err(e) = status.check("wrapping an input tensor") {
                        result = Err(e);
                        break;
                    }
                    handles.0.push(h);
                    h
                }
            };
            // SAFETY: live op and handle; the op takes its own reference to the handle.
            unsafe { (api.TFE_OpAddInput)(op.raw, h, status.raw()) };
            if let Err(e) = status.check("adding an input") {
                result = Err(e);
                break;
            }
        }
        drop(kept);
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
            // SAFETY: the op is complete; slots holds n writable entries.
            unsafe { (api.TFE_Execute)(op.raw, slots.as_mut_ptr(), &mut n, status.raw()) };
            result = status.check("");
            if result.is_ok() {
                let start = out.len();
                // TensorFlow writes back how many it returned; never read past the slots.
                let n = (n.max(0) as usize).min(slots.len());
                for &h in &slots[..n] {
                    // SAFETY: h is a live output handle owned here, deleted right after; the
                    // resolved tensor is a new reference the caller will own.
                    let t = unsafe { (api.TFE_TensorHandleResolve)(h, status.raw()) };
                    // SAFETY: as above.
                    unsafe { (api.TFE_DeleteTensorHandle)(h) };
                    if result.is_ok() {
                        result = status.check("reading an output");
                        if result.is_ok() {
                            out.push(t);
                            continue;
                        }
                    }
                    if !t.is_null() {
                        // SAFETY: a tensor resolved after an earlier output failed: ours, never
                        // handed out (a failed resolve returns null).
                        unsafe { (api.TF_DeleteTensor)(t) };
                    }
                }
                if result.is_err() {
                    for t in out.drain(start..) {
                        // SAFETY: made above and not handed out.
                        unsafe { (api.TF_DeleteTensor)(t) };
                    }
                }
            }
        }
        // Only an op that executed cleanly is kept for reuse.
        op.give_back(result.is_ok(), self.op_key(single));
        result
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
