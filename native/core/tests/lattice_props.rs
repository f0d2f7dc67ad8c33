//! Property tests of the TraceType lattice laws over generated tensors, lists, maps and
//! literals, nested to depth 3 in lists, maps and records, and of their FunctionType-level
//! counterparts.

mod common;

use common::Bits;
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use polyfn_core::*;
use proptest::prelude::*;

/// A generated value description, turned into a `TypeRef` by `build`. Keeping our own tree
/// lets the tests derive related types (supertypes, near-misses) structurally.
#[derive(Clone, Debug, PartialEq)]
enum Gen {
    Tensor(DType, Shape),
    Lit(u64),
    List(Vec<Gen>),
    Map(BTreeMap<String, Gen>),
    /// A record of class `a.R<n>` with components `f0, f1, ...`.
    Rec(u8, Vec<Gen>),
    /// A composite (ragged-like): static shape, then its component shapes.
    Comp(Shape, Vec<Shape>),
}

fn record(class: u8, fields: Vec<TypeRef>) -> TypeRef {
    let fields = fields.into_iter().enumerate().map(|(i, t)| (format!("f{i}"), t)).collect();
    TypeRef::new(RecordType::new(format!("a.R{class}"), fields))
}

fn build(g: &Gen) -> TypeRef {
    match g {
        Gen::Tensor(d, s) => TypeRef::new(TensorSpec::new(*d, s.clone())),
        Gen::Lit(id) => TypeRef::new(Literal::new(*id, id.to_string(), "java.lang.Integer")),
        Gen::List(xs) => TypeRef::new(ListType::new(xs.iter().map(build).collect())),
        Gen::Map(m) => TypeRef::new(MapType::new(
            m.iter().map(|(k, v)| (k.clone(), build(v))).collect(),
        )),
        Gen::Rec(c, xs) => record(*c, xs.iter().map(build).collect()),
        Gen::Comp(s, cs) => TypeRef::new(CompositeType::new(
            "Ragged",
            DType::FLOAT,
            s.clone(),
            None,
            cs.iter().enumerate().map(|(i, c)| (format!("c{i}"), TypeRef::new(TensorSpec::new(DType::INT64, c.clone())))).collect(),
        )),
    }
}


/// A supertype of `g`: forget some dims or ranks (the only way built-in values generalize).
fn relax(g: &Gen, bits: &mut Bits) -> Gen {
    match g {
        Gen::Tensor(d, Shape::Known(_)) if bits.chance(5) => Gen::Tensor(*d, Shape::Unknown),
        Gen::Tensor(d, Shape::Known(dims)) => Gen::Tensor(
            *d,
            Shape::Known(
                dims.iter()
                    .map(|x| if bits.chance(2) { None } else { *x })
                    .collect(),
            ),
        ),
        Gen::Tensor(..) | Gen::Lit(_) => g.clone(),
        Gen::List(xs) => Gen::List(xs.iter().map(|x| relax(x, bits)).collect()),
        Gen::Map(m) => Gen::Map(m.iter().map(|(k, v)| (k.clone(), relax(v, bits))).collect()),
        Gen::Rec(c, xs) => Gen::Rec(*c, xs.iter().map(|x| relax(x, bits)).collect()),
        Gen::Comp(s, cs) => {
            let mut r = |s: &Shape| match relax(&Gen::Tensor(DType::FLOAT, s.clone()), bits) {
                Gen::Tensor(_, s) => s,
                _ => unreachable!(),
            };
            Gen::Comp(r(s), cs.iter().map(r).collect())
        }
    }
}

