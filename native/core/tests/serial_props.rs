//! Property tests of serialization: every generated type, parameter and function type comes
//! back equal (and re-serializes to the same text), dispatch over restored function types picks
//! what dispatch over the originals picks, and damaged documents fail with an error, never a
//! panic. The value generators are those of `lattice_props.rs`, widened to every built-in kind.

mod common;

use common::Bits;
use std::collections::BTreeMap;

use polyfn_core::serial::{self, TypeRegistry};
use polyfn_core::*;
use proptest::prelude::*;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Gen {
    Tensor(DType, Shape),
    TensorC(Option<Vec<DType>>, Option<Shape>),
    Lit(u64),
    LitC(String),
    Var(DType, Shape, u64),
    VarC(Option<Vec<DType>>),
    List(Vec<Gen>),
    ListC(Option<Box<Gen>>, Option<usize>),
    Map(BTreeMap<String, Gen>),
    MapC(Option<Box<Gen>>),
    Rec(String, Vec<(String, Gen)>),
    NestC,
    Comp(DType, Shape, Option<u64>, Vec<(DType, Shape)>),
}

fn set(ds: &Option<Vec<DType>>) -> DTypeSet {
    ds.as_ref().map_or_else(DTypeSet::any, |d| DTypeSet::of(d))
}

fn build(g: &Gen) -> TypeRef {
    match g {
        Gen::Tensor(d, s) => TypeRef::new(TensorSpec::new(*d, s.clone())),
        Gen::TensorC(ds, s) => TypeRef::new(TensorConstraint::new(set(ds), s.clone())),
        // repr and class differ from the id, so a lossy literal would show in the text check
        Gen::Lit(id) => TypeRef::new(Literal::new(*id, format!("value \"{id}\""), "java.lang.Integer")),
        Gen::LitC(c) => TypeRef::new(LiteralConstraint::new(c.clone())),
        Gen::Var(d, s, a) => TypeRef::new(VariableSpec::new(*d, s.clone(), *a)),
        Gen::VarC(ds) => TypeRef::new(VariableConstraint::new(set(ds))),
        Gen::List(xs) => TypeRef::new(ListType::new(xs.iter().map(build).collect())),
        Gen::ListC(e, n) => TypeRef::new(ListConstraint::new(e.as_deref().map(build), *n)),
        Gen::Map(m) => TypeRef::new(MapType::new(m.iter().map(|(k, v)| (k.clone(), build(v))).collect())),
        Gen::MapC(v) => TypeRef::new(MapConstraint::new(v.as_deref().map(build))),
        Gen::Rec(c, xs) => TypeRef::new(RecordType::new(c.clone(), xs.iter().map(|(n, x)| (n.clone(), build(x))).collect())),
        Gen::NestC => TypeRef::new(NestConstraint),
        Gen::Comp(d, s, m, cs) => TypeRef::new(CompositeType::new(
            "Ragged \"x\"",
            *d,
            s.clone(),
            m.map(|id| build(&Gen::Lit(id))),
            cs.iter().enumerate().map(|(i, (d, s))| (format!("c{i}"), TypeRef::new(TensorSpec::new(*d, s.clone())))).collect(),
        )),
    }
}


/// A supertype of `g`: forget some dims or ranks.
fn relax(g: &Gen, bits: &mut Bits) -> Gen {
    match g {
        Gen::Tensor(d, Shape::Known(_)) if bits.chance(5) => Gen::Tensor(*d, Shape::Unknown),
        Gen::Tensor(d, Shape::Known(dims)) => Gen::Tensor(
            *d,
            Shape::Known(dims.iter().map(|x| if bits.chance(2) { None } else { *x }).collect()),
        ),
        Gen::List(xs) => Gen::List(xs.iter().map(|x| relax(x, bits)).collect()),
        Gen::Map(m) => Gen::Map(m.iter().map(|(k, v)| (k.clone(), relax(v, bits))).collect()),
        Gen::Rec(c, xs) => Gen::Rec(c.clone(), xs.iter().map(|(n, x)| (n.clone(), relax(x, bits))).collect()),
        _ => g.clone(),
    }
}

