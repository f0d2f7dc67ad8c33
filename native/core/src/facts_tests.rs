//! Decoding records, composites and the kind check of a call's top-level values.

use super::*;
use crate::wire::{TAG_COMPOSITE, TAG_LIST, TAG_LITERAL, TAG_MAP, TAG_RECORD, TAG_TENSOR, TAG_VARIABLE};

const B: i64 = 10;
const A: i64 = 11;
const BATCH: i64 = 12;
const SPARSE: i64 = 13;
const VALUES: i64 = 14;
const LIT3: i64 = 7;

fn tables() -> (StringTable, LiteralTable) {
    let mut s = StringTable::new();
    s.insert(B, "b");
    s.insert(A, "a");
    s.insert(BATCH, "com.acme.Batch");
    s.insert(SPARSE, "SparseTensor");
    s.insert(VALUES, "values");
    let mut l = LiteralTable::new();
    l.insert(LIT3, "3", "java.lang.Integer", Some("3".to_owned()));
    (s, l)
}

fn decode(facts: &[i64]) -> Result<String, String> {
    let (s, l) = tables();
    let mut pos = 0;
    let t = decode_value(facts, &mut pos, &s, &l).map_err(|e| e.to_string())?;
    assert_eq!(pos, facts.len(), "consumed everything of {facts:?}");
    Ok(t.to_string())
}

fn bad(facts: &[i64]) -> String {
    decode(facts).unwrap_err()
}

/// `levels` lists of one element around `leaf`: the leaf sits at depth `levels`.
fn in_lists(levels: usize, leaf: &[i64]) -> Vec<i64> {
    [[TAG_LIST, 1].repeat(levels), leaf.to_vec()].concat()
}

#[test]
fn a_record_keeps_its_components_in_declaration_order() {
    let facts = [TAG_RECORD, BATCH, 2, B, TAG_TENSOR, 1, 1, 2, A, TAG_LITERAL, LIT3];
    assert_eq!(decode(&facts).unwrap(), "Batch(b: TensorSpec(FLOAT, [2]), a: Literal(3))");
    assert_eq!(decode(&[TAG_RECORD, BATCH, 0]).unwrap(), "Batch()");
}

#[test]
fn a_record_with_a_component_twice_or_an_unknown_name_is_malformed() {
    let twice = [TAG_RECORD, BATCH, 2, B, TAG_LITERAL, LIT3, B, TAG_LITERAL, LIT3];
    assert_eq!(bad(&twice), "malformed call facts: duplicate record component 'b'");
    assert_eq!(bad(&[TAG_RECORD, 99, 0]), "malformed call facts: unknown string id 99");
    assert_eq!(bad(&[TAG_RECORD, BATCH, 1, 98, TAG_LITERAL, LIT3]), "malformed call facts: unknown string id 98");
    // An error inside a component names it.
    assert_eq!(bad(&[TAG_RECORD, BATCH, 1, A, TAG_LITERAL, 77]), "malformed call facts: unknown literal id 77");
    // A shape error inside a component names its path.
    assert_eq!(
        bad(&[TAG_RECORD, BATCH, 1, A, TAG_TENSOR, 1, 2, 3, -4]),
        ".a: shape [3, -4] has dimension -4 at index 1; a dimension is a size >= 0, or -1 for unknown"
    );
}

#[test]
fn records_count_towards_the_nesting_limit() {
    let records = |levels: usize| [[TAG_RECORD, BATCH, 1, A].repeat(levels), vec![TAG_LIST, 0]].concat();
    assert!(decode(&records(64)).is_ok(), "64 levels below the argument are allowed");
    assert_eq!(bad(&records(65)), "malformed call facts: nesting deeper than 64");
}

#[test]
fn a_composite_has_a_known_or_unknown_shape_optional_metadata_and_tensor_components() {
    let values = [VALUES, TAG_TENSOR, 1, 1, 2];
    let known = [&[TAG_COMPOSITE, SPARSE, 1, 2, 3, 4, -1, 1][..], &values].concat();
    assert_eq!(decode(&known).unwrap(), "SparseTensor(FLOAT, [3, 4]; values: [2])");
    let unknown = [&[TAG_COMPOSITE, SPARSE, 1, -1, LIT3, 1][..], &values].concat();
    assert_eq!(decode(&unknown).unwrap(), "SparseTensor(FLOAT, <unknown>, Literal(3); values: [2])");
    let scalar = [TAG_COMPOSITE, SPARSE, 3, 0, -1, 0];
    assert_eq!(decode(&scalar).unwrap(), "SparseTensor(INT32, [])");
}

