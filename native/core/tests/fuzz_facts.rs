//! Fuzzing what crosses the JNI boundary: the facts buffers Java writes for each call, decoded
//! by `decode_value`, `decode_call`, `decode_call_with_captures` and a polymorphic function's
//! `lookup`/`find`/`begin_trace`. Whatever the bytes, the answer is `Ok` or `Err` (a panic would
//! unwind into the JVM), quickly, and well-formed facts decode to exactly the value encoded.
//!
//! Inputs: arbitrary `i64` vectors, valid encodings with random edits (lengths, tags, dims,
//! ranks, truncation, insertion), and deep nests of lists and maps.
//!
//! `cargo test` runs a bounded number of cases (a few seconds). For a long run:
//! `PROPTEST_CASES=100000 cargo test -p polyfn-core --release --test fuzz_facts`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use polyfn_core::*;
use proptest::prelude::*;
use proptest::sample::Index;

/// Cases per property: `PROPTEST_CASES` when set, else a count that keeps `cargo test` fast.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

/// Any single decode of a buffer this small must be far below this (it is microseconds); the
/// bound catches work or allocation that grows with a length field rather than the buffer.
const SLOW: Duration = Duration::from_secs(2);

const STRING_IDS: i64 = 4;
const LITERAL_IDS: i64 = 4;

fn tables() -> (StringTable, LiteralTable) {
    let mut s = StringTable::new();
    let mut l = LiteralTable::new();
    for id in 0..STRING_IDS {
        s.insert(id, format!("k{id}"));
    }
    for id in 0..LITERAL_IDS {
        l.insert(id, id.to_string(), "java.lang.Integer", Some(id.to_string()));
    }
    l.insert(-7, "neg", "java.lang.Long", None);
    (s, l)
}

/// A value as the Java side would describe it.
#[derive(Clone, Debug)]
enum V {
    /// dtype, dims (`None`: unknown rank)
    Tensor(i32, Option<Vec<i64>>),
    /// dtype, dims, alias
    Var(i32, Vec<i64>, i64),
    List(Vec<V>),
    /// (string id, value), distinct ids
    Map(Vec<(i64, V)>),
    Lit(i64),
}

impl V {
    fn kind(&self) -> ParamKind {
        match self {
            V::Tensor(..) => ParamKind::Tensor,
            V::Var(..) => ParamKind::Variable,
            V::List(_) => ParamKind::List,
            V::Map(_) => ParamKind::Map,
            V::Lit(_) => ParamKind::Java,
        }
    }

    fn encode(&self, out: &mut Vec<i64>) {
        match self {
            V::Tensor(d, None) => out.extend([TAG_TENSOR, *d as i64, -1]),
            V::Tensor(d, Some(dims)) => {
                out.extend([TAG_TENSOR, *d as i64, dims.len() as i64]);
                out.extend(dims);
            }
            V::Var(d, dims, alias) => {
                out.extend([TAG_VARIABLE, *d as i64, dims.len() as i64]);
                out.extend(dims);
                out.push(*alias);
            }
            V::List(xs) => {
                out.extend([TAG_LIST, xs.len() as i64]);
                xs.iter().for_each(|x| x.encode(out));
            }
            V::Map(entries) => {
                out.extend([TAG_MAP, entries.len() as i64]);
                for (k, v) in entries {
                    out.push(*k);
                    v.encode(out);
                }
            }
            V::Lit(id) => out.extend([TAG_LITERAL, *id]),
        }
    }

    /// The type the core must decode from `encode`'s output.
    fn expected(&self) -> TypeRef {
        match self {
            V::Tensor(d, None) => TypeRef::new(TensorSpec::new(DType(*d), Shape::Unknown)),
            V::Tensor(d, Some(dims)) => TypeRef::new(TensorSpec::new(DType(*d), Shape::of(dims))),
            V::Var(d, dims, alias) => TypeRef::new(VariableSpec::new(DType(*d), Shape::of(dims), *alias as u64)),
            V::List(xs) => TypeRef::new(ListType::new(xs.iter().map(V::expected).collect())),
            V::Map(entries) => TypeRef::new(MapType::new(
                entries.iter().map(|(k, v)| (format!("k{k}"), v.expected())).collect(),
            )),
            V::Lit(id) => TypeRef::new(Literal::new(*id as u64, id.to_string(), "java.lang.Integer")),
        }
    }
}

