//! Unit tests of the document envelope and the objects around types (the error texts of the types
//! themselves are in tests/serial_errors.rs).

use super::*;
use crate::dtype::DType;
use crate::shape::Shape;

fn x() -> FunctionType {
    let t = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])));
    FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor).with_constraint(t)])
}

fn read(doc: Value) -> Result<FunctionType, String> {
    function_type_from_json(&doc.to_string(), &TypeRegistry::builtin()).map_err(|e| e.to_string())
}

fn with_body(body: Value) -> Value {
    json!({"format": FUNCTION_TYPE_FORMAT, "version": 1, "function_type": body})
}

#[test]
fn a_trace_type_document_round_trips_and_says_what_it_is() {
    let t = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])));
    let text = trace_type_to_json(&t).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        doc,
        json!({"format": "polyfn.trace_type", "version": 1, "type": {"kind": "tensor_spec", "dtype": "FLOAT", "shape": [2]}})
    );
    assert_eq!(trace_type_from_json(&text, &TypeRegistry::builtin()).unwrap(), t);
}

#[test]
fn the_envelope_must_name_this_format_and_version() {
    let body = serde_json::from_str::<Value>(&function_type_to_json(&x()).unwrap()).unwrap()["function_type"].clone();
    assert_eq!(read(with_body(body.clone())).unwrap(), x());
    assert_eq!(
        read(json!({"format": "polyfn.other", "version": 1, "function_type": body.clone()})).unwrap_err(),
        "not a Polyfn polyfn.function_type document: its format is string \"polyfn.other\""
    );
    assert_eq!(
        read(json!({"format": FUNCTION_TYPE_FORMAT, "version": 7, "function_type": body.clone()})).unwrap_err(),
        "unsupported polyfn.function_type version 7: this Polyfn reads version 1"
    );
    assert_eq!(
        read(json!({"format": FUNCTION_TYPE_FORMAT, "function_type": body.clone()})).unwrap_err(),
        "unsupported polyfn.function_type version (missing): this Polyfn reads version 1"
    );
    assert_eq!(
        read(json!({"version": 1, "function_type": body.clone()})).unwrap_err(),
        "not a Polyfn polyfn.function_type document: it has no 'format' field"
    );
    assert_eq!(
        read(json!({"format": FUNCTION_TYPE_FORMAT, "version": 1, "function_type": body, "note": 1})).unwrap_err(),
        "at (document): unexpected field 'note'"
    );
}

#[test]
fn parameters_captures_and_the_function_type_refuse_unknown_fields() {
    let param = json!({"name": "x", "kind": "tensor", "optional": false, "type": null});
    assert!(read(with_body(json!({"parameters": [param.clone()], "captures": []}))).is_ok());
    let mut extra = param.clone();
    extra["default"] = json!(1);
    assert_eq!(
        read(with_body(json!({"parameters": [param.clone(), extra], "captures": []}))).unwrap_err(),
        "at function_type.parameters[1]: unexpected field 'default'"
    );
    let capture = json!({"name": "w", "type": {"kind": "tensor_spec", "dtype": "FLOAT", "shape": []}, "shared": true});
    assert_eq!(
        read(with_body(json!({"parameters": [], "captures": [capture]}))).unwrap_err(),
        "at function_type.captures[0]: unexpected field 'shared'"
    );
    assert_eq!(
        read(with_body(json!({"parameters": [], "captures": [], "results": []}))).unwrap_err(),
        "at function_type: unexpected field 'results'"
    );
}

#[test]
fn a_parameter_says_which_field_is_missing_or_of_the_wrong_kind() {
    let param = |p: Value| read(with_body(json!({"parameters": [p], "captures": []})));
    assert_eq!(
        param(json!({"name": "x", "kind": "tensor", "type": null})).unwrap_err(),
        "at function_type.parameters[0].optional: missing"
    );
    assert_eq!(
        param(json!({"name": "x", "kind": "tensor", "optional": 1, "type": null})).unwrap_err(),
        "at function_type.parameters[0].optional: expected a boolean, got number 1"
    );
    assert_eq!(
        param(json!({"name": 3, "kind": "tensor", "optional": true})).unwrap_err(),
        "at function_type.parameters[0].name: expected a string, got number 3"
    );
    let nest = param(json!({"name": "b", "kind": "nest", "optional": true})).unwrap();
    assert_eq!((nest.parameters[0].kind, nest.parameters[0].optional), (ParamKind::Nest, true));
    assert_eq!(
        read(with_body(json!({"parameters": {}, "captures": []}))).unwrap_err(),
        "at function_type.parameters: expected an array, got an object"
    );
}

fn decode_nothing(_: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
    Err(SerialError::invalid("here", "not decodable"))
}

#[test]
fn the_registry_lists_its_kinds_and_takes_each_new_one_once() {
    let mut reg = TypeRegistry::builtin();
    let builtin: Vec<&str> = BUILTIN_KINDS.iter().map(|(k, _)| *k).collect();
    let mut sorted = builtin.clone();
    sorted.sort_unstable();
    assert_eq!(reg.kinds(), sorted);
    assert_eq!(reg.register("ragged", decode_nothing), Ok(()));
    assert!(reg.kinds().contains(&"ragged") && reg.kinds().len() == builtin.len() + 1);
    assert_eq!(reg.register("ragged", decode_nothing), Err(SerialError::DuplicateKind("ragged".into())));
    assert_eq!(
        reg.decode_type(&json!({"kind": "ragged"}), "t").unwrap_err().to_string(),
        "at here: not decodable"
    );
}

#[test]
fn types_may_nest_48_levels_deep() {
    let nested = |levels: usize| {
        (0..levels).fold(json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": []}), |t, _| json!({"kind": "list", "elements": [t]}))
    };
    let reg = TypeRegistry::builtin();
    assert!(reg.decode_type(&nested(MAX_TYPE_DEPTH), "t").is_ok());
    let e = reg.decode_type(&nested(MAX_TYPE_DEPTH + 1), "t").unwrap_err().to_string();
    assert!(e.ends_with(": types nested deeper than 48 levels"), "{e}");
}

/// A decoder of the kind "probe", reporting its optional field `n` as an error at its path.
fn decode_probe(f: &mut Fields<'_>) -> Result<TypeRef, SerialError> {
    let n: Option<u64> = f.take_opt("n")?;
    Err(SerialError::invalid(f.path(), format!("n = {n:?}")))
}

#[test]
fn a_decoder_reads_optional_fields_and_knows_where_it_is() {
    let mut reg = TypeRegistry::builtin();
    reg.register("probe", decode_probe).unwrap();
    let probe = |t: Value| reg.decode_type(&json!({"kind": "list", "elements": [t]}), "t").unwrap_err().to_string();
    assert_eq!(probe(json!({"kind": "probe", "n": 3})), "at t.elements[0]: n = Some(3)");
    assert_eq!(probe(json!({"kind": "probe"})), "at t.elements[0]: n = None");
    assert_eq!(probe(json!({"kind": "probe", "n": null})), "at t.elements[0]: n = None");
    assert_eq!(probe(json!({"kind": "probe", "n": "x"})), "at t.elements[0].n: invalid type: string \"x\", expected u64");
    assert_eq!(probe(json!({"kind": "tensor_spec", "shape": []})), "at t.elements[0].dtype: missing (or null)");
}
