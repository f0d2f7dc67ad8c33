//! The slice of the TensorFlow C API Polyfn uses, resolved with `dlsym` from an already loaded
//! `libtensorflow_cc.so.2` (no build-time dependency on TensorFlow headers or libraries).
//!
//! Declarations follow `tensorflow/c/c_api.h`, `tensorflow/c/eager/c_api.h` and
//! `tensorflow/c/eager/c_api_experimental.h` of TensorFlow 2.18 – 2.21 (stable C ABI).
//!
//! Every symbol declared here is resolved when the runtime is bound, and a missing one fails the
//! binding: declare only functions Polyfn (or its examples) calls, so another TensorFlow build
//! lacking an unused function still works.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uchar, c_void};

macro_rules! opaque {
    ($($name:ident),* $(,)?) => { $(
        #[repr(C)]
        #[doc = concat!("Opaque `", stringify!($name), "` of the TensorFlow C API.")]
        pub struct $name { _private: [u8; 0] }
    )* };
}

opaque!(
    TF_Status, TF_Tensor, TF_Graph, TF_Operation, TF_OperationDescription, TF_Function,
    TF_FunctionOptions, TF_SessionOptions, TF_Session, TF_Buffer, TFE_Context,
    TFE_ContextOptions, TFE_Op, TFE_TensorHandle,
);

/// `TF_Output`: one output of an operation.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TF_Output {
    pub oper: *mut TF_Operation,
    pub index: c_int,
}

/// `TF_Input`: one input of an operation.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TF_Input {
    pub oper: *mut TF_Operation,
    pub index: c_int,
}

/// Deallocator passed to `TF_NewTensor`.
pub type Deallocator = unsafe extern "C" fn(data: *mut c_void, len: usize, arg: *mut c_void);

macro_rules! c_api {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )*) => {
        /// Function pointers into the loaded TensorFlow runtime. Field names are the C names.
        #[derive(Debug)]
        pub struct Api {
            $( pub $name: unsafe extern "C" fn($($ty),*) $(-> $ret)?, )*
        }

        impl Api {
            /// Resolves every symbol with `dlsym` on `handle`.
            ///
            /// # Safety
            /// `handle` must be a live `dlopen` handle of a TensorFlow C API library whose ABI
            /// matches the declarations above.
            /// On failure, the name of the first missing symbol.
            pub(crate) unsafe fn resolve(handle: *mut c_void) -> Result<Api, &'static str> {
                Ok(Api { $(
                    $name: {
                        // SAFETY: handle is a live dlopen handle (caller's contract); the name is
                        // NUL-terminated.
                        let sym = unsafe { libc::dlsym(handle, concat!(stringify!($name), "\0").as_ptr().cast()) };
                        if sym.is_null() {
                            return Err(stringify!($name));
                        }
                        // SAFETY: the symbol is the C function of that name, whose signature the
                        // declaration above copies from TensorFlow's headers (caller's contract).
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) $(-> $ret)?>(sym) }
                    },
                )* })
            }
        }
    };
}