/// A near variant of `g`, same structure most of the time.
fn perturb(g: &Gen, bits: &mut Bits) -> Gen {
    match g {
        Gen::Tensor(d, Shape::Known(dims)) => {
            let dims = dims
                .iter()
                .map(|x| if bits.chance(3) { Some((bits.next() % 3) as i64 + 1) } else { *x })
                .collect();
            Gen::Tensor(if bits.chance(10) { DType::INT32 } else { *d }, Shape::Known(dims))
        }
        Gen::Lit(id) => Gen::Lit(if bits.chance(4) { bits.next() % 3 } else { *id }),
        Gen::List(xs) => {
            let mut xs: Vec<Gen> = xs.iter().map(|x| perturb(x, bits)).collect();
            if bits.chance(8) {
                xs.pop();
            }
            Gen::List(xs)
        }
        Gen::Map(m) => Gen::Map(m.iter().map(|(k, v)| (k.clone(), perturb(v, bits))).collect()),
        Gen::Rec(c, xs) => Gen::Rec(c.clone(), xs.iter().map(|(n, x)| (n.clone(), perturb(x, bits))).collect()),
        _ => g.clone(),
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let dim = prop_oneof![3 => (0i64..4).prop_map(Some), 1 => Just(None)];
    prop_oneof![
        1 => Just(Shape::Unknown),
        6 => prop::collection::vec(dim, 0..=4).prop_map(Shape::Known),
    ]
}

fn dtype() -> impl Strategy<Value = DType> {
    // DType(300) has no name: it is written as its code
    prop::sample::select(vec![DType::FLOAT, DType::DOUBLE, DType::INT32, DType::UINT64, DType(300)])
}

fn dtypes() -> impl Strategy<Value = Option<Vec<DType>>> {
    prop::option::of(prop::collection::vec(dtype(), 0..=3))
}

/// Values only (what a call's type holds).
fn value_leaf() -> impl Strategy<Value = Gen> {
    prop_oneof![
        4 => (dtype(), shape()).prop_map(|(d, s)| Gen::Tensor(d, s)),
        1 => (0u64..3).prop_map(Gen::Lit),
        1 => (dtype(), shape(), 0u64..3).prop_map(|(d, s, a)| Gen::Var(d, s, a)),
        1 => (dtype(), shape(), prop::option::of(0u64..3), prop::collection::vec((dtype(), shape()), 0..=2))
            .prop_map(|(d, s, m, cs)| Gen::Comp(d, s, m, cs)),
    ]
}

fn value() -> impl Strategy<Value = Gen> {
    value_leaf().prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..=3).prop_map(Gen::List),
            prop::collection::btree_map(
                prop::sample::select(vec!["a".to_string(), "b".into(), "k \"q\"\n".into()]),
                inner.clone(),
                0..=3
            )
            .prop_map(Gen::Map),
            prop::collection::vec(inner, 0..=3).prop_map(|xs| Gen::Rec(
                "a.b.Rec$Inner".into(),
                xs.into_iter().enumerate().map(|(i, x)| (format!("c{i}"), x)).collect()
            )),
        ]
    })
}

/// Values and constraints, nested.
fn any_type() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        3 => value_leaf(),
        1 => (dtypes(), prop::option::of(shape())).prop_map(|(d, s)| Gen::TensorC(d, s)),
        1 => prop::sample::select(vec!["java.lang.Integer".to_string(), "ünï\"code".into()]).prop_map(Gen::LitC),
        1 => dtypes().prop_map(Gen::VarC),
        1 => Just(Gen::NestC),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..=3).prop_map(Gen::List),
            (prop::option::of(inner.clone()), prop::option::of(0usize..5))
                .prop_map(|(e, n)| Gen::ListC(e.map(Box::new), n)),
            prop::collection::btree_map(prop::sample::select(vec!["a".to_string(), "".into()]), inner.clone(), 0..=2)
                .prop_map(Gen::Map),
            prop::option::of(inner.clone()).prop_map(|v| Gen::MapC(v.map(Box::new))),
            prop::collection::vec(inner, 0..=2).prop_map(|xs| Gen::Rec(
                "ünï\"Rec".into(),
                xs.into_iter().enumerate().map(|(i, x)| (format!("n{i}"), x)).collect()
            )),
        ]
    })
}

fn ft(x: &Gen, y: &Gen) -> FunctionType {
    FunctionType::new(vec![
        Parameter::new("x", ParamKind::Tensor).with_constraint(build(x)),
        Parameter::new("y", ParamKind::List).with_constraint(build(y)),
    ])
}

fn roundtrip(f: &FunctionType) -> FunctionType {
    let text = serial::function_type_to_json(f).expect("built-in types serialize");
    let back = serial::function_type_from_json(&text, &TypeRegistry::builtin())
        .unwrap_or_else(|e| panic!("{e}\nin {text}"));
    // lossless: the restored value writes the very same text (literal repr and class included)
    assert_eq!(serial::function_type_to_json(&back).unwrap(), text);
    back
}

