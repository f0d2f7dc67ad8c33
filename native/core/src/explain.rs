//! [`explain_retrace`]: a one-line reason why a call missed every traced signature, for
//! retracing warnings ("x: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0").

use std::fmt;

use crate::function_type::FunctionType;
use crate::trace_type::TraceType;

/// Why a call retraced: which parameter (or capture) differed, where inside it, and how.
///
/// Displays as one line, `"<parameter>: <reason>"` (`"capture <name>: <reason>"` for a capture,
/// just the reason when no one parameter is to blame, as for the first call).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetraceReason {
    /// The parameter or capture whose type differed; empty when the cause is not one of them.
    pub parameter: String,
    /// Whether `parameter` is a capture rather than a parameter.
    pub capture: bool,
    /// The innermost known place of the difference (`xs[1]['k']`), else `parameter`.
    pub path: String,
    /// How it differed, without the parameter name.
    pub reason: String,
}

impl RetraceReason {
    /// A reason that blames no single parameter (first call, a different parameter list).
    pub fn general(reason: impl Into<String>) -> Self {
        RetraceReason { parameter: String::new(), capture: false, path: String::new(), reason: reason.into() }
    }

    fn of(parameter: &str, capture: bool, path_suffix: String, reason: String) -> Self {
        // The path already says where: keep only the innermost difference, so a nested reason
        // reads `xs[1]['k']: TensorSpec(...) does not match ...`.
        let reason = if path_suffix.is_empty() { reason } else { innermost(&reason, &path_suffix).to_owned() };
        RetraceReason { parameter: parameter.to_owned(), capture, path: format!("{parameter}{path_suffix}"), reason }
    }
}

/// `reason` without the "element 1: ", "key 'k': " and "component 'c': " steps that lists, maps
/// and records put before their element's reason, one per step of `path` (which names them).
fn innermost<'a>(reason: &'a str, path: &str) -> &'a str {
    let steps = path.matches(['[', '.']).count();
    let mut rest = reason;
    for _ in 0..steps {
        let step = ["element ", "key '", "component '"].iter().find(|p| rest.starts_with(**p));
        let Some(step) = step else { break };
        let end = if *step == "element " {
            rest.find(": ")
        } else {
            rest[step.len()..].find("': ").map(|i| i + step.len() + 1)
        };
        match end {
            Some(i) => rest = &rest[i + 2..],
            None => break,
        }
    }
    rest
}

impl fmt::Display for RetraceReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.parameter.is_empty(), self.capture) {
            (true, _) => f.write_str(&self.reason),
            (false, false) => write!(f, "{}: {}", self.path, self.reason),
            (false, true) => write!(f, "capture {}: {}", self.parameter, self.reason),
        }
    }
}

/// Compares the one-line text.
impl PartialEq<str> for RetraceReason {
    fn eq(&self, other: &str) -> bool {
        self.to_string() == other
    }
}

impl PartialEq<&str> for RetraceReason {
    fn eq(&self, other: &&str) -> bool {
        self.to_string() == *other
    }
}

