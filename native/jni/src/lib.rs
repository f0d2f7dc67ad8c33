//! `polyfn-jni`: the JNI entry points of `dev.polyfn.internal.Native`. Each is a shim: it converts
//! Java values to core types and back and turns errors and panics into Java exceptions; the logic
//! lives in `polyfn-core` (types, dispatch, the trace protocol) and `polyfn-tf` (the runtime).
//!
//! One module per concern: [`function`] (life of a function), [`call`] (the call path),
//! [`trace`] (the trace protocol and nested calls), [`introspection`] (typed views for Java),
//! [`runtime`] (TensorFlow itself and the wire constants), [`cache`] (exporting and restoring
//! concrete functions for the trace cache). [`registry`] registers them all.

#![deny(unsafe_op_in_unsafe_fn)]

mod cache;
mod call;
mod convert;
mod errors;
mod function;
mod gradients;
mod graph_function;
mod graph_names;
mod handles;
mod infer;
mod introspection;
mod logging;
mod raw_env;
mod registry;
mod runtime;
mod saved;
mod stack;
mod trace;
