//! Serialization errors say what is wrong and where, and a type defined outside the crate
//! serializes by registering its own kind.

use std::fmt;

use polyfn_core::serial::{self, Fields, SerialForm, TypeRegistry};
use polyfn_core::*;
use serde_json::json;

fn x_float(dims: &[i64]) -> FunctionType {
    FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor)
        .with_constraint(TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims))))])
}

fn read(doc: serde_json::Value) -> Result<FunctionType, SerialError> {
    serial::function_type_from_json(&doc.to_string(), &TypeRegistry::builtin())
}

fn err(doc: serde_json::Value) -> String {
    read(doc).unwrap_err().to_string()
}

fn doc_with_type(t: serde_json::Value) -> serde_json::Value {
    json!({"format": "polyfn.function_type", "version": 1, "function_type": {
        "parameters": [{"name": "x", "kind": "tensor", "optional": false, "type": t}],
        "captures": []}})
}

#[test]
fn the_documented_form() {
    let f = x_float(&[-1, 3]).with_captures(vec![(
        "v".into(),
        TypeRef::new(VariableSpec::new(DType::DOUBLE, Shape::Unknown, 0)),
    )]);
    let v: serde_json::Value = serde_json::from_str(&serial::function_type_to_json(&f).unwrap()).unwrap();
    assert_eq!(
        v,
        json!({"format": "polyfn.function_type", "version": 1, "function_type": {
            "parameters": [{"name": "x", "kind": "tensor", "optional": false,
                            "type": {"kind": "tensor_spec", "dtype": "FLOAT", "shape": [-1, 3]}}],
            "captures": [{"name": "v", "type": {"kind": "variable_spec", "dtype": "DOUBLE",
                                               "shape": "unknown", "alias": 0}}]}})
    );
    // a constraint with no declared shape differs from one declared with unknown rank
    let none = TypeRef::new(TensorConstraint::new(DTypeSet::floating(), None));
    let unknown = TypeRef::new(TensorConstraint::new(DTypeSet::any(), Some(Shape::Unknown)));
    let text = |t: &TypeRef| serial::trace_type_to_json(t).unwrap();
    assert!(text(&none).contains(r#""dtypes":["FLOAT","DOUBLE","BFLOAT16","HALF"],"kind":"tensor_constraint","shape":null"#), "{}", text(&none));
    assert!(text(&unknown).contains(r#""dtypes":"any","kind":"tensor_constraint","shape":"unknown""#));
    // numeric dtype codes are accepted as well as names
    let f = read(doc_with_type(json!({"kind": "tensor_spec", "dtype": 1, "shape": []}))).unwrap();
    assert_eq!(f, x_float(&[]));
}

#[test]
fn envelope_errors() {
    let ok = serial::function_type_to_json(&x_float(&[2])).unwrap();
    let reg = TypeRegistry::builtin();
    let e = serial::function_type_from_json(&ok[..ok.len() - 3], &reg).unwrap_err();
    assert!(matches!(e, SerialError::Syntax(_)), "{e}");
    assert!(e.to_string().starts_with("not valid JSON: EOF while parsing"), "{e}");
    assert_eq!(
        err(json!({"format": "polyfn.function_type", "version": 2, "function_type": {}})),
        "unsupported polyfn.function_type version 2: this Polyfn reads version 1"
    );
    assert_eq!(
        err(json!({"format": "polyfn.function_type", "version": "1", "function_type": {}})),
        "unsupported polyfn.function_type version \"1\": this Polyfn reads version 1"
    );
    assert_eq!(
        err(json!({"format": "polyfn.trace_type", "version": 1, "type": {}})),
        "not a Polyfn polyfn.function_type document: its format is string \"polyfn.trace_type\""
    );
    assert_eq!(err(json!([1, 2])), "not a Polyfn polyfn.function_type document: the document is an array of 2 items");
    assert_eq!(
        err(json!({"format": "polyfn.function_type", "version": 1})),
        "at (document): missing field 'function_type'"
    );
    // a trace type document is not a function type document, and vice versa
    assert!(serial::trace_type_from_json(&ok, &reg).is_err());
}

#[test]
fn errors_name_the_place_and_the_expectation() {
    let at = |t: serde_json::Value| err(doc_with_type(t));
    assert_eq!(
        at(json!({"kind": "tensor_spek", "dtype": "FLOAT", "shape": []})),
        "at function_type.parameters[0].type: unknown type kind 'tensor_spek' (known kinds: composite, list, \
         list_constraint, literal, literal_constraint, map, map_constraint, nest_constraint, \
         record, tensor_constraint, tensor_spec, variable_constraint, variable_spec); a kind defined outside Polyfn must be \
         registered with TypeRegistry::register"
    );
    assert_eq!(
        at(json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": [2, "3"]})),
        "at function_type.parameters[0].type.shape[1]: expected an integer dimension, got string \"3\""
    );
    assert_eq!(
        at(json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": [-5]})),
        "at function_type.parameters[0].type.shape: shape [-5] has dimension -5 at index 0; a \
         dimension is a size >= 0, or -1 for unknown"
    );
    assert!(at(json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": vec![1; 300]}))
        .ends_with("type.shape: shape of rank 300 exceeds TensorFlow's limit of 254 dimensions"));
    assert_eq!(
        at(json!({"kind": "tensor_spec", "dtype": "FLOATY", "shape": []})),
        "at function_type.parameters[0].type.dtype: unknown dtype name 'FLOATY' (expected a \
         TensorFlow name such as \"FLOAT\", or a numeric code)"
    );
    assert_eq!(
        at(json!({"kind": "tensor_spec", "shape": []})),
        "at function_type.parameters[0].type.dtype: missing (or null)"
    );
    assert_eq!(
        at(json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": [], "extra": 1})),
        "at function_type.parameters[0].type: unexpected field 'extra'"
    );
    assert_eq!(
        at(json!({"kind": "list", "elements": [{"kind": "map", "entries": {"k": {"kind": "literal", "id": -1, "repr": "", "class": "C"}}}]})),
        "at function_type.parameters[0].type.elements[0].entries[\"k\"].id: invalid value: \
         integer `-1`, expected u64"
    );
    assert_eq!(
        at(json!({"kind": "list_constraint", "element": null, "length": 1.5})),
        "at function_type.parameters[0].type.length: invalid type: floating point `1.5`, expected usize"
    );
    assert_eq!(at(json!(7)), "at function_type.parameters[0].type: expected a type object {\"kind\": ...}, got number 7");
    let bad_kind = json!({"format": "polyfn.function_type", "version": 1, "function_type": {
        "parameters": [{"name": "x", "kind": "tensorr", "optional": false, "type": null}], "captures": []}});
    assert_eq!(
        err(bad_kind),
        "at function_type.parameters[0].kind: unknown parameter kind 'tensorr' (expected tensor, \
         list, map, java or variable)"
    );
    // deep nesting is refused before it can exhaust the stack
    let mut deep = json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": []});
    for _ in 0..100 {
        deep = json!({"kind": "list", "elements": [deep]});
    }
    assert!(TypeRegistry::builtin().decode_type(&deep, "t").unwrap_err().to_string().contains("types nested deeper than 72 levels"));
}

/// A ragged tensor defined here, outside the crate, with its own serial kind.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct RaggedSpec {
    values: TensorSpec,
    ragged_rank: u32,
}

impl fmt::Display for RaggedSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RaggedSpec({}, ragged rank {})", self.values, self.ragged_rank)
    }
}

impl TraceType for RaggedSpec {
    fn kind(&self) -> &'static str {
        "ragged"
    }
    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        other.as_any().downcast_ref::<RaggedSpec>().is_some_and(|o| {
            self.ragged_rank == o.ragged_rank && self.values.is_subtype_of(&o.values)
        })
    }
    fn most_specific_common_supertype(&self, others: &[&dyn TraceType]) -> Option<TypeRef> {
        others.iter().all(|o| self.dyn_eq(*o)).then(|| TypeRef::new(self.clone()))
    }
    fn placeholders(&self, path: &str, ctx: &mut PlaceholderContext, out: &mut Vec<PlaceholderSpec>) {
        self.values.placeholders(path, ctx, out);
    }
    fn to_json(&self) -> Result<SerialForm, SerialError> {
        Ok(SerialForm::new("ragged")
            .field("values", serial::encode_type(&self.values)?)
            .field("ragged_rank", json!(self.ragged_rank)))
    }
    polyfn_core::trace_type_common!();
}

fn decode_ragged(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
    let values = f.take_type("values")?;
    let values = values
        .downcast_ref::<TensorSpec>()
        .cloned()
        .ok_or_else(|| f.invalid("values", format!("expected a tensor_spec, got {values}")))?;
    Ok(TypeRef::new(RaggedSpec { values, ragged_rank: f.take("ragged_rank")? }))
}

/// A type that never learned to serialize.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Opaque;

impl fmt::Display for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Opaque")
    }
}

impl TraceType for Opaque {
    fn kind(&self) -> &'static str {
        "opaque"
    }
    fn is_subtype_of(&self, other: &dyn TraceType) -> bool {
        self.dyn_eq(other)
    }
    fn most_specific_common_supertype(&self, _: &[&dyn TraceType]) -> Option<TypeRef> {
        None
    }
    fn placeholders(&self, _: &str, _: &mut PlaceholderContext, _: &mut Vec<PlaceholderSpec>) {}
    polyfn_core::trace_type_common!();
}

