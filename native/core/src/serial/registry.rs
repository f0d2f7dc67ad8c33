//! The open half of serialization: [`SerialForm`](super::form::SerialForm) (what a type writes), [`TypeRegistry`]
//! (serial kind name → decoder) and [`Fields`] (what a decoder reads, with the path of every
//! value so errors say where they are).

use std::collections::{BTreeMap, HashMap};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::form::SerialError;
use super::values;
use crate::dtype::{DType, DTypeSet};
use crate::shape::Shape;
use crate::trace_type::{TraceType, TypeRef};

/// Deepest nesting of types a document may hold: more than the deepest argument a call accepts
/// ([`crate::wire::NEST_MAX_DEPTH`] levels of lists, maps, records and composites, a leaf below).
/// Text is bounded first by `parse_json` (a type takes two JSON levels per level); this bound
/// keeps decoding of a hand-built `Value` (which skips that parser) from recursing without limit.
pub const MAX_TYPE_DEPTH: usize = crate::wire::NEST_MAX_DEPTH + 8;

/// Reads one type from its JSON object; registered per serial kind in a [`TypeRegistry`].
/// The registry checks afterwards that every field was read, so a decoder only takes what it
/// knows.
pub type Decoder = fn(&mut Fields<'_>) -> Result<TypeRef, SerialError>;

/// Serial kind → decoder. [`TypeRegistry::builtin`] knows Polyfn's own kinds; a type defined
/// elsewhere implements [`TraceType::to_json`] and registers its decoder here, with no change to
/// this crate.
#[derive(Clone)]
pub struct TypeRegistry {
    pub(super) decoders: HashMap<String, Decoder>,
}

impl TypeRegistry {
    /// A registry with no kinds.
    pub fn empty() -> Self {
        TypeRegistry {
            decoders: HashMap::new(),
        }
    }

    /// Adds a kind. A kind already registered is refused, so a plug-in cannot silently replace
    /// another kind's decoder (built-ins included).
    pub fn register(&mut self, kind: &str, decoder: Decoder) -> Result<(), SerialError> {
        if self.decoders.contains_key(kind) {
            return Err(SerialError::DuplicateKind(kind.to_string()));
        }
        self.decoders.insert(kind.to_string(), decoder);
        Ok(())
    }

    /// The registered kinds, sorted.
    pub fn kinds(&self) -> Vec<&str> {
        let mut k: Vec<&str> = self.decoders.keys().map(String::as_str).collect();
        k.sort_unstable();
        k
    }

    /// Decodes a type object (`{"kind": ..., ...}`) found at `path`.
    pub fn decode_type(&self, value: &Value, path: &str) -> Result<TypeRef, SerialError> {
        self.decode_at(value, path, 0)
    }

    fn decode_at(&self, value: &Value, path: &str, depth: usize) -> Result<TypeRef, SerialError> {
        if depth > MAX_TYPE_DEPTH {
            return Err(SerialError::invalid(
                path,
                format!("types nested deeper than {MAX_TYPE_DEPTH} levels"),
            ));
        }
        let Value::Object(map) = value else {
            return Err(SerialError::invalid(
                path,
                format!("expected a type object {{\"kind\": ...}}, got {}", values::describe(value)),
            ));
        };
        let mut map = map.clone();
        let kind = match map.remove("kind") {
            Some(Value::String(k)) => k,
            Some(other) => {
                return Err(SerialError::invalid(
                    &format!("{path}.kind"),
                    format!("expected a string, got {}", values::describe(&other)),
                ))
            }
            None => return Err(SerialError::invalid(path, "missing field 'kind'")),
        };
        let Some(decoder) = self.decoders.get(&kind) else {
            return Err(SerialError::UnknownKind {
                path: path.to_string(),
                kind,
                known: self.kinds().join(", "),
            });
        };
        let mut fields = Fields {
            map,
            path: path.to_string(),
            registry: self,
            depth,
        };
        let t = decoder(&mut fields)?;
        fields.finish()?;
        Ok(t)
    }
}

/// The fields of one type object being decoded. Each `take_*` removes a field, so the
/// registry can reject fields nobody read.
pub struct Fields<'a> {
    map: Map<String, Value>,
    path: String,
    registry: &'a TypeRegistry,
    depth: usize,
}