c_api! {
    fn TF_Version() -> *const c_char;
    fn TF_NewStatus() -> *mut TF_Status;
    fn TF_DeleteStatus(s: *mut TF_Status);
    fn TF_GetCode(s: *const TF_Status) -> c_int;
    fn TF_Message(s: *const TF_Status) -> *const c_char;
    fn TF_SetStatus(s: *mut TF_Status, code: c_int, msg: *const c_char);

    fn TF_AllocateTensor(dtype: c_int, dims: *const i64, num_dims: c_int, len: usize) -> *mut TF_Tensor;
    fn TF_DeleteTensor(t: *mut TF_Tensor);
    fn TF_TensorType(t: *const TF_Tensor) -> c_int;
    fn TF_NumDims(t: *const TF_Tensor) -> c_int;
    fn TF_Dim(t: *const TF_Tensor, dim_index: c_int) -> i64;
    fn TF_TensorByteSize(t: *const TF_Tensor) -> usize;
    fn TF_TensorData(t: *const TF_Tensor) -> *mut c_void;

    fn TF_NewGraph() -> *mut TF_Graph;
    fn TF_DeleteGraph(g: *mut TF_Graph);
    fn TF_GraphOperationByName(g: *mut TF_Graph, name: *const c_char) -> *mut TF_Operation;
    fn TF_NewOperation(g: *mut TF_Graph, op_type: *const c_char, name: *const c_char) -> *mut TF_OperationDescription;
    fn TF_AddInput(d: *mut TF_OperationDescription, input: TF_Output);
    fn TF_SetAttrType(d: *mut TF_OperationDescription, name: *const c_char, dtype: c_int);
    fn TF_SetAttrBool(d: *mut TF_OperationDescription, name: *const c_char, value: c_uchar);
    fn TF_SetAttrShape(d: *mut TF_OperationDescription, name: *const c_char, dims: *const i64, num_dims: c_int);
    fn TF_SetAttrTensor(d: *mut TF_OperationDescription, name: *const c_char, value: *mut TF_Tensor, s: *mut TF_Status);
    fn TF_FinishOperation(d: *mut TF_OperationDescription, s: *mut TF_Status) -> *mut TF_Operation;
    fn TF_OperationNumOutputs(oper: *mut TF_Operation) -> c_int;
    fn TF_OperationOpType(oper: *mut TF_Operation) -> *const c_char;
    fn TF_OperationName(oper: *mut TF_Operation) -> *const c_char;
    fn TF_GraphNextOperation(g: *mut TF_Graph, pos: *mut usize) -> *mut TF_Operation;
    fn TF_OperationOutputType(out: TF_Output) -> c_int;
    fn TF_OperationNumInputs(oper: *mut TF_Operation) -> c_int;
    fn TF_OperationInput(oper_in: TF_Input) -> TF_Output;
    fn TF_OperationOutputNumConsumers(oper_out: TF_Output) -> c_int;
    fn TF_OperationOutputConsumers(oper_out: TF_Output, consumers: *mut TF_Input, max_consumers: c_int) -> c_int;
    fn TF_OperationNumControlInputs(oper: *mut TF_Operation) -> c_int;
    fn TF_OperationGetControlInputs(oper: *mut TF_Operation, control_inputs: *mut *mut TF_Operation, max_control_inputs: c_int) -> c_int;
    fn TF_UpdateEdge(graph: *mut TF_Graph, new_src: TF_Output, dst: TF_Input, s: *mut TF_Status);
    fn TF_GraphGetTensorNumDims(g: *mut TF_Graph, out: TF_Output, s: *mut TF_Status) -> c_int;
    fn TF_GraphGetTensorShape(g: *mut TF_Graph, out: TF_Output, dims: *mut i64, num_dims: c_int, s: *mut TF_Status);
    fn TF_SetHandleShapeAndType(g: *mut TF_Graph, out: TF_Output, proto: *const c_void, proto_len: usize, s: *mut TF_Status);

    fn TF_GraphToFunctionWithControlOutputs(
        fn_body: *const TF_Graph, fn_name: *const c_char, append_hash_to_fn_name: c_uchar,
        num_opers: c_int, opers: *const *const TF_Operation,
        ninputs: c_int, inputs: *const TF_Output, noutputs: c_int, outputs: *const TF_Output,
        output_names: *const *const c_char,
        ncontrol_outputs: c_int, control_outputs: *const *const TF_Operation,
        control_output_names: *const *const c_char, opts: *const TF_FunctionOptions,
        description: *const c_char, s: *mut TF_Status) -> *mut TF_Function;
    fn TF_GraphNumFunctions(g: *mut TF_Graph) -> c_int;
    fn TF_GraphGetFunctions(g: *mut TF_Graph, funcs: *mut *mut TF_Function, max_func: c_int, s: *mut TF_Status) -> c_int;
    fn TF_GraphCopyFunction(g: *mut TF_Graph, func: *const TF_Function, grad: *const TF_Function, s: *mut TF_Status);
    fn TF_AddInputList(d: *mut TF_OperationDescription, inputs: *const TF_Output, num_inputs: c_int);
    fn TF_SetAttrTypeList(d: *mut TF_OperationDescription, name: *const c_char, values: *const c_int, num_values: c_int);
    fn TF_SetAttrFuncName(d: *mut TF_OperationDescription, name: *const c_char, value: *const c_char, length: usize);
    fn TF_DeleteFunction(f: *mut TF_Function);

    fn TF_NewSessionOptions() -> *mut TF_SessionOptions;
    fn TF_DeleteSessionOptions(o: *mut TF_SessionOptions);
    fn TF_NewSession(g: *mut TF_Graph, o: *const TF_SessionOptions, s: *mut TF_Status) -> *mut TF_Session;
    fn TF_CloseSession(sess: *mut TF_Session, s: *mut TF_Status);
    fn TF_DeleteSession(sess: *mut TF_Session, s: *mut TF_Status);
    fn TF_SessionRun(
        sess: *mut TF_Session, run_options: *const TF_Buffer,
        inputs: *const TF_Output, input_values: *const *mut TF_Tensor, ninputs: c_int,
        outputs: *const TF_Output, output_values: *mut *mut TF_Tensor, noutputs: c_int,
        target_opers: *const *const TF_Operation, ntargets: c_int,
        run_metadata: *mut TF_Buffer, s: *mut TF_Status);

    fn TFE_NewContextOptions() -> *mut TFE_ContextOptions;
    fn TFE_DeleteContextOptions(o: *mut TFE_ContextOptions);
    fn TFE_NewContext(o: *const TFE_ContextOptions, s: *mut TF_Status) -> *mut TFE_Context;
    fn TFE_DeleteContext(ctx: *mut TFE_Context);
    fn TFE_ContextAddFunction(ctx: *mut TFE_Context, f: *mut TF_Function, s: *mut TF_Status);
    fn TFE_ContextRemoveFunction(ctx: *mut TFE_Context, name: *const c_char, s: *mut TF_Status);
    fn TFE_ContextHasFunction(ctx: *mut TFE_Context, name: *const c_char) -> c_uchar;

    fn TFE_NewTensorHandle(t: *const TF_Tensor, s: *mut TF_Status) -> *mut TFE_TensorHandle;
    fn TFE_DeleteTensorHandle(h: *mut TFE_TensorHandle);
    fn TFE_TensorHandleResolve(h: *mut TFE_TensorHandle, s: *mut TF_Status) -> *mut TF_Tensor;

    fn TFE_NewOp(ctx: *mut TFE_Context, op_or_function_name: *const c_char, s: *mut TF_Status) -> *mut TFE_Op;
    fn TFE_DeleteOp(op: *mut TFE_Op);
    fn TFE_OpReset(op: *mut TFE_Op, op_or_function_name: *const c_char, raw_device_name: *const c_char, s: *mut TF_Status);
    fn TFE_OpAddInput(op: *mut TFE_Op, input: *mut TFE_TensorHandle, s: *mut TF_Status);
    fn TFE_OpSetAttrType(op: *mut TFE_Op, attr_name: *const c_char, value: c_int);
    fn TFE_Execute(op: *mut TFE_Op, retvals: *mut *mut TFE_TensorHandle, num_retvals: *mut c_int, s: *mut TF_Status);
}

/// `TF_Buffer`'s public layout (tensorflow/c/tf_buffer.h): the C API hands protocol buffers over
/// in it, and Polyfn reads them in place.
#[repr(C)]
struct BufferView {
    data: *const std::ffi::c_void,
    length: usize,
    data_deallocator: Option<unsafe extern "C" fn(*mut std::ffi::c_void, usize)>,
}

/// The bytes a `TF_Buffer` holds, borrowed from it.
///
/// # Safety
/// `buf` must be a live buffer that outlives the returned slice and is not written meanwhile.
pub(crate) unsafe fn buffer_bytes<'a>(buf: *const TF_Buffer) -> &'a [u8] {
    // SAFETY: the caller's contract; the layout is tensorflow/c/tf_buffer.h's.
    unsafe {
        let view = &*(buf as *const BufferView);
        if view.data.is_null() { &[] } else { std::slice::from_raw_parts(view.data.cast::<u8>(), view.length) }
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
