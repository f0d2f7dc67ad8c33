//! How a function's calls run, decided once when it is registered: which call path, whether
//! Grappler optimizes it, whether XLA compiles it.
//!
//! Grappler: TensorFlow runs its graph optimizer on a function only when the call carries a
//! `config_proto` attribute (the eager kernel reads it at instantiation). Python's `tf.function`
//! always sends one, its context's `ConfigProto`; Polyfn sends the same one, or, with Grappler
//! off, one whose `RewriterConfig.disable_meta_optimizer` is set (an explicit "off" also holds
//! on the caller-thread path, whose `StatefulPartitionedCall` kernel optimizes by default).
//!
//! XLA: Python's `jit_compile=True` sets the attribute `_XlaMustCompile` on the function; the
//! eager runtime then compiles the whole function for `XLA_CPU_JIT` (or the GPU's JIT) when it
//! is first called with given shapes.

use crate::c_api::{TFE_Op, TF_Buffer, TF_Function, TF_Status};
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

/// Calls on the eager path before a function moves to its session, by default
/// ([`CallOptions::session_after`] sets it per function; tests set it low to run every
/// function on the session path).
pub const PROMOTE_AFTER: u32 = 64;

/// How calls of one function run. The default is Python `tf.function`'s behaviour with
/// Polyfn's fastest path: caller-thread calls where they give the same results (a session after
/// [`PROMOTE_AFTER`] calls where that does too), Grappler on, no XLA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallOptions {
    /// Take the caller-thread paths when the function allows them (the session path after
    /// [`CallOptions::session_after`] calls, see `session_path`; and, with
    /// [`CallOptions::eager_op_as_function`], the eager caller-thread path before that, see
    /// `fast_path`); false keeps every call on TensorFlow's inter-op pool.
    pub fast_path: bool,
    /// Run eager calls (before the session path, or for good where a function cannot take it) on
    /// the calling thread, by turning on the eager context's experimental "run eager op as
    /// function" mode. Off by default: the mode is context-wide, and under it TensorFlow 2.18
    /// runs every other eager op of the context as a one-op function whose instantiation is
    /// cached under a summary of its attributes (a tensor's dtype, shape and first values), so
    /// an eager `Const` made afterwards (TensorFlow Java's `tf.constant`) can return an earlier
    /// constant's value. Opting in (`dev.polyfn.eagerOpAsFunction=true`) is safe only for
    /// programs that make no eager constants of their own.
    pub eager_op_as_function: bool,
    /// Optimize the function with Grappler, with Python's default configuration.
    pub grappler: bool,
    /// Compile the function with XLA (`tf.function(jit_compile=True)`).
    pub jit_compile: bool,
    /// Calls of a concrete function on the caller-thread path before it moves to its own
    /// session (see `session_path`); 0 keeps it on the eager path.
    pub session_after: u32,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions { fast_path: true, eager_op_as_function: false, grappler: true, jit_compile: false, session_after: PROMOTE_AFTER }
    }
}

/// The `ConfigProto` Python 2.21's eager context sends with every `tf.function` call on a
/// machine without GPUs (`context.function_call_options.config_proto_serialized`), less its
/// `device_count` map, which only sizes devices of a new session and would pin a GPU count:
/// `gpu_options { experimental {} }`, `allow_soft_placement: true`, `experimental {}`,
/// `pluggable_device_options { experimental {} }`. Grappler runs with its defaults.
pub const PYTHON_CONFIG_PROTO: &[u8] = b"\x32\x02\x4a\x00\x38\x01\x82\x01\x00\x92\x01\x02\x4a\x00";

/// Python's configuration plus `graph_options { rewrite_options { disable_tfg_optimizer: true } }`
/// (RewriterConfig field 32), for functions the TFG optimizer cannot change (see
/// [`tfg_can_change`]): Grappler runs as for Python, without the round trip through MLIR.
pub const PYTHON_CONFIG_PROTO_NO_TFG: &[u8] =
    b"\x32\x02\x4a\x00\x38\x01\x52\x05\x52\x03\x80\x02\x01\x82\x01\x00\x92\x01\x02\x4a\x00";

