//! A function's parameters: their kinds ([`ParamKind`], with their wire codes) and one named
//! parameter ([`Parameter`]), below [`FunctionType`](crate::function_type::FunctionType) and
//! binding.

use std::fmt;

use crate::trace_type::TypeRef;
use crate::wire::{KIND_JAVA, KIND_LIST, KIND_MAP, KIND_NEST, KIND_TENSOR, KIND_VARIABLE};

/// The syntactic kind of a parameter, as declared on the Java side.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ParamKind {
    Tensor,
    List,
    Map,
    /// Any other Java value, traced as a [`crate::Literal`].
    Java,
    /// A resource variable, passed by handle ([`crate::VariableSpec`]).
    Variable,
    /// Any nest of lists, maps and records ([`crate::NestConstraint`]).
    Nest,
}

impl ParamKind {
    /// The kind's name, as printed and as written in the serialized form.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamKind::Tensor => "tensor",
            ParamKind::List => "list",
            ParamKind::Map => "map",
            ParamKind::Java => "java",
            ParamKind::Variable => "variable",
            ParamKind::Nest => "nest",
        }
    }
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One named parameter.
///
/// ```
/// use polyfn_core::{DType, ParamKind, Parameter, Shape, TensorSpec, TypeRef};
/// let p = Parameter::new("x", ParamKind::Tensor)
///     .with_constraint(TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(&[2, 3]))));
/// assert_eq!(p.to_string(), "x: TensorSpec(FLOAT, [2, 3])");
/// assert_eq!(Parameter::new("n", ParamKind::Java).optional().to_string(), "n: java = <default>");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Parameter {
    pub name: String,
    pub kind: ParamKind,
    pub optional: bool,
    pub type_constraint: Option<TypeRef>,
}

impl Parameter {
    /// A required, unconstrained parameter.
    pub fn new(name: impl Into<String>, kind: ParamKind) -> Self {
        Parameter {
            name: name.into(),
            kind,
            optional: false,
            type_constraint: None,
        }
    }

    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }

    pub fn with_constraint(mut self, t: TypeRef) -> Self {
        self.type_constraint = Some(t);
        self
    }

    /// Same name, kind and optionality (types ignored).
    pub(crate) fn same_slot(&self, other: &Parameter) -> bool {
        self.name == other.name && self.kind == other.kind && self.optional == other.optional
    }
}

impl fmt::Display for Parameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.type_constraint {
            Some(t) => write!(f, "{}: {t}", self.name)?,
            None => write!(f, "{}: {}", self.name, self.kind)?,
        }
        if self.optional {
            f.write_str(" = <default>")?;
        }
        Ok(())
    }
}

impl ParamKind {
    /// The kind for its wire code, `None` for an unknown code.
    pub fn from_wire(code: i32) -> Option<ParamKind> {
        Some(match code {
            KIND_TENSOR => ParamKind::Tensor,
            KIND_LIST => ParamKind::List,
            KIND_MAP => ParamKind::Map,
            KIND_JAVA => ParamKind::Java,
            KIND_VARIABLE => ParamKind::Variable,
            KIND_NEST => ParamKind::Nest,
            _ => return None,
        })
    }

    /// The kind's wire code.
    pub fn wire(self) -> i32 {
        match self {
            ParamKind::Tensor => KIND_TENSOR,
            ParamKind::List => KIND_LIST,
            ParamKind::Map => KIND_MAP,
            ParamKind::Java => KIND_JAVA,
            ParamKind::Variable => KIND_VARIABLE,
            ParamKind::Nest => KIND_NEST,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_unknown_codes_are_rejected() {
        for kind in [ParamKind::Tensor, ParamKind::List, ParamKind::Map, ParamKind::Java, ParamKind::Variable, ParamKind::Nest] {
            assert_eq!(ParamKind::from_wire(kind.wire()), Some(kind));
        }
        assert_eq!(ParamKind::from_wire(0), Some(ParamKind::Tensor));
        assert_eq!(ParamKind::from_wire(4), Some(ParamKind::Variable));
        assert_eq!(ParamKind::from_wire(5), Some(ParamKind::Nest));
        assert_eq!(ParamKind::from_wire(6), None);
        assert_eq!(ParamKind::from_wire(-1), None);
    }
}
