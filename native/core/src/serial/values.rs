//! JSON forms of the plain values inside types: dtypes, dtype sets and shapes.

use serde_json::{json, Value};

use super::form::SerialError;
use crate::dtype::{DType, DTypeSet};
use crate::shape::Shape;

/// A dtype: its TensorFlow name (`"FLOAT"`) when known, else its numeric code, so no code is
/// lost.
pub fn dtype_json(d: DType) -> Value {
    if d.is_known() {
        json!(d.name())
    } else {
        json!(d.0)
    }
}

pub fn dtype_from(v: &Value, path: &str) -> Result<DType, SerialError> {
    match v {
        Value::String(name) => DType::from_name(name).ok_or_else(|| {
            SerialError::invalid(path, format!("unknown dtype name '{name}' (expected a TensorFlow name such as \"FLOAT\", or a numeric code)"))
        }),
        Value::Number(n) => n
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
            .map(DType)
            .ok_or_else(|| SerialError::invalid(path, format!("dtype code {n} is not a 32-bit integer"))),
        other => Err(SerialError::invalid(
            path,
            format!("expected a dtype name or code, got {}", describe(other)),
        )),
    }
}

/// A dtype set: `"any"`, or an array of dtypes.
pub fn dtypes_json(s: &DTypeSet) -> Value {
    match s.members() {
        None => json!("any"),
        Some(m) => Value::Array(m.into_iter().map(dtype_json).collect()),
    }
}

pub fn dtypes_from(v: &Value, path: &str) -> Result<DTypeSet, SerialError> {
    match v {
        Value::String(s) if s == "any" => Ok(DTypeSet::any()),
        Value::Array(items) => {
            let ds: Vec<DType> = items
                .iter()
                .enumerate()
                .map(|(i, d)| dtype_from(d, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?;
            Ok(DTypeSet::of(&ds))
        }
        other => Err(SerialError::invalid(
            path,
            format!("expected \"any\" or an array of dtypes, got {}", describe(other)),
        )),
    }
}

/// A shape: `"unknown"` (unknown rank), or an array of dims with -1 for an unknown dim.
pub fn shape_json(s: &Shape) -> Value {
    match s {
        Shape::Unknown => json!("unknown"),
        Shape::Known(dims) => Value::Array(dims.iter().map(|d| json!(d.unwrap_or(-1))).collect()),
    }
}

/// Reads a shape and checks it as shapes from Java are checked (dims >= -1, TensorFlow's rank
/// and size limits), since a restored type may end up describing a graph input.
pub fn shape_from(v: &Value, path: &str) -> Result<Shape, SerialError> {
    match v {
        Value::String(s) if s == "unknown" => Ok(Shape::Unknown),
        Value::Array(items) => {
            let dims: Vec<i64> = items
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    d.as_i64().ok_or_else(|| {
                        SerialError::invalid(
                            &format!("{path}[{i}]"),
                            format!("expected an integer dimension, got {}", describe(d)),
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            let shape = Shape::from_wire_dims(&dims).map_err(|e| SerialError::invalid(path, e))?;
            shape.validate().map_err(|e| SerialError::invalid(path, e))?;
            Ok(shape)
        }
        other => Err(SerialError::invalid(
            path,
            format!("expected \"unknown\" or an array of dimensions, got {}", describe(other)),
        )),
    }
}

/// A short description of a JSON value for error messages (its type, and the value if small).
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() <= 40 => format!("string {}", quote(s)),
        Value::String(_) => "a string".into(),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

/// `s` as a quoted JSON string (escapes included), for paths and messages.
pub fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}
