//! PLACEHOLDER (lead): replaced by the core helper's version at merge.
use crate::{BindError, DTypeSet, ListConstraint, LiteralConstraint, MapConstraint, ParamKind, Shape, TensorConstraint, TypeRef, VariableConstraint};

pub fn declared_constraint(_name: &str, kind: ParamKind, dtypes: DTypeSet, shape: Option<Shape>, java_class: String) -> Result<TypeRef, BindError> {
    let tensor = || TypeRef::new(TensorConstraint { dtypes: dtypes.clone(), shape: shape.clone() });
    Ok(match kind {
        ParamKind::Tensor => tensor(),
        ParamKind::List => TypeRef::new(ListConstraint::new(Some(tensor()), None)),
        ParamKind::Map => TypeRef::new(MapConstraint::new(Some(tensor()))),
        ParamKind::Java => TypeRef::new(LiteralConstraint::new(java_class)),
        ParamKind::Variable => TypeRef::new(VariableConstraint::new(dtypes)),
    })
}

pub fn capture_constraint(variable: bool) -> TypeRef {
    if variable {
        TypeRef::new(VariableConstraint::new(DTypeSet::any()))
    } else {
        TypeRef::new(TensorConstraint { dtypes: DTypeSet::any(), shape: None })
    }
}
