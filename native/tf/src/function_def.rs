//! A registered function as a serialized `FunctionDef` and back: what a trace cache (or a saved
//! function) stores so that a later process runs a concrete function without tracing it.
//!
//! The C API functions this needs are resolved when first asked for, not when the runtime is
//! bound: a TensorFlow build without them still runs everything else, and asking for an export
//! there is a clear error naming the missing function.

use crate::c_api::{TF_Buffer, TF_Function, TF_Status};
use crate::call_options::CallOptions;
use crate::function::{EagerContext, EagerFunction};
use crate::function_def_proto as proto;
use crate::runtime::Runtime;
use crate::status::{Code, Status, TfError};
use std::ffi::{c_void, CString};
use std::sync::OnceLock;

/// `TF_Buffer`'s public layout (tensorflow/c/tf_buffer.h).
#[repr(C)]
struct BufferView {
    data: *const c_void,
    length: usize,
    data_deallocator: Option<unsafe extern "C" fn(*mut c_void, usize)>,
}

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

impl EagerFunction {
    /// The function as a serialized `FunctionDef` (TensorFlow's `function.proto`). A function
    /// that calls other functions is refused: its definition alone would not run elsewhere.
    pub fn to_function_def(&self) -> Result<Vec<u8>, TfError> {
        if !self.library.is_empty() || !self.keep_alive.is_empty() {
            return Err(TfError::new(
                Code::FailedPrecondition,
                format!("function {} calls other functions; exporting it alone is not supported", self.name()),
            ));
        }
        let api = def_api(self.rt)?;
        let status = Status::new(self.rt.api());
        // SAFETY: the buffer is made and deleted here; TF_FunctionToFunctionDef fills it from the
        // function owned by self; its bytes are copied out before the buffer is deleted.
        unsafe {
            let buf = (api.new_buffer)();
            (api.to_def)(self.function, buf, status.raw());
            let view = &*(buf as *const BufferView);
            let bytes = if view.data.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(view.data.cast::<u8>(), view.length).to_vec()
            };
            (api.delete_buffer)(buf);
            status.check("exporting the function as a FunctionDef")?;
            Ok(bytes)
        }
    }

    /// Registers the function serialized in `def` in `ctx` under `name` (which must be unused
    /// there, e.g. from [`crate::naming::unused_function_name`]). The bytes are checked before
    /// TensorFlow parses them: a signature with concrete dtypes must be readable. A function that
    /// calls other functions needs them registered first; Polyfn does not restore those.
    pub fn from_function_def(
        rt: &'static Runtime,
        ctx: EagerContext,
        def: &[u8],
        name: &str,
    ) -> Result<Self, TfError> {
        Self::from_function_def_with(rt, ctx, def, name, CallOptions::default())
    }

    /// [`EagerFunction::from_function_def`] with the given options; the definition's nodes are
    /// inspected to choose the call path, as a traced graph's are.
    pub fn from_function_def_with(
        rt: &'static Runtime,
        ctx: EagerContext,
        def: &[u8],
        name: &str,
        options: CallOptions,
    ) -> Result<Self, TfError> {
        let api = def_api(rt)?;
        let bad = |why: String| TfError::invalid_argument(format!("not a usable FunctionDef: {why}"));
        let (input_dtypes, output_dtypes) = proto::arg_dtypes(def).map_err(bad)?;
        let ops = proto::node_ops(def).map_err(bad)?;
        let effects = proto::has_control_outputs(def).map_err(bad)?;
        crate::def_check::check_nodes(rt, def).map_err(bad)?;
        let cname = CString::new(name).map_err(|_| TfError::invalid_argument("function name contains NUL"))?;
        if EagerFunction::is_registered(rt, ctx, name) {
            return Err(TfError::new(Code::AlreadyExists, format!("a function named {name} is already registered")));
        }
        let renamed = proto::rename(def, name).map_err(bad)?;
        let status = Status::new(rt.api());
        // SAFETY: the bytes live for the call; TensorFlow copies what it keeps.
        let func = unsafe { (api.import)(renamed.as_ptr().cast(), renamed.len(), status.raw()) };
        status.check("importing the FunctionDef")?;
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
            // SAFETY: owned here, deleted once.
            unsafe { (rt.api().TF_DeleteFunction)(func) };
            return Err(e);
        }
        let blocker = crate::fast_path::blocker(&ops, &output_dtypes, effects, &options);
        // SAFETY: func was just made and is owned by the EagerFunction built from it.
        unsafe { EagerFunction::register(rt, ctx, func, Vec::new(), cname, input_dtypes, output_dtypes, blocker, options) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn buffer_layout_matches_tf_buffer() {
        // data pointer, length, deallocator: three words
        assert_eq!(std::mem::size_of::<super::BufferView>(), 3 * std::mem::size_of::<usize>());
    }
}