/// Python's configuration with `graph_options { rewrite_options { memory_optimization:
/// SCHEDULING_HEURISTICS } }` (GraphOptions 10, RewriterConfig 4, value 6), for contexts with no
/// device but CPUs. Python's default (`DEFAULT_MEM_OPT`) also runs the memory optimizer's
/// swapping pass, whose heuristics estimate the graph's peak memory on every device and then act
/// only on GPUs (TensorFlow's `memory_optimizer.cc`, `IdentifySwappingCandidates`): on CPUs the
/// estimate, the largest part of Grappler's time on a small function, changes nothing (the pass
/// also honours `_swap_to_host` attributes, which only a hand-written graph carries, and whose
/// host-to-GPU copies a CPU has no use for). The optimized graph is the same; the function's
/// first call is shorter. Not sent when [`global_jit_flags`] may be on.
pub const CPU_CONFIG_PROTO: &[u8] = b"\x32\x02\x4a\x00\x38\x01\x52\x04\x52\x02\x20\x06\x82\x01\x00\x92\x01\x02\x4a\x00";

/// Whether `TF_XLA_FLAGS` may turn TensorFlow's global XLA auto-clustering on (`--tf_xla_auto_jit`,
/// `--tf_xla_cpu_global_jit`, or a flag file that could hold them), read once. Grappler then
/// skips the memory optimizer altogether under Python's `DEFAULT_MEM_OPT` (meta_optimizer.cc,
/// `MemoryOptimizerEnabled`) but would still run its scheduling pass under
/// `SCHEDULING_HEURISTICS`, so [`CPU_CONFIG_PROTO`] would no longer give Python's graph: Python's
/// configuration is sent instead.
pub fn global_jit_flags() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| may_turn_global_jit_on(std::env::var("TF_XLA_FLAGS").ok().as_deref()))
}

/// Whether `TF_XLA_FLAGS` of value `flags` may turn global XLA auto-clustering on.
fn may_turn_global_jit_on(flags: Option<&str>) -> bool {
    flags.is_some_and(|f| ["tf_xla_auto_jit", "tf_xla_cpu_global_jit", "flagfile"].iter().any(|k| f.contains(k)))
}

/// [`CPU_CONFIG_PROTO`] without the TFG optimizer, as [`PYTHON_CONFIG_PROTO_NO_TFG`].
pub const CPU_CONFIG_PROTO_NO_TFG: &[u8] =
    b"\x32\x02\x4a\x00\x38\x01\x52\x07\x52\x05\x20\x06\x80\x02\x01\x82\x01\x00\x92\x01\x02\x4a\x00";

/// Python's configuration plus `graph_options { rewrite_options { disable_meta_optimizer: true } }`
/// (ConfigProto field 10, GraphOptions field 10, RewriterConfig field 19).
pub const NO_GRAPPLER_CONFIG_PROTO: &[u8] =
    b"\x32\x02\x4a\x00\x38\x01\x52\x05\x52\x03\x98\x01\x01\x82\x01\x00\x92\x01\x02\x4a\x00";

/// `AttrValue { b: true }`, the value of `_XlaMustCompile`.
const ATTR_TRUE: &[u8] = b"\x28\x01";
/// `AttrValue { b: false }`.
const ATTR_FALSE: &[u8] = b"\x28\x00";

impl CallOptions {
    /// The `config_proto` attribute every call of the function carries; `tfg` says whether
    /// Grappler's TFG optimizer could change the function (see [`tfg_can_change`]),
    /// `only_cpus` whether the context has no device but CPUs (see [`CPU_CONFIG_PROTO`]).
    pub fn config_proto(&self, tfg: bool, only_cpus: bool) -> &'static [u8] {
        match (self.grappler, tfg, only_cpus && !global_jit_flags()) {
            (true, true, true) => CPU_CONFIG_PROTO,
            (true, false, true) => CPU_CONFIG_PROTO_NO_TFG,
            (true, true, false) => PYTHON_CONFIG_PROTO,
            (true, false, false) => PYTHON_CONFIG_PROTO_NO_TFG,
            (false, _, _) => NO_GRAPPLER_CONFIG_PROTO,
        }
    }
}

/// Whether Grappler's TFG optimizer (an MLIR pipeline Python's default configuration runs on
/// every function) could change a function with these ops (type, name) and `library_len`
/// library functions. In TensorFlow 2.18 to 2.21 its passes convert functional control flow to
/// regions and back (sinking ops into the one branch that uses them), lift legacy calls and drop
/// unused library functions: a function without control flow, calls or a library comes back as it
/// went in. For those the round trip (a new `MLIRContext`, import and export, about a sixth of a
/// first call) is skipped, with the same results.
pub fn tfg_can_change(ops: &[(String, String)], library_len: usize) -> bool {
    library_len > 0 || ops.iter().any(|(ty, _)| crate::graph_ops::refers_to_functions(ty))
}

