//! `polyfn-tf`: the TensorFlow C API, bound at run time to the TensorFlow runtime already in the
//! process (the `libtensorflow_cc.so.2` TensorFlow Java loaded), and the few operations Polyfn
//! needs from it: turning a traced graph into a registered eager function and executing it
//! without copying tensor data.

#![deny(unsafe_op_in_unsafe_fn)]

mod attr_check;
mod branch_library;
mod call;
pub mod call_options;
mod fast_path;
pub mod c_api;
mod def_check;
pub mod function;
pub mod function_def;
mod function_def_proto;
pub mod graph;
pub mod graph_function;
pub mod graph_ops;
pub mod handle_data;
pub mod kernel_cache;
pub mod naming;
pub mod op_cache;
pub mod runtime;
mod session_path;
pub mod status;
pub mod tensor;

pub use call_options::CallOptions;
pub use session_path::PROMOTE_AFTER;
pub use fast_path::fast_path_supported;
pub use function::{EagerContext, EagerFunction, GraphSignature};
pub use graph_ops::{graph_operation, graph_output};
pub use handle_data::set_handle_shape;
pub use runtime::{Runtime, RuntimeError};
pub use status::{Code, TfError};
