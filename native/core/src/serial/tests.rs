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
fn types_may_nest_as_deep_as_max_type_depth() {
    let nested = |levels: usize| {
        (0..levels).fold(json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": []}), |t, _| json!({"kind": "list", "elements": [t]}))
    };
    let reg = TypeRegistry::builtin();
    assert!(reg.decode_type(&nested(MAX_TYPE_DEPTH), "t").is_ok());
    let e = reg.decode_type(&nested(MAX_TYPE_DEPTH + 1), "t").unwrap_err().to_string();
    assert!(e.ends_with(&format!(": types nested deeper than {MAX_TYPE_DEPTH} levels")), "{e}");
    assert_eq!(MAX_TYPE_DEPTH, 72, "the deepest argument a call accepts, and room for a composite's types");
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

/// `depth` arrays within each other, empty at the bottom.
fn nested_arrays(depth: usize) -> String {
    "[".repeat(depth) + &"]".repeat(depth)
}

#[test]
fn json_nests_up_to_its_bound_and_no_deeper() {
    assert_eq!(parse_json(&nested_arrays(JSON_MAX_DEPTH)).unwrap().to_string(), nested_arrays(JSON_MAX_DEPTH));
    let deeper = parse_json(&nested_arrays(JSON_MAX_DEPTH + 1)).unwrap_err().to_string();
    assert!(deeper.contains(&format!("nests deeper than {JSON_MAX_DEPTH} levels")), "{deeper}");
    // Objects count as arrays do.
    let objects = "{\"a\":".repeat(JSON_MAX_DEPTH + 1) + "1" + &"}".repeat(JSON_MAX_DEPTH + 1);
    assert!(parse_json(&objects).is_err());
}

#[test]
fn json_depth_counts_open_levels_only_outside_strings() {
    // Wide but shallow: closed arrays give their level back.
    let wide = format!("[{}[]]", "[],".repeat(JSON_MAX_DEPTH * 4));
    assert!(parse_json(&wide).is_ok());
    // Brackets inside a string, after an escaped quote, are text.
    let in_string = format!("[\"\\\"{}\"]", "[".repeat(JSON_MAX_DEPTH * 2));
    assert_eq!(parse_json(&in_string).unwrap()[0].as_str().unwrap().len(), 1 + JSON_MAX_DEPTH * 2);
    // An escaped backslash ends with the string's closing quote: what follows counts.
    let after = format!("[\"\\\\\",{}]", nested_arrays(JSON_MAX_DEPTH));
    assert!(parse_json(&after).unwrap_err().to_string().contains("nests deeper"));
    let fits = format!("[\"\\\\\",{}]", nested_arrays(JSON_MAX_DEPTH - 1));
    assert!(parse_json(&fits).is_ok());
}

#[test]
fn malformed_json_is_a_syntax_error_never_a_panic() {
    for text in ["]", "}}}[", "[1] x", "[", "\"unterminated"] {
        assert!(matches!(parse_json(text), Err(SerialError::Syntax(_))), "{text}");
    }
}

#[test]
fn a_type_as_deep_as_a_call_accepts_round_trips() {
    let mut t = TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[])));
    for _ in 0..crate::wire::NEST_MAX_DEPTH {
        t = TypeRef::new(crate::types::ListType::new(vec![t]));
    }
    let f = FunctionType::new(vec![Parameter::new("xs", ParamKind::Nest).with_constraint(t.clone())]);
    let text = function_type_to_json(&f).unwrap();
    assert_eq!(function_type_from_json(&text, &TypeRegistry::builtin()).unwrap(), f);
    assert_eq!(trace_type_from_json(&trace_type_to_json(&t).unwrap(), &TypeRegistry::builtin()).unwrap(), t);
}
