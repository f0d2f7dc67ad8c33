//! Inferred constraints through the polymorphic function's protocol: examples coalesce, the
//! trace is generic, later calls hit, and errors say where the constraint came from.

use super::tests::{constraint, spec, tensor_facts, trace, Fn};
use crate::infer::Provenance;
use crate::DType;

#[test]
fn three_examples_trace_once_and_every_batch_size_hits() {
    let f = Fn::new("f");
    let examples = [spec(DType::FLOAT, &[2, 3]), spec(DType::FLOAT, &[5, 3]), spec(DType::FLOAT, &[1, 3])];
    let note = f.infer_parameter("x", &examples, Provenance::Examples(3)).unwrap();
    assert_eq!(note, "x: TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples)");
    let declared = constraint(&[DType::FLOAT], None);
    let effective = f.effective_constraint("x", declared).unwrap();
    trace(&f, examples[0].clone(), effective).unwrap();
    for n in [1, 7, 50] {
        let c = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[n, 3])).unwrap().unwrap();
        assert_eq!(c.inner, "(x: TensorSpec(FLOAT, [-1, 3]))");
    }
    assert_eq!(f.trace_count(), 1);
    assert_eq!(f.provenance("x"), Provenance::Examples(3));
    let e = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[2, 4])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "argument 'x': expected TensorSpec(FLOAT, [-1, 3]) (inferred from 3 examples), got TensorSpec(FLOAT, [2, 4])"
    );
}

#[test]
fn a_conflicting_declaration_is_an_error_and_an_uninferred_parameter_keeps_its_declaration() {
    let f = Fn::new("f");
    f.infer_parameter("x", &[spec(DType::FLOAT, &[2]), spec(DType::FLOAT, &[3])], Provenance::Profile(10));
    let e = f.effective_constraint("x", constraint(&[DType::INT32], None)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "parameter 'x': the declared TensorSpec(INT32, *) conflicts with TensorSpec(FLOAT, [-1]) (inferred from a profile of 10 calls)"
    );
    let y = constraint(&[DType::INT32], None);
    assert_eq!(f.effective_constraint("y", y.clone()).unwrap(), y);
    assert_eq!(f.provenance("y"), Provenance::Declared);
}

#[test]
fn calls_are_recorded_per_call_type_and_suggest_the_generic_signature() {
    let f = Fn::new("f");
    trace(&f, spec(DType::FLOAT, &[2, 3]), constraint(&[DType::FLOAT], None)).unwrap();
    for n in 2..5 {
        if f.lookup::<String>(&tensor_facts(DType::FLOAT, &[n, 3])).unwrap().is_none() {
            trace(&f, spec(DType::FLOAT, &[n, 3]), constraint(&[DType::FLOAT], None)).unwrap();
        }
        for _ in 0..n {
            f.lookup::<String>(&tensor_facts(DType::FLOAT, &[n, 3])).unwrap().unwrap();
        }
    }
    let calls = f.recorded_calls();
    let counts: Vec<(String, u64)> = calls.iter().map(|(t, n)| (t.to_string(), *n)).collect();
    assert_eq!(
        counts,
        vec![
            ("(x: TensorSpec(FLOAT, [4, 3]))".to_string(), 4),
            // The lookup that found the first trace counts; a lookup that missed does not (the
            // trace it begins counts it, when it has the call's facts).
            ("(x: TensorSpec(FLOAT, [2, 3]))".to_string(), 3),
            ("(x: TensorSpec(FLOAT, [3, 3]))".to_string(), 3),
        ]
    );
    let s = f.suggested_signature().unwrap();
    assert_eq!((s.calls, s.traces_before, s.traces_after), (10, 3, 1));
    assert_eq!(s.java, vec!["Operand<TFloat32> x = in.input(\"x\", TFloat32.class, Shape.of(-1, 3));"]);
    assert!(f.profile_json().contains("{\"count\": 4, \"parameters\": {\"x\": {\"dtype\": \"FLOAT\", \"shape\": [4, 3]}}}"));
}