impl Fields<'_> {
    /// Where this object is in the document, e.g. `parameters[0].type.elements[1]`.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn at(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }

    /// An error about field `name` of this object.
    pub fn invalid(&self, name: &str, message: impl Into<String>) -> SerialError {
        SerialError::invalid(&self.at(name), message)
    }

    /// The raw field, if present and not null.
    pub fn take_value(&mut self, name: &str) -> Option<Value> {
        self.map.remove(name).filter(|v| !v.is_null())
    }

    fn required(&mut self, name: &str) -> Result<Value, SerialError> {
        self.take_value(name)
            .ok_or_else(|| self.invalid(name, "missing (or null)"))
    }

    /// A required plain value (number, string, ...) read with serde.
    pub fn take<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, SerialError> {
        let v = self.required(name)?;
        serde_json::from_value(v).map_err(|e| self.invalid(name, e.to_string()))
    }

    /// An optional plain value: absent or null is `None`.
    pub fn take_opt<T: DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, SerialError> {
        match self.take_value(name) {
            None => Ok(None),
            Some(v) => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| self.invalid(name, e.to_string())),
        }
    }

    pub fn take_dtype(&mut self, name: &str) -> Result<DType, SerialError> {
        let v = self.required(name)?;
        values::dtype_from(&v, &self.at(name))
    }

    pub fn take_dtypes(&mut self, name: &str) -> Result<DTypeSet, SerialError> {
        let v = self.required(name)?;
        values::dtypes_from(&v, &self.at(name))
    }

    pub fn take_shape(&mut self, name: &str) -> Result<Shape, SerialError> {
        let v = self.required(name)?;
        values::shape_from(&v, &self.at(name))
    }

    /// An optional shape: absent or null is `None` (distinct from the unknown shape, which is
    /// written `"unknown"`).
    pub fn take_opt_shape(&mut self, name: &str) -> Result<Option<Shape>, SerialError> {
        match self.take_value(name) {
            None => Ok(None),
            Some(v) => values::shape_from(&v, &self.at(name)).map(Some),
        }
    }

    fn nested(&self, v: &Value, path: &str) -> Result<TypeRef, SerialError> {
        self.registry.decode_at(v, path, self.depth + 1)
    }

    /// A required nested type.
    pub fn take_type(&mut self, name: &str) -> Result<TypeRef, SerialError> {
        let v = self.required(name)?;
        self.nested(&v, &self.at(name))
    }

    /// An optional nested type: absent or null is `None`.
    pub fn take_opt_type(&mut self, name: &str) -> Result<Option<TypeRef>, SerialError> {
        match self.take_value(name) {
            None => Ok(None),
            Some(v) => self.nested(&v, &self.at(name)).map(Some),
        }
    }

    /// A required array of nested types.
    pub fn take_types(&mut self, name: &str) -> Result<Vec<TypeRef>, SerialError> {
        let v = self.required(name)?;
        let Value::Array(items) = v else {
            return Err(self.invalid(name, format!("expected an array of types, got {}", values::describe(&v))));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.nested(item, &format!("{}[{i}]", self.at(name))))
            .collect()
    }

    /// A required object of nested types by key.
    pub fn take_type_map(&mut self, name: &str) -> Result<BTreeMap<String, TypeRef>, SerialError> {
        let v = self.required(name)?;
        let Value::Object(items) = v else {
            return Err(self.invalid(name, format!("expected an object of types by key, got {}", values::describe(&v))));
        };
        items
            .iter()
            .map(|(k, item)| {
                let path = format!("{}[{}]", self.at(name), values::quote(k));
                Ok((k.clone(), self.nested(item, &path)?))
            })
            .collect()
    }

    fn finish(self) -> Result<(), SerialError> {
        match self.map.keys().next() {
            Some(extra) => Err(SerialError::invalid(
                &self.path,
                format!("unexpected field '{extra}'"),
            )),
            None => Ok(()),
        }
    }
}

/// A type's JSON object: its [`TraceType::to_json`] form with `"kind"` in front.
pub fn encode_type(t: &dyn TraceType) -> Result<Value, SerialError> {
    let form = t.to_json()?;
    if form.fields.contains_key("kind") {
        return Err(SerialError::NotSerializable(format!(
            "{t}: its serial form has a field named 'kind', which is reserved"
        )));
    }
    let mut map = Map::new();
    map.insert("kind".into(), Value::String(form.kind.into()));
    map.extend(form.fields);
    Ok(Value::Object(map))
}
