//! The profile file's JSON value by value, and suggestions that leave a declaration alone.

use super::*;
use crate::{DType, DTypeSet, LiteralTable, ParamKind, RecordType, TensorConstraint};
use std::collections::BTreeMap;

fn spec(d: DType, dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
}

fn param(name: &str, kind: ParamKind, t: TypeRef) -> Parameter {
    Parameter::new(name, kind).with_constraint(t)
}

#[test]
fn every_kind_of_value_has_its_json() {
    let list = TypeRef::new(ListType::new(vec![spec(DType::FLOAT, &[-1, 2]), TypeRef::new(TensorSpec::new(DType::DOUBLE, Shape::Unknown))]));
    let map = TypeRef::new(MapType::new(BTreeMap::from([("a".to_owned(), spec(DType::INT32, &[])), ("b\"".to_owned(), spec(DType::INT64, &[3]))])));
    let variable = TypeRef::new(VariableSpec::new(DType::HALF, Shape::of(&[4]), 7));
    let record = TypeRef::new(RecordType::new("a.B".to_owned(), vec![]));
    let call = FunctionType::new(vec![
        param("xs", ParamKind::List, list),
        param("m", ParamKind::Map, map),
        param("v", ParamKind::Variable, variable),
        param("r", ParamKind::Nest, record),
        Parameter::new("skipped", ParamKind::Java).optional(),
        param("s", ParamKind::Java, TypeRef::new(Literal::new(1, "\"a\\b...", "java.lang.String"))),
        param("e", ParamKind::Java, TypeRef::new(Literal::new(2, "SLOW", "a.Mode"))),
    ]);
    let two = FunctionType::new(vec![param("x", ParamKind::Tensor, spec(DType::FLOAT, &[1]))]);
    // A string's whole text, not the short text explanations show; no value for the enum.
    let mut literals = LiteralTable::new();
    literals.insert(1, "\"a\\b...", "java.lang.String", Some("\"a\\b and the rest\"".to_owned()));
    literals.insert(2, "SLOW", "a.Mode", None);
    let json = to_json("f", &[(call, 3), (two, 2)], &literals);
    let expected = concat!(
        "{\n  \"format\": \"polyfn-signature-profile\",\n  \"version\": 1,\n  \"function\": \"f\",\n  \"calls\": 5,\n  \"signatures\": [\n",
        "    {\"count\": 3, \"parameters\": {",
        "\"xs\": {\"list\": [{\"dtype\": \"FLOAT\", \"shape\": [-1, 2]}, {\"dtype\": \"DOUBLE\", \"shape\": null}]}, ",
        "\"m\": {\"map\": {\"a\": {\"dtype\": \"INT32\", \"shape\": []}, \"b\\\"\": {\"dtype\": \"INT64\", \"shape\": [3]}}}, ",
        "\"v\": {\"variable\": {\"dtype\": \"HALF\", \"shape\": [4]}}, ",
        "\"r\": {\"unknown\": \"B()\"}, ",
        "\"s\": {\"java\": \"java.lang.String\", \"value\": \"\\\"a\\\\b and the rest\\\"\"}, ",
        "\"e\": {\"java\": \"a.Mode\", \"value\": null, \"display\": \"SLOW\"}}},\n",
        "    {\"count\": 2, \"parameters\": {\"x\": {\"dtype\": \"FLOAT\", \"shape\": [1]}}}\n",
        "  ]\n}\n"
    );
    assert_eq!(json, expected);
    assert_eq!(to_json("f", &[], &literals), "{\n  \"format\": \"polyfn-signature-profile\",\n  \"version\": 1,\n  \"function\": \"f\",\n  \"calls\": 0,\n  \"signatures\": [\n  ]\n}\n");
}

#[test]
fn control_characters_are_escaped_and_the_rest_kept() {
    assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_eq!(quote("\n\t\u{1f}"), "\"\\u000a\\u0009\\u001f\"");
    assert_eq!(quote(" ~é\u{7f}"), "\" ~é\u{7f}\"", "a space (0x20) and above stay as they are");
}

#[test]
fn a_declaration_the_calls_would_not_change_is_not_suggested() {
    let declared = FunctionType::new(vec![param(
        "x",
        ParamKind::Tensor,
        TypeRef::new(TensorConstraint::new(DTypeSet::of(&[DType::FLOAT]), Some(Shape::of(&[-1, 3])))),
    )]);
    let call = |n| FunctionType::new(vec![param("x", ParamKind::Tensor, spec(DType::FLOAT, &[n, 3]))]);
    let s = suggest(&declared, &[(call(2), 4), (call(5), 1)]);
    assert_eq!((s.calls, s.traces_before, s.traces_after), (5, 2, 1));
    assert!(s.java.is_empty() && s.kotlin.is_empty(), "{:?}", s.java);
}