/// A near variant of `g` with the same structure most of the time, so joins often exist.
fn perturb(g: &Gen, bits: &mut Bits) -> Gen {
    match g {
        Gen::Tensor(d, Shape::Known(dims)) => {
            if bits.chance(8) {
                Gen::Tensor(*d, Shape::of(&vec![2; (bits.next() % 4) as usize]))
            } else {
                let dims: Vec<Option<i64>> = dims
                    .iter()
                    .map(|x| {
                        if bits.chance(3) {
                            Some((bits.next() % 3) as i64 + 1)
                        } else {
                            *x
                        }
                    })
                    .collect();
                Gen::Tensor(
                    if bits.chance(10) { DType::INT32 } else { *d },
                    Shape::Known(dims),
                )
            }
        }
        Gen::Tensor(..) => g.clone(),
        Gen::Lit(id) => Gen::Lit(if bits.chance(4) { bits.next() % 3 } else { *id }),
        Gen::List(xs) => {
            let mut xs: Vec<Gen> = xs.iter().map(|x| perturb(x, bits)).collect();
            if bits.chance(8) {
                xs.pop();
            }
            Gen::List(xs)
        }
        Gen::Map(m) => {
            let mut m: BTreeMap<String, Gen> = m
                .iter()
                .map(|(k, v)| (k.clone(), perturb(v, bits)))
                .collect();
            if bits.chance(8) {
                m.pop_first();
            }
            Gen::Map(m)
        }
        Gen::Rec(c, xs) => Gen::Rec(
            if bits.chance(8) { c ^ 1 } else { *c },
            xs.iter().map(|x| perturb(x, bits)).collect(),
        ),
        Gen::Comp(s, cs) => {
            let mut p = |s: &Shape| match perturb(&Gen::Tensor(DType::FLOAT, s.clone()), bits) {
                Gen::Tensor(_, s) => s,
                _ => unreachable!(),
            };
            Gen::Comp(p(s), cs.iter().map(p).collect())
        }
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let dim = prop_oneof![3 => (1i64..4).prop_map(Some), 1 => Just(None)];
    prop_oneof![
        1 => Just(Shape::Unknown),
        6 => prop::collection::vec(dim, 0..=4).prop_map(Shape::Known),
    ]
}

fn leaf() -> impl Strategy<Value = Gen> {
    let dtype = prop::sample::select(vec![DType::FLOAT, DType::DOUBLE, DType::INT32]);
    prop_oneof![
        4 => (dtype, shape()).prop_map(|(d, s)| Gen::Tensor(d, s)),
        1 => (0u64..3).prop_map(Gen::Lit),
        1 => (shape(), prop::collection::vec(shape(), 1..=2)).prop_map(|(s, cs)| Gen::Comp(s, cs)),
    ]
}

fn gen() -> impl Strategy<Value = Gen> {
    leaf().prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..=3).prop_map(Gen::List),
            (0u8..2, prop::collection::vec(inner.clone(), 0..=3)).prop_map(|(c, xs)| Gen::Rec(c, xs)),
            prop::collection::btree_map(
                prop::sample::select(vec!["a".to_string(), "b".into(), "c".into()]),
                inner,
                0..=3
            )
            .prop_map(Gen::Map),
        ]
    })
}

fn hash_of(t: &TypeRef) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

fn join(a: &TypeRef, others: &[&TypeRef]) -> Option<TypeRef> {
    let others: Vec<&dyn TraceType> = others.iter().map(|t| t.as_dyn()).collect();
    a.most_specific_common_supertype(&others)
}

fn le(a: &TypeRef, b: &TypeRef) -> bool {
    a.is_subtype_of(&**b)
}