#[test]
fn a_retrace_under_an_inferred_constraint_names_it_and_a_narrower_declaration_keeps_its_own_name() {
    let f = Fn::new("f");
    f.infer_parameter("x", &[spec(DType::FLOAT, &[2]), spec(DType::DOUBLE, &[3])], Provenance::Examples(2));
    let effective = f.effective_constraint("x", constraint(&[DType::FLOAT, DType::DOUBLE, DType::HALF], None)).unwrap();
    trace(&f, spec(DType::FLOAT, &[2]), effective).unwrap();
    let call = tensor_facts(DType::HALF, &[4]);
    assert!(f.lookup::<String>(&call).unwrap().is_none());
    let s = f.begin_trace::<String>(vec!["x".into()], Some(&call), true).unwrap();
    assert!(
        s.reason().ends_with("; x is constrained to TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1]) (inferred from 2 examples)"),
        "{}",
        s.reason()
    );
    // A declaration narrower in every part is the constraint: errors call it declared.
    let g = Fn::new("g");
    g.infer_parameter("x", &[spec(DType::FLOAT, &[2]), spec(DType::FLOAT, &[3])], Provenance::Examples(2));
    let narrow = constraint(&[DType::FLOAT], Some(crate::Shape::of(&[2])));
    assert_eq!(g.effective_constraint("x", narrow.clone()).unwrap(), narrow);
    assert_eq!(g.provenance("x"), Provenance::Declared);
    trace(&g, spec(DType::FLOAT, &[2]), narrow).unwrap();
    let e = g.lookup::<String>(&tensor_facts(DType::FLOAT, &[3])).unwrap_err();
    assert_eq!(e.to_string(), "argument 'x': expected TensorSpec(FLOAT, [2]), got TensorSpec(FLOAT, [3])");
}

#[test]
fn a_list_inferred_position_by_position_traces_once_and_keeps_fixed_positions_fixed() {
    use crate::{ListConstraint, ListType, ParamKind, TypeRef, TAG_LIST};
    let f = Fn::new("f");
    let list = |a: &[i64], b: &[i64]| TypeRef::new(ListType::new(vec![spec(DType::FLOAT, a), spec(DType::FLOAT, b)]));
    let facts = |a: &[i64], b: &[i64]| {
        let mut v = vec![TAG_LIST, 2];
        v.extend(tensor_facts(DType::FLOAT, a));
        v.extend(tensor_facts(DType::FLOAT, b));
        v
    };
    let examples = [list(&[2, 3], &[7]), list(&[5, 3], &[7])];
    let note = f.infer_parameter("xs", &examples, Provenance::Examples(2)).unwrap();
    assert_eq!(note, "xs: List[TensorSpec(FLOAT, [-1, 3]), TensorSpec(FLOAT, [7])] (inferred from 2 examples)");
    let declared = TypeRef::new(ListConstraint::new(Some(constraint(&[DType::FLOAT], None)), None));
    let effective = f.effective_constraint("xs", declared).unwrap();
    let mut s = f.begin_trace::<String>(vec!["xs".into()], None, true).unwrap();
    s.declare::<String>("xs", ParamKind::List, false, effective, Some(examples[0].clone())).unwrap();
    f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    for n in [1, 9, 40] {
        let c = f.lookup::<String>(&facts(&[n, 3], &[7])).unwrap().unwrap();
        assert_eq!(c.inner, "(xs: List[TensorSpec(FLOAT, [-1, 3]), TensorSpec(FLOAT, [7])])");
    }
    assert_eq!(f.trace_count(), 1);
    // The second position was the same in every example: another size there is an error that
    // says where the constraint came from.
    let e = f.lookup::<String>(&facts(&[2, 3], &[8])).unwrap_err();
    assert!(e.to_string().contains("(inferred from 2 examples)"), "{e}");
}

#[test]
fn lists_of_two_lengths_trace_once_per_length() {
    use crate::{ListConstraint, ListType, ParamKind, TypeRef, TAG_LIST};
    let f = Fn::new("f");
    let list = |dims: &[&[i64]]| TypeRef::new(ListType::new(dims.iter().map(|d| spec(DType::FLOAT, d)).collect()));
    let facts = |dims: &[&[i64]]| {
        let mut v = vec![TAG_LIST, dims.len() as i64];
        for d in dims {
            v.extend(tensor_facts(DType::FLOAT, d));
        }
        v
    };
    let examples = [list(&[&[2]]), list(&[&[3]]), list(&[&[2], &[4]]), list(&[&[2], &[6]])];
    let note = f.infer_parameter("xs", &examples, Provenance::Examples(4)).unwrap();
    assert_eq!(note, "xs: lists of lengths 1, 2 are traced one per length (pass one stacked tensor to share a trace)");
    let declared = TypeRef::new(ListConstraint::new(Some(constraint(&[DType::FLOAT], None)), None));
    let trace_list = |value: TypeRef| {
        let effective = f.effective_constraint("xs", declared.clone()).unwrap();
        let mut s = f.begin_trace::<String>(vec!["xs".into()], None, true).unwrap();
        s.declare::<String>("xs", ParamKind::List, false, effective, Some(value)).unwrap();
        f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap().inner.clone()
    };
    // What the Java side does at definition: trace the first example, then each one not served.
    assert_eq!(trace_list(examples[0].clone()), "(xs: List[TensorSpec(FLOAT, [-1])])");
    assert!(f.find::<String>(&facts(&[&[3]])).unwrap().is_some());
    assert!(f.find::<String>(&facts(&[&[2], &[4]])).unwrap().is_none());
    assert!(f.example_served(&facts(&[&[3]])).unwrap());
    assert!(!f.example_served(&facts(&[&[2], &[4]])).unwrap(), "another length needs its own trace");
    assert_eq!(trace_list(examples[2].clone()), "(xs: List[TensorSpec(FLOAT, [2]), TensorSpec(FLOAT, [-1])])");
    assert_eq!(f.trace_count(), 2);
    // Every call of either length that fits its structure hits; one that does not traces as usual.
    assert!(f.lookup::<String>(&facts(&[&[40]])).unwrap().is_some());
    assert!(f.lookup::<String>(&facts(&[&[2], &[9]])).unwrap().is_some());
    assert!(f.lookup::<String>(&facts(&[&[3], &[9]])).unwrap().is_none());
}

