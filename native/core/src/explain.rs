//! [`explain_retrace`]: a one-line reason why a call missed every traced signature, for
//! retracing warnings ("x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0").

use crate::{FunctionType, TraceType};

/// Why `call` matched none of `cached`: the first mismatching parameter of the closest cached
/// signature (fewest mismatching parameters; ties go to the earliest), as `"<name>: <why>"`.
/// Types may summarize all traced values of the parameter (literals: `"n: new value 3 (traced: 1, 2)"`).
/// Returns `"first call"` when nothing is cached.
pub fn explain_retrace(call: &FunctionType, cached: &[&FunctionType]) -> String {
    let Some(closest) = cached
        .iter()
        .copied()
        .min_by_key(|c| mismatch_count(call, c))
    else {
        return "first call".to_string();
    };
    if !call.same_signature(closest) {
        return format!("parameters {call} differ from traced {closest}");
    }
    let peers: Vec<&FunctionType> = cached
        .iter()
        .copied()
        .filter(|c| c.same_signature(call))
        .collect();
    for (i, p) in call.parameters.iter().enumerate() {
        let (Some(ct), Some(tt)) = (&p.type_constraint, &closest.parameters[i].type_constraint)
        else {
            if closest.parameters[i].type_constraint.is_some() {
                return format!("{}: no type, traced {}", p.name, closest.parameters[i]);
            }
            continue;
        };
        let all: Vec<&dyn TraceType> = peers
            .iter()
            .filter_map(|c| c.parameters[i].type_constraint.as_ref())
            .map(|t| t.as_dyn())
            .collect();
        if let Some(why) = ct.explain_mismatch_among(&**tt, &all) {
            return format!("{}: {why}", p.name);
        }
    }
    for ((name, ct), (tname, tt)) in call.captures.iter().zip(&closest.captures) {
        if name != tname {
            return format!("captures differ: {name} vs {tname}");
        }
        if let Some(why) = ct.explain_mismatch(&**tt) {
            return format!("capture {name}: {why}");
        }
    }
    if call.captures.len() != closest.captures.len() {
        return format!(
            "{} captures vs {} traced",
            call.captures.len(),
            closest.captures.len()
        );
    }
    "matches a traced signature".to_string()
}

/// Mismatching parameters and captures; a different parameter list is worse than any count.
fn mismatch_count(call: &FunctionType, cached: &FunctionType) -> usize {
    if !call.same_signature(cached) {
        return usize::MAX;
    }
    let params = call
        .parameters
        .iter()
        .zip(&cached.parameters)
        .filter(|(a, b)| match (&a.type_constraint, &b.type_constraint) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(b)) => !a.is_subtype_of(&**b),
        })
        .count();
    let captures = call
        .captures
        .iter()
        .zip(&cached.captures)
        .filter(|(a, b)| a.0 != b.0 || !a.1.is_subtype_of(&*b.1))
        .count();
    params + captures + call.captures.len().abs_diff(cached.captures.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    fn ft1(kind: ParamKind, name: &str, t: TypeRef) -> FunctionType {
        FunctionType::new(vec![Parameter::new(name, kind).with_constraint(t)])
    }

    fn x(d: DType, dims: &[i64]) -> FunctionType {
        ft1(
            ParamKind::Tensor,
            "x",
            TypeRef::new(TensorSpec::new(d, Shape::of(dims))),
        )
    }

    fn n(v: u64) -> FunctionType {
        ft1(
            ParamKind::Java,
            "n",
            TypeRef::new(Literal::new(v, v.to_string(), "java.lang.Integer")),
        )
    }

    #[test]
    fn first_call() {
        assert_eq!(explain_retrace(&x(DType::FLOAT, &[2]), &[]), "first call");
    }

    #[test]
    fn tensor_shape_and_dtype() {
        assert_eq!(
            explain_retrace(&x(DType::FLOAT, &[3]), &[&x(DType::FLOAT, &[2])]),
            "x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0"
        );
        assert_eq!(
            explain_retrace(&x(DType::INT32, &[2]), &[&x(DType::FLOAT, &[2])]),
            "x: TensorSpec(INT32, [2]) does not match TensorSpec(FLOAT, [2]): dtype INT32 vs FLOAT"
        );
    }

    #[test]
    fn literal_lists_traced_values() {
        assert_eq!(
            explain_retrace(&n(3), &[&n(1), &n(2)]),
            "n: new value 3 (traced: 1, 2)"
        );
    }

    #[test]
    fn list_length_and_map_keys() {
        let t = |d: &[i64]| TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d)));
        let xs = |k: usize| {
            ft1(
                ParamKind::List,
                "xs",
                TypeRef::new(ListType::new(vec![t(&[2]); k])),
            )
        };
        assert_eq!(
            explain_retrace(&xs(3), &[&xs(2)]),
            "xs: list of length 3 does not match list of length 2"
        );
        let m = |keys: &[&str]| {
            ft1(
                ParamKind::Map,
                "m",
                TypeRef::new(MapType::new(
                    keys.iter().map(|k| (k.to_string(), t(&[1]))).collect(),
                )),
            )
        };
        assert_eq!(
            explain_retrace(&m(&["a", "b"]), &[&m(&["a"])]),
            "m: map keys ['a', 'b'] do not match traced keys ['a']: new key 'b'"
        );
    }

    #[test]
    fn closest_signature_wins() {
        let two = |a: &[i64], v: u64| {
            let mut f = x(DType::FLOAT, a);
            f.parameters.push(n(v).parameters.remove(0));
            f
        };
        // the second cached differs only in n, the first in both: explain against the second
        let call = two(&[2], 5);
        let why = explain_retrace(&call, &[&two(&[9], 4), &two(&[2], 4)]);
        assert_eq!(why, "n: new value 5 (traced: 4)");
        let other = FunctionType::new(vec![Parameter::new("y", ParamKind::Tensor)]);
        assert!(explain_retrace(&call, &[&other]).starts_with("parameters ("));
    }
}
