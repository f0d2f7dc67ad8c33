//! Versioned JSON form of trace types, [`Parameter`]s and [`FunctionType`]s, so a traced
//! signature can outlive the process (trace caches, saved functions) and come back with the very
//! same dispatch.
//!
//! # Documents
//!
//! A document is a JSON object with a format tag and a version; anything else fails with a
//! [`SerialError`] (never a panic):
//!
//! ```json
//! {"format": "polyfn.function_type", "version": 1,
//!  "function_type": {"parameters": [...], "captures": [...]}}
//! {"format": "polyfn.trace_type", "version": 1, "type": {"kind": ..., ...}}
//! ```
//!
//! | object | fields |
//! |---|---|
//! | function type | `parameters`: array of parameters; `captures`: array of `{"name": string, "type": type}` |
//! | parameter | `name`: string; `kind`: `"tensor"`, `"list"`, `"map"`, `"java"`, `"variable"` or `"nest"`; `optional`: boolean; `type`: type or `null` (unconstrained) |
//!
//! # Types
//!
//! A type is an object `{"kind": <serial kind>, ...fields}`. Every field is required unless it
//! says "or null"; an unknown field is an error. Plain values inside types:
//!
//! - **dtype**: TensorFlow's name (`"FLOAT"`, `"INT32"`, ... as `DType::name`), or the numeric
//!   `TF_DataType` code for a code Polyfn has no name for;
//! - **dtypes** (a family): `"any"`, or an array of dtypes;
//! - **shape**: `"unknown"` (unknown rank), or an array of dims, `-1` for an unknown dim. Shapes
//!   are checked as shapes from Java are (dims >= -1, at most 254 dims, element count in 64 bits).
//!
//! | serial kind | Rust type | fields |
//! |---|---|---|
//! | `tensor_spec` | [`TensorSpec`] | `dtype`, `shape` |
//! | `tensor_constraint` | [`TensorConstraint`] | `dtypes`; `shape`: shape or null (none declared: any shape, traced exactly) |
//! | `list` | [`ListType`] | `elements`: array of types |
//! | `list_constraint` | [`ListConstraint`] | `element`: type or null (any); `length`: integer or null (any) |
//! | `map` | [`MapType`] | `entries`: object, key → type |
//! | `map_constraint` | [`MapConstraint`] | `value`: type or null (any) |
//! | `literal` | [`Literal`] | `id`: unsigned integer; `repr`: string; `class`: string |
//! | `literal_constraint` | [`LiteralConstraint`] | `class`: string |
//! | `variable_spec` | [`VariableSpec`] | `dtype`, `shape`, `alias`: unsigned integer |
//! | `variable_constraint` | [`VariableConstraint`] | `dtypes` |
//! | `record` | [`RecordType`] | `class`: string; `names`: array of component names; `types`: array of types, one per name |
//! | `nest_constraint` | [`NestConstraint`] | none |
//! | `composite` | [`CompositeType`] | `name`: string; `dtype`; `shape`; `metadata`: type or null; `component_names`: array of strings; `components`: array of types, one per name |
//!
//! A literal's `id` is the interning id of the JVM that traced it (values equal under Java's
//! `equals` share an id there); another JVM must map it to its own ids by `class` and `repr`
//! before dispatching on it.
//!
//! # New kinds
//!
//! The protocol is open: a type defined outside this crate implements
//! [`TraceType::to_json`](crate::TraceType::to_json) (returning its own [`SerialForm`]) and
//! registers a [`Decoder`] under the same serial kind in a [`TypeRegistry`]. Nothing here has to
//! change; `tests/serial_props.rs` does it for a ragged tensor type.
//!
//! ```
//! use polyfn_core::*;
//! use polyfn_core::serial::{self, TypeRegistry};
//! let x = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[-1, 3])));
//! let f = FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor).with_constraint(x)]);
//! let json = serial::function_type_to_json(&f).unwrap();
//! assert!(json.contains(r#""shape":[-1,3]"#));
//! assert_eq!(serial::function_type_from_json(&json, &TypeRegistry::builtin()).unwrap(), f);
//! assert!(serial::function_type_from_json("{}", &TypeRegistry::builtin()).is_err());
//! ```

pub mod form;
pub mod registry;
pub mod values;

pub use form::{SerialError, SerialForm, FORMAT_VERSION};
pub use registry::{encode_type, Decoder, Fields, TypeRegistry, MAX_TYPE_DEPTH};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::function_type::FunctionType;
use crate::wire::JSON_MAX_DEPTH;
use crate::parameter::{ParamKind, Parameter};
use crate::trace_type::TypeRef;
use crate::types::{CompositeType, ListConstraint, ListType, Literal, LiteralConstraint, MapConstraint, MapType, NestConstraint, RecordType, TensorConstraint, TensorSpec, VariableConstraint, VariableSpec};

