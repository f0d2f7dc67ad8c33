//! Binding named call arguments to parameters, and the error type for malformed calls.

use std::collections::HashSet;

use crate::parameter::Parameter;

/// Why a call could not be bound to the function's parameters. Messages name the
/// parameter and what was expected, since they reach the Java user verbatim.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BindError {
    /// A required parameter got no argument.
    #[error("missing required argument '{param}'{}", expected_suffix(.expected))]
    Missing {
        param: String,
        expected: Option<String>,
    },
    /// Arguments whose names match no parameter (all of them, sorted).
    #[error("unexpected argument{} {}: the function's parameters are ({})",
        if .names.len() == 1 { "" } else { "s" }, quote_all(.names), .parameters.join(", "))]
    Unexpected {
        names: Vec<String>,
        parameters: Vec<String>,
    },
    /// The same argument name was passed twice.
    #[error("argument '{name}' given more than once")]
    Duplicate { name: String },
    /// An argument's type is not a subtype of its parameter's constraint (or kind).
    #[error("argument '{param}': expected {expected}, got {got}")]
    TypeMismatch {
        param: String,
        expected: String,
        got: String,
    },
    /// The facts buffer from Java is malformed (a bug on the Java side, not the user's).
    /// A shape TensorFlow cannot hold, or a dimension that is not a size; `path` names the
    /// parameter and where inside it (`xs[1]['k']`).
    #[error("{}", at_path(.path, .reason))]
    InvalidShape { path: String, reason: String },
    #[error("malformed call facts: {0}")]
    BadFacts(String),
    /// A constraint the body declares and one inferred (from examples or a profile) that admit
    /// no common type, or not comparable: neither can win.
    #[error("parameter '{param}': the declared {declared} conflicts with {inferred}")]
    Conflict { param: String, declared: String, inferred: String },
}

fn at_path(path: &str, reason: &str) -> String {
    if path.is_empty() {
        reason.to_owned()
    } else {
        format!("{path}: {reason}")
    }
}

impl BindError {
    /// The error as seen from an enclosing value: `prefix` (a parameter name, `[i]`, `['k']`)
    /// goes in front of the path of an invalid shape; malformed facts name the parameter.
    pub(crate) fn within(self, prefix: &str, parameter: bool) -> BindError {
        match self {
            BindError::InvalidShape { path, reason } => BindError::InvalidShape { path: format!("{prefix}{path}"), reason },
            BindError::BadFacts(m) if parameter => BindError::BadFacts(format!("parameter '{prefix}': {m}")),
            e => e,
        }
    }
}

fn expected_suffix(expected: &Option<String>) -> String {
    expected
        .as_ref()
        .map(|e| format!(" (expected {e})"))
        .unwrap_or_default()
}

fn quote_all(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// For each parameter, the index in `arg_names` of its argument (`None` when an optional
/// parameter was omitted). Checks, in order: duplicates, unknown names (all reported,
/// sorted), missing required parameters (the first, in parameter order).
///
/// ```
/// use polyfn_core::{bind, BindError, ParamKind, Parameter};
/// let params = [Parameter::new("x", ParamKind::Tensor), Parameter::new("n", ParamKind::Java).optional()];
/// assert_eq!(bind(&params, &["x"]).unwrap(), vec![Some(0), None]);
/// assert!(matches!(bind(&params, &["n"]), Err(BindError::Missing { .. })));
/// ```
pub fn bind(parameters: &[Parameter], arg_names: &[&str]) -> Result<Vec<Option<usize>>, BindError> {
    let mut seen = HashSet::with_capacity(arg_names.len());
    if let Some(dup) = arg_names.iter().find(|n| !seen.insert(**n)) {
        return Err(BindError::Duplicate {
            name: dup.to_string(),
        });
    }
    let mut unexpected: Vec<String> = arg_names
        .iter()
        .filter(|n| !parameters.iter().any(|p| p.name == **n))
        .map(|n| n.to_string())
        .collect();
    if !unexpected.is_empty() {
        unexpected.sort();
        return Err(BindError::Unexpected {
            names: unexpected,
            parameters: parameters.iter().map(|p| p.name.clone()).collect(),
        });
    }
    parameters
        .iter()
        .map(|p| match arg_names.iter().position(|n| *n == p.name) {
            Some(i) => Ok(Some(i)),
            None if p.optional => Ok(None),
            None => Err(BindError::Missing {
                param: p.name.clone(),
                expected: p.type_constraint.as_ref().map(|t| t.to_string()),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, DTypeSet, ParamKind, Shape, TensorConstraint, TypeRef};

    fn params() -> Vec<Parameter> {
        let floats = TensorConstraint::new(DTypeSet::of(&[DType::FLOAT]), Some(Shape::of(&[-1])));
        vec![
            Parameter::new("x", ParamKind::Tensor).with_constraint(TypeRef::new(floats)),
            Parameter::new("y", ParamKind::Java).optional(),
        ]
    }

    #[test]
    fn binds_in_parameter_order() {
        assert_eq!(
            bind(&params(), &["y", "x"]).unwrap(),
            vec![Some(1), Some(0)]
        );
        assert_eq!(bind(&params(), &["x"]).unwrap(), vec![Some(0), None]);
        assert_eq!(bind(&[], &[]).unwrap(), Vec::<Option<usize>>::new());
    }

    #[test]
    fn missing() {
        let e = bind(&params(), &["y"]).unwrap_err();
        assert_eq!(
            e,
            BindError::Missing {
                param: "x".into(),
                expected: Some("TensorSpec(FLOAT, [-1])".into())
            }
        );
        assert_eq!(
            e.to_string(),
            "missing required argument 'x' (expected TensorSpec(FLOAT, [-1]))"
        );
        let e = bind(&[Parameter::new("a", ParamKind::List)], &[]).unwrap_err();
        assert_eq!(e.to_string(), "missing required argument 'a'");
    }

    #[test]
    fn unexpected_all_sorted() {
        let e = bind(&params(), &["x", "z"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected argument 'z': the function's parameters are (x, y)"
        );
        let e = bind(&params(), &["x", "z", "w"]).unwrap_err();
        assert_eq!(
            e,
            BindError::Unexpected {
                names: vec!["w".into(), "z".into()],
                parameters: vec!["x".into(), "y".into()]
            }
        );
        assert_eq!(
            e.to_string(),
            "unexpected arguments 'w', 'z': the function's parameters are (x, y)"
        );
    }

    #[test]
    fn duplicate_and_other_messages() {
        let e = bind(&params(), &["x", "x"]).unwrap_err();
        assert_eq!(e.to_string(), "argument 'x' given more than once");
        let e = BindError::TypeMismatch {
            param: "x".into(),
            expected: "TensorSpec(FLOAT, [-1])".into(),
            got: "TensorSpec(INT32, [2])".into(),
        };
        assert_eq!(
            e.to_string(),
            "argument 'x': expected TensorSpec(FLOAT, [-1]), got TensorSpec(INT32, [2])"
        );
        assert_eq!(
            BindError::BadFacts("truncated".into()).to_string(),
            "malformed call facts: truncated"
        );
    }
}
