//! Property tests of the TraceType lattice over *declared* types as well as call types:
//! tensor constraints (dtype sets, optional shapes), list, map, literal and variable
//! constraints, mixed with specs, nested, and in multi-parameter function types.
//!
//! Laws: subtyping is reflexive and transitive; a join is an upper bound of its inputs and is
//! below every generated upper bound; joins never forget a shape both sides know; dtype sets
//! are never confused; function types with different parameter lists never join (or panic).

mod common;

use common::Bits;
use std::collections::BTreeMap;

use polyfn_core::*;
use proptest::prelude::*;
use proptest::sample::Index;

const DTYPES: [DType; 3] = [DType::FLOAT, DType::DOUBLE, DType::INT32];

/// A generated type; `build` turns it into a `TypeRef`.
#[derive(Clone, Debug)]
enum G {
    Spec(DType, Shape),
    /// dtypes (None = any), shape (None = not declared)
    Tc(Option<Vec<DType>>, Option<Shape>),
    List(Vec<G>),
    Lc(Option<Box<G>>, Option<usize>),
    Map(BTreeMap<String, G>),
    Mc(Option<Box<G>>),
    Lit(u64),
    LitC(&'static str),
    Var(DType, u64),
    Vc(Vec<DType>),
}

impl G {
    /// A spec of unknown rank becomes a constraint of unknown rank (see `spec_shape`).
    fn known_rank(self) -> G {
        match self {
            G::Spec(d, Shape::Unknown) => G::Tc(Some(vec![d]), Some(Shape::Unknown)),
            g => g,
        }
    }
}

/// A literal's class is a function of its id (the Java side interns by `equals`).
fn class_of(id: u64) -> &'static str {
    if id < 2 { "java.lang.Integer" } else { "java.lang.String" }
}

fn dset(ds: &Option<Vec<DType>>) -> DTypeSet {
    ds.as_ref().map_or_else(DTypeSet::any, |d| DTypeSet::of(d))
}

fn build(g: &G) -> TypeRef {
    match g {
        G::Spec(d, s) => TypeRef::new(TensorSpec::new(*d, s.clone())),
        G::Tc(ds, s) => TypeRef::new(TensorConstraint::new(dset(ds), s.clone())),
        G::List(xs) => TypeRef::new(ListType::new(xs.iter().map(build).collect())),
        G::Lc(e, n) => TypeRef::new(ListConstraint::new(e.as_deref().map(build), *n)),
        G::Map(m) => TypeRef::new(MapType::new(m.iter().map(|(k, v)| (k.clone(), build(v))).collect())),
        G::Mc(v) => TypeRef::new(MapConstraint::new(v.as_deref().map(build))),
        G::Lit(id) => TypeRef::new(Literal::new(*id, id.to_string(), class_of(*id))),
        G::LitC(c) => TypeRef::new(LiteralConstraint::new(*c)),
        G::Var(d, a) => TypeRef::new(VariableSpec::new(*d, Shape::of(&[2]), *a)),
        G::Vc(ds) => TypeRef::new(VariableConstraint::new(DTypeSet::of(ds))),
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let dim = prop_oneof![3 => (1i64..4).prop_map(Some), 1 => Just(None)];
    prop_oneof![1 => Just(Shape::Unknown), 5 => prop::collection::vec(dim, 0..=3).prop_map(Shape::Known)]
}

/// A spec's shape: never the unknown rank, which the properties leave to `lattice_props`: a
/// constraint without a shape is not yet recognized as a subtype of a spec of unknown rank
/// (see `a_constraint_without_shape_is_below_a_spec_of_unknown_rank`).
fn spec_shape() -> impl Strategy<Value = Shape> {
    shape().prop_map(|s| if s == Shape::Unknown { Shape::scalar() } else { s })
}

fn dtypes() -> impl Strategy<Value = Vec<DType>> {
    prop::sample::subsequence(DTYPES.to_vec(), 1..=3)
}

fn leaf() -> impl Strategy<Value = G> {
    prop_oneof![
        4 => (prop::sample::select(DTYPES.to_vec()), spec_shape()).prop_map(|(d, s)| G::Spec(d, s)),
        4 => (prop::option::weighted(0.8, dtypes()), prop::option::weighted(0.7, shape())).prop_map(|(d, s)| G::Tc(d, s)),
        1 => (0u64..4).prop_map(G::Lit),
        1 => prop::sample::select(vec!["java.lang.Integer", "java.lang.String"]).prop_map(G::LitC),
        1 => (prop::sample::select(DTYPES.to_vec()), 0u64..2).prop_map(|(d, a)| G::Var(d, a)),
        1 => dtypes().prop_map(G::Vc),
    ]
}

fn gen() -> impl Strategy<Value = G> {
    leaf().prop_recursive(2, 12, 3, |inner| {
        let key = prop::sample::select(vec!["a".to_string(), "b".into()]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..=2).prop_map(G::List),
            (prop::option::weighted(0.7, inner.clone()), prop::option::of(0usize..3)).prop_map(|(e, n)| G::Lc(e.map(Box::new), n)),
            prop::collection::btree_map(key, inner.clone(), 0..=2).prop_map(G::Map),
            prop::option::weighted(0.7, inner).prop_map(|v| G::Mc(v.map(Box::new))),
        ]
    })
}


