//! A registered function as a serialized `FunctionDef` and back: what a trace cache (or a saved
//! function) stores so that a later process runs a concrete function without tracing it.
//!
//! The C API functions this needs are resolved when first asked for, not when the runtime is
//! bound: a TensorFlow build without them still runs everything else, and asking for an export
//! there is a clear error naming the missing function.

use crate::c_api::{TF_Buffer, TF_Function, TF_Graph, TF_Status};
use crate::call_options::CallOptions;
use super::EagerFunction;
use crate::context::EagerContext;
use crate::function_def_proto as proto;
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_void, CString};
use std::sync::OnceLock;

type ToDef = unsafe extern "C" fn(*mut TF_Function, *mut TF_Buffer, *mut TF_Status);
type ImportDef = unsafe extern "C" fn(*const c_void, usize, *mut TF_Status) -> *mut TF_Function;
type NewBuffer = unsafe extern "C" fn() -> *mut TF_Buffer;
type DeleteBuffer = unsafe extern "C" fn(*mut TF_Buffer);

struct DefApi {
    to_def: ToDef,
    import: ImportDef,
    new_buffer: NewBuffer,
    delete_buffer: DeleteBuffer,
}

fn def_api(rt: &Runtime) -> Result<&'static DefApi, TfError> {
    static API: OnceLock<Result<DefApi, &'static str>> = OnceLock::new();
    let api = API.get_or_init(|| {
        let sym = |name: &'static std::ffi::CStr| {
            rt.optional_symbol(name).ok_or(name.to_str().unwrap_or("a C API function"))
        };
        let (to_def, import) = (sym(c"TF_FunctionToFunctionDef")?, sym(c"TF_FunctionImportFunctionDef")?);
        let (new_buffer, delete_buffer) = (sym(c"TF_NewBuffer")?, sym(c"TF_DeleteBuffer")?);
        // SAFETY: the symbols are the C functions of those names, declared as in
        // tensorflow/c/c_api.h and tensorflow/c/tf_buffer.h.
        unsafe {
            Ok(DefApi {
                to_def: std::mem::transmute::<*mut c_void, ToDef>(to_def),
                import: std::mem::transmute::<*mut c_void, ImportDef>(import),
                new_buffer: std::mem::transmute::<*mut c_void, NewBuffer>(new_buffer),
                delete_buffer: std::mem::transmute::<*mut c_void, DeleteBuffer>(delete_buffer),
            })
        }
    });
    api.as_ref().map_err(|missing| {
        TfError::new(
            Code::Unimplemented,
            format!("the loaded TensorFlow {} has no {missing}: functions cannot be exported or restored", rt.version()),
        )
    })
}

/// `func` as a serialized `FunctionDef`, without the mark that spares it XLA's auto-clustering
/// pass here (see [`crate::auto_clustering`]): wherever it is read next decides that anew.
fn def_of(rt: &Runtime, api: &DefApi, func: *mut TF_Function) -> Result<Vec<u8>, TfError> {
    let status = Status::new(rt.api());
    // SAFETY: the buffer is made and deleted here; TF_FunctionToFunctionDef fills it from the live
    // function (the caller's); its bytes are copied out before the buffer is deleted.
    unsafe {
        let buf = (api.new_buffer)();
        (api.to_def)(func, buf, status.raw());
        let bytes = crate::c_api::buffer_bytes(buf).to_vec();
        (api.delete_buffer)(buf);
        status.check("exporting the function as a FunctionDef")?;
        match crate::auto_clustering::marked(&bytes, &[], false) {
            Ok(std::borrow::Cow::Borrowed(_)) => Ok(bytes),
            Ok(std::borrow::Cow::Owned(unmarked)) => Ok(unmarked),
            Err(e) => Err(TfError::new(Code::Internal, format!("reading the exported FunctionDef: {e}"))),
        }
    }
}

/// Refuses, for a function XLA compiles, a library function making a TensorList of TensorLists
/// (see [`crate::xla_lists`]): a trace's own operations are checked in Java, the functions it calls
/// (another Polyfn function, a loaded one) here.
pub(super) fn refuse_lists_of_lists_in(rt: &Runtime, library: &[*mut TF_Function]) -> Result<(), TfError> {
    let api = def_api(rt)?;
    for &f in library {
        let def = def_of(rt, api, f)?;
        crate::xla_lists::refuse_lists_of_lists(&def).map_err(|why| {
            TfError::invalid_argument(format!("function {}: {why}", proto::name(&def).unwrap_or_default()))
        })?;
    }
    Ok(())
}

/// Parses `def` into a new `TF_Function` the caller owns.
fn import(rt: &Runtime, api: &DefApi, def: &[u8], what: &str) -> Result<*mut TF_Function, TfError> {
    let status = Status::new(rt.api());
    // SAFETY: the bytes live for the call; TensorFlow copies what it keeps.
    let func = unsafe { (api.import)(def.as_ptr().cast(), def.len(), status.raw()) };
    status
        .check("")
        .map_err(|e| TfError::invalid_argument(format!("not a usable FunctionDef ({what}): {}", e.message)))?;
    Ok(func)
}

