//! `polyfn-tf`: the TensorFlow C API, bound at run time to the TensorFlow runtime already in the
//! process (the `libtensorflow_cc.so.2` TensorFlow Java loaded), and the few operations Polyfn
//! needs from it: turning a traced graph into a registered eager function and executing it
//! without copying tensor data.

#![deny(unsafe_op_in_unsafe_fn)]

mod attr_check;
pub mod auto_clustering;
mod branch_library;
pub mod c_api;
pub mod call_options;
pub mod context;
mod def_check;
mod device_check;
mod float_mode;
pub mod function;
mod function_def_proto;
pub mod graph;
pub mod graph_function;
pub mod graph_ops;
pub mod handle_data;
pub mod kernel_cache;
pub mod naming;
pub mod op_cache;
mod op_kernels;
pub mod placeholder;
pub mod runtime;
pub mod status;
pub mod tensor;
pub mod unbroadcast;
pub mod variable;
mod xla_lists;

pub use call_options::{CallOptions, PROMOTE_AFTER};
pub use context::EagerContext;
pub use function::{fast_path_supported, EagerFunction, GraphSignature};
pub use graph_ops::{graph_operation, graph_output, may_have_effects};
pub use handle_data::set_handle_shape;
pub use runtime::{Runtime, RuntimeError};
pub use status::{Code, TfError};