/// C API functions needed for the options, resolved when first asked for, so a TensorFlow build
/// without one still runs functions with the default options.
pub(crate) struct OptionsApi {
    set_attr_string: SetAttrString,
    set_function_attr: SetFunctionAttr,
    kernels_for_op: KernelsForOp,
    delete_buffer: DeleteBuffer,
}

type SetAttrString = unsafe extern "C" fn(*mut TFE_Op, *const c_char, *const c_void, usize);
type SetFunctionAttr = unsafe extern "C" fn(*mut TF_Function, *const c_char, *const c_void, usize, *mut TF_Status);
type KernelsForOp = unsafe extern "C" fn(*const c_char, *mut TF_Status) -> *mut TF_Buffer;
type DeleteBuffer = unsafe extern "C" fn(*mut TF_Buffer);

pub(crate) fn options_api(rt: &Runtime) -> Result<&'static OptionsApi, TfError> {
    static API: OnceLock<Result<OptionsApi, &'static str>> = OnceLock::new();
    let api = API.get_or_init(|| {
        let sym = |name: &'static CStr| rt.optional_symbol(name).ok_or(name.to_str().unwrap_or("a C API function"));
        let set_attr_string = sym(c"TFE_OpSetAttrString")?;
        let set_function_attr = sym(c"TF_FunctionSetAttrValueProto")?;
        let kernels_for_op = sym(c"TF_GetRegisteredKernelsForOp")?;
        let delete_buffer = sym(c"TF_DeleteBuffer")?;
        // SAFETY: the symbols are the C functions of those names, declared as in
        // tensorflow/c/eager/c_api.h, tensorflow/c/c_api.h and tensorflow/c/tf_buffer.h.
        unsafe {
            Ok(OptionsApi {
                set_attr_string: std::mem::transmute::<*mut c_void, SetAttrString>(set_attr_string),
                set_function_attr: std::mem::transmute::<*mut c_void, SetFunctionAttr>(set_function_attr),
                kernels_for_op: std::mem::transmute::<*mut c_void, KernelsForOp>(kernels_for_op),
                delete_buffer: std::mem::transmute::<*mut c_void, DeleteBuffer>(delete_buffer),
            })
        }
    });
    api.as_ref().map_err(|missing| {
        TfError::new(Code::Unimplemented, format!("the loaded TensorFlow {} has no {missing}", rt.version()))
    })
}

/// The XLA device TensorFlow compiles CPU functions for.
const XLA_CPU: &str = "XLA_CPU_JIT";

/// Registers XLA's compilation kernels (`XLA_CPU_JIT` and the other JIT devices) in TensorFlow's
/// kernel registry, which TensorFlow otherwise does lazily, on the first compilation or graph
/// pass that needs them: until then an op's kernel list has no `XLA_CPU_JIT` entry. The function
/// is TensorFlow's own `XlaOpRegistry::RegisterCompilationKernels()`, idempotent and locked.
fn register_xla_kernels(rt: &Runtime) {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if let Some(f) = rt.optional_symbol(c"_ZN10tensorflow13XlaOpRegistry26RegisterCompilationKernelsEv") {
            // SAFETY: `static void tensorflow::XlaOpRegistry::RegisterCompilationKernels()`: a
            // static member function without arguments is called as a C function without any.
            let f = unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(f) };
            // SAFETY: as above; it takes the registry's lock and registers at most once.
            unsafe { f() };
        }
    });
}

/// Whether `op` has a kernel for XLA's CPU compiler.
fn has_xla_kernel(api: &OptionsApi, status: &Status<'_>, op: &str) -> Result<bool, TfError> {
    let cop = std::ffi::CString::new(op).map_err(|_| TfError::invalid_argument("op type contains NUL"))?;
    // SAFETY: NUL-terminated name; the buffer is owned here, read, then deleted.
    unsafe {
        let buf = (api.kernels_for_op)(cop.as_ptr(), status.raw());
        status.check("listing the op's kernels")?;
        let bytes = crate::c_api::buffer_bytes(buf);
        // KernelList.kernel (1) is a KernelDef, whose device_type is field 2.
        let found = crate::function_def_proto::nested(bytes, &[1, 2]).map(|d| d.iter().any(|d| *d == XLA_CPU.as_bytes()));
        (api.delete_buffer)(buf);
        found.map_err(|e| TfError::new(Code::Internal, format!("reading the kernels of {op}: {e}")))
    }
}

