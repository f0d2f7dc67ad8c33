//! [`FunctionType`]: the parameter list of a polymorphic function together with one type per
//! parameter (after TensorFlow's "FunctionType for tf.function" RFC).
//!
//! The same struct serves three roles: the *declared* signature (types are constraints,
//! `None` = unconstrained), a *call's* monomorphic type (types realized from facts), and a
//! *traced* signature (the key of a concrete function in the dispatch table).

use std::fmt;

use crate::binding::BindError;
use crate::parameter::Parameter;
use crate::trace_type::{as_dyns, TypeRef};

/// A function's parameters (and captured values), each with a type.
///
/// ```
/// use polyfn_core::*;
/// let t = |d: &[i64]| TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d)));
/// let p = |d: &[i64]| FunctionType::new(vec![Parameter::new("x", ParamKind::Tensor).with_constraint(t(d))]);
/// assert!(p(&[2]).is_subtype_of(&p(&[-1])));
/// assert_eq!(p(&[2]).most_specific_common_supertype(&[&p(&[3])]), Some(p(&[-1])));
/// assert_eq!(p(&[2]).to_string(), "(x: TensorSpec(FLOAT, [2]))");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FunctionType {
    pub parameters: Vec<Parameter>,
    /// Values the body closes over (e.g. variables), by name; part of the dispatch key.
    pub captures: Vec<(String, TypeRef)>,
}

/// `None` (unconstrained) is the top.
fn opt_subtype(a: &Option<TypeRef>, b: &Option<TypeRef>) -> bool {
    match (a, b) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(a), Some(b)) => a.is_subtype_of(&**b),
    }
}

impl FunctionType {
    pub fn new(parameters: Vec<Parameter>) -> Self {
        FunctionType {
            parameters,
            captures: Vec::new(),
        }
    }

    pub fn with_captures(mut self, captures: Vec<(String, TypeRef)>) -> Self {
        self.captures = captures;
        self
    }

    pub fn parameter(&self, name: &str) -> Option<&Parameter> {
        self.parameters.iter().find(|p| p.name == name)
    }

    /// Same parameter list: names, kinds and optional flags, in order (types ignored).
    pub fn same_signature(&self, other: &FunctionType) -> bool {
        self.parameters.len() == other.parameters.len()
            && self
                .parameters
                .iter()
                .zip(&other.parameters)
                .all(|(a, b)| a.same_slot(b))
    }

    fn same_capture_names(&self, other: &FunctionType) -> bool {
        self.captures.len() == other.captures.len()
            && self
                .captures
                .iter()
                .zip(&other.captures)
                .all(|(a, b)| a.0 == b.0)
    }

    pub fn is_subtype_of(&self, other: &FunctionType) -> bool {
        self.same_signature(other)
            && self.same_capture_names(other)
            && self
                .parameters
                .iter()
                .zip(&other.parameters)
                .all(|(a, b)| opt_subtype(&a.type_constraint, &b.type_constraint))
            && self
                .captures
                .iter()
                .zip(&other.captures)
                .all(|(a, b)| a.1.is_subtype_of(&*b.1))
    }

    /// Parameter-wise join; `None` if the lists differ or any parameter has no join.
    pub fn most_specific_common_supertype(&self, others: &[&FunctionType]) -> Option<FunctionType> {
        if !others
            .iter()
            .all(|o| self.same_signature(o) && self.same_capture_names(o))
        {
            return None;
        }
        let mut parameters = Vec::with_capacity(self.parameters.len());
        for (i, p) in self.parameters.iter().enumerate() {
            let rest: Option<Vec<TypeRef>> = others
                .iter()
                .map(|o| o.parameters[i].type_constraint.clone())
                .collect();
            let joined = match (&p.type_constraint, rest) {
                (Some(t), Some(rest)) => Some(t.most_specific_common_supertype(&as_dyns(&rest))?),
                _ => None, // someone is unconstrained: so is the join
            };
            parameters.push(Parameter {
                type_constraint: joined,
                ..p.clone()
            });
        }
        let mut captures = Vec::with_capacity(self.captures.len());
        for (i, (name, t)) in self.captures.iter().enumerate() {
            let rest: Vec<TypeRef> = others.iter().map(|o| o.captures[i].1.clone()).collect();
            captures.push((
                name.clone(),
                t.most_specific_common_supertype(&as_dyns(&rest))?,
            ));
        }
        Some(FunctionType {
            parameters,
            captures,
        })
    }