/// What the Java side does at definition with examples and a declaration: trace the first
/// example narrowed to the declaration, then each example no trace serves.
fn trace_example(f: &Fn, declared: crate::TypeRef, value: crate::TypeRef) -> Result<String, super::PolyError<String>> {
    let effective = f.effective_constraint("x", declared)?;
    let value = f.example_argument("x", &effective, Some(value));
    let mut s = f.begin_trace::<String>(vec!["x".into()], None, false)?;
    s.declare::<String>("x", crate::ParamKind::Tensor, false, effective, value)?;
    Ok(f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string()))?.inner.clone())
}

#[test]
fn a_declared_shape_narrower_than_the_example_spec_wins() {
    let f = Fn::new("f");
    f.infer_parameter("x", &[spec(DType::FLOAT, &[-1, 3])], Provenance::Examples(1));
    let declared = constraint(&[DType::FLOAT], Some(crate::Shape::of(&[4, 3])));
    assert_eq!(trace_example(&f, declared.clone(), spec(DType::FLOAT, &[-1, 3])).unwrap(), "(x: TensorSpec(FLOAT, [4, 3]))");
    assert_eq!(f.provenance("x"), Provenance::Declared, "the declaration won in every part");
    assert_eq!(
        f.inference_notes(),
        vec!["x: TensorSpec(FLOAT, [4, 3]) (declared TensorSpec(FLOAT, [4, 3]) narrowing TensorSpec(FLOAT, [-1, 3]) inferred from 1 example)"]
    );
    // The example, narrowed, is served by that trace.
    assert!(f.example_served(&tensor_facts(DType::FLOAT, &[-1, 3])).unwrap());
    assert!(f.lookup::<String>(&tensor_facts(DType::FLOAT, &[4, 3])).unwrap().is_some());
    let e = f.lookup::<String>(&tensor_facts(DType::FLOAT, &[5, 3])).unwrap_err();
    assert_eq!(e.to_string(), "argument 'x': expected TensorSpec(FLOAT, [4, 3]), got TensorSpec(FLOAT, [5, 3])");
}

#[test]
fn the_declared_dtype_wins_and_an_example_outside_it_is_left_out() {
    let f = Fn::new("f");
    let examples = [spec(DType::DOUBLE, &[2, 3]), spec(DType::FLOAT, &[5, 3]), spec(DType::DOUBLE, &[2, 3])];
    assert!(!f.example_served(&tensor_facts(DType::FLOAT, &[5, 3])).unwrap(), "nothing is served before the first trace");
    f.infer_parameter("x", &examples, Provenance::Examples(3));
    // The first example is a DOUBLE: the trace takes the first example the declaration admits.
    assert_eq!(trace_example(&f, constraint(&[DType::FLOAT], None), examples[0].clone()).unwrap(), "(x: TensorSpec(FLOAT, [-1, 3]))");
    assert_eq!(f.provenance("x"), Provenance::Examples(3));
    assert_eq!(
        f.inference_notes(),
        vec![
            "x: TensorSpec(FLOAT, [-1, 3]) (declared TensorSpec(FLOAT, *) narrowing TensorSpec({FLOAT, DOUBLE, BFLOAT16, HALF}, [-1, 3]) inferred from 3 examples)",
            "x: TensorSpec(DOUBLE, [2, 3]) of the examples is outside the declared TensorSpec(FLOAT, *) and not traced",
        ]
    );
    assert!(f.example_served(&tensor_facts(DType::DOUBLE, &[2, 3])).unwrap(), "left out: nothing to trace");
    assert!(f.example_served(&tensor_facts(DType::FLOAT, &[7, 3])).unwrap(), "served by the trace");
    assert!(f.example_served(&tensor_facts(DType::FLOAT, &[7, 4])).unwrap(), "outside the merged [-1, 3]");
    assert_eq!(f.trace_count(), 1);
    // Merged once: a later trace does not add the notes again.
    f.effective_constraint("x", constraint(&[DType::FLOAT], None)).unwrap();
    assert_eq!(f.inference_notes().len(), 2);
}