/// Why `call` matched none of `cached`: the first mismatching parameter of the closest cached
/// signature (fewest mismatching parameters; ties go to the earliest). Callers pass a bounded set
/// in insertion order ([`DispatchTable::explain_candidates`](crate::DispatchTable::explain_candidates)),
/// so explaining a miss does not cost a scan of the whole cache.
/// Types may summarize all traced values of the parameter (literals: `"n: new value 3 (traced: 1, 2)"`).
/// Returns `"first call"` when nothing is cached.
pub fn explain_retrace(call: &FunctionType, cached: &[&FunctionType]) -> RetraceReason {
    let Some(closest) = cached
        .iter()
        .copied()
        .min_by_key(|c| mismatch_count(call, c))
    else {
        return RetraceReason::general("first call");
    };
    if !call.same_signature(closest) {
        return RetraceReason::general(format!("parameters {call} differ from traced {closest}"));
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
                return RetraceReason::of(
                    &p.name,
                    false,
                    String::new(),
                    format!("no type, traced {}", closest.parameters[i]),
                );
            }
            continue;
        };
        let all: Vec<&dyn TraceType> = peers
            .iter()
            .filter_map(|c| c.parameters[i].type_constraint.as_ref())
            .map(|t| t.as_dyn())
            .collect();
        if let Some(why) = ct.explain_mismatch_among(&**tt, &all) {
            return RetraceReason::of(&p.name, false, ct.mismatch_path(&**tt), why);
        }
    }
    for ((name, ct), (tname, tt)) in call.captures.iter().zip(&closest.captures) {
        if name != tname {
            return RetraceReason::general(format!("captures differ: {name} vs {tname}"));
        }
        if let Some(why) = ct.explain_mismatch(&**tt) {
            return RetraceReason::of(name, true, ct.mismatch_path(&**tt), why);
        }
    }
    if call.captures.len() != closest.captures.len() {
        return RetraceReason::general(format!(
            "{} captures vs {} traced",
            call.captures.len(),
            closest.captures.len()
        ));
    }
    RetraceReason::general("matches a traced signature")
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
    fn the_reason_names_the_parameter_and_the_innermost_path() {
        let t = |d: &[i64]| TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d)));
        let m = |d: &[i64]| TypeRef::new(MapType::new([("k".to_string(), t(d))].into_iter().collect()));
        let xs = |d: &[i64]| ft1(ParamKind::List, "xs", TypeRef::new(ListType::new(vec![m(&[1]), m(d)])));
        let why = explain_retrace(&xs(&[3]), &[&xs(&[2])]);
        assert_eq!((why.parameter.as_str(), why.capture, why.path.as_str()), ("xs", false, "xs[1]['k']"));
        assert_eq!(
            why.to_string(),
            "xs[1]['k']: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0"
        );
        let r = |fs: Vec<(&str, TypeRef)>| TypeRef::new(RecordType::new("a.Batch", fs.into_iter().map(|(n, t)| (n.to_string(), t)).collect()));
        let b = |d: &[i64]| ft1(ParamKind::Nest, "b", r(vec![("f", t(&[1])), ("xs", TypeRef::new(ListType::new(vec![m(d)])))]));
        assert_eq!(
            explain_retrace(&b(&[3]), &[&b(&[2])]).to_string(),
            "b.xs[0]['k']: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0"
        );
        // A whole-value difference has the parameter as its path; the first call blames no one.
        let why = explain_retrace(&x(DType::INT32, &[2]), &[&x(DType::FLOAT, &[2])]);
        assert_eq!((why.parameter.as_str(), why.path.as_str()), ("x", "x"));
        let first = explain_retrace(&x(DType::FLOAT, &[2]), &[]);
        assert_eq!((first.parameter.as_str(), first.path.as_str(), first.reason.as_str()), ("", "", "first call"));
    }

    #[test]
    fn a_capture_retrace_names_the_capture_not_the_text_before_a_colon() {
        let w = |d: &[i64]| {
            FunctionType::new(vec![])
                .with_captures(vec![("w".into(), TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d))))])
        };
        let why = explain_retrace(&w(&[3]), &[&w(&[2])]);
        assert_eq!((why.parameter.as_str(), why.capture, why.path.as_str()), ("w", true, "w"));
        assert_eq!(why.to_string(), "capture w: TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0");
    }

    #[test]
    fn captures_count_in_the_closest_signature_and_explain_themselves() {
        let t = |d: &[i64]| TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d)));
        let f = |x: &[i64], w: &[i64], v: &[i64]| {
            x_dims(x).with_captures(vec![("w".into(), t(w)), ("v".into(), t(v))])
        };
        fn x_dims(d: &[i64]) -> FunctionType {
            x(DType::FLOAT, d)
        }
        let call = f(&[1], &[1], &[1]);
        // Two mismatching captures weigh more than one mismatching parameter.
        let why = explain_retrace(&call, &[&f(&[1], &[2], &[2]), &f(&[9], &[1], &[1])]);
        assert_eq!(why, "x: TensorSpec(FLOAT, [1]) does not match TensorSpec(FLOAT, [9]) at dim 0");
        let why = explain_retrace(&call, &[&f(&[9], &[1], &[1]), &f(&[1], &[1], &[2])]);
        assert_eq!(why.to_string(), "x: TensorSpec(FLOAT, [1]) does not match TensorSpec(FLOAT, [9]) at dim 0");
        let renamed = x_dims(&[1]).with_captures(vec![("z".into(), t(&[1])), ("v".into(), t(&[1]))]);
        assert_eq!(explain_retrace(&call, &[&renamed]), "captures differ: w vs z");
        let fewer = x_dims(&[1]).with_captures(vec![("w".into(), t(&[1]))]);
        assert_eq!(explain_retrace(&call, &[&fewer]), "2 captures vs 1 traced");
        assert_eq!(explain_retrace(&call, &[&call]), "matches a traced signature");
        // The text comparisons compare the whole line.
        let why = explain_retrace(&call, &[&fewer]);
        assert!(why == *"2 captures vs 1 traced" && why != *"2 captures" && why != "1 captures vs 1 traced");
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
        assert!(explain_retrace(&call, &[&other]).to_string().starts_with("parameters ("));
    }

    #[test]
    fn a_list_elements_reason_drops_its_element_step_as_the_path_names_it() {
        let t = |d: &[i64]| TypeRef::new(TensorSpec::new(DType::FLOAT, Shape::of(d)));
        let xs = |d: &[i64]| ft1(ParamKind::List, "xs", TypeRef::new(ListType::new(vec![t(&[1]), t(d)])));
        let why = explain_retrace(&xs(&[3]), &[&xs(&[2])]);
        assert_eq!(why.path, "xs[1]");
        assert_eq!(why.reason, "TensorSpec(FLOAT, [3]) does not match TensorSpec(FLOAT, [2]) at dim 0");
    }
}
