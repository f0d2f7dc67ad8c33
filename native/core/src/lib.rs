//! Polyfn's pure-Rust core: the TraceType lattice, [`FunctionType`], argument binding,
//! call-facts decoding and the dispatch table behind polymorphic traced functions for
//! TensorFlow Java. No TensorFlow, no JNI.
//!
//! Flow of one call: Java writes the arguments' facts ([`wire`]) → [`DispatchTable::lookup_facts`]
//! (fast path) → on miss [`decode_call`] + [`check_constraints`] → [`DispatchTable::lookup`]
//! → on miss trace: with reduce-retracing the call is first generalized against the cached
//! signatures (`table.generalize(&call)`), then each parameter's type is specialized by its
//! declared constraint (`specialize_for_trace`), and the traced function is
//! [`DispatchTable::insert`]ed; [`explain_retrace`] says why a retrace happened.
//!
//! Types are open: anything implementing [`TraceType`] can be a parameter type.

// The core is pure logic: everything unsafe (JNI, the C API) lives in polyfn-jni and polyfn-tf.
#![forbid(unsafe_code)]

pub mod binding;
pub mod declare;
pub mod dispatch;
pub mod dtype;
pub mod explain;
pub mod facts;
pub mod function_type;
pub mod infer;
pub mod intern;
pub mod parameter;
pub mod placeholder;
pub mod profile;
pub mod polymorphic;
pub mod serial;
pub mod sha256;
pub mod shape;
pub mod trace_type;
pub mod types;
pub mod wire;

pub use binding::{bind, BindError};
pub use declare::{capture_constraint, declared_constraint, declared_shape};
pub use dispatch::{DispatchTable, Hit, EXPLAIN_CANDIDATES};
pub use dtype::{DType, DTypeSet};
pub use explain::{explain_retrace, RetraceReason};
pub use facts::{decode_call, decode_call_with_captures, decode_value};
pub use intern::{LiteralTable, StringTable};
pub use wire::{TAG_COMPOSITE, TAG_LIST, TAG_LITERAL, TAG_MAP, TAG_RECORD, TAG_TENSOR, TAG_VARIABLE};
pub use function_type::{check_constraints, describe_mismatch, FunctionType};
pub use parameter::{ParamKind, Parameter};
pub use placeholder::{encode_placeholder_specs, PlaceholderContext, PlaceholderSpec};
pub use polymorphic::{Concrete, Options, PolyError, Polymorphic, Stats, TraceRecord, TraceSession};
pub use serial::{SerialError, TypeRegistry};
pub use shape::{Shape, ShapeDifference};
pub use trace_type::{CloneTypeRef, TraceType, TypeRef};
pub use types::{
    CompositeType,
    ListConstraint, ListType, Literal, LiteralConstraint, MapConstraint, MapType, NestConstraint, RecordType,
    TensorConstraint, TensorSpec, VariableConstraint, VariableSpec,
};