fn relax_shape(s: &Shape, b: &mut Bits) -> Shape {
    match s {
        Shape::Known(_) if b.chance(5) => Shape::Unknown,
        Shape::Known(d) => Shape::Known(d.iter().map(|x| if b.chance(2) { None } else { *x }).collect()),
        Shape::Unknown => Shape::Unknown,
    }
}

fn more_dtypes(ds: &[DType], b: &mut Bits) -> Vec<DType> {
    let mut out = ds.to_vec();
    for d in DTYPES {
        if !out.contains(&d) && b.chance(3) {
            out.push(d);
        }
    }
    out
}

/// A supertype of `g` by the rules of each kind (checked by `widening_gives_a_supertype`).
fn widen(g: &G, b: &mut Bits) -> G {
    match g {
        G::Spec(d, s) if b.chance(2) => G::Spec(*d, relax_shape(s, b)).known_rank(),
        G::Spec(d, s) => G::Tc(
            if b.chance(5) { None } else { Some(more_dtypes(&[*d], b)) },
            if b.chance(4) { None } else { Some(relax_shape(s, b)) },
        ),
        G::Tc(ds, s) => G::Tc(
            match ds {
                Some(ds) if !b.chance(6) => Some(more_dtypes(ds, b)),
                _ => None,
            },
            match s {
                Some(s) if !b.chance(4) => Some(relax_shape(s, b)),
                _ => None,
            },
        ),
        G::List(xs) if b.chance(3) => G::Lc(None, if b.chance(2) { Some(xs.len()) } else { None }),
        G::List(xs) => G::List(xs.iter().map(|x| widen(x, b)).collect()),
        G::Lc(e, n) => G::Lc(
            match e {
                Some(e) if !b.chance(4) => Some(Box::new(widen(e, b))),
                _ => None,
            },
            if b.chance(3) { None } else { *n },
        ),
        G::Map(_) if b.chance(3) => G::Mc(None),
        G::Map(m) => G::Map(m.iter().map(|(k, v)| (k.clone(), widen(v, b))).collect()),
        G::Mc(v) => G::Mc(match v {
            Some(v) if !b.chance(4) => Some(Box::new(widen(v, b))),
            _ => None,
        }),
        G::Lit(id) if b.chance(2) => G::LitC(class_of(*id)),
        G::Lit(_) | G::LitC(_) => g.clone(),
        G::Var(d, _) if b.chance(2) => G::Vc(more_dtypes(&[*d], b)),
        G::Var(..) => g.clone(),
        G::Vc(ds) => G::Vc(more_dtypes(ds, b)),
    }
}

/// Whether `t` holds a list or map constraint that accepts any element ("open").
fn has_open(t: &TypeRef) -> bool {
    if let Some(c) = t.downcast_ref::<ListConstraint>() {
        c.element.as_ref().is_none_or(has_open)
    } else if let Some(c) = t.downcast_ref::<MapConstraint>() {
        c.value.as_ref().is_none_or(has_open)
    } else if let Some(l) = t.downcast_ref::<ListType>() {
        l.elements.iter().any(has_open)
    } else if let Some(m) = t.downcast_ref::<MapType>() {
        m.entries.values().any(has_open)
    } else {
        false
    }
}

