//! Every built-in kind through a document and back, and the checks common to all type objects.

use super::*;
use crate::dtype::{DType, DTypeSet};
use crate::shape::Shape;

fn every_kind() -> FunctionType {
    let t = |dims: &[i64]| TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims)));
    let lit = TypeRef::new(Literal::new(7, "3", "java.lang.Integer"));
    let record = RecordType::new("a.Batch", vec![("f".into(), t(&[2])), ("n".into(), lit.clone())]);
    let composite = CompositeType::new("SparseTensor", DType::FLOAT, Shape::of(&[3, 4]), Some(lit.clone()), vec![("values".into(), t(&[-1]))]);
    let map = MapType::new([("a".to_string(), t(&[])), ("b".to_string(), TypeRef::new(ListType::new(vec![t(&[1]), lit.clone()])))].into_iter().collect());
    let p = |name: &str, kind: ParamKind, ty: TypeRef| Parameter::new(name, kind).with_constraint(ty);
    FunctionType::new(vec![
        p("xs", ParamKind::List, TypeRef::new(ListType::new(vec![t(&[2, -1]), TypeRef::new(record)]))),
        p("m", ParamKind::Map, TypeRef::new(map)),
        p("c", ParamKind::Nest, TypeRef::new(composite)),
        p("any", ParamKind::Tensor, TypeRef::new(TensorConstraint::new(DTypeSet::any(), Some(Shape::Unknown)))),
        p("floats", ParamKind::Tensor, TypeRef::new(TensorConstraint::new(DTypeSet::floating(), None))),
        p("ys", ParamKind::List, TypeRef::new(ListConstraint::new(Some(t(&[-1])), Some(2)))),
        p("zs", ParamKind::List, TypeRef::new(ListConstraint::new(None, None))),
        p("mc", ParamKind::Map, TypeRef::new(MapConstraint::new(Some(TypeRef::new(LiteralConstraint::new("java.lang.Long")))))),
        p("n", ParamKind::Java, lit),
        p("v", ParamKind::Variable, TypeRef::new(VariableConstraint::new(DTypeSet::of(&[DType::INT32, DType::INT64])))),
        p("b", ParamKind::Nest, TypeRef::new(NestConstraint)),
        Parameter::new("opt", ParamKind::Java).optional(),
    ])
    .with_captures(vec![("w".into(), TypeRef::new(VariableSpec::new(DType::DOUBLE, Shape::Unknown, 1)))])
}

#[test]
fn every_built_in_kind_reads_back_as_written() {
    let f = every_kind();
    let text = function_type_to_json(&f).unwrap();
    let back = function_type_from_json(&text, &TypeRegistry::builtin()).unwrap();
    assert_eq!(back, f);
    assert_eq!(back.to_string(), f.to_string());
    for p in &f.parameters {
        if let Some(t) = &p.type_constraint {
            let one = trace_type_to_json(t).unwrap();
            assert_eq!(&trace_type_from_json(&one, &TypeRegistry::builtin()).unwrap(), t, "{one}");
        }
    }
}

#[test]
fn a_type_object_with_a_field_no_decoder_read_is_refused() {
    let reg = TypeRegistry::builtin();
    let e = reg.decode_type(&json!({"kind": "list", "elements": [], "length": 3}), "t").unwrap_err();
    assert_eq!(e.to_string(), "at t: unexpected field 'length'");
    let e = reg.decode_type(&json!({"kind": "list", "elements": {}}), "t").unwrap_err();
    assert_eq!(e.to_string(), "at t.elements: expected an array of types, got an object");
    let e = reg.decode_type(&json!({"kind": "map", "entries": []}), "t").unwrap_err();
    assert_eq!(e.to_string(), "at t.entries: expected an object of types by key, got an array of 0 items");
}

#[test]
fn a_dtype_set_is_any_or_an_array() {
    let reg = TypeRegistry::builtin();
    let dtypes = |d: Value| reg.decode_type(&json!({"kind": "variable_constraint", "dtypes": d}), "t").map(|t| t.to_string()).map_err(|e| e.to_string());
    assert_eq!(dtypes(json!("any")), Ok(VariableConstraint::new(DTypeSet::any()).to_string()));
    assert_eq!(dtypes(json!(["FLOAT"])), Ok("VariableSpec(FLOAT)".to_string()));
    assert_eq!(dtypes(json!("FLOAT")), Err("at t.dtypes: expected \"any\" or an array of dtypes, got string \"FLOAT\"".to_string()));
}

#[test]
fn a_shape_is_unknown_or_an_array_and_long_strings_are_not_quoted_in_errors() {
    let reg = TypeRegistry::builtin();
    let shape = |s: Value| reg.decode_type(&json!({"kind": "tensor_spec", "dtype": "FLOAT", "shape": s}), "t").map(|t| t.to_string()).map_err(|e| e.to_string());
    assert_eq!(shape(json!("unknown")), Ok("TensorSpec(FLOAT, <unknown>)".to_string()));
    assert_eq!(shape(json!("[2]")), Err("at t.shape: expected \"unknown\" or an array of dimensions, got string \"[2]\"".to_string()));
    let forty = "x".repeat(40);
    assert_eq!(values::describe(&json!(forty)), format!("string \"{forty}\""));
    assert_eq!(values::describe(&json!("y".repeat(41))), "a string");
}