#[test]
fn a_new_kind_registers_its_own_decoder() {
    let ragged = TypeRef::new(RaggedSpec { values: TensorSpec::new(DType::FLOAT, Shape::of(&[-1])), ragged_rank: 1 });
    let f = FunctionType::new(vec![
        Parameter::new("rt", ParamKind::Tensor).with_constraint(ragged.clone()),
        Parameter::new("xs", ParamKind::List).with_constraint(TypeRef::new(ListType::new(vec![ragged]))),
    ]);
    let text = serial::function_type_to_json(&f).unwrap();
    // unknown to the built-in registry: a clear error naming the kind
    let e = serial::function_type_from_json(&text, &TypeRegistry::builtin()).unwrap_err();
    assert!(matches!(&e, SerialError::UnknownKind { kind, path, .. } if kind == "ragged" && path == "function_type.parameters[0].type"), "{e}");
    let mut reg = TypeRegistry::builtin();
    reg.register("ragged", decode_ragged).unwrap();
    assert_eq!(serial::function_type_from_json(&text, &reg).unwrap(), f);
    // dispatch over the restored type works through the protocol as before
    let mut table = DispatchTable::new();
    table.insert(serial::function_type_from_json(&text, &reg).unwrap(), "f");
    assert_eq!(table.lookup(&f, None), Some(("f", Hit::Exact)));
    // kinds cannot be registered twice, built-ins included
    assert_eq!(reg.register("ragged", decode_ragged), Err(SerialError::DuplicateKind("ragged".into())));
    assert!(reg.register("tensor_spec", decode_ragged).is_err());
    // the decoder's own check reports its path
    let bad = text.replace(r#""kind":"tensor_spec""#, r#""kind":"literal_constraint","class":"C""#);
    let bad = bad.replace(r#""dtype":"FLOAT","#, "").replace(r#","shape":[-1]"#, "");
    let e = serial::function_type_from_json(&bad, &reg).unwrap_err().to_string();
    assert_eq!(e, "at function_type.parameters[0].type.values: expected a tensor_spec, got Literal<C>");
    // a type without a serial form cannot be written, and says which
    let opaque = FunctionType::new(vec![Parameter::new("o", ParamKind::Java).with_constraint(TypeRef::new(Opaque))]);
    assert_eq!(
        serial::function_type_to_json(&opaque).unwrap_err().to_string(),
        "cannot serialize Opaque: type kind 'opaque' has no serial form (implement TraceType::to_json)"
    );
}