fn ft(x: &Gen, y: &Gen) -> FunctionType {
    FunctionType::new(vec![
        Parameter::new("x", ParamKind::Tensor).with_constraint(build(x)),
        Parameter::new("y", ParamKind::List).with_constraint(build(y)),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn subtype_is_reflexive(g in gen()) {
        let t = build(&g);
        prop_assert!(le(&t, &t));
        prop_assert!(t.explain_mismatch(&*t).is_none());
    }

    #[test]
    fn subtype_is_transitive(g in gen(), s1 in any::<u64>(), s2 in any::<u64>(), other in gen()) {
        let (mut b1, mut b2) = (Bits(s1 | 1), Bits(s2 | 1));
        let a = build(&g);
        let mid = relax(&g, &mut b1);
        let b = build(&mid);
        let c = build(&relax(&mid, &mut b2));
        prop_assert!(le(&a, &b), "relax must give a supertype: {} vs {}", a, b);
        prop_assert!(le(&b, &c));
        prop_assert!(le(&a, &c));
        // a type joined with one of its supertypes is that supertype (so the joins below exist)
        prop_assert_eq!(join(&a, &[&b]), Some(b.clone()), "join of {} and its supertype {}", a, b);
        // and on unrelated triples the implication holds too
        let o = build(&other);
        if le(&o, &a) && le(&a, &c) {
            prop_assert!(le(&o, &c));
        }
    }

    #[test]
    fn mutual_subtypes_are_equal_and_hash_equal(g in gen(), h in gen()) {
        let (a, a2, b) = (build(&g), build(&g), build(&h));
        prop_assert_eq!(&a, &a2);
        prop_assert_eq!(hash_of(&a), hash_of(&a2));
        if a == b {
            prop_assert_eq!(hash_of(&a), hash_of(&b));
        }
        if le(&a, &b) && le(&b, &a) {
            prop_assert_eq!(&a, &b);
        }
        // a mismatch explanation exists exactly when subtyping fails
        prop_assert_eq!(b.explain_mismatch(&*a).is_none(), le(&b, &a));
    }

    #[test]
    fn join_is_least_upper_bound(
        g in gen(), s in any::<u64>(), extra in gen(), seeds in prop::collection::vec(any::<u64>(), 6)
    ) {
        let mut bits = Bits(s | 1);
        let h = perturb(&g, &mut bits);
        let (a, b) = (build(&g), build(&h));
        let Some(j) = join(&a, &[&b]) else { return Ok(()); };
        prop_assert!(le(&a, &j) && le(&b, &j), "{} and {} not below join {}", a, b, j);
        prop_assert_eq!(join(&j, &[&a]), Some(j.clone()), "join with a lower element is the identity");
        // candidate upper bounds: relaxations of both inputs and of the join, plus a random type
        let mut candidates = vec![build(&extra)];
        for (i, seed) in seeds.iter().enumerate() {
            let src = [&g, &h][i % 2];
            candidates.push(build(&relax(src, &mut Bits(seed | 1))));
        }
        for u in candidates.iter().filter(|u| le(&a, u) && le(&b, u)) {
            prop_assert!(le(&j, u), "join {} of {} and {} not below upper bound {}", j, a, b, u);
        }
    }

    #[test]
    fn join_of_three_bounds_all(g in gen(), s in any::<u64>()) {
        let mut bits = Bits(s | 1);
        let (h, k) = (perturb(&g, &mut bits), perturb(&g, &mut bits));
        let (a, b, c) = (build(&g), build(&h), build(&k));
        if let Some(j) = join(&a, &[&b, &c]) {
            prop_assert!(le(&a, &j) && le(&b, &j) && le(&c, &j));
            // folding pairwise reaches the same bound
            let step = join(&a, &[&b]).and_then(|ab| join(&ab, &[&c]));
            prop_assert_eq!(step, Some(j));
        }
    }

    #[test]
    fn function_type_laws(x in gen(), y in gen(), s in any::<u64>(), seed in any::<u64>()) {
        let mut bits = Bits(s | 1);
        let (x2, y2) = (perturb(&x, &mut bits), perturb(&y, &mut bits));
        let (f, g) = (ft(&x, &y), ft(&x2, &y2));
        prop_assert!(f.is_subtype_of(&f));
        prop_assert_eq!(&f, &ft(&x, &y));
        if let Some(j) = f.most_specific_common_supertype(&[&g]) {
            prop_assert!(f.is_subtype_of(&j) && g.is_subtype_of(&j));
            let mut b = Bits(seed | 1);
            let u = ft(&relax(&x, &mut b), &relax(&y, &mut b));
            if f.is_subtype_of(&u) && g.is_subtype_of(&u) {
                prop_assert!(j.is_subtype_of(&u));
            }
        }
        // the relaxation of a function type is a supertype the dispatcher can find
        let mut b = Bits(seed | 1);
        let sup = ft(&relax(&x, &mut b), &relax(&y, &mut b));
        prop_assert!(f.is_subtype_of(&sup));
        let mut table = DispatchTable::new();
        table.insert(sup, 1);
        prop_assert!(table.lookup(&f, None).is_some());
    }
}

/// The laws above check a join only where one exists (`join_is_least_upper_bound` returns early
/// otherwise, the other two skip), and leastness only against candidates that bound both inputs:
/// a join that never existed, or candidates that never bound both, would pass them all unchecked.
/// Over the same generators (a fixed seed), count how often each check runs on distinct types
/// (joins of equal types exist even where every other join is missing).
#[test]
fn the_join_laws_are_exercised_not_skipped() {
    use proptest::test_runner::TestRunner;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let [cases, joined, bounded, triples, functions] = [(); 5].map(|_| AtomicUsize::new(0));
    let strategy = (gen(), gen(), any::<u64>(), prop::collection::vec(any::<u64>(), 6));
    TestRunner::deterministic()
        .run(&strategy, |(g, y, s, seeds)| {
            cases.fetch_add(1, Relaxed);
            let mut bits = Bits(s | 1);
            let (h, k) = (perturb(&g, &mut bits), perturb(&g, &mut bits));
            let (a, b, c) = (build(&g), build(&h), build(&k));
            if let Some(j) = join(&a, &[&b]).filter(|_| a != b) { // a join of two equal types proves little
                joined.fetch_add(1, Relaxed);
                let bound = seeds.iter().enumerate().any(|(i, seed)| {
                    let u = build(&relax([&g, &h][i % 2], &mut Bits(seed | 1)));
                    le(&a, &u) && le(&b, &u) && u != j
                });
                bounded.fetch_add(bound as usize, Relaxed);
            }
            triples.fetch_add((join(&a, &[&b, &c]).is_some() && (a != b || a != c)) as usize, Relaxed);
            let (f, f2) = (ft(&g, &y), ft(&h, &perturb(&y, &mut bits)));
            functions.fetch_add((f != f2 && f.most_specific_common_supertype(&[&f2]).is_some()) as usize, Relaxed);
            Ok(())
        })
        .unwrap();
    let n = cases.load(Relaxed);
    let counts = [&joined, &bounded, &triples, &functions].map(|c| c.load(Relaxed));
    println!("{n} cases: distinct pairs joined, bounded by another candidate, triples, function types: {counts:?}");
    for (what, count) in ["distinct pairs joined", "leastness checked", "distinct triples joined", "distinct function types joined"]
        .iter()
        .zip(counts)
    {
        assert!(count * 5 >= n, "{what}: {count} of {n} cases");
    }
}