impl EagerFunction {
    /// The function as a serialized `FunctionDef` (TensorFlow's `function.proto`). The functions
    /// its operations refer to (control-flow branches, and the Polyfn functions it calls with
    /// their own libraries, which were copied into its graph) are in [`EagerFunction::library_defs`].
    pub fn to_function_def(&self) -> Result<Vec<u8>, TfError> {
        def_of(self.rt, def_api(self.rt)?, self.function)
    }

    /// Every function of this one's library (the branch functions its `If`/`While` operations
    /// name and the Polyfn functions it calls, nested ones included) as a serialized `FunctionDefLibrary`; empty when it has none.
    pub fn library_defs(&self) -> Result<Vec<u8>, TfError> {
        let api = def_api(self.rt)?;
        let defs = self.library.iter().map(|&f| def_of(self.rt, api, f)).collect::<Result<Vec<_>, _>>()?;
        Ok(proto::library_of(&defs))
    }

    /// Copies the function and its library into `graph` as they leave Polyfn, without the mark
    /// that spares them XLA's auto-clustering pass here (see [`crate::auto_clustering`]): a graph
    /// of the user's may be saved, or run where that pass has work.
    ///
    /// # Safety
    /// `graph` must be live and not mutated concurrently.
    pub(crate) unsafe fn copy_unmarked_into(&self, graph: *mut TF_Graph) -> Result<(), TfError> {
        let api = def_api(self.rt)?;
        let status = Status::new(self.rt.api());
        for &f in self.library.iter().chain(std::iter::once(&self.function)) {
            let copy = import(self.rt, api, &def_of(self.rt, api, f)?, "copying the function")?;
            // SAFETY: live graph (caller's contract); the copy was just made here and is deleted
            // once (the graph keeps its own).
            unsafe {
                (self.rt.api().TF_GraphCopyFunction)(graph, copy, std::ptr::null(), status.raw());
                (self.rt.api().TF_DeleteFunction)(copy);
            }
            status.check("copying the function into the graph")?;
        }
        Ok(())
    }

    /// The function's `FunctionDef` and its library's, each serialized.
    pub(crate) fn all_defs(&self) -> Result<Vec<Vec<u8>>, TfError> {
        let api = def_api(self.rt)?;
        std::iter::once(self.function).chain(self.library.iter().copied()).map(|f| def_of(self.rt, api, f)).collect()
    }

    /// Registers the function serialized in `def` in `ctx` under `name` (which must be unused
    /// there, e.g. from [`crate::naming::unused_function_name`]), together with the functions it
    /// refers to, serialized in `library` (a `FunctionDefLibrary`, possibly empty). Those are
    /// registered under their own names, which must be unused too (the caller renames them and the
    /// references to them); this function owns them and removes them when dropped. The bytes are
    /// checked before TensorFlow parses them: a signature with concrete dtypes must be readable.
    /// On any error nothing stays registered.
    pub fn from_function_def(
        rt: &'static Runtime,
        ctx: EagerContext,
        def: &[u8],
        library: &[u8],
        name: &str,
    ) -> Result<Self, TfError> {
        Self::from_function_def_with(rt, ctx, def, library, name, CallOptions::default())
    }