/// Checks that XLA can compile every op of a function (`ops`: type and node name) and marks the
/// function for compilation, as `tf.function(jit_compile=True)` does. An op without an XLA
/// kernel fails here, at trace time, with the message TensorFlow gives at its first call.
///
/// # Safety
/// `func` must be a live function owned by the caller and not yet registered.
pub(crate) unsafe fn mark_for_xla(rt: &Runtime, func: *mut TF_Function, fname: &str, ops: &[(String, String)]) -> Result<(), TfError> {
    let api = options_api(rt)?;
    register_xla_kernels(rt);
    let status = Status::new(rt.api());
    if !has_xla_kernel(api, &status, "AddV2")? {
        return Err(TfError::new(Code::Unimplemented, format!("the loaded TensorFlow {} has no XLA compiler for {XLA_CPU}", rt.version())));
    }
    let mut unsupported = Vec::new();
    for (op, node) in ops {
        // Arguments and results are not compiled; NoOp only orders effects.
        if matches!(op.as_str(), "_Arg" | "_Retval" | "NoOp" | "Placeholder") {
            continue;
        }
        if !has_xla_kernel(api, &status, op)? {
            unsupported.push(format!("{op} (No registered '{op}' OpKernel for {XLA_CPU} devices compatible with node {{{{node {node}}}}})"));
        }
    }
    if !unsupported.is_empty() {
        return Err(TfError::new(
            Code::InvalidArgument,
            format!(
                "Detected unsupported operations when trying to compile graph {fname}[_XlaMustCompile=true] on {XLA_CPU}: {}",
                unsupported.join(", ")
            ),
        ));
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { set_must_compile(rt, func, true) }
}

/// Sets the function's `_XlaMustCompile` attribute (a definition restored from a cache written
/// with XLA on carries `true`; a function not compiled gets `false`, as Python's does).
///
/// # Safety
/// `func` must be a live function owned by the caller and not yet registered.
pub(crate) unsafe fn set_must_compile(rt: &Runtime, func: *mut TF_Function, compile: bool) -> Result<(), TfError> {
    let api = options_api(rt)?;
    let status = Status::new(rt.api());
    let value = if compile { ATTR_TRUE } else { ATTR_FALSE };
    // SAFETY: live function owned by the caller; the proto bytes live for the call.
    unsafe { (api.set_function_attr)(func, c"_XlaMustCompile".as_ptr(), value.as_ptr().cast(), value.len(), status.raw()) };
    status.check("setting the function's XLA compilation attribute")
}

/// Whether XLA's CPU compiler is in the loaded runtime (its kernels are registered).
pub fn xla_available(rt: &Runtime) -> bool {
    let Ok(api) = options_api(rt) else { return false };
    register_xla_kernels(rt);
    has_xla_kernel(api, &Status::new(rt.api()), "AddV2").unwrap_or(false)
}

/// Used by the op cache: the `config_proto` attribute's setter.
pub(crate) fn set_config(rt: &Runtime, op: *mut TFE_Op, config: &[u8]) -> Result<(), TfError> {
    let api = options_api(rt)?;
    // SAFETY: a live op owned by the caller; the bytes live for the call (TensorFlow copies them).
    unsafe { (api.set_attr_string)(op, c"config_proto".as_ptr(), config.as_ptr().cast(), config.len()) };
    Ok(())
}

/// Used by the op cache's users: the `executor_type` attribute's setter (see
/// `function::executor_trial`).
pub(crate) fn set_executor_type(rt: &Runtime, op: *mut TFE_Op, executor: &[u8]) -> Result<(), TfError> {
    let api = options_api(rt)?;
    // SAFETY: a live op owned by the caller; the bytes live for the call (TensorFlow copies them).
    unsafe { (api.set_attr_string)(op, c"executor_type".as_ptr(), executor.as_ptr().cast(), executor.len()) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(types: &[&str]) -> Vec<(String, String)> {
        types.iter().enumerate().map(|(i, t)| (t.to_string(), format!("n{i}"))).collect()
    }

    #[test]
    fn tfg_runs_only_where_it_could_change_the_function() {
        assert!(!tfg_can_change(&ops(&["Placeholder", "Const", "AddV2", "Identity"]), 0));
        for flow in ["If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase", "PartitionedCall", "StatefulPartitionedCall"] {
            assert!(tfg_can_change(&ops(&["Placeholder", flow]), 0), "{flow}");
        }
        assert!(tfg_can_change(&ops(&["Placeholder", "AddV2"]), 1), "a function library");
    }

    #[test]
    fn the_config_follows_grappler_and_tfg() {
        let on = CallOptions::default();
        let off = CallOptions { grappler: false, ..on };
        assert_eq!(on.config_proto(true, false), PYTHON_CONFIG_PROTO);
        assert_eq!(on.config_proto(false, false), PYTHON_CONFIG_PROTO_NO_TFG);
        assert_eq!(on.config_proto(true, true), CPU_CONFIG_PROTO);
        assert_eq!(on.config_proto(false, true), CPU_CONFIG_PROTO_NO_TFG);
        for (tfg, cpus) in [(true, true), (true, false), (false, true), (false, false)] {
            assert_eq!(off.config_proto(tfg, cpus), NO_GRAPPLER_CONFIG_PROTO);
        }
        // Python's bytes with one more GraphOptions entry: rewrite_options (10) holding
        // disable_tfg_optimizer (RewriterConfig 32, varint: tag bytes 0x80 0x02) = true.
        let extra: &[u8] = b"\x52\x05\x52\x03\x80\x02\x01";
        assert_eq!([&PYTHON_CONFIG_PROTO[..6], extra, &PYTHON_CONFIG_PROTO[6..]].concat(), PYTHON_CONFIG_PROTO_NO_TFG);
    }

    /// `ConfigProto.graph_options` (10) `.rewrite_options` (10) of `config`: its
    /// `memory_optimization` (4) and `disable_tfg_optimizer` (32), 0 when absent.
    pub(crate) fn rewrite(config: &[u8]) -> (u64, u64) {
        let proto = crate::function_def_proto::nested(config, &[10, 10]).expect("a readable ConfigProto");
        let field = |n| proto.iter().filter_map(|r| crate::function_def_proto::varint_field(r, n).unwrap()).next_back().unwrap_or(0);
        (field(4), field(32))
    }

    #[test]
    fn xla_flags_that_may_cluster_globally_keep_pythons_memory_optimizer() {
        assert!(!may_turn_global_jit_on(None));
        assert!(!may_turn_global_jit_on(Some("--tf_xla_enable_xla_devices=false")));
        assert!(may_turn_global_jit_on(Some("--tf_xla_auto_jit=2")));
        assert!(may_turn_global_jit_on(Some("--tf_xla_auto_jit=single-gpu(2) --tf_xla_min_cluster_size=4")));
        assert!(may_turn_global_jit_on(Some("--tf_xla_cpu_global_jit")));
        assert!(may_turn_global_jit_on(Some("--flagfile=/etc/xla.flags")));
    }

    #[test]
    fn on_cpus_only_the_memory_optimizers_gpu_heuristics_are_left_out() {
        // Python's configuration has no rewrite options: Grappler's defaults, DEFAULT_MEM_OPT (0).
        assert_eq!(rewrite(PYTHON_CONFIG_PROTO), (0, 0));
        assert_eq!(rewrite(PYTHON_CONFIG_PROTO_NO_TFG), (0, 1));
        // SCHEDULING_HEURISTICS (6): the scheduling pass DEFAULT_MEM_OPT runs, not the swapping one.
        assert_eq!(rewrite(CPU_CONFIG_PROTO), (6, 0));
        assert_eq!(rewrite(CPU_CONFIG_PROTO_NO_TFG), (6, 1));
        // Everything else is Python's: the same bytes once the rewrite options are taken out.
        assert_eq!([&CPU_CONFIG_PROTO[..6], &CPU_CONFIG_PROTO[12..]].concat(), PYTHON_CONFIG_PROTO);
        // (the graph and rewrite options' lengths, then memory_optimization, replaced)
        let tfg_only: &[u8] = b"\x52\x05\x52\x03";
        assert_eq!([&CPU_CONFIG_PROTO_NO_TFG[..6], tfg_only, &CPU_CONFIG_PROTO_NO_TFG[12..]].concat(), PYTHON_CONFIG_PROTO_NO_TFG);
    }
}