fn encode(vs: &[V]) -> Vec<i64> {
    let mut out = Vec::new();
    vs.iter().for_each(|v| v.encode(&mut out));
    out
}

fn dims() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(prop_oneof![4 => 0i64..5, 1 => Just(-1i64), 1 => Just(1i64 << 20)], 0..4)
}

fn dtype() -> impl Strategy<Value = i32> {
    prop_oneof![4 => 1i32..24, 1 => any::<i32>()]
}

fn leaf() -> impl Strategy<Value = V> {
    prop_oneof![
        4 => (dtype(), prop::option::weighted(0.85, dims())).prop_map(|(d, s)| V::Tensor(d, s)),
        1 => (dtype(), dims(), 0i64..3).prop_map(|(d, s, a)| V::Var(d, s, a)),
        2 => (0..LITERAL_IDS).prop_map(V::Lit),
    ]
}

fn value() -> impl Strategy<Value = V> {
    leaf().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(V::List),
            prop::collection::btree_map(0..STRING_IDS, inner, 0..4)
                .prop_map(|m: BTreeMap<i64, V>| V::Map(m.into_iter().collect())),
        ]
    })
}

/// Numbers that hit the decoder's cases: tags, small lengths, -1, and extremes.
fn word() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => -2i64..8,
        2 => any::<i64>(),
        1 => prop::sample::select(vec![
            i64::MIN, i64::MAX, i64::MAX - 1, i32::MAX as i64 + 1, i32::MIN as i64 - 1,
            1 << 32, 1 << 40, u32::MAX as i64, -7,
        ]),
    ]
}