/// Minimality is checked only for joins without an open list or map constraint: when the
/// elements' own join is refused, the enclosing constraint's join falls back to accepting any
/// element, an upper bound but not the least one. That is by design for specs of different
/// dtypes and for distinct literals or variables (tf.function never generalizes them), and a
/// known bug for a concrete list, map or variable joined with a constraint of its kind,
/// concrete side first (`concrete_then_constraint_joins_are_symmetric`).
fn minimality_applies(j: &TypeRef) -> bool {
    !has_open(j)
}

fn le(a: &TypeRef, b: &TypeRef) -> bool {
    a.is_subtype_of(&**b)
}

fn join(a: &TypeRef, others: &[&TypeRef]) -> Option<TypeRef> {
    let others: Vec<&dyn TraceType> = others.iter().map(|t| t.as_dyn()).collect();
    a.most_specific_common_supertype(&others)
}

/// (dtypes, shape) of either tensor form; the shape `None` when not declared.
fn tensor_parts(t: &TypeRef) -> Option<(DTypeSet, Option<Shape>)> {
    if let Some(s) = t.downcast_ref::<TensorSpec>() {
        Some((DTypeSet::of(&[s.dtype]), Some(s.shape.clone())))
    } else {
        t.downcast_ref::<TensorConstraint>().map(|c| (c.dtypes.clone(), c.shape.clone()))
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(384)
}

fn params3(x: &G, xs: &G, n: &G) -> Vec<Parameter> {
    vec![
        Parameter::new("x", ParamKind::Tensor).with_constraint(build(x)),
        Parameter::new("xs", ParamKind::List).with_constraint(build(xs)),
        Parameter::new("n", ParamKind::Java).optional().with_constraint(build(n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn subtyping_is_reflexive(g in gen()) {
        let t = build(&g);
        prop_assert!(le(&t, &t), "{} not below itself", t);
        prop_assert!(le(&t, &build(&g)));
    }

    #[test]
    fn widening_gives_a_supertype_and_subtyping_is_transitive(g in gen(), s1 in any::<u64>(), s2 in any::<u64>(), o in gen()) {
        let a = build(&g);
        let mid = widen(&g, &mut Bits(s1 | 1));
        let b = build(&mid);
        let c = build(&widen(&mid, &mut Bits(s2 | 1)));
        prop_assert!(le(&a, &b), "{} not below its widening {}", a, b);
        prop_assert!(le(&b, &c), "{} not below its widening {}", b, c);
        prop_assert!(le(&a, &c), "transitivity: {} <= {} <= {}", a, b, c);
        // on unrelated types the implication must hold too
        let o = build(&o);
        for (x, y, z) in [(&o, &a, &c), (&a, &o, &c), (&a, &b, &o), (&o, &b, &c)] {
            if le(x, y) && le(y, z) {
                prop_assert!(le(x, z), "transitivity: {} <= {} <= {}", x, y, z);
            }
        }
    }

    #[test]
    fn joins_are_upper_bounds_below_every_generated_upper_bound(
        g in gen(), h in gen(), s in any::<u64>(), seeds in prop::collection::vec(any::<u64>(), 8), extra in gen()
    ) {
        // h is either independent or a widening of g, so joins exist often
        let h = if s % 3 == 0 { h } else { widen(&g, &mut Bits(s | 1)) };
        let (a, b) = (build(&g), build(&h));
        for (x, y) in [(&a, &b), (&b, &a)] {
            let Some(j) = join(x, &[y]) else { continue };
            prop_assert!(le(x, &j) && le(y, &j), "{} and {} not below their join {}", x, y, j);
            prop_assert!(le(&j, &j));
            // candidates: widenings of either input and of the join, and an unrelated type
            let mut candidates = vec![build(&extra), j.clone()];
            for (i, seed) in seeds.iter().enumerate() {
                let src = [&g, &h][i % 2];
                candidates.push(build(&widen(src, &mut Bits(seed | 1))));
            }
            if !minimality_applies(&j) {
                continue;
            }
            for u in candidates.iter().filter(|u| le(x, u) && le(y, u)) {
                prop_assert!(le(&j, u), "join {} of {} and {} not below upper bound {}", j, x, y, u);
            }
        }
        // a type joined with one of its supertypes has a join (else the laws above ran on nothing), below that supertype
        if le(&a, &b) {
            let j = join(&a, &[&b]);
            prop_assert!(j.is_some(), "{} <= {} but they have no join", a, b);
            if let Some(j) = j.filter(minimality_applies) {
                prop_assert!(le(&j, &b), "{} <= {} but their join {} is not below {}", a, b, j, b);
            }
        }
    }

    #[test]
    fn tensor_joins_keep_known_dims_and_dtypes(
        d1 in prop::option::weighted(0.8, dtypes()), d2 in prop::option::weighted(0.8, dtypes()),
        s1 in shape(), s2 in shape(), spec1 in any::<bool>(), spec2 in any::<bool>()
    ) {
        let mk = |ds: &Option<Vec<DType>>, s: &Shape, as_spec: bool| match ds {
            Some(d) if as_spec => G::Spec(d[0], s.clone()),
            _ => G::Tc(ds.clone(), Some(s.clone())),
        };
        let (a, b) = (build(&mk(&d1, &s1, spec1)), build(&mk(&d2, &s2, spec2)));
        let (da, sa) = tensor_parts(&a).unwrap();
        let (db, sb) = tensor_parts(&b).unwrap();
        // dtype sets are never confused
        if le(&a, &b) {
            prop_assert!(da.is_subset_of(&db), "{} <= {} with dtypes not a subset", a, b);
        }
        if !da.is_subset_of(&db) {
            prop_assert!(!le(&a, &b), "{} <= {} though its dtypes are not in {}", a, b, db);
        }
        let Some(j) = join(&a, &[&b]) else {
            // only two specs of different dtypes have no join
            prop_assert!(a.downcast_ref::<TensorSpec>().is_some() && b.downcast_ref::<TensorSpec>().is_some() && da != db);
            return Ok(());
        };
        let (dj, sj) = tensor_parts(&j).unwrap();
        prop_assert!(da.is_subset_of(&dj) && db.is_subset_of(&dj));
        // every dim both sides know, and agree on, survives the join
        if let (Some(Shape::Known(x)), Some(Shape::Known(y))) = (&sa, &sb) {
            if x.len() == y.len() {
                let Some(Shape::Known(z)) = &sj else {
                    return Err(TestCaseError::fail(format!("join {j} of {a} and {b} lost the rank")));
                };
                prop_assert_eq!(z.len(), x.len());
                for i in 0..x.len() {
                    if x[i].is_some() && x[i] == y[i] {
                        prop_assert_eq!(z[i], x[i], "join {} of {} and {} lost dim {}", j, a, b, i);
                    }
                }
            }
        }
    }

    #[test]
    fn function_types_with_constraints_form_a_lattice(
        x in gen(), xs in gen(), n in gen(), s1 in any::<u64>(), s2 in any::<u64>(), s3 in any::<u64>()
    ) {
        let f = FunctionType::new(params3(&x, &xs, &n));
        let mut b = Bits(s1 | 1);
        let (x2, xs2, n2) = (widen(&x, &mut b), widen(&xs, &mut b), widen(&n, &mut b));
        let g = FunctionType::new(params3(&x2, &xs2, &n2));
        let mut b = Bits(s2 | 1);
        let h = FunctionType::new(params3(&widen(&x2, &mut b), &widen(&xs2, &mut b), &widen(&n2, &mut b)));
        prop_assert!(f.is_subtype_of(&f));
        prop_assert!(f.is_subtype_of(&g) && g.is_subtype_of(&h) && f.is_subtype_of(&h), "{} <= {} <= {}", f, g, h);
        let j = f.most_specific_common_supertype(&[&g]);
        prop_assert!(j.is_some(), "{} <= {} but they have no join", f, g); // else the laws below ran on nothing
        if let Some(j) = &j {
            prop_assert!(f.is_subtype_of(j) && g.is_subtype_of(j));
            if j.parameters.iter().all(|p| minimality_applies(p.type_constraint.as_ref().unwrap())) {
                prop_assert!(j.is_subtype_of(&h), "join {} not below the upper bound {}", j, h);
            }
            prop_assert!(j.same_signature(&f));
        }
        // a parameter-wise join exists exactly when every parameter's join does
        let each = f.parameters.iter().zip(&g.parameters).all(|(p, q)| {
            join(p.type_constraint.as_ref().unwrap(), &[q.type_constraint.as_ref().unwrap()]).is_some()
        });
        prop_assert_eq!(j.is_some(), each);
        // the dispatcher finds the most specific cached supertype
        let mut table = DispatchTable::new();
        table.insert(h.clone(), "h");
        table.insert(g.clone(), "g");
        let hit = table.lookup(&f, None).map(|(v, _)| v);
        prop_assert!(hit.is_some());
        if !h.is_subtype_of(&g) {
            prop_assert_eq!(hit, Some("g"));
        }
        let _ = s3;
    }

    #[test]
    fn function_types_with_different_parameter_lists_never_join(
        x in gen(), xs in gen(), n in gen(), which in any::<Index>(), change in 0u8..5
    ) {
        let params = params3(&x, &xs, &n);
        let f = FunctionType::new(params.clone());
        let i = which.index(params.len());
        let mut other = params.clone();
        match change {
            0 => { other.remove(i); }
            1 => other.push(Parameter::new("extra", ParamKind::Tensor).with_constraint(build(&x))),
            2 => other[i].name.push('_'),
            3 => other[i].kind = if other[i].kind == ParamKind::Map { ParamKind::List } else { ParamKind::Map },
            _ => other[i].optional = !other[i].optional,
        }
        let g = FunctionType::new(other);
        prop_assert!(!f.same_signature(&g) && !g.same_signature(&f));
        prop_assert!(f.most_specific_common_supertype(&[&g]).is_none());
        prop_assert!(g.most_specific_common_supertype(&[&f]).is_none());
        prop_assert!(f.most_specific_common_supertype(&[&f, &g]).is_none());
        prop_assert!(g.most_specific_common_supertype(&[&g, &f]).is_none());
        prop_assert!(!f.is_subtype_of(&g) && !g.is_subtype_of(&f));
        // and the dispatcher never serves one for the other
        let mut table = DispatchTable::new();
        table.insert(g.clone(), 1);
        prop_assert_eq!(table.lookup(&f, None), None);
        prop_assert_eq!(table.generalize(&f), f.clone());
    }
}

/// Known bug (kept out of the minimality checks above by `minimality_applies`): a concrete list, map or variable
/// joined with a constraint of its kind has no join when the concrete type comes first, though
/// the other order finds one (literals and tensors delegate to the constraint and get it right).
/// Inside a list or map constraint this makes the element join fall back to "anything".
#[test]
fn concrete_then_constraint_joins_are_symmetric() {
    let f = DType::FLOAT;
    let pairs = [
        (G::List(vec![G::Spec(f, Shape::of(&[2]))]), G::Lc(None, Some(1))),
        (G::Map(BTreeMap::from([("a".to_string(), G::Spec(f, Shape::of(&[2])))])), G::Mc(None)),
        (G::Var(f, 0), G::Vc(vec![f])),
    ];
    for (concrete, constraint) in &pairs {
        let (a, b) = (build(concrete), build(constraint));
        let ab = join(&a, &[&b]);
        let ba = join(&b, &[&a]);
        assert!(ba.is_some(), "{b} ∨ {a}");
        assert_eq!(ab, ba, "{a} ∨ {b} differs from {b} ∨ {a}");
    }
    // the visible consequence: a list constraint of list constraints widens to anything
    let outer = |e: G| build(&G::Lc(Some(Box::new(e)), None));
    let j = join(&outer(G::List(vec![])), &[&outer(G::Lc(None, None))]).unwrap();
    assert_eq!(j, outer(G::Lc(None, None)));
}

/// Known bug (kept out of the properties above by `spec_shape`): a tensor constraint without a
/// shape accepts any shape, so with a single dtype it denotes the same tensors as a spec of
/// unknown rank, yet it is not a subtype of that spec.
#[test]
fn a_constraint_without_shape_is_below_a_spec_of_unknown_rank() {
    let any_shape = build(&G::Tc(Some(vec![DType::FLOAT]), None));
    let unknown = build(&G::Spec(DType::FLOAT, Shape::Unknown));
    assert!(le(&unknown, &any_shape));
    assert!(le(&any_shape, &unknown));
}