#[test]
fn a_malformed_composite_says_what_is_wrong() {
    let not_tensor = [TAG_COMPOSITE, SPARSE, 1, -1, -1, 1, VALUES, TAG_LIST, 1, TAG_LITERAL, LIT3];
    assert_eq!(bad(&not_tensor), "malformed call facts: component 'values' of a SparseTensor is not a tensor");
    assert_eq!(bad(&[TAG_COMPOSITE, SPARSE, 1 << 40, -1, -1, 0]), "malformed call facts: dtype out of range at position 2");
    assert_eq!(bad(&[TAG_COMPOSITE, 99, 1, -1, -1, 0]), "malformed call facts: unknown string id 99");
    assert_eq!(bad(&[TAG_COMPOSITE, SPARSE, 1, -1, 55, 0]), "malformed call facts: unknown literal id 55");
    assert_eq!(bad(&[TAG_COMPOSITE, SPARSE, 1, -1, -1, 1, 98, TAG_TENSOR, 1, 0]), "malformed call facts: unknown string id 98");
    // A component count beyond what remains is refused before reading on.
    assert_eq!(bad(&[TAG_COMPOSITE, SPARSE, 1, -1, -1, 2, VALUES, TAG_TENSOR, 1, 0]), "malformed call facts: bad component count 2 at position 5");
}

#[test]
fn a_composites_components_count_towards_the_nesting_limit() {
    let composite = [TAG_COMPOSITE, SPARSE, 1, -1, -1, 1, VALUES, TAG_TENSOR, 1, 0];
    assert!(decode(&in_lists(63, &composite)).is_ok(), "its component at depth 64 is allowed");
    assert_eq!(bad(&in_lists(64, &composite)), "malformed call facts: nesting deeper than 64");
}

#[test]
fn a_variable_may_have_an_unknown_rank_or_unknown_dims() {
    // A Python variable declared with shape=None or [None, 3], restored by Function.load.
    assert_eq!(decode(&[TAG_VARIABLE, 1, -1, 0]).unwrap(), "VariableSpec(FLOAT, <unknown>, alias 0)");
    assert_eq!(decode(&[TAG_VARIABLE, 1, 2, -1, 3, 1]).unwrap(), "VariableSpec(FLOAT, [-1, 3], alias 1)");
}

#[test]
fn a_parameter_accepts_only_the_top_level_tags_of_its_kind() {
    let (s, l) = tables();
    let values: [(i64, &[i64]); 7] = [
        (TAG_TENSOR, &[TAG_TENSOR, 1, 0]),
        (TAG_LIST, &[TAG_LIST, 0]),
        (TAG_MAP, &[TAG_MAP, 0]),
        (TAG_LITERAL, &[TAG_LITERAL, LIT3]),
        (TAG_VARIABLE, &[TAG_VARIABLE, 1, 0, 0]),
        (TAG_RECORD, &[TAG_RECORD, BATCH, 0]),
        (TAG_COMPOSITE, &[TAG_COMPOSITE, SPARSE, 1, -1, -1, 0]),
    ];
    let fits = |kind: ParamKind| -> Vec<i64> {
        let params = [Parameter::new("p", kind)];
        values
            .iter()
            .filter(|(_, facts)| match decode_call(&params, facts, &s, &l) {
                Ok(call) => {
                    assert_eq!(call.parameters[0].type_constraint.as_ref().unwrap().to_string(), decode(facts).unwrap());
                    true
                }
                Err(BindError::TypeMismatch { param, expected, .. }) => {
                    assert_eq!((param.as_str(), expected), ("p", format!("a {kind}")));
                    false
                }
                Err(e) => panic!("{kind}: {facts:?}: {e}"),
            })
            .map(|(tag, _)| *tag)
            .collect()
    };
    assert_eq!(fits(ParamKind::Tensor), [TAG_TENSOR]);
    assert_eq!(fits(ParamKind::List), [TAG_LIST]);
    assert_eq!(fits(ParamKind::Map), [TAG_MAP]);
    assert_eq!(fits(ParamKind::Java), [TAG_LITERAL]);
    assert_eq!(fits(ParamKind::Variable), [TAG_VARIABLE]);
    assert_eq!(fits(ParamKind::Nest), [TAG_LIST, TAG_MAP, TAG_RECORD, TAG_COMPOSITE]);
}