#[derive(Clone, Debug)]
enum Edit {
    Set(Index, i64),
    Insert(Index, i64),
    Remove(Index),
    Truncate(Index),
    /// A length, rank or count field made huge or negative.
    Huge(Index, i64),
    /// A slice repeated (duplicate keys, extra elements, trailing facts).
    Repeat(Index, Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    let huge = prop::sample::select(vec![i64::MAX, 1 << 40, 1 << 31, 65, 1000, -2, i64::MIN]);
    prop_oneof![
        3 => (any::<Index>(), word()).prop_map(|(i, w)| Edit::Set(i, w)),
        1 => (any::<Index>(), word()).prop_map(|(i, w)| Edit::Insert(i, w)),
        1 => any::<Index>().prop_map(Edit::Remove),
        1 => any::<Index>().prop_map(Edit::Truncate),
        2 => (any::<Index>(), huge).prop_map(|(i, w)| Edit::Huge(i, w)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::Repeat(a, b)),
    ]
}

fn apply(facts: &mut Vec<i64>, edits: &[Edit]) {
    for e in edits {
        if facts.is_empty() {
            facts.push(TAG_LIST);
            continue;
        }
        let n = facts.len();
        match e {
            Edit::Set(i, w) | Edit::Huge(i, w) => facts[i.index(n)] = *w,
            Edit::Insert(i, w) => facts.insert(i.index(n + 1), *w),
            Edit::Remove(i) => {
                facts.remove(i.index(n));
            }
            Edit::Truncate(i) => facts.truncate(i.index(n)),
            Edit::Repeat(a, b) => {
                let (a, b) = (a.index(n), b.index(n));
                let (lo, hi) = (a.min(b), a.max(b) + 1);
                let slice: Vec<i64> = facts[lo..hi].to_vec();
                facts.splice(hi..hi, slice);
            }
        }
    }
}

/// Decodes one value; a success must have consumed facts within bounds and print.
fn decode_one(facts: &[i64]) -> Result<TypeRef, BindError> {
    let (s, l) = tables();
    let mut pos = 0;
    let started = Instant::now();
    let r = decode_value(facts, &mut pos, &s, &l);
    assert!(started.elapsed() < SLOW, "decoding {} facts took {:?}", facts.len(), started.elapsed());
    match &r {
        Ok(t) => {
            assert!(pos <= facts.len());
            let _ = t.to_string();
            let _ = t.kind();
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    r
}

fn params_for(vs: &[V]) -> Vec<Parameter> {
    vs.iter().enumerate().map(|(i, v)| Parameter::new(format!("p{i}"), v.kind())).collect()
}

/// A polymorphic function traced once with one parameter of each kind and one captured variable,
/// so later facts go through the whole decode → check → dispatch path.
fn traced_function(options: Options) -> Polymorphic<String> {
    let f = Polymorphic::with_options("fuzz", options);
    let (strings, _) = tables();
    for id in 0..STRING_IDS {
        f.register_string(id, strings.get(id).unwrap());
    }
    for id in 0..LITERAL_IDS {
        f.register_literal(id, &id.to_string(), "java.lang.Integer", Some(&id.to_string()));
    }
    let values = [
        V::Tensor(1, Some(vec![2])),
        V::List(vec![V::Tensor(1, Some(vec![]))]),
        V::Map(vec![(0, V::Tensor(3, Some(vec![1])))]),
        V::Lit(1),
        V::Var(1, vec![2], 0),
    ];
    let any_dtype = || DTypeSet::any();
    let constraints = [
        TypeRef::new(TensorConstraint::new(DTypeSet::of(&[DType::FLOAT, DType::INT32]), None)),
        TypeRef::new(ListConstraint::new(None, None)),
        TypeRef::new(MapConstraint::new(Some(TypeRef::new(TensorConstraint::new(any_dtype(), None))))),
        TypeRef::new(LiteralConstraint::new("java.lang.Integer")),
        TypeRef::new(VariableConstraint::new(any_dtype())),
    ];
    let names: Vec<String> = (0..values.len()).map(|i| format!("p{i}")).collect();
    let mut s = f.begin_trace::<String>(names.clone(), None, true).unwrap();
    for (i, (v, c)) in values.iter().zip(&constraints).enumerate() {
        let t = f.decode_value(&encode(std::slice::from_ref(v))).unwrap();
        s.declare::<String>(&names[i], v.kind(), false, c.clone(), Some(t)).unwrap();
    }
    let w = f.decode_value(&encode(&[V::Var(1, vec![2], 0)])).unwrap();
    s.declare_capture::<String>("w", TypeRef::new(VariableConstraint::new(any_dtype())), w).unwrap();
    f.finish_trace(&s, vec!["y".into()], |ty, _| Ok::<_, String>(ty.to_string())).unwrap();
    f
}

/// Every entry point of a traced function on `facts`: Ok or Err, never a panic, and quick.
fn poke(f: &Polymorphic<String>, facts: &[i64]) {
    let started = Instant::now();
    let looked = f.lookup::<String>(facts);
    let found = f.find::<String>(facts);
    assert_eq!(looked.as_ref().ok().map(|c| c.as_ref().map(|c| c.id)), found.as_ref().ok().map(|c| c.as_ref().map(|c| c.id)));
    if let Err(e) = &looked {
        assert!(!e.to_string().is_empty());
    }
    let names: Vec<String> = (0..5).map(|i| format!("p{i}")).collect();
    match f.begin_trace::<String>(names, Some(facts), false) {
        Ok(s) => assert!(!s.reason().is_empty()),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    let _ = f.decode_value(facts).map(|t| t.to_string());
    assert!(started.elapsed() < SLOW * 4, "{} facts took {:?}", facts.len(), started.elapsed());
}

/// One valid argument per parameter of `traced_function` (with the capture at the end), in a
/// random but kind-correct shape.
fn valid_call() -> impl Strategy<Value = Vec<V>> {
    let tensor = (prop::sample::select(vec![1, 3, 2]), prop::option::weighted(0.9, dims())).prop_map(|(d, s)| V::Tensor(d, s));
    let list = prop::collection::vec(leaf(), 0..3).prop_map(V::List);
    let map = prop::collection::btree_map(0..STRING_IDS, (1i32..4, dims()).prop_map(|(d, s)| V::Tensor(d, Some(s))), 0..3)
        .prop_map(|m| V::Map(m.into_iter().collect()));
    let lit = (0..LITERAL_IDS).prop_map(V::Lit);
    let var = || (1i32..3, dims(), 0i64..2).prop_map(|(d, s, a)| V::Var(d, s, a));
    (tensor, list, map, lit, var(), var()).prop_map(|(a, b, c, d, e, w)| vec![a, b, c, d, e, w])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_words_never_panic(facts in prop::collection::vec(word(), 0..48)) {
        let _ = decode_one(&facts);
        let (s, l) = tables();
        for params in [
            vec![Parameter::new("x", ParamKind::Tensor)],
            vec![Parameter::new("xs", ParamKind::List), Parameter::new("m", ParamKind::Map).optional()],
            vec![Parameter::new("n", ParamKind::Java), Parameter::new("v", ParamKind::Variable), Parameter::new("x", ParamKind::Tensor)],
        ] {
            let _ = decode_call(&params, &facts, &s, &l).map(|c| c.to_string());
            let declared = FunctionType::new(params).with_captures(vec![("w".into(), TypeRef::new(VariableConstraint::new(DTypeSet::any())))]);
            let _ = decode_call_with_captures(&declared, &facts, &s, &l).map(|c| c.to_string());
        }
    }

    #[test]
    fn well_formed_facts_decode_to_exactly_the_value(v in value()) {
        let facts = encode(std::slice::from_ref(&v));
        let t = decode_one(&facts).unwrap();
        prop_assert_eq!(&t, &v.expected());
        // every strict prefix is an error, never a panic or a wrong success
        for cut in 0..facts.len() {
            let (s, l) = tables();
            let mut pos = 0;
            prop_assert!(decode_value(&facts[..cut], &mut pos, &s, &l).is_err(), "prefix {} of {:?}", cut, facts);
        }
    }

    #[test]
    fn edited_encodings_never_panic(vs in prop::collection::vec(value(), 1..4), edits in prop::collection::vec(edit(), 1..5)) {
        let mut facts = encode(&vs);
        apply(&mut facts, &edits);
        let _ = decode_one(&facts);
        let (s, l) = tables();
        let params = params_for(&vs);
        let _ = decode_call(&params, &facts, &s, &l);
        let (head, tail) = params.split_at(params.len() / 2);
        let declared = FunctionType::new(head.to_vec()).with_captures(
            tail.iter().map(|p| (p.name.clone(), TypeRef::new(ListConstraint::new(None, None)))).collect(),
        );
        let _ = decode_call_with_captures(&declared, &facts, &s, &l);
    }

    #[test]
    fn well_formed_calls_decode_and_mismatched_kinds_name_the_parameter(vs in prop::collection::vec(value(), 0..4), wrong in any::<Index>()) {
        let (s, l) = tables();
        let facts = encode(&vs);
        let params = params_for(&vs);
        let call = decode_call(&params, &facts, &s, &l).unwrap();
        for (p, v) in call.parameters.iter().zip(&vs) {
            prop_assert_eq!(p.type_constraint.as_ref(), Some(&v.expected()));
        }
        // captures after the parameters
        let (head, tail) = vs.split_at(vs.len() / 2);
        let declared = FunctionType::new(params_for(head))
            .with_captures(tail.iter().enumerate().map(|(i, _)| (format!("c{i}"), TypeRef::new(ListConstraint::new(None, None)))).collect());
        let call = decode_call_with_captures(&declared, &facts, &s, &l).unwrap();
        prop_assert_eq!(call.captures.len(), tail.len());
        for ((_, t), v) in call.captures.iter().zip(tail) {
            prop_assert_eq!(t, &v.expected());
        }
        // a parameter of another kind is a TypeMismatch naming it
        if !vs.is_empty() {
            let i = wrong.index(vs.len());
            let mut params = params.clone();
            params[i].kind = if vs[i].kind() == ParamKind::Tensor { ParamKind::List } else { ParamKind::Tensor };
            match decode_call(&params, &facts, &s, &l) {
                Err(BindError::TypeMismatch { param, .. }) => prop_assert_eq!(param, format!("p{i}")),
                other => prop_assert!(false, "expected a mismatch for p{}, got {:?}", i, other),
            }
        }
    }

    #[test]
    fn deep_nests_of_lists_and_maps_are_refused_beyond_64(levels in 0usize..200, maps in any::<u64>(), key in 0..STRING_IDS) {
        let mut facts = Vec::new();
        for i in 0..levels {
            if maps >> (i % 64) & 1 == 1 {
                facts.extend([TAG_MAP, 1, key]);
            } else {
                facts.extend([TAG_LIST, 1]);
            }
        }
        facts.extend([TAG_LITERAL, 1]);
        let r = decode_one(&facts);
        prop_assert_eq!(r.is_ok(), levels <= 64, "{} levels: {:?}", levels, r);
    }

    #[test]
    fn polymorphic_entry_points_never_panic(
        call in valid_call(), edits in prop::collection::vec(edit(), 0..4), noise in prop::collection::vec(word(), 0..24), reduce in any::<bool>()
    ) {
        let f = traced_function(Options { reduce_retracing: reduce, max_concrete_functions: Some(4) });
        let facts = encode(&call);
        // a well-formed call is found or is a miss or a constraint error, and tracing can begin
        poke(&f, &facts);
        let mut edited = facts.clone();
        apply(&mut edited, &edits);
        poke(&f, &edited);
        poke(&f, &noise);
        // an untraced function has nothing to find, whatever the facts
        let fresh: Polymorphic<String> = Polymorphic::new("fresh");
        prop_assert!(fresh.lookup::<String>(&noise).unwrap().is_none());
        prop_assert!(fresh.begin_trace::<String>(vec![], Some(&noise), true).is_ok());
    }
}

/// Lengths that claim more values than the buffer holds are refused without allocating for them.
#[test]
fn huge_lengths_and_ranks_fail_fast() {
    for facts in [
        vec![TAG_LIST, i64::MAX],
        vec![TAG_LIST, 1 << 40, TAG_LITERAL, 1],
        vec![TAG_MAP, i64::MAX, 0, TAG_LITERAL, 1],
        vec![TAG_MAP, 2, 0, TAG_LITERAL, 1],
        vec![TAG_TENSOR, 1, i64::MAX],
        vec![TAG_TENSOR, 1, 1 << 33, 1, 2, 3],
        vec![TAG_TENSOR, 1, -2],
        vec![TAG_TENSOR, 1 << 40, 0],
        vec![TAG_VARIABLE, 1, i64::MAX, 0],
        vec![TAG_VARIABLE, 1, 0, -1],
        vec![TAG_VARIABLE, 1, -2, 0], // -1 is an unknown rank (a restored Python variable's)
        vec![TAG_LITERAL, 1 << 40],
        vec![TAG_MAP, 1, 1 << 40, TAG_LITERAL, 1],
        vec![i64::MIN],
        vec![i64::MAX],
    ] {
        assert!(matches!(decode_one(&facts), Err(BindError::BadFacts(_))), "{facts:?}");
    }
    // a rank that exactly fills the buffer is read, and its dims are then checked against
    // TensorFlow's limits (a size >= 0 or -1; an element count that fits 64 bits)
    let e = decode_one(&[TAG_TENSOR, 1, 3, i64::MAX, -5, 0]).unwrap_err();
    assert!(matches!(e, BindError::InvalidShape { .. }) && e.to_string().contains("-5"), "{e}");
    let t = decode_one(&[TAG_TENSOR, 1, 3, i64::MAX, -1, 0]).unwrap();
    assert_eq!(t.to_string(), format!("TensorSpec(FLOAT, [{}, -1, 0])", i64::MAX));
}