    /// The type to trace for this call under `declared` constraints (input_signature
    /// semantics): each parameter's type specialized by its declared constraint, if any.
    pub fn specialize_for_trace(&self, declared: &FunctionType) -> FunctionType {
        let parameters = self
            .parameters
            .iter()
            .map(|p| {
                let declared_t = declared
                    .parameter(&p.name)
                    .and_then(|d| d.type_constraint.as_ref());
                let t = match (&p.type_constraint, declared_t) {
                    (Some(t), Some(c)) => Some(t.specialize_for_trace(&**c)),
                    (t, _) => t.clone(),
                };
                Parameter {
                    type_constraint: t,
                    ..p.clone()
                }
            })
            .collect();
        FunctionType {
            parameters,
            captures: self.captures.clone(),
        }
    }
}

impl fmt::Display for FunctionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, p) in self.parameters.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        if !self.captures.is_empty() {
            f.write_str("; captures: ")?;
            for (i, (name, t)) in self.captures.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{name}: {t}")?;
            }
        }
        f.write_str(")")
    }
}

/// `value` as the "got" part of an error, with the reason it does not fit `expected` (e.g. which
/// list element or map key differs) when the type can tell.
pub fn describe_mismatch(value: &TypeRef, expected: &TypeRef) -> String {
    match value.explain_mismatch(&**expected) {
        Some(why) if !why.starts_with(&value.to_string()) => format!("{value} ({why})"),
        _ => value.to_string(),
    }
}