    /// [`EagerFunction::from_function_def`] with the given options; the definition's nodes are
    /// inspected to choose the call path, as a traced graph's are.
    pub fn from_function_def_with(
        rt: &'static Runtime,
        ctx: EagerContext,
        def: &[u8],
        library: &[u8],
        name: &str,
        options: CallOptions,
    ) -> Result<Self, TfError> {
        let api = def_api(rt)?;
        let bad = |why: String| TfError::invalid_argument(format!("not a usable FunctionDef: {why}"));
        let (input_dtypes, output_dtypes) = proto::arg_dtypes(def).map_err(bad)?;
        let ops = proto::node_ops(def).map_err(bad)?;
        // A control output's type is its node's (an unknown node counts as an effect).
        let control = proto::control_output_nodes(def).map_err(bad)?;
        let type_of = |node: &String| ops.iter().find(|(_, name)| name == node).map_or("", |(ty, _)| ty.as_str());
        let effects = super::fast_path::has_effects(control.iter().map(type_of));
        crate::def_check::check_nodes(rt, def).map_err(bad)?;
        crate::device_check::check_devices(rt, ctx, def).map_err(bad)?;
        if options.jit_compile {
            crate::xla_lists::refuse_lists_of_lists(def).map_err(bad)?;
        } else {
            // XLA compiles some ops no kernel runs; without it, an op with no kernel fails every call.
            crate::op_kernels::check(rt, &ops).map_err(bad)?;
        }
        let cname = CString::new(name).map_err(|_| TfError::invalid_argument("function name contains NUL"))?;
        if EagerFunction::is_registered(rt, ctx, name) {
            return Err(TfError::new(Code::AlreadyExists, format!("a function named {name} is already registered")));
        }
        let bad_lib = |why: String| TfError::invalid_argument(format!("not a usable function library: {why}"));
        let entries = proto::library_entries(library).map_err(bad_lib)?;
        let mut seen = std::collections::HashSet::new();
        for entry in &entries {
            let lib_name = proto::name(entry).map_err(bad_lib)?;
            if lib_name == name || EagerFunction::is_registered(rt, ctx, &lib_name) || !seen.insert(lib_name.clone()) {
                return Err(bad_lib(format!("function {lib_name} is already registered or listed twice")));
            }
            // Checked like the main definition: Grappler aborts on some malformed nodes, and an
            // argument without a dtype registers, then fails every call that reaches it.
            proto::arg_dtypes(entry).map_err(|why| bad_lib(format!("function {lib_name}: {why}")))?;
            crate::def_check::check_nodes(rt, entry).map_err(|why| bad_lib(format!("function {lib_name}: {why}")))?;
            crate::device_check::check_devices(rt, ctx, entry).map_err(|why| bad_lib(format!("function {lib_name}: {why}")))?;
            if options.jit_compile {
                crate::xla_lists::refuse_lists_of_lists(entry).map_err(|why| bad_lib(format!("function {lib_name}: {why}")))?;
            } else {
                let lib_ops = proto::node_ops(entry).map_err(|why| bad_lib(format!("function {lib_name}: {why}")))?;
                crate::op_kernels::check(rt, &lib_ops).map_err(|why| bad_lib(format!("function {lib_name}: {why}")))?;
            }
        }
        // Marked for this context only: the pass that the mark spares may have work elsewhere.
        let mark = crate::auto_clustering::pass_does_nothing(rt, ctx);
        let marked = crate::auto_clustering::marked(def, &entries, mark).map_err(bad)?;
        let renamed = proto::rename(&marked, name).map_err(bad)?;
        let mut owned = Vec::with_capacity(entries.len());
        let delete_all = |owned: &[*mut TF_Function]| {
            for &f in owned {
                // SAFETY: made by import below, owned here and not registered.
                unsafe { (rt.api().TF_DeleteFunction)(f) };
            }
        };
        for entry in &entries {
            match import(rt, api, entry, "importing a library function") {
                Ok(f) => owned.push(f),
                Err(e) => {
                    delete_all(&owned);
                    return Err(e);
                }
            }
        }
        let func = match import(rt, api, &renamed, "importing the FunctionDef") {
            Ok(f) => f,
            Err(e) => {
                delete_all(&owned);
                return Err(e);
            }
        };
        // Built once here as TensorFlow builds it at the first call, so a body that cannot be
        // built is refused at load instead of failing every call.
        let lib_types: Vec<_> = entries.iter().map(|e| (proto::name(e).ok(), proto::arg_dtypes(e).ok())).collect();
        let mut bodies = vec![crate::def_check::Body {
            function: func,
            name,
            inputs: &input_dtypes,
            outputs: &output_dtypes,
            shapes: crate::def_check::input_shapes(def, input_dtypes.len()),
        }];
        for ((&f, (lib_name, types)), entry) in owned.iter().zip(&lib_types).zip(&entries) {
            if let (Some(lib_name), Some((inputs, outputs))) = (lib_name, types) {
                let shapes = crate::def_check::input_shapes(entry, inputs.len());
                bodies.push(crate::def_check::Body { function: f, name: lib_name, inputs, outputs, shapes });
            }
        }
        // SAFETY: every function was just made and is owned here.
        if let Err(why) = unsafe { crate::def_check::check_bodies(rt, &bodies) } {
            delete_all(&owned);
            delete_all(&[func]);
            return Err(bad(why));
        }
        // A definition exported from a function compiled with XLA carries `_XlaMustCompile`:
        // the options of this run decide, either way.
        // SAFETY: func was just made, is owned here and not registered.
        let marked = unsafe {
            if options.jit_compile {
                crate::call_options::mark_for_xla(rt, func, name, &ops)
            } else {
                // Only a runtime without the attribute setter fails here; it has no XLA either.
                crate::call_options::set_must_compile(rt, func, false).or_else(|e| match e.code {
                    Code::Unimplemented => Ok(()),
                    _ => Err(e),
                })
            }
        };
        if let Err(e) = marked {
            delete_all(&owned);
            delete_all(&[func]);
            return Err(e);
        }
        let blocker = if owned.is_empty() {
            super::fast_path::blocker(&ops, &output_dtypes, effects, &options)
        } else {
            Some("it calls other functions".to_owned())
        };
        // SAFETY: live context; every library function was just made and is owned here.
        let added = match unsafe { crate::branch_library::register_missing(rt, ctx, &owned) } {
            Ok(added) => added,
            Err(e) => {
                delete_all(&owned);
                delete_all(&[func]);
                return Err(e);
            }
        };
        let tfg = crate::call_options::tfg_can_change(&ops, owned.len());
        // SAFETY: func and the library functions were just made and are owned here; register
        // deletes them on failure.
        let mut made = unsafe {
            EagerFunction::register(rt, ctx, func, owned, cname, input_dtypes, output_dtypes, blocker, tfg, options)
        };
        match &mut made {
            Ok(f) => f.added_library = added,
            // SAFETY: live context; removing what was just added.
            Err(_) => unsafe { crate::branch_library::remove(rt, ctx, &added) },
        }
        made
    }
}