/// Format tag of a function type document.
pub const FUNCTION_TYPE_FORMAT: &str = "polyfn.function_type";
/// Format tag of a single trace type document.
pub const TRACE_TYPE_FORMAT: &str = "polyfn.trace_type";

/// The built-in serial kinds and their decoders (the table above).
pub(crate) const BUILTIN_KINDS: &[(&str, Decoder)] = &[
    ("tensor_spec", TensorSpec::from_json),
    ("tensor_constraint", TensorConstraint::from_json),
    ("list", ListType::from_json),
    ("list_constraint", ListConstraint::from_json),
    ("map", MapType::from_json),
    ("map_constraint", MapConstraint::from_json),
    ("literal", Literal::from_json),
    ("literal_constraint", LiteralConstraint::from_json),
    ("variable_spec", VariableSpec::from_json),
    ("variable_constraint", VariableConstraint::from_json),
    ("record", RecordType::from_json),
    ("nest_constraint", NestConstraint::from_json),
    ("composite", CompositeType::from_json),
];

impl TypeRegistry {
    /// A registry with the built-in kinds (see the table in [`crate::serial`]).
    pub fn builtin() -> Self {
        let mut r = TypeRegistry::empty();
        for (kind, decoder) in BUILTIN_KINDS {
            r.decoders.insert(kind.to_string(), *decoder);
        }
        r
    }
}

impl Default for TypeRegistry {
    fn default() -> Self {
        TypeRegistry::builtin()
    }
}

fn kind_from(name: &str) -> Option<ParamKind> {
    [ParamKind::Tensor, ParamKind::List, ParamKind::Map, ParamKind::Java, ParamKind::Variable, ParamKind::Nest]
        .into_iter()
        .find(|k| k.as_str() == name)
}

/// A parameter's JSON object.
pub fn encode_parameter(p: &Parameter) -> Result<Value, SerialError> {
    let ty = p.type_constraint.as_ref().map(|t| encode_type(&**t)).transpose()?;
    Ok(json!({"name": p.name, "kind": p.kind.as_str(), "optional": p.optional, "type": ty}))
}

/// A function type's JSON object (without the document envelope).
pub fn encode_function_type(f: &FunctionType) -> Result<Value, SerialError> {
    let parameters = f.parameters.iter().map(encode_parameter).collect::<Result<Vec<_>, _>>()?;
    let captures = f
        .captures
        .iter()
        .map(|(name, t)| Ok(json!({"name": name, "type": encode_type(&**t)?})))
        .collect::<Result<Vec<_>, SerialError>>()?;
    Ok(json!({"parameters": parameters, "captures": captures}))
}

/// The versioned document of a function type, as compact JSON text.
pub fn function_type_to_json(f: &FunctionType) -> Result<String, SerialError> {
    let body = encode_function_type(f)?;
    Ok(json!({"format": FUNCTION_TYPE_FORMAT, "version": FORMAT_VERSION, "function_type": body})
        .to_string())
}

/// Reads a function type document written by [`function_type_to_json`].
pub fn function_type_from_json(text: &str, registry: &TypeRegistry) -> Result<FunctionType, SerialError> {
    let body = open_document(text, FUNCTION_TYPE_FORMAT, "function_type")?;
    decode_function_type(&body, "function_type", registry)
}

/// The versioned document of one trace type.
pub fn trace_type_to_json(t: &TypeRef) -> Result<String, SerialError> {
    let body = encode_type(&**t)?;
    Ok(json!({"format": TRACE_TYPE_FORMAT, "version": FORMAT_VERSION, "type": body}).to_string())
}

/// Reads a trace type document written by [`trace_type_to_json`].
pub fn trace_type_from_json(text: &str, registry: &TypeRegistry) -> Result<TypeRef, SerialError> {
    let body = open_document(text, TRACE_TYPE_FORMAT, "type")?;
    registry.decode_type(&body, "type")
}