/// Replaces one node of `v` (picked by `pick`) with `with`.
fn replace_node(v: &mut Value, pick: &mut u64, with: &Value) -> bool {
    if *pick == 0 {
        *v = with.clone();
        return true;
    }
    *pick -= 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| replace_node(x, pick, with)),
        Value::Object(m) => m.values_mut().any(|x| replace_node(x, pick, with)),
        _ => false,
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(vec!["kind", "tensor_spec", "list", "unknown", "any", "FLOAT", "", "x"])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["kind".to_string(), "dtype".into(), "shape".into(), "elements".into(), "z".into()]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn every_type_round_trips(g in any_type()) {
        let t = build(&g);
        let text = serial::trace_type_to_json(&t).unwrap();
        let back = serial::trace_type_from_json(&text, &TypeRegistry::builtin()).unwrap();
        prop_assert_eq!(&back, &t);
        prop_assert_eq!(back.to_string(), t.to_string());
        prop_assert_eq!(serial::trace_type_to_json(&back).unwrap(), text);
    }

    #[test]
    fn function_types_with_captures_round_trip(
        x in any_type(), y in any_type(), c in any_type(), opt in any::<bool>(), names in "[a-zé_ ]{0,6}"
    ) {
        let mut f = ft(&x, &y).with_captures(vec![(names.clone(), build(&c)), ("v".into(), build(&x))]);
        f.parameters.push(Parameter::new(names, ParamKind::Java));
        f.parameters[0].optional = opt;
        let back = roundtrip(&f);
        prop_assert_eq!(&back, &f);
        prop_assert_eq!(back.to_string(), f.to_string());
    }

    #[test]
    fn dispatch_over_restored_types_picks_the_same_function(
        xs in prop::collection::vec(value(), 1..4), ys in prop::collection::vec(value(), 1..4),
        seeds in prop::collection::vec(any::<u64>(), 8),
    ) {
        // keys: the generated signatures, relaxations of them, and near variants
        let mut keys = Vec::new();
        for (i, seed) in seeds.iter().enumerate() {
            let mut b = Bits(seed | 1);
            let (x, y) = (&xs[i % xs.len()], &ys[i % ys.len()]);
            keys.push(match i % 3 {
                0 => ft(x, y),
                1 => ft(&relax(x, &mut b), &relax(y, &mut b)),
                _ => ft(&perturb(x, &mut b), &relax(&perturb(y, &mut b), &mut b)),
            });
        }
        let mut original = DispatchTable::new();
        let mut restored = DispatchTable::new();
        for (i, k) in keys.iter().enumerate() {
            original.insert(k.clone(), i);
            restored.insert(roundtrip(k), i);
        }
        // the first key is a generated call's own type: it must be found, exactly
        prop_assert_eq!(restored.lookup(&ft(&xs[0], &ys[0]), None).map(|(_, h)| h), Some(Hit::Exact));
        // calls: the generated values and perturbations of them
        for (i, seed) in seeds.iter().enumerate() {
            let mut b = Bits(seed.rotate_left(7) | 1);
            let (x, y) = (&xs[i % xs.len()], &ys[i % ys.len()]);
            let call = ft(&perturb(x, &mut b), &perturb(y, &mut b));
            for c in [ft(x, y), call] {
                prop_assert_eq!(original.lookup(&c, None), restored.lookup(&c, None), "call {}", c);
            }
        }
    }

    #[test]
    fn damaged_documents_fail_cleanly(
        x in any_type(), y in any_type(), cut in any::<prop::sample::Index>(),
        pick in any::<u64>(), with in json_value(),
    ) {
        let text = serial::function_type_to_json(&ft(&x, &y)).unwrap();
        let reg = TypeRegistry::builtin();
        // every strict prefix is truncated JSON
        let mut at = cut.index(text.len());
        while !text.is_char_boundary(at) {
            at -= 1; // cut between characters (names may be non-ASCII)
        }
        prop_assert!(serial::function_type_from_json(&text[..at], &reg).is_err());
        // one node replaced by an arbitrary value: an error or a valid type, never a panic
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        let mut n = pick % 64;
        replace_node(&mut doc, &mut n, &with);
        let damaged = doc.to_string();
        if let Ok(f) = serial::function_type_from_json(&damaged, &reg) {
            // whatever was accepted is a real type that round-trips
            prop_assert_eq!(roundtrip(&f), f);
        }
        // any JSON value as a type, or as a whole document
        let _ = reg.decode_type(&with, "type");
        let _ = serial::function_type_from_json(&with.to_string(), &reg);
    }

    #[test]
    fn arbitrary_text_fails_cleanly(s in ".{0,200}") {
        let reg = TypeRegistry::builtin();
        prop_assert!(serial::function_type_from_json(&s, &reg).is_err());
        prop_assert!(serial::trace_type_from_json(&s, &reg).is_err());
    }
}
