//! What a nest holds (`NestConstraint`): which types are structures, which element or value
//! bounds may stand in a nest.

use super::*;
use crate::dtype::{DType, DTypeSet};
use crate::shape::Shape;
use crate::types::{CompositeType, LiteralConstraint, TensorConstraint, VariableSpec};

fn tensor() -> TypeRef {
    TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2])))
}

#[test]
fn lists_maps_records_and_composites_are_structures_and_leaves_are_not() {
    let values = vec![("values".to_string(), tensor())];
    assert!(NestConstraint::is_structure(&ListType::new(vec![tensor()])));
    assert!(NestConstraint::is_structure(&MapType::new([("k".to_string(), tensor())].into())));
    assert!(NestConstraint::is_structure(&RecordType::new("Pair", vec![("a".to_string(), tensor())])));
    assert!(NestConstraint::is_structure(&CompositeType::new("SparseTensor", DType::FLOAT, Shape::of(&[3]), None, values)));
    assert!(!NestConstraint::is_structure(&TensorSpec::new(DType::FLOAT, Shape::scalar())));
    assert!(!NestConstraint::is_structure(&Literal::new(1, "1", "java.lang.Integer")));
}

#[test]
fn a_nest_admits_tensor_and_java_value_bounds_and_nests_but_not_variables() {
    let admits = |bound: TypeRef| NestConstraint::admits_bound(&bound, &NestConstraint);
    assert!(admits(TypeRef::new(TensorConstraint::new(DTypeSet::floating(), None))));
    assert!(admits(TypeRef::new(LiteralConstraint::new("java.lang.Integer"))));
    assert!(admits(TypeRef::new(ListType::new(vec![tensor()]))));
    assert!(!admits(TypeRef::new(VariableSpec::new(DType::FLOAT, Shape::scalar(), 0))));
}