/// Parses JSON text whose arrays and objects nest at most [`JSON_MAX_DEPTH`] levels (a type as
/// deep as a call accepts, see the constant); deeper text is refused before it is parsed, as a
/// reader without a bound would overflow the stack on hostile text. serde_json's own bound (128
/// levels) is lower than a deep nest parameter's type needs, so it is replaced by this one.
pub fn parse_json(text: &str) -> Result<Value, SerialError> {
    if nests_deeper_than(text, JSON_MAX_DEPTH) {
        return Err(SerialError::Syntax(format!("the document nests deeper than {JSON_MAX_DEPTH} levels")));
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    reader.disable_recursion_limit();
    let v = Value::deserialize(&mut reader).map_err(|e| SerialError::Syntax(e.to_string()))?;
    reader.end().map_err(|e| SerialError::Syntax(e.to_string()))?;
    Ok(v)
}

/// Whether `text` opens more than `max` arrays and objects within each other, outside strings.
/// Up to a syntax error, which ends parsing, this is the depth the parser reaches.
fn nests_deeper_than(text: &str, max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in text.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Parses `text`, checks the format tag and version, and returns the body field.
fn open_document(text: &str, format: &'static str, body: &str) -> Result<Value, SerialError> {
    let v: Value = parse_json(text)?;
    let Value::Object(mut doc) = v else {
        return Err(SerialError::Format { expected: format, found: format!("the document is {}", values::describe(&v)) });
    };
    match doc.get("format") {
        Some(Value::String(f)) if f == format => {}
        Some(other) => {
            return Err(SerialError::Format { expected: format, found: format!("its format is {}", values::describe(other)) })
        }
        None => return Err(SerialError::Format { expected: format, found: "it has no 'format' field".into() }),
    }
    match doc.get("version") {
        Some(Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => {}
        Some(other) => return Err(SerialError::Version { format, found: other.to_string() }),
        None => return Err(SerialError::Version { format, found: "(missing)".into() }),
    }
    let body_value = doc
        .remove(body)
        .ok_or_else(|| SerialError::invalid("(document)", format!("missing field '{body}'")))?;
    if let Some(extra) = doc.keys().find(|k| *k != "format" && *k != "version") {
        return Err(SerialError::invalid("(document)", format!("unexpected field '{extra}'")));
    }
    Ok(body_value)
}

fn object<'v>(v: &'v Value, path: &str, what: &str) -> Result<&'v Map<String, Value>, SerialError> {
    v.as_object()
        .ok_or_else(|| SerialError::invalid(path, format!("expected {what} object, got {}", values::describe(v))))
}

fn array<'v>(v: Option<&'v Value>, path: &str) -> Result<&'v Vec<Value>, SerialError> {
    match v {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(SerialError::invalid(path, format!("expected an array, got {}", values::describe(other)))),
        None => Err(SerialError::invalid(path, "missing")),
    }
}

fn string(v: Option<&Value>, path: &str) -> Result<String, SerialError> {
    match v {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(SerialError::invalid(path, format!("expected a string, got {}", values::describe(other)))),
        None => Err(SerialError::invalid(path, "missing")),
    }
}

fn only_fields(m: &Map<String, Value>, path: &str, allowed: &[&str]) -> Result<(), SerialError> {
    match m.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(extra) => Err(SerialError::invalid(path, format!("unexpected field '{extra}'"))),
        None => Ok(()),
    }
}

/// Reads a parameter object found at `path`.
pub fn decode_parameter(v: &Value, path: &str, registry: &TypeRegistry) -> Result<Parameter, SerialError> {
    let m = object(v, path, "a parameter")?;
    only_fields(m, path, &["name", "kind", "optional", "type"])?;
    let name = string(m.get("name"), &format!("{path}.name"))?;
    let kind_text = string(m.get("kind"), &format!("{path}.kind"))?;
    let kind = kind_from(&kind_text).ok_or_else(|| {
        SerialError::invalid(
            &format!("{path}.kind"),
            format!("unknown parameter kind '{kind_text}' (expected tensor, list, map, java or variable)"),
        )
    })?;
    let optional = match m.get("optional") {
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(SerialError::invalid(&format!("{path}.optional"), format!("expected a boolean, got {}", values::describe(other))))
        }
        None => return Err(SerialError::invalid(&format!("{path}.optional"), "missing")),
    };
    let type_constraint = match m.get("type") {
        None | Some(Value::Null) => None,
        Some(t) => Some(registry.decode_type(t, &format!("{path}.type"))?),
    };
    Ok(Parameter { name, kind, optional, type_constraint })
}

/// Reads a function type object (without the envelope) found at `path`.
pub fn decode_function_type(v: &Value, path: &str, registry: &TypeRegistry) -> Result<FunctionType, SerialError> {
    let m = object(v, path, "a function type")?;
    only_fields(m, path, &["parameters", "captures"])?;
    let params_path = format!("{path}.parameters");
    let parameters = array(m.get("parameters"), &params_path)?
        .iter()
        .enumerate()
        .map(|(i, p)| decode_parameter(p, &format!("{params_path}[{i}]"), registry))
        .collect::<Result<Vec<_>, _>>()?;
    let caps_path = format!("{path}.captures");
    let captures = array(m.get("captures"), &caps_path)?
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let at = format!("{caps_path}[{i}]");
            let cm = object(c, &at, "a capture")?;
            only_fields(cm, &at, &["name", "type"])?;
            let name = string(cm.get("name"), &format!("{at}.name"))?;
            let t = cm.get("type").ok_or_else(|| SerialError::invalid(&format!("{at}.type"), "missing"))?;
            Ok((name, registry.decode_type(t, &format!("{at}.type"))?))
        })
        .collect::<Result<Vec<_>, SerialError>>()?;
    Ok(FunctionType { parameters, captures })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod kinds_tests;
