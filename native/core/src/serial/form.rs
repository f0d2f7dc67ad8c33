//! The serialized form at the bottom of the crate: what a type writes ([`SerialForm`]) and why
//! a value could not be written or read ([`SerialError`]), known to the [`TraceType`] protocol
//! without the registry or any type.
//!
//! [`TraceType`]: crate::trace_type::TraceType

use serde_json::{Map, Value};

/// The version this crate writes and the only one it reads.
pub const FORMAT_VERSION: u64 = 1;

/// A type's serialized form: its serial kind (the name its decoder is registered under in a
/// [`TypeRegistry`](crate::serial::TypeRegistry)) and its fields. Written as one JSON object, `{"kind": <kind>, ...fields}`.
#[derive(Clone, Debug, PartialEq)]
pub struct SerialForm {
    pub kind: &'static str,
    pub fields: Map<String, Value>,
}

impl SerialForm {
    pub fn new(kind: &'static str) -> Self {
        SerialForm {
            kind,
            fields: Map::new(),
        }
    }

    /// Adds a field (builder style).
    pub fn field(mut self, name: &str, value: Value) -> Self {
        self.fields.insert(name.to_string(), value);
        self
    }
}

/// Why a value could not be written or read. Messages name the place in the document
/// (`function_type.parameters[0].type.shape`) and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SerialError {
    #[error("not valid JSON: {0}")]
    Syntax(String),
    #[error("not a Polyfn {expected} document: {found}")]
    Format { expected: &'static str, found: String },
    #[error("unsupported {format} version {found}: this Polyfn reads version {FORMAT_VERSION}")]
    Version { format: &'static str, found: String },
    #[error("at {path}: unknown type kind '{kind}' (known kinds: {known}); a kind defined outside Polyfn must be registered with TypeRegistry::register")]
    UnknownKind { path: String, kind: String, known: String },
    #[error("at {path}: {message}")]
    Invalid { path: String, message: String },
    #[error("cannot serialize {0}")]
    NotSerializable(String),
    #[error("type kind '{0}' is already registered")]
    DuplicateKind(String),
}

impl SerialError {
    pub(crate) fn invalid(path: &str, message: impl Into<String>) -> SerialError {
        SerialError::Invalid {
            path: path.to_string(),
            message: message.into(),
        }
    }
}