/// Checks a call's realized types against the declared constraints: each argument's type must
/// be a subtype of its parameter's constraint (an optional parameter without a type passes).
pub fn check_constraints(call: &FunctionType, declared: &FunctionType) -> Result<(), BindError> {
    let mut unexpected = Vec::new();
    for c in &call.parameters {
        let Some(d) = declared.parameter(&c.name) else {
            unexpected.push(c.name.clone());
            continue;
        };
        if c.type_constraint.is_none() {
            if d.optional {
                continue;
            }
            return Err(BindError::Missing {
                param: d.name.clone(),
                expected: d.type_constraint.as_ref().map(|t| t.to_string()),
            });
        }
        if !opt_subtype(&c.type_constraint, &d.type_constraint) {
            return Err(BindError::TypeMismatch {
                param: c.name.clone(),
                expected: d
                    .type_constraint
                    .as_ref()
                    .map_or_else(|| d.kind.to_string(), |t| t.to_string()),
                got: match (&c.type_constraint, &d.type_constraint) {
                    (Some(t), Some(e)) => describe_mismatch(t, e),
                    (Some(t), None) => t.to_string(),
                    _ => String::new(),
                },
            });
        }
    }
    for ((name, c), (_, d)) in call.captures.iter().zip(&declared.captures) {
        if !c.is_subtype_of(&**d) {
            return Err(BindError::TypeMismatch {
                param: format!("capture {name}"),
                expected: d.to_string(),
                got: describe_mismatch(c, d),
            });
        }
    }
    if !unexpected.is_empty() {
        unexpected.sort();
        return Err(BindError::Unexpected {
            names: unexpected,
            parameters: declared.parameters.iter().map(|p| p.name.clone()).collect(),
        });
    }
    if let Some(d) = declared
        .parameters
        .iter()
        .find(|d| !d.optional && call.parameter(&d.name).is_none())
    {
        return Err(BindError::Missing {
            param: d.name.clone(),
            expected: d.type_constraint.as_ref().map(|t| t.to_string()),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parameter::ParamKind;
    use crate::{DType, DTypeSet, Literal, Shape, TensorConstraint, TensorSpec};

    fn t(d: DType, dims: &[i64]) -> TypeRef {
        TypeRef::new(TensorSpec::new(d, Shape::of(dims)))
    }

    fn lit(v: u64) -> TypeRef {
        TypeRef::new(Literal::new(v, v.to_string(), "java.lang.Integer"))
    }

    fn ft(x: TypeRef, n: TypeRef) -> FunctionType {
        FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(x),
            Parameter::new("n", ParamKind::Java).with_constraint(n),
        ])
    }

    #[test]
    fn display() {
        let f = ft(t(DType::FLOAT, &[2, 3]), lit(3));
        assert_eq!(
            f.to_string(),
            "(x: TensorSpec(FLOAT, [2, 3]), n: Literal(3))"
        );
        let f = f.with_captures(vec![("v".into(), t(DType::FLOAT, &[]))]);
        assert_eq!(
            f.to_string(),
            "(x: TensorSpec(FLOAT, [2, 3]), n: Literal(3); captures: v: TensorSpec(FLOAT, []))"
        );
        assert_eq!(ParamKind::Map.to_string(), "map");
        assert_eq!(
            Parameter::new("x", ParamKind::Tensor).to_string(),
            "x: tensor"
        );
        let p = Parameter::new("x", ParamKind::Tensor)
            .optional()
            .with_constraint(t(DType::FLOAT, &[1]));
        assert_eq!(p.to_string(), "x: TensorSpec(FLOAT, [1]) = <default>");
    }

    #[test]
    fn lattice() {
        let a = ft(t(DType::FLOAT, &[2]), lit(1));
        let b = ft(t(DType::FLOAT, &[3]), lit(1));
        let j = a.most_specific_common_supertype(&[&b]).unwrap();
        assert_eq!(j, ft(t(DType::FLOAT, &[-1]), lit(1)));
        assert!(a.is_subtype_of(&j) && b.is_subtype_of(&j) && !j.is_subtype_of(&a));
        assert!(a
            .most_specific_common_supertype(&[&ft(t(DType::FLOAT, &[2]), lit(2))])
            .is_none());
        // unconstrained is the top
        let top = FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor),
            Parameter::new("n", ParamKind::Java),
        ]);
        assert!(a.is_subtype_of(&top) && !top.is_subtype_of(&a));
        // different parameter lists never relate
        let renamed = FunctionType::new(vec![
            Parameter::new("y", ParamKind::Tensor),
            Parameter::new("n", ParamKind::Java),
        ]);
        assert!(!a.is_subtype_of(&renamed) && !a.same_signature(&renamed));
        assert!(a.same_signature(&b));
        // captures are part of the type
        let ca = a
            .clone()
            .with_captures(vec![("v".into(), t(DType::FLOAT, &[2]))]);
        let cb = a
            .clone()
            .with_captures(vec![("v".into(), t(DType::FLOAT, &[-1]))]);
        assert!(ca.is_subtype_of(&cb) && !cb.is_subtype_of(&ca) && !ca.is_subtype_of(&a));
        assert_eq!(a.parameter("n").unwrap().kind, ParamKind::Java);
        assert!(a.parameter("zz").is_none());
    }

    #[test]
    fn constraints_and_specialization() {
        let floats = TypeRef::new(TensorConstraint::new(
            DTypeSet::floating(),
            Some(Shape::of(&[-1])),
        ));
        let declared = FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(floats),
            Parameter::new("n", ParamKind::Java).optional(),
        ]);
        let call = FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(t(DType::FLOAT, &[5])),
            Parameter::new("n", ParamKind::Java).optional(),
        ]);
        assert_eq!(check_constraints(&call, &declared), Ok(()));
        let spec = call.specialize_for_trace(&declared);
        assert_eq!(
            spec.parameters[0].type_constraint,
            Some(t(DType::FLOAT, &[-1]))
        );
        let bad = FunctionType::new(vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(t(DType::INT32, &[2])),
            Parameter::new("n", ParamKind::Java)
                .optional()
                .with_constraint(lit(1)),
        ]);
        let e = check_constraints(&bad, &declared).unwrap_err();
        assert_eq!(e.to_string(), "argument 'x': expected TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1]), got TensorSpec(INT32, [2])");
        let missing = FunctionType::new(vec![Parameter::new("n", ParamKind::Java)
            .optional()
            .with_constraint(lit(1))]);
        assert!(
            matches!(check_constraints(&missing, &declared), Err(BindError::Missing { param, .. }) if param == "x")
        );
        let extra = FunctionType::new(vec![
            Parameter::new("z", ParamKind::Java).with_constraint(lit(1))
        ]);
        assert!(matches!(
            check_constraints(&extra, &declared),
            Err(BindError::Unexpected { .. })
        ));
    }
}

#[cfg(test)]
#[path = "function_type_tests.rs"]
mod capture_tests;
