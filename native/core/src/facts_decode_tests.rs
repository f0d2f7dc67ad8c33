//! Decoding a call's facts: kinds, tags, tables and malformed input.

use super::*;

fn tables() -> (StringTable, LiteralTable) {
    let mut s = StringTable::new();
    s.insert(10, "b");
    s.insert(11, "a");
    let mut l = LiteralTable::new();
    l.insert(7, "3", "java.lang.Integer", Some("3".to_owned()));
    (s, l)
}

fn decode(facts: &[i64]) -> Result<TypeRef, BindError> {
    let (s, l) = tables();
    let mut pos = 0;
    let t = decode_value(facts, &mut pos, &s, &l)?;
    assert_eq!(pos, facts.len(), "consumed everything");
    Ok(t)
}

#[test]
fn all_tags() {
    assert_eq!(
        decode(&[1, 1, 2, 2, -1]).unwrap().to_string(),
        "TensorSpec(FLOAT, [2, -1])"
    );
    assert_eq!(
        decode(&[1, 3, 0]).unwrap().to_string(),
        "TensorSpec(INT32, [])"
    );
    assert_eq!(
        decode(&[1, 3, -1]).unwrap().to_string(),
        "TensorSpec(INT32, <unknown>)"
    );
    assert_eq!(
        decode(&[2, 2, 1, 1, 1, 4, 4, 7]).unwrap().to_string(),
        "List[TensorSpec(FLOAT, [4]), Literal(3)]"
    );
    assert_eq!(decode(&[2, 0]).unwrap().to_string(), "List[]");
    // entries written b-then-a come out sorted
    assert_eq!(
        decode(&[3, 2, 10, 4, 7, 11, 1, 1, 0]).unwrap().to_string(),
        "Map{'a': TensorSpec(FLOAT, []), 'b': Literal(3)}"
    );
    let lit = decode(&[4, 7]).unwrap();
    assert_eq!(
        lit.downcast_ref::<Literal>().unwrap().class_name,
        "java.lang.Integer"
    );
    // Tag 0 is not a value: an optional argument the call leaves out is its captured default.
    assert!(matches!(decode(&[0]), Err(BindError::BadFacts(_))));
}

#[test]
fn bad_facts() {
    let bad = |f: &[i64]| matches!(decode(f), Err(BindError::BadFacts(_)));
    assert!(bad(&[]));
    assert!(bad(&[9]));
    assert!(bad(&[1, 1]));
    assert!(bad(&[1, 1, 3, 2, 2]));
    assert!(bad(&[1, 1, -2]));
    assert!(bad(&[1, 1 << 40, 0]));
    assert!(bad(&[2, 1_000_000]));
    // A length longer than what remains is rejected before anything is read or allocated.
    assert_eq!(decode(&[2, 5, 2, 0, 2, 0]).unwrap_err().to_string(), "malformed call facts: bad list length 5 at position 1");
    assert!(bad(&[2, -1]));
    assert!(bad(&[3, 1, 99, 4, 7]));
    assert!(bad(&[3, 2, 10, 4, 7, 10, 4, 7]));
    assert!(bad(&[4, 8]));
    let mut deep = [2, 1].repeat(100);
    deep.extend([2, 0]);
    assert!(bad(&deep));
    assert!(decode(&[9])
        .unwrap_err()
        .to_string()
        .contains("unknown tag 9"));
}

#[test]
fn shapes_beyond_tensorflow_limits_are_errors_naming_the_parameter_and_path() {
    let (s, l) = tables();
    let params = [Parameter::new("x", ParamKind::Tensor), Parameter::new("m", ParamKind::Map)];
    let mut rank300 = vec![1, 1, 300];
    rank300.extend([1; 300]);
    let call = |x: &[i64], m: &[i64]| decode_call(&params, &[x, m].concat(), &s, &l).unwrap_err().to_string();
    assert_eq!(call(&rank300, &[3, 0]), "x: shape of rank 300 exceeds TensorFlow's limit of 254 dimensions");
    let mut rank254 = vec![1, 1, 254];
    rank254.extend([1; 254]);
    assert!(decode_call(&params, &[&rank254[..], &[3, 0]].concat(), &s, &l).is_ok(), "254 is the limit");
    let huge = [1, 1, 3, i64::MAX, i64::MAX, 4];
    assert_eq!(
        call(&[1, 1, 0], &[&[3, 1, 11, 2, 2, 1, 1, 0][..], &huge].concat()),
        "m['a'][1]: shape [9223372036854775807, 9223372036854775807, 4] has more elements than fit in a 64-bit count"
    );
    assert_eq!(
        call(&[1, 1, 2, 3, -4], &[3, 0]),
        "x: shape [3, -4] has dimension -4 at index 1; a dimension is a size >= 0, or -1 for unknown"
    );
    // A variable's shape is checked too.
    let e = decode(&[5, 1, 2, i64::MAX, 3, 0]).unwrap_err();
    assert!(matches!(e, BindError::InvalidShape { ref path, .. } if path.is_empty()), "{e}");
    // Malformed facts name the parameter they were in.
    assert!(call(&[1, 1, 2, 3], &[]).starts_with("malformed call facts: parameter 'x': "), "{}", call(&[1, 1, 2, 3], &[]));
}

#[test]
fn nesting_is_limited_to_64_levels_in_lists_and_maps_alike() {
    let list = |levels: usize| [[2, 1].repeat(levels), vec![2, 0]].concat();
    let map = |levels: usize| [[3, 1, 10].repeat(levels), vec![3, 0]].concat();
    for nested in [list, map] {
        assert!(decode(&nested(64)).is_ok(), "64 levels below the argument are allowed");
        let e = decode(&nested(65)).unwrap_err();
        assert_eq!(e, BindError::BadFacts("nesting deeper than 64".into()));
    }
    // Mixed: the depth counts maps and lists together.
    let mixed = [[2, 1, 3, 1, 10].repeat(33), vec![2, 0]].concat();
    assert!(matches!(decode(&mixed), Err(BindError::BadFacts(_))));
}

#[test]
fn calls() {
    let (s, l) = tables();
    let params = [
        Parameter::new("x", ParamKind::Tensor),
        Parameter::new("xs", ParamKind::List),
        Parameter::new("n", ParamKind::Java).optional(),
    ];
    let call = decode_call(&params, &[1, 1, 1, 2, 2, 0, 4, 7], &s, &l).unwrap();
    assert_eq!(
        call.to_string(),
        "(x: TensorSpec(FLOAT, [2]), xs: List[], n: Literal(3) = <default>)"
    );
    assert!(call.same_signature(&FunctionType::new(params.to_vec())));
    let e = decode_call(&params, &[1, 1, 1, 2, 3, 0, 4, 7], &s, &l).unwrap_err();
    assert_eq!(
        e,
        BindError::TypeMismatch {
            param: "xs".into(),
            expected: "a list".into(),
            got: "Map{}".into()
        }
    );
    let e = decode_call(&params, &[4, 7, 2, 0, 4, 7], &s, &l).unwrap_err();
    assert!(matches!(e, BindError::TypeMismatch { ref param, .. } if param == "x"), "{e}");
    assert!(matches!(
        decode_call(&params, &[1, 1, 1, 2, 2, 0], &s, &l),
        Err(BindError::BadFacts(_))
    ));
    assert!(matches!(
        decode_call(&params, &[1, 1, 1, 2, 2, 0, 4, 7, 0], &s, &l),
        Err(BindError::BadFacts(_))
    ));
}