#[test]
fn a_profile_outside_the_declaration_says_so_per_call_type() {
    let f = Fn::new("f");
    let calls = [spec(DType::FLOAT, &[2]), spec(DType::HALF, &[3]), spec(DType::DOUBLE, &[3])];
    f.infer_parameter("x", &calls, Provenance::Profile(30));
    f.effective_constraint("x", constraint(&[DType::FLOAT], None)).unwrap();
    assert_eq!(
        f.inference_notes()[1],
        "x: TensorSpec(HALF, [3]), TensorSpec(DOUBLE, [3]) of the profile's calls are outside the declared TensorSpec(FLOAT, *) and not traced"
    );
}

#[test]
fn a_declaration_that_no_example_fits_is_a_conflict_naming_the_examples() {
    let f = Fn::new("f");
    let examples = [spec(DType::FLOAT, &[5, 3]), spec(DType::FLOAT, &[6, 3]), spec(DType::FLOAT, &[5, 3])];
    f.infer_parameter("x", &examples, Provenance::Examples(3));
    let declared = constraint(&[DType::FLOAT], Some(crate::Shape::of(&[4, 3])));
    let e = f.effective_constraint("x", declared).unwrap_err();
    assert_eq!(
        e.to_string(),
        "parameter 'x': the declared TensorSpec(FLOAT, [4, 3]) conflicts with every example: TensorSpec(FLOAT, [5, 3]), TensorSpec(FLOAT, [6, 3])"
    );
    // An argument no example fits is kept (the trace then fails as for any call).
    let c = constraint(&[DType::FLOAT], Some(crate::Shape::of(&[4, 3])));
    assert_eq!(f.example_argument("x", &c, Some(spec(DType::FLOAT, &[5, 3]))), Some(spec(DType::FLOAT, &[5, 3])));
    assert_eq!(f.example_argument("y", &c, None), None);
}

#[test]
fn a_retrace_about_a_capture_never_names_the_inferred_constraint_of_a_parameter_of_its_name() {
    let f = Fn::new("f");
    f.infer_parameter("x", &[spec(DType::FLOAT, &[2]), spec(DType::FLOAT, &[3])], Provenance::Examples(2));
    f.effective_constraint("x", constraint(&[DType::FLOAT], None)).unwrap();
    let why = |capture| crate::RetraceReason { parameter: "x".into(), capture, path: "x".into(), reason: "dtype differs".into() };
    let st = f.state.lock();
    let text = st.inferred.explain(&why(true));
    assert_eq!(text, why(true).to_string());
    assert!(!text.contains("inferred"), "{text}");
    let text = st.inferred.explain(&why(false));
    assert!(text.ends_with("; x is constrained to TensorSpec(FLOAT, [-1]) (inferred from 2 examples)"), "{text}");
}

#[test]
fn calls_that_differ_only_in_captures_are_one_recorded_signature_with_their_counts_summed() {
    use crate::{DTypeSet, ParamKind, TypeRef, VariableConstraint, TAG_VARIABLE};
    let f = Fn::new("f");
    let captured = |d: DType| vec![TAG_VARIABLE, d.0 as i64, 0, 0];
    for d in [DType::FLOAT, DType::DOUBLE] {
        let mut s = f.begin_trace::<String>(vec!["x".into()], None, true).unwrap();
        s.declare::<String>("x", ParamKind::Tensor, false, constraint(&[DType::FLOAT], None), Some(spec(DType::FLOAT, &[2])))
            .unwrap();
        let w = f.decode_value(&captured(d)).unwrap();
        s.declare_capture::<String>("w", TypeRef::new(VariableConstraint::new(DTypeSet::any())), w).unwrap();
        f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    }
    for (d, n) in [(DType::FLOAT, 3), (DType::DOUBLE, 2)] {
        let facts = [tensor_facts(DType::FLOAT, &[2]), captured(d)].concat();
        for _ in 0..n {
            assert!(f.lookup::<String>(&facts).unwrap().is_some());
        }
    }
    let calls: Vec<(String, u64)> = f.recorded_calls().iter().map(|(t, n)| (t.to_string(), *n)).collect();
    assert_eq!(calls, vec![("(x: TensorSpec(FLOAT, [2]))".to_string(), 5)]);
}
