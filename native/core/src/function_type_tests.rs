//! Joins and text of function types with captures, and the "got" part of a mismatch.

use super::*;
use crate::dtype::DType;
use crate::parameter::ParamKind;
use crate::shape::Shape;
use crate::types::{ListType, TensorSpec};

fn t(dims: &[i64]) -> TypeRef {
    TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(dims)))
}

fn with_captures(captures: &[(&str, &[i64])]) -> FunctionType {
    FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor).with_constraint(t(&[2]))])
        .with_captures(captures.iter().map(|(n, d)| (n.to_string(), t(d))).collect())
}

#[test]
fn signatures_whose_captures_differ_in_name_have_no_join() {
    let w = with_captures(&[("w", &[2])]);
    let w3 = with_captures(&[("w", &[3])]);
    assert_eq!(w.most_specific_common_supertype(&[&w3]), Some(with_captures(&[("w", &[-1])])));
    let v = with_captures(&[("v", &[2])]);
    assert_eq!(w.most_specific_common_supertype(&[&v]), None);
    assert_eq!(w.most_specific_common_supertype(&[&w3, &v]), None);
}

#[test]
fn captures_are_listed_comma_separated() {
    assert_eq!(
        with_captures(&[("w", &[2]), ("v", &[])]).to_string(),
        "(x: TensorSpec(FLOAT, [2]); captures: w: TensorSpec(FLOAT, [2]), v: TensorSpec(FLOAT, []))"
    );
}

#[test]
fn a_mismatch_adds_the_reason_unless_it_only_repeats_the_value() {
    let list = |d: &[i64]| TypeRef::new(ListType::new(vec![t(&[1]), t(d)]));
    assert_eq!(
        describe_mismatch(&list(&[3]), &list(&[2])),
        "List[TensorSpec(FLOAT, [1]), TensorSpec(FLOAT, [3])] \
         (element 1: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0)"
    );
    // A tensor's reason starts with the tensor itself: said once.
    assert_eq!(describe_mismatch(&t(&[3]), &t(&[2])), "TensorSpec(FLOAT, [3])");
}

#[test]
fn a_list_argument_that_does_not_fit_says_which_element_differs() {
    let list = |d: &[i64]| TypeRef::new(ListType::new(vec![t(d)]));
    let f = |d: &[i64]| FunctionType::new(vec![Parameter::new("xs", ParamKind::List).with_constraint(list(d))]);
    assert_eq!(
        check_constraints(&f(&[3]), &f(&[2])).unwrap_err().to_string(),
        "argument 'xs': expected List[TensorSpec(FLOAT, [2])], got List[TensorSpec(FLOAT, [3])] \
         (element 0: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0)"
    );
}
